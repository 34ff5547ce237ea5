#include "claims_file.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <set>

#include "pacer/core/error.h"
#include "pacer/core/files.h"

namespace pacer::claims {
namespace {

// One table of the file with where it is ("claim 3, check 2"), so that every error names the file,
// the entry and the key. finish() rejects the keys that no getter read (a misspelt key).
class Entry {
 public:
  Entry(const toml::table& table, std::string file, std::string where)
      : table_(table), file_(std::move(file)), where_(std::move(where)) {}

  [[noreturn]] void bad(const std::string& key, const std::string& expected) const {
    fail("{}: {}{}{}: expected {}", file_, where_, where_.empty() ? "" : ", ", key, expected);
  }

  bool has(const std::string& key) const { return table_.get(key) != nullptr; }

  bool flag(const std::string& key) {
    read_.insert(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) return false;
    if (!node->is_boolean()) bad(key, "true or false");
    return *node->value<bool>();
  }

  // A required string.
  std::string text(const std::string& key) {
    if (!has(key)) bad(key, "a string (the key is missing)");
    return text_or(key, "");
  }

  std::string text_or(const std::string& key, const std::string& fallback) {
    read_.insert(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) return fallback;
    if (!node->is_string()) bad(key, "a string");
    return std::string(*node->value<std::string>());
  }

  std::vector<std::string> texts(const std::string& key, bool required) {
    read_.insert(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) {
      if (required) bad(key, "an array of strings (the key is missing)");
      return {};
    }
    std::vector<std::string> out;
    const toml::array* array = node->as_array();
    if (array == nullptr) bad(key, "an array of strings");
    for (const toml::node& item : *array) {
      if (!item.is_string()) bad(key, "an array of strings");
      out.push_back(std::string(*item.value<std::string>()));
    }
    if (required && out.empty()) bad(key, "a non-empty array of strings");
    return out;
  }

  double number(const std::string& key, double fallback) {
    read_.insert(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) return fallback;
    if (!node->is_number()) bad(key, "a number");
    return *node->value<double>();
  }

  std::vector<double> numbers(const std::string& key) {
    read_.insert(key);
    const toml::node* node = table_.get(key);
    std::vector<double> out;
    if (node != nullptr && node->is_number()) return {*node->value<double>()};
    const toml::array* array = node == nullptr ? nullptr : node->as_array();
    if (array == nullptr) bad(key, "a number or an array of numbers");
    for (const toml::node& item : *array) {
      if (!item.is_number()) bad(key, "a number or an array of numbers");
      out.push_back(*item.value<double>());
    }
    return out;
  }

  // The tables of array `key` ([[key]] or an array of inline tables), each as an Entry.
  std::vector<Entry> entries(const std::string& key, const std::string& singular) {
    read_.insert(key);
    const toml::node* node = table_.get(key);
    std::vector<Entry> out;
    if (node == nullptr) return out;
    const toml::array* array = node->as_array();
    if (array == nullptr) bad(key, "an array of tables");
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::table* item = (*array)[i].as_table();
      if (item == nullptr) bad(key, "an array of tables");
      out.emplace_back(
          *item, file_,
          fmt::format("{}{}{} {}", where_, where_.empty() ? "" : ", ", singular, i + 1));
    }
    return out;
  }

  // A choice among `names` (required unless `fallback` is given); returns its index.
  size_t choice(const std::string& key, const std::vector<std::string>& names,
                const char* fallback = nullptr) {
    const std::string value = fallback == nullptr ? text(key) : text_or(key, fallback);
    const auto it = std::find(names.begin(), names.end(), value);
    if (it == names.end()) {
      bad(key, fmt::format("one of {}, got '{}'", fmt::join(names, ", "), value));
    }
    return static_cast<size_t>(it - names.begin());
  }

  void finish() const {
    for (const auto& [key, node] : table_) {
      if (read_.count(std::string(key.str())) == 0) {
        fail("{}: {}{}unknown key '{}'", file_, where_, where_.empty() ? "" : ": ", key.str());
      }
    }
  }

  const std::string& where() const { return where_; }

