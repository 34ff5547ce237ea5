#include "pacer/core/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pacer/core/error.h"
#include "pacer/core/suggest.h"

namespace pacer {
namespace {

// Bounds on a config, checked before toml++ sees it, so that no input can exhaust memory or the
// stack: toml++ and this file walk nested tables recursively, one stack frame per level, and a
// dotted key of 100 000 parts (a 200 KB line) overflows an 8 MB stack. Both limits are far above
// any real config: pacer's deepest key has 3 parts and its bundled configs are a few KB.
constexpr size_t kMaxConfigBytes = size_t{64} << 20;  // 64 MiB
// Levels of tables and arrays nested in one another: the parts of a [table] header and of a
// dotted key, inline tables and arrays all count (below toml++'s own 256 nested values).
constexpr int kMaxNesting = 100;

[[noreturn]] void fail_nesting(const std::string& source, int line, int depth) {
  fail(
      "{}:{}: a key or value nested {} levels deep (dotted-key parts, [table] headers, inline "
      "tables and arrays all count); pacer reads at most {} (its own keys have at most 3 parts)",
      source, line, depth, kMaxNesting);
}

// Skips the string (quoted key or value) that starts at text[i]; returns the index of its last
// character, counting the newlines of a multi-line string into `line`. An unterminated string
// ends before the newline (or at the end), where toml++ will report it.
size_t skip_string(std::string_view text, size_t i, int& line) {
  const char quote = text[i];
  const bool basic = quote == '"';
  const bool multi = text.substr(i, 3) == std::string(3, quote);
  size_t j = i + (multi ? 3 : 1);
  for (; j < text.size(); ++j) {
    const char c = text[j];
    if (basic && c == '\\') {
      if (j + 1 < text.size() && text[j + 1] == '\n') ++line;
      ++j;
    } else if (c == '\n') {
      if (!multi) return j - 1;
      ++line;
    } else if (c == quote && (!multi || text.substr(j, 3) == std::string(3, quote))) {
      if (!multi) return j;
      j += 2;
      // Up to two quotes next to the closing delimiter belong to the string.
      for (int extra = 0; extra < 2 && j + 1 < text.size() && text[j + 1] == quote; ++extra) ++j;
      return j;
    }
  }
  return text.size() - 1;
}

// Throws an Error naming source:line if a key or value nests deeper than kMaxNesting. A lexical
// scan that follows TOML's structure (strings, comments, [headers], keys, arrays, inline tables)
// without parsing values; on malformed text it may stop counting, and toml++ then reports the
// syntax error.
void check_nesting(std::string_view text, const std::string& source) {
  struct Open {
    char kind;  // '[' array or '{' inline table
    int depth;  // of the container itself
  };
  std::vector<Open> open;
  int line = 1, header_depth = 0, key_depth = 0, value_depth = 0;
  bool line_start = true, in_key = false, in_header = false;
  const auto nest = [&](int depth) {
    if (depth > kMaxNesting) fail_nesting(source, line, depth);
    return depth;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      if (open.empty()) line_start = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '#') {
      i = std::min(text.find('\n', i), text.size()) - 1;
      continue;
    }
    if (line_start) {
      line_start = false;
      in_header = c == '[';
      in_key = true;
      key_depth = nest(in_header ? 1 : header_depth + 1);
      if (in_header) {
        if (i + 1 < text.size() && text[i + 1] == '[') ++i;  // [[array of tables]]
        continue;
      }
    }
    if (c == '"' || c == '\'') {
      i = skip_string(text, i, line);
    } else if (in_key) {
      if (c == '.') {
        key_depth = nest(key_depth + 1);
      } else if (c == '=') {
        in_key = false;
        value_depth = key_depth;
      } else if (c == ']' && in_header) {
        in_key = in_header = false;
        header_depth = key_depth;
      } else if (c == '}' && !open.empty()) {  // an empty inline table
        open.pop_back();
        in_key = false;
      }
    } else if (c == '[' || c == '{') {
      open.push_back({c, value_depth});
      if (c == '[') {
        value_depth = nest(value_depth + 1);  // its elements
      } else {
        in_key = true;
        key_depth = nest(value_depth + 1);
      }
    } else if (c == ',' && !open.empty()) {
      if (open.back().kind == '[') {
        value_depth = open.back().depth + 1;
      } else {
        in_key = true;
        key_depth = open.back().depth + 1;
      }
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
      if (!open.empty() && open.back().kind == '[') value_depth = open.back().depth + 1;
    }
  }
}

std::vector<std::string> split_key(std::string_view key) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

const toml::node* find(const toml::table& table, std::string_view key) {
  const toml::table* current = &table;
  auto parts = split_key(key);
  for (size_t i = 0; i < parts.size(); ++i) {
    const toml::node* node = current->get(parts[i]);
    if (!node) return nullptr;
    if (i + 1 == parts.size()) return node;
    current = node->as_table();
    if (!current) return nullptr;
  }
  return nullptr;
}

// Inserts or replaces `key` in `table`, creating intermediate tables.
template <typename T>
void put(toml::table& table, std::string_view key, T&& value, const std::string& source) {
  toml::table* current = &table;
  auto parts = split_key(key);
  if (parts.size() > static_cast<size_t>(kMaxNesting)) {  // as check_nesting bounds a file's keys
    fail("{}: cannot set '{}...': a key of {} parts; pacer reads at most {}", source,
         key.substr(0, 40), parts.size(), kMaxNesting);
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* node = current->get(parts[i]);
    if (!node) {
      current->insert(parts[i], toml::table{});
      node = current->get(parts[i]);
    }
    current = node->as_table();
    if (!current) {
      fail("{}: cannot set '{}': '{}' is a value, not a table", source, key, parts[i]);
    }
  }
  current->insert_or_assign(parts.back(), std::forward<T>(value));
}

void collect_leaves(const toml::table& table, const std::string& prefix,
                    std::vector<std::string>& out) {
  for (const auto& [k, node] : table) {
    std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = node.as_table()) {
      collect_leaves(*sub, key, out);
    } else {
      out.push_back(key);
    }
  }
}

