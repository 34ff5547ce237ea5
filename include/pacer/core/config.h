// Run configuration: a TOML document plus `--set key=value` overrides.
//
// Keys are dotted paths ("timing.model", "method.name"). Each component reads the keys it owns
// through the typed getters below. A getter
//   * returns the value when the key is present and has the right type,
//   * returns the fallback when it is absent (and records the fallback, so that to_toml() shows
//     the fully resolved configuration a run actually used),
//   * throws pacer::Error naming the key and the expected type otherwise.
// After every component has read its keys, reject_unread_keys() turns any key that nobody read
// (a typo, or a key meaningless for the chosen method) into an error naming it.
//
// Config is a value type; copies are independent (pacer compare copies one per method).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace pacer {

class Config {
 public:
  Config();
  ~Config();
  Config(const Config& other);
  Config& operator=(const Config& other);

  // Parses TOML text. `source` (a file name) prefixes every error about this config.
  static Config parse(std::string_view text, const std::string& source);
  // Reads and parses a TOML file; a missing or unreadable file is an Error naming it.
  static Config load(const std::string& path);

  // Applies one override "key=value". The value is read as a TOML value ("0.1", "true",
  // "[1, 2]", "\"dgd\""); a bare word that is not valid TOML (dgd) is taken as a string.
  void set(std::string_view assignment);
  // Sets key to a string / number directly (used by pacer compare and tests).
  void set_string(std::string_view key, std::string_view value);
  void set_int(std::string_view key, int64_t value);
  void set_double(std::string_view key, double value);

  bool has(std::string_view key) const;

  int64_t get_int(std::string_view key, int64_t fallback) const;
  double get_double(std::string_view key, double fallback) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::string get_string(std::string_view key, std::string_view fallback) const;
  std::vector<double> get_doubles(std::string_view key, std::vector<double> fallback) const;

  // Required variants: a missing key is an Error.
  int64_t require_int(std::string_view key) const;
  double require_double(std::string_view key) const;
  std::string require_string(std::string_view key) const;

  // A string that must be one of `choices`; anything else is an Error listing them.
  std::string get_choice(std::string_view key, std::string_view fallback,
                         std::initializer_list<std::string_view> choices) const;

  // Validation helpers that throw an Error naming `key` and the expectation.
  [[noreturn]] void fail_key(std::string_view key, std::string_view expected) const;

  // Keys present in the document that no getter has read, sorted.
  std::vector<std::string> unread_keys() const;
  // Throws an Error naming the first unread key ("unknown key 'x' ...").
  void reject_unread_keys() const;

  // The resolved configuration: every key present plus every fallback a getter returned.
  std::string to_toml() const;

  const std::string& source() const { return source_; }

 private:
  std::unique_ptr<toml::table> table_;
  std::unique_ptr<toml::table> resolved_;
  std::string source_;
  mutable std::set<std::string, std::less<>> read_;
  // Records `key` as read; for fallbacks, also stores the value in resolved_.
  void mark_read(std::string_view key) const;
  friend class ConfigAccess;
};

}  // namespace pacer