 private:
  const toml::table& table_;
  std::string file_, where_;
  std::set<std::string> read_;
};

const std::vector<std::string> kMetrics = {"steps_to_target", "time_to_target", "work_to_target",
                                           "step_time",       "units_per_job",  "final_loss",
                                           "tilde_loss",      "grad_norm_sq",   "test_accuracy"};

std::vector<Group> read_groups(Entry& e) {
  std::vector<Group> groups;
  for (Entry& g : e.entries("groups", "group")) {
    groups.push_back(Group{g.text("label"), g.texts("candidates", true), g.texts("rivals", true)});
    g.finish();
  }
  if (groups.empty()) e.bad("groups", "at least one group (label, candidates, rivals) for leads");
  return groups;
}

// The rule and its bounds.
void read_rule(Entry& e, CheckSpec& c) {
  c.rule = static_cast<Rule>(
      e.choice("rule", {"within", "above", "below", "reaches", "equals", "leads"}));
  if (c.rule == Rule::kLeads) {
    c.groups = read_groups(e);
    return;
  }
  c.bounds = e.numbers(c.rule == Rule::kWithin ? "bounds" : "bound");
  if (c.rule == Rule::kWithin && (c.bounds.size() != 2 || !(c.bounds[0] < c.bounds[1]))) {
    e.bad("bounds", "two numbers [low, high] with low < high");
  }
  if (c.rule == Rule::kEquals) {
    if (c.bounds.size() != c.methods.size()) {
      e.bad("bound", fmt::format("one expected value per method ({})", c.methods.size()));
    }
    c.tolerance = e.number("tolerance", -1);
    if (!(c.tolerance >= 0)) e.bad("tolerance", "a number >= 0 (how near each value must be)");
  } else if (c.rule != Rule::kWithin && c.bounds.size() != 1) {
    e.bad("bound", "one number");
  }
}

CheckSpec read_check(Entry& e) {
  CheckSpec c;
  c.name = e.text("name");
  c.in = e.texts("in", true);
  c.separately = e.flag("separately");
  c.informative = e.flag("informative");
  c.compare = static_cast<Compare>(e.choice("compare", {"ratio", "difference", "value"}, "ratio"));
  c.quantifier =
      static_cast<Quantifier>(e.choice("quantifier", {"every", "some", "most"}, "every"));
  if (e.has("rule") && e.text_or("rule", "") == "leads") {
    read_rule(e, c);
    e.finish();
    return c;
  }
  c.methods = e.texts("methods", true);
  c.against_in = e.texts("against_in", false);
  c.against = e.text_or("against", "");
  c.metric = e.text("metric");
  if (c.metric.rfind("summary:", 0) != 0 &&
      std::find(kMetrics.begin(), kMetrics.end(), c.metric) == kMetrics.end()) {
    e.bad("metric", fmt::format("summary:KEY or one of {}", fmt::join(kMetrics, ", ")));
  }
  if (c.compare == Compare::kValue && (!c.against.empty() || !c.against_in.empty())) {
    e.bad("compare", "ratio or difference with against or against_in (value compares nothing)");
  }
  const std::string transform = e.text_or("transform", "");
  if (!transform.empty()) {
    if (transform != "distance") e.bad("transform", "\"distance\" or no key");
    if (c.compare != Compare::kValue) e.bad("transform", "no key unless compare = \"value\"");
    c.distance = true;
    c.minimum = e.number("minimum", 0);
    c.curvature = e.number("curvature", 1);
    if (!(c.curvature > 0)) e.bad("curvature", "a number > 0");
  }
  read_rule(e, c);
  e.finish();
  return c;
}

ClaimSpec read_claim(Entry& e, const std::vector<RegimeInfo>& regimes) {
  ClaimSpec claim;
  claim.id = e.text("id");
  claim.words = e.text("words");
  claim.paper = e.text("paper");
  claim.regimes = e.texts("regimes", false);
  for (const std::string& r : claim.regimes) {
    if (std::none_of(regimes.begin(), regimes.end(),
                     [&](const RegimeInfo& info) { return info.name == r; })) {
      e.bad("regimes", fmt::format("names of [[regime]] entries, got '{}'", r));
    }
  }
  if (claim.regimes.empty()) {
    for (const RegimeInfo& r : regimes) claim.regimes.push_back(r.name);
  }
  for (Entry& check : e.entries("check", "check")) claim.checks.push_back(read_check(check));
  if (claim.checks.empty()) e.bad("check", "at least one [[claim.check]]");
  e.finish();
  return claim;
}

}  // namespace

ClaimsFile read_claims_file(const std::string& path) {
  ClaimsFile f;
  f.path = path;
  toml::table root;
  try {
    root = toml::parse(read_file(path), path);
  } catch (const toml::parse_error& e) {
    fail("{}:{}:{}: invalid TOML: {}", path, e.source().begin.line, e.source().begin.column,
         e.description());
  }
  Entry top(root, path, "");
  f.title = top.text("title");
  f.setup = top.text("setup");
  f.quick_note = top.text_or("quick_note", "");
  for (Entry& r : top.entries("regime", "regime")) {
    f.regimes.push_back(RegimeInfo{r.text("name"), r.text("title")});
    r.finish();
  }
  if (f.regimes.empty()) top.bad("regime", "at least one [[regime]] (name, title)");
  for (Entry& c : top.entries("claim", "claim")) f.claims.push_back(read_claim(c, f.regimes));
  if (f.claims.empty()) top.bad("claim", "at least one [[claim]]");
  for (Entry& t : top.entries("table", "table")) {
    f.tables.push_back(TableSpec{t.text("title"), t.text("in"), t.text("regime")});
    t.finish();
  }
  top.finish();
  return f;
}

std::string describe_rule(const CheckSpec& c) {
  const char* quantity = c.compare == Compare::kRatio        ? "the paired ratio"
                         : c.compare == Compare::kDifference ? "the paired difference"
                                                             : "the value";
  std::string rule;
  switch (c.rule) {
    case Rule::kWithin:
      rule =
          fmt::format("{}'s 95 % interval within [{:g}, {:g}]", quantity, c.bounds[0], c.bounds[1]);
      break;
    case Rule::kAbove:
      rule = fmt::format("{}'s 95 % interval above {:g}", quantity, c.bounds[0]);
      break;
    case Rule::kBelow:
      rule = fmt::format("{}'s 95 % interval below {:g}", quantity, c.bounds[0]);
      break;
    case Rule::kReaches:
      rule = fmt::format("{}'s 95 % interval reaches {:g} (its low end at or below it)", quantity,
                         c.bounds[0]);
      break;
    case Rule::kEquals:
      rule = fmt::format("every seed's value within {:g} of the expected one", c.tolerance);
      break;
    case Rule::kLeads:
      rule =
          "a candidate is best by pacer's verdict rule (or the tie at the top holds candidates "
          "only)";
      break;
  }
  const char* quantifier = c.quantifier == Quantifier::kEvery  ? "in every case"
                           : c.quantifier == Quantifier::kSome ? "in some case"
                                                               : "in at least half the cases";
  return rule + " " + quantifier;
}

}  // namespace pacer::claims