// A value as a user writes it on the command line: a string bare, anything else as TOML.
std::string value_text(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  std::ostringstream out;
  node.visit([&](auto&& v) { out << v; });
  return out.str();
}

std::string describe(const toml::node& node) {
  std::ostringstream out;
  switch (node.type()) {
    case toml::node_type::string:
      return fmt::format("string \"{}\"", node.as_string()->get());
    case toml::node_type::integer:
      return fmt::format("integer {}", node.as_integer()->get());
    case toml::node_type::floating_point:
      return fmt::format("number {}", node.as_floating_point()->get());
    case toml::node_type::boolean:
      return fmt::format("boolean {}", node.as_boolean()->get());
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date/time";
  }
}

}  // namespace

Config::Config()
    : table_(std::make_unique<toml::table>()), resolved_(std::make_unique<toml::table>()) {}
Config::~Config() = default;
Config::Config(const Config& other)
    : table_(std::make_unique<toml::table>(*other.table_)),
      resolved_(std::make_unique<toml::table>(*other.resolved_)),
      source_(other.source_),
      read_(other.read_),
      overridden_(other.overridden_),
      file_choices_(other.file_choices_),
      origins_(other.origins_) {}
Config& Config::operator=(const Config& other) {
  if (this != &other) {
    table_ = std::make_unique<toml::table>(*other.table_);
    resolved_ = std::make_unique<toml::table>(*other.resolved_);
    source_ = other.source_;
    read_ = other.read_;
    overridden_ = other.overridden_;
    file_choices_ = other.file_choices_;
    origins_ = other.origins_;
  }
  return *this;
}

