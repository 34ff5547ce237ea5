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
  // Names the entry by what it is once that is read ("claim '3', check 'fewer steps'").
  void set_where(std::string where) { where_ = std::move(where); }

 private:
  const toml::table& table_;
  std::string file_, where_;
  std::set<std::string> read_;
};

// A metric that a seed that missed the target has only as a lower bound (its end value).
template <double SeedRun::*kAtTarget, double SeedRun::*kAtEnd>
SeedValue to_target(const SeedRun& r) {
  return {r.reached ? r.*kAtTarget : r.*kAtEnd, !r.reached};
}
template <double SeedRun::*kField>
SeedValue plain(const SeedRun& r) {
  return {r.*kField, false};
}

constexpr SeedMetric kSeedMetrics[] = {
    {"steps_to_target", to_target<&SeedRun::steps_to_target, &SeedRun::end_steps>},
    {"time_to_target", to_target<&SeedRun::time_to_target, &SeedRun::end_time>},
    {"work_to_target", to_target<&SeedRun::work_to_target, &SeedRun::end_work>},
    {"step_time", plain<&SeedRun::step_time>},
    {"units_per_job", plain<&SeedRun::units_per_job>},
    {"units_per_worker_step", plain<&SeedRun::units_per_worker_step>},
    {"final_loss", plain<&SeedRun::final_loss>},
    {"tilde_loss", plain<&SeedRun::tilde_loss>},
    {"grad_norm_sq", plain<&SeedRun::grad_norm_sq>},
    {"test_accuracy", plain<&SeedRun::test_accuracy>},
};

