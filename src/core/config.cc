#include "pacer/core/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "pacer/core/error.h"

namespace pacer {
namespace {

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
      read_(other.read_) {}
Config& Config::operator=(const Config& other) {
  if (this != &other) {
    table_ = std::make_unique<toml::table>(*other.table_);
    resolved_ = std::make_unique<toml::table>(*other.resolved_);
    source_ = other.source_;
    read_ = other.read_;
  }
  return *this;
}

Config Config::parse(std::string_view text, const std::string& source) {
  Config config;
  config.source_ = source;
  try {
    *config.table_ = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    fail("{}:{}:{}: invalid TOML: {}", source, e.source().begin.line, e.source().begin.column,
         e.description());
  }
  return config;
}

Config Config::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open config file (does it exist and is it readable?)", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse(buffer.str(), path);
}

void Config::set(std::string_view assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    fail("--set '{}': expected key=value", assignment);
  }
  std::string key(assignment.substr(0, eq));
  while (!key.empty() && key.back() == ' ') key.pop_back();
  std::string value(assignment.substr(eq + 1));
  while (!value.empty() && value.front() == ' ') value.erase(value.begin());
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

void Config::set_string(std::string_view key, std::string_view value) {
  put(*table_, key, std::string(value), source_);
}
void Config::set_int(std::string_view key, int64_t value) { put(*table_, key, value, source_); }
void Config::set_double(std::string_view key, double value) { put(*table_, key, value, source_); }

bool Config::has(std::string_view key) const { return find(*table_, key) != nullptr; }

void Config::mark_read(std::string_view key) const { read_.insert(std::string(key)); }

void Config::fail_key(std::string_view key, std::string_view expected) const {
  const toml::node* node = find(*table_, key);
  std::string got = node ? ", got " + describe(*node) : "";
  fail("{}: key '{}': expected {}{}", source_.empty() ? "config" : source_, key, expected, got);
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
  fail("{}: key '{}': expected one of {}, got \"{}\"", source_.empty() ? "config" : source_, key,
       fmt::join(choices, ", "), value);
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

void Config::reject_unread_keys() const {
  auto unread = unread_keys();
  if (!unread.empty()) {
    fail("{}: unknown key '{}' (misspelt, or not used by this method/model/timing model)",
         source_.empty() ? "config" : source_, unread.front());
  }
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