Config Config::parse(std::string_view text, const std::string& source) {
  Config config;
  config.source_ = source;
  if (text.size() > kMaxConfigBytes) {
    fail("{}: config text of {} bytes; pacer reads configs of up to {} MiB", source, text.size(),
         kMaxConfigBytes >> 20);
  }
  check_nesting(text, source);
  try {
    *config.table_ = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    fail("{}:{}:{}: invalid TOML: {}", source, e.source().begin.line, e.source().begin.column,
         e.description());
  }
  return config;
}

Config Config::load(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    fail("{}: is a directory, expected a TOML config file", path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open config file (does it exist and is it readable?)", path);
  // At most one byte more than parse() accepts, so that a huge file (or /dev/zero) is refused
  // without reading it all.
  std::string text;
  std::array<char, 1 << 16> chunk;
  while (text.size() <= kMaxConfigBytes) {
    in.read(chunk.data(), chunk.size());
    text.append(chunk.data(), static_cast<size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) fail("{}: cannot read config file", path);
  if (text.size() > kMaxConfigBytes) {
    fail("{}: config file larger than {} MiB; pacer's configs are a few KB (is it the right file?)",
         path, kMaxConfigBytes >> 20);
  }
  return parse(text, path);
}

void Config::set(std::string_view assignment, std::string_view origin) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    fail("--set '{}': expected key=value", assignment);
  }
  std::string key(assignment.substr(0, eq));
  while (!key.empty() && key.back() == ' ') key.pop_back();
  std::string value(assignment.substr(eq + 1));
  while (!value.empty() && value.front() == ' ') value.erase(value.begin());
  note_override(key);
  origins_[key] = origin.empty() ? fmt::format("--set {}={}", key, value) : std::string(origin);
  toml::table parsed;
  bool ok = true;
  try {
    parsed = toml::parse("v = " + value);
  } catch (const toml::parse_error&) {
    ok = false;
  }
  if (ok && parsed.get("v")) {
    toml::node* node = parsed.get("v");
    node->visit([&](auto&& v) { put(*table_, key, v, "--set"); });
  } else {
    put(*table_, key, value, "--set");
  }
}

void Config::set_string(std::string_view key, std::string_view value, std::string_view origin) {
  note_override(key);
  put(*table_, key, std::string(value), source_);
  if (!origin.empty()) origins_[std::string(key)] = origin;
}
void Config::set_int(std::string_view key, int64_t value) {
  note_override(key);
  put(*table_, key, value, source_);
}
void Config::set_double(std::string_view key, double value) {
  note_override(key);
  put(*table_, key, value, source_);
}

void Config::unset(std::string_view key) {
  const std::vector<std::string> parts = split_key(key);
  // chain[i + 1] is the table parts[i] names in chain[i].
  std::vector<toml::table*> chain{table_.get()};
  for (size_t i = 0; i + 1 < parts.size() && chain.back(); ++i) {
    toml::node* node = chain.back()->get(parts[i]);
    chain.push_back(node ? node->as_table() : nullptr);
  }
  if (!chain.back() || !chain.back()->contains(parts.back())) {
    fail("--unset '{}': no such key in {} or an earlier --set", key,
         source_.empty() ? "the config" : source_);
  }
  note_override(key);
  chain.back()->erase(parts.back());
  // A table left empty goes too (to_toml() would show an empty [table]).
  for (size_t i = chain.size() - 1; i > 0 && chain[i]->empty(); --i) {
    chain[i - 1]->erase(parts[i - 1]);
  }
}

void Config::note_override(std::string_view key) {
  // The previous override's words no longer describe the key (a plain set_* has the file's).
  const auto old = origins_.find(key);
  if (old != origins_.end()) origins_.erase(old);
  for (std::string_view component : kComponentKeys) {
    const bool covers = component == key ||
                        (component.size() > key.size() && component.substr(0, key.size()) == key &&
                         component[key.size()] == '.');
    if (!covers || file_choices_.count(component)) continue;
    // The first override of a component key: its value now is the file's.
    std::optional<std::string>& choice = file_choices_[std::string(component)];
    if (const toml::node* node = find(*table_, component)) choice = value_text(*node);
  }
  overridden_.insert(std::string(key));
}