std::vector<Group> read_groups(Entry& e) {
  std::vector<Group> groups;
  for (Entry& g : e.entries("groups", "group")) {
    Group group{g.text("label"), g.texts("candidates", true), g.texts("rivals", true)};
    for (const std::string& spec : group.candidates) {
      if (std::find(group.rivals.begin(), group.rivals.end(), spec) != group.rivals.end()) {
        g.bad("rivals", fmt::format("methods that are not candidates ('{}' is both)", spec));
      }
    }
    g.finish();
    groups.push_back(std::move(group));
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
  const bool two = c.rule == Rule::kWithin || c.rule == Rule::kReaches;
  c.bounds = e.numbers(two ? "bounds" : "bound");
  if (two && (c.bounds.size() != 2 || !(c.bounds[0] < c.bounds[1]))) {
    e.bad("bounds", c.rule == Rule::kWithin
                        ? "two numbers [low, high] with low < high"
                        : "two numbers [x, y] with x < y (the interval must reach x and lie "
                          "below y)");
  }
  if (c.rule == Rule::kEquals) {
    if (c.compare != Compare::kValue) e.bad("rule", "equals only with compare = \"value\"");
    if (c.bounds.size() != c.methods.size()) {
      e.bad("bound", fmt::format("one expected value per method ({})", c.methods.size()));
    }
    c.tolerance = e.number("tolerance", -1);
    if (!(c.tolerance >= 0)) e.bad("tolerance", "a number >= 0 (how near each value must be)");
  } else if (!two && c.bounds.size() != 1) {
    e.bad("bound", "one number");
  }
}

// What the methods are held against: required for ratios and differences, refused for values.
void read_against(Entry& e, CheckSpec& c) {
  c.against_in = e.texts("against_in", false);
  c.against = e.text_or("against", "");
  if (c.compare == Compare::kValue) {
    if (!c.against.empty() || !c.against_in.empty()) {
      e.bad("compare", "ratio or difference with against or against_in (value compares nothing)");
    }
    return;
  }
  if (c.against.empty() && c.against_in.empty()) {
    e.bad("against", "a method spec (or against_in: other folders) to compare the methods with");
  }
  if (c.against_in.empty() &&
      std::find(c.methods.begin(), c.methods.end(), c.against) != c.methods.end()) {
    e.bad("against", fmt::format("a method other than the compared ones (got '{}': a method "
                                 "against itself is always a tie)",
                                 c.against));
  }
}

void read_transform(Entry& e, CheckSpec& c) {
  const std::string transform = e.text_or("transform", "");
  if (transform.empty()) return;
  if (transform != "distance") e.bad("transform", "\"distance\" or no key");
  if (c.compare != Compare::kValue) e.bad("transform", "no key unless compare = \"value\"");
  c.distance = true;
  if (!e.has("minimum")) e.bad("minimum", "a number (the quadratic's minimum value)");
  c.minimum = e.number("minimum", 0);
  c.curvature = e.number("curvature", 1);
  if (!(c.curvature > 0)) e.bad("curvature", "a number > 0");
}

CheckSpec read_check(Entry& e, const std::string& claim) {
  CheckSpec c;
  c.name = e.text("name");
  e.set_where(fmt::format("claim '{}', check '{}'", claim, c.name));
  c.in = e.texts("in", true);
  c.separately = e.flag("separately");
  c.informative = e.flag("informative");
  c.quantifier =
      static_cast<Quantifier>(e.choice("quantifier", {"every", "some", "most"}, "every"));
  if (e.has("rule") && e.text_or("rule", "") == "leads") {
    for (const char* key : {"compare", "methods", "metric", "against", "against_in"}) {
      if (e.has(key)) e.bad(key, "no key with rule = \"leads\" (its groups name the methods)");
    }
    read_rule(e, c);
    e.finish();
    return c;
  }
  c.compare = static_cast<Compare>(e.choice("compare", {"ratio", "difference", "value"}, "ratio"));
  c.methods = e.texts("methods", true);
  read_against(e, c);
  c.metric = e.text("metric");
  c.seed_metric = find_seed_metric(c.metric);
  if (c.metric.rfind("summary:", 0) != 0 && c.seed_metric == nullptr) {
    e.bad("metric", "summary:KEY or one of " + seed_metric_names());
  }
  read_transform(e, c);
  read_rule(e, c);
  e.finish();
  return c;
}

ClaimSpec read_claim(Entry& e, const std::vector<RegimeInfo>& regimes) {
  ClaimSpec claim;
  claim.id = e.text("id");
  e.set_where(fmt::format("claim '{}'", claim.id));
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
  for (Entry& check : e.entries("check", "check")) {
    claim.checks.push_back(read_check(check, claim.id));
    for (size_t k = 0; k + 1 < claim.checks.size(); ++k) {
      if (claim.checks[k].name == claim.checks.back().name) {
        e.bad("check", fmt::format("checks of different names ('{}' twice)", claim.checks[k].name));
      }
    }
  }
  if (claim.checks.empty()) e.bad("check", "at least one [[claim.check]]");
  e.finish();
  return claim;
}

bool is_regime(const std::vector<RegimeInfo>& regimes, const std::string& name) {
  return std::any_of(regimes.begin(), regimes.end(),
                     [&](const RegimeInfo& r) { return r.name == name; });
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
    RegimeInfo regime{r.text("name"), r.text("title")};
    if (is_regime(f.regimes, regime.name)) r.bad("name", "a name no other regime has");
    f.regimes.push_back(std::move(regime));
    r.finish();
  }
  if (f.regimes.empty()) top.bad("regime", "at least one [[regime]] (name, title)");
  for (Entry& c : top.entries("claim", "claim")) {
    ClaimSpec claim = read_claim(c, f.regimes);
    for (const ClaimSpec& other : f.claims) {
      if (other.id == claim.id)
        c.bad("id", fmt::format("an id no other claim has ('{}' twice)", claim.id));
    }
    f.claims.push_back(std::move(claim));
  }
  if (f.claims.empty()) top.bad("claim", "at least one [[claim]]");
  for (Entry& t : top.entries("table", "table")) {
    TableSpec table{t.text("title"), t.text("in"), t.text("regime")};
    if (!is_regime(f.regimes, table.regime)) t.bad("regime", "the name of a [[regime]] entry");
    f.tables.push_back(std::move(table));
    t.finish();
  }
  top.finish();
  return f;
}

const SeedMetric* find_seed_metric(const std::string& name) {
  for (const SeedMetric& m : kSeedMetrics) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

std::string seed_metric_names() {
  std::vector<std::string> names;
  for (const SeedMetric& m : kSeedMetrics) names.emplace_back(m.name);
  return fmt::format("{}", fmt::join(names, ", "));
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
      rule = fmt::format(
          "{}'s 95 % interval below {:g} (a significant effect) and reaching {:g} (its low end at "
          "or below it: the paper's number is not excluded)",
          quantity, c.bounds[1], c.bounds[0]);
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
