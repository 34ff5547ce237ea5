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
// Switching a component. Overrides (set*, unset) are remembered: a key is a *file key* while no
// override has touched it. An override that changes one of kComponentKeys from the file's value
// (--set method.name=dgd on a pgc-cr config) switches that component, and the file's keys in the
// component's table that nothing read are the replaced choice's: drop_replaced_keys(), called
// once every component has read its keys and before reject_unread_keys(), removes them (to_toml()
// no longer shows them) and reports them. A key an override set is never dropped, so a
// misspelt --set is still an unknown key.
//
// Origins. Every error about a key names where its value came from: the config file (source()),
// or the command-line words of the override that set it ("--set data.max_train=abc",
// "--methods pgc-cr:k=2"), so a mistake on the command line is not blamed on the file. An
// unknown key or choice names the nearest valid one (core/suggest.h).
//
// Config is a value type; copies are independent (pacer compare copies one per method).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
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
  // `origin` is what errors about the key name as its source; "" means "--set ASSIGNMENT".
  void set(std::string_view assignment, std::string_view origin = "");
  // Sets key to a string / number directly (used by pacer compare and tests). `origin`, when not
  // empty, is what errors about the key name as its source (as for set()); else source().
  void set_string(std::string_view key, std::string_view value, std::string_view origin = "");
  void set_int(std::string_view key, int64_t value);
  void set_double(std::string_view key, double value);
  // Removes `key` (a value, or a whole table) from the document: --unset. A key that is not
  // present (in the file or from an earlier override) is an Error naming it.
  void unset(std::string_view key);

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
  // A required string naming a file or folder that must exist. A path that does not is an
  // Error naming the key, the path and, for a relative path, the folder it was resolved against
  // (the working directory). The path is returned as written.
  std::string require_existing_path(std::string_view key) const;

  // A string that must be one of `choices`; anything else is an Error listing them and naming
  // the nearest.
  std::string get_choice(std::string_view key, std::string_view fallback,
                         std::initializer_list<std::string_view> choices) const;

  // Validation helpers that throw an Error naming `key`, its origin and the expectation.
  [[noreturn]] void fail_key(std::string_view key, std::string_view expected) const;

  // Where `key`'s value came from, as errors name it: the override's command-line words when one
  // set the key (or a table above it) with an origin, else source() ("config" when empty).
  std::string origin(std::string_view key) const;
  // "; did you mean \"KEY\"?" naming the key read so far (by a getter, present or not) nearest
  // to `key`, or "" (core/suggest.h). Meaningful once every component has read its keys.
  std::string suggest_key(std::string_view key) const;

  // Keys present in the document that no getter has read, sorted.
  std::vector<std::string> unread_keys() const;
  // Throws an Error naming the first unread key, its origin and the nearest key that was read
  // ("--set data.max_tarin=6000: unknown key 'data.max_tarin' ...; did you mean ...").
  void reject_unread_keys() const;

  // The keys that name a component's choice; each one's table (method.*, ...) is the component's.
  static constexpr std::array<std::string_view, 5> kComponentKeys = {
      "method.name", "timing.model", "model.name", "data.source", "partition.scheme"};

  // A component switch that dropped keys.
  struct Switch {
    std::string key;                   // one of kComponentKeys
    std::optional<std::string> from;   // the file's value (nullopt: absent, the default)
    std::optional<std::string> to;     // the value now (nullopt: unset, the default)
    std::vector<std::string> dropped;  // sorted
    // "--set method.name=dgd dropped method.decoder, method.s (...)": the override as a
    // command line writes it, what it dropped, and the file's choice they were for.
    std::string describe(std::string_view source) const;
  };
  // For every component whose choice an override changed, removes the file keys of its table
  // that nothing has read, and returns those switches (only the ones that dropped something).
  // Call it once every component has read its keys, before reject_unread_keys().
  std::vector<Switch> drop_replaced_keys();

  // The resolved configuration: every key present plus every fallback a getter returned.
  std::string to_toml() const;
  // Every key present in the document (not the fallbacks), as a command line writes its value
  // (a string bare, anything else as TOML), by key. Marks nothing as read.
  std::map<std::string, std::string> values() const;

  const std::string& source() const { return source_; }

 private:
  std::unique_ptr<toml::table> table_;
  std::unique_ptr<toml::table> resolved_;
  std::string source_;
  mutable std::set<std::string, std::less<>> read_;
  // Keys (or tables) an override set or removed; every other key present came from the file.
  std::set<std::string, std::less<>> overridden_;
  // The file's value of each component key an override touched (nullopt: absent in the file).
  std::map<std::string, std::optional<std::string>, std::less<>> file_choices_;
  // The command-line words that set each key (or table) an override with an origin touched.
  std::map<std::string, std::string, std::less<>> origins_;
  // Records `key` as read; for fallbacks, also stores the value in resolved_.
  void mark_read(std::string_view key) const;
  // Called before an override changes `key`: records it, and a component's file choice.
  void note_override(std::string_view key);
  // Whether a key present in the document came from the file (no override touched it or a
  // table above it).
  bool from_file(std::string_view key) const;
  friend class ConfigAccess;
};

}  // namespace pacer