bool Config::from_file(std::string_view key) const {
  for (size_t dot = key.find('.'); dot != std::string_view::npos; dot = key.find('.', dot + 1)) {
    if (overridden_.count(key.substr(0, dot))) return false;  // a table above it was set
  }
  return !overridden_.count(key);
}

bool Config::has(std::string_view key) const { return find(*table_, key) != nullptr; }

void Config::mark_read(std::string_view key) const { read_.insert(std::string(key)); }

std::string Config::origin(std::string_view key) const {
  // The key itself, then each table above it, longest first.
  for (std::string_view prefix = key;;) {
    const auto it = origins_.find(prefix);
    if (it != origins_.end()) return it->second;
    const size_t dot = prefix.rfind('.');
    if (dot == std::string_view::npos) break;
    prefix = prefix.substr(0, dot);
  }
  return source_.empty() ? "config" : source_;
}

std::string Config::suggest_key(std::string_view key) const {
  return did_you_mean(key, std::vector<std::string>(read_.begin(), read_.end()));
}

void Config::fail_key(std::string_view key, std::string_view expected) const {
  const toml::node* node = find(*table_, key);
  std::string got = node ? ", got " + describe(*node) : "";
  fail("{}: key '{}': expected {}{}", origin(key), key, expected, got);
}

int64_t Config::get_int(std::string_view key, int64_t fallback) const {
  mark_read(key);
  const toml::node* node = find(*table_, key);
  if (!node) {
    put(*resolved_, key, fallback, source_);
    return fallback;
  }
  if (auto v = node->value_exact<int64_t>()) return *v;
  if (auto d = node->value_exact<double>()) {
    if (std::floor(*d) == *d && std::abs(*d) < 0x1p63) return static_cast<int64_t>(*d);
  }
  fail_key(key, "an integer");
}

double Config::get_double(std::string_view key, double fallback) const {
  mark_read(key);
  const toml::node* node = find(*table_, key);
  if (!node) {
    put(*resolved_, key, fallback, source_);
    return fallback;
  }
  if (auto v = node->value_exact<double>()) return *v;
  if (auto v = node->value_exact<int64_t>()) return static_cast<double>(*v);
  fail_key(key, "a number");
}

bool Config::get_bool(std::string_view key, bool fallback) const {
  mark_read(key);
  const toml::node* node = find(*table_, key);
  if (!node) {
    put(*resolved_, key, fallback, source_);
    return fallback;
  }
  if (auto v = node->value_exact<bool>()) return *v;
  fail_key(key, "true or false");
}

std::string Config::get_string(std::string_view key, std::string_view fallback) const {
  mark_read(key);
  const toml::node* node = find(*table_, key);
  if (!node) {
    put(*resolved_, key, std::string(fallback), source_);
    return std::string(fallback);
  }
  if (auto v = node->value_exact<std::string>()) return *v;
  fail_key(key, "a string");
}

std::vector<double> Config::get_doubles(std::string_view key, std::vector<double> fallback) const {
  mark_read(key);
  const toml::node* node = find(*table_, key);
  if (!node) {
    toml::array arr;
    for (double v : fallback) arr.push_back(v);
    put(*resolved_, key, std::move(arr), source_);
    return fallback;
  }
  const toml::array* arr = node->as_array();
  if (!arr) fail_key(key, "an array of numbers");
  std::vector<double> out;
  for (const toml::node& item : *arr) {
    if (auto v = item.value_exact<double>()) {
      out.push_back(*v);
    } else if (auto i = item.value_exact<int64_t>()) {
      out.push_back(static_cast<double>(*i));
    } else {
      fail_key(key, "an array of numbers");
    }
  }
  return out;
}

int64_t Config::require_int(std::string_view key) const {
  if (!has(key)) fail_key(key, "an integer (the key is required)");
  return get_int(key, 0);
}
double Config::require_double(std::string_view key) const {
  if (!has(key)) fail_key(key, "a number (the key is required)");
  return get_double(key, 0);
}
std::string Config::require_string(std::string_view key) const {
  if (!has(key)) fail_key(key, "a string (the key is required)");
  return get_string(key, "");
}

std::string Config::get_choice(std::string_view key, std::string_view fallback,
                               std::initializer_list<std::string_view> choices) const {
  std::string value = get_string(key, fallback);
  for (std::string_view c : choices) {
    if (value == c) return value;
  }
  fail("{}: key '{}': expected one of {}, got \"{}\"{}", origin(key), key, fmt::join(choices, ", "),
       value, did_you_mean(value, std::vector<std::string>(choices.begin(), choices.end())));
}

std::string Config::require_existing_path(std::string_view key) const {
  const std::string path = require_string(key);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return path;
  const std::filesystem::path written(path);
  const std::string where =
      written.is_absolute()
          ? std::string()
          : fmt::format(" (resolved against {})", std::filesystem::current_path(ec).string());
  fail("{}: {}: \"{}\" not found{}", origin(key), key, path, where);
}

std::vector<std::string> Config::unread_keys() const {
  std::vector<std::string> leaves;
  collect_leaves(*table_, "", leaves);
  std::vector<std::string> unread;
  for (const auto& key : leaves) {
    if (!read_.count(key)) unread.push_back(key);
  }
  std::sort(unread.begin(), unread.end());
  return unread;
}

std::vector<Config::Switch> Config::drop_replaced_keys() {
  std::vector<std::string> unread = unread_keys();
  std::vector<Switch> switches;
  for (const auto& [key, from] : file_choices_) {
    const toml::node* node = find(*table_, key);
    std::optional<std::string> to;
    if (node) to = value_text(*node);
    if (to == from) continue;  // overridden with the file's own choice: nothing switched
    const std::string table = key.substr(0, key.find('.') + 1);  // "method."
    Switch change{key, from, to, {}};
    for (const std::string& leaf : unread) {
      if (leaf.rfind(table, 0) == 0 && from_file(leaf)) change.dropped.push_back(leaf);
    }
    if (change.dropped.empty()) continue;
    for (const std::string& leaf : change.dropped) unset(leaf);
    switches.push_back(std::move(change));
  }
  return switches;
}

std::string Config::Switch::describe(std::string_view source) const {
  const std::string override_text =
      to ? fmt::format("--set {}={}", key, *to) : fmt::format("--unset {}", key);
  return fmt::format("{} dropped {} (from {}, where {}; unused with {})", override_text,
                     fmt::join(dropped, ", "), source.empty() ? "the config" : source,
                     from ? fmt::format("{} = \"{}\"", key, *from) : key + " is not set",
                     to ? "\"" + *to + "\"" : "the default");
}

void Config::reject_unread_keys() const {
  auto unread = unread_keys();
  if (!unread.empty()) {
    fail("{}: unknown key '{}' (misspelt, or not used by this method/model/timing model){}",
         origin(unread.front()), unread.front(), suggest_key(unread.front()));
  }
}

std::map<std::string, std::string> Config::values() const {
  std::vector<std::string> leaves;
  collect_leaves(*table_, "", leaves);
  std::map<std::string, std::string> out;
  for (const std::string& key : leaves) out[key] = value_text(*find(*table_, key));
  return out;
}

std::string Config::to_toml() const {
  toml::table merged = *resolved_;
  std::vector<std::string> leaves;
  collect_leaves(*table_, "", leaves);
  for (const auto& key : leaves) {
    const toml::node* node = find(*table_, key);
    node->visit([&](auto&& v) { put(merged, key, v, source_); });
  }
  std::ostringstream out;
  out << merged << "\n";
  return out.str();
}

}  // namespace pacer
