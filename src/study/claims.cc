#include "pacer/study/claims.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "claims_file.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/report/comparison.h"
#include "pacer/report/verdict.h"
#include "pacer/study/sweep.h"

namespace pacer {

using claims::CheckSpec;
using claims::ClaimsFile;
using claims::ClaimSpec;
using claims::Compare;
using claims::Group;
using claims::Quantifier;
using claims::Rule;
using claims::SeedValue;
using claims::TableSpec;

std::string outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kHolds:
      return "holds";
    case Outcome::kFails:
      return "fails";
    case Outcome::kRegimeDependent:
      return "regime-dependent";
    case Outcome::kUndecided:
      break;
  }
  return "undecided";
}

namespace {

// A comparison a check reads, with its label ("" or a sweep cell's axis values). Every SeedRun's
// folder is relative to the regime's folder.
struct Labelled {
  std::string label;
  Comparison comparison;
  std::vector<std::string> axes, values;  // a sweep cell's axis keys and values
  std::string where;                      // "regime/folder" for errors
};

// The results under OUT/<regime>: comparisons read from runs.csv, and sweeps' cells.
class Results {
 public:
  explicit Results(std::string out_dir) : out_dir_(std::move(out_dir)) {}

  // The comparisons `folders` of `regime` stand for (see claims.h: merged, or a sweep's cells).
  std::vector<Labelled> comparisons(const std::string& regime,
                                    const std::vector<std::string>& folders) {
    const std::string base = out_dir_ + "/" + regime;
    for (const std::string& folder : folders) {
      const std::string source = regime + "/" + folder;
      if (std::find(sources_.begin(), sources_.end(), source) == sources_.end()) {
        sources_.push_back(source);
      }
      if (folders.size() > 1 && std::filesystem::exists(base + "/" + folder + "/sweep.csv")) {
        fail(
            "{}/{}: a sweep, listed with other folders (a sweep stands alone in `in`: it is "
            "judged cell by cell)",
            base, folder);
      }
    }
    if (folders.size() == 1 && std::filesystem::exists(base + "/" + folders[0] + "/sweep.csv")) {
      return cells(regime, folders[0]);
    }
    Labelled merged;
    for (const std::string& folder : folders) merge(merged.comparison, load(regime, folder));
    merged.where = fmt::format("{}/{}", regime, fmt::join(folders, " + "));
    return {merged};
  }

  // The regime's folder (what SeedRun::folder is relative to).
  std::string base(const std::string& regime) const { return out_dir_ + "/" + regime; }
  int seeds() const { return seeds_; }
  // "regime/folder" of every comparison or sweep read, in the order first read.
  const std::vector<std::string>& sources() const { return sources_; }

 private:
  // One comparison folder's runs.csv, with run folders made relative to the regime's folder.
  Comparison load(const std::string& regime, const std::string& folder) {
    const std::string path = base(regime) + "/" + folder + "/runs.csv";
    if (!std::filesystem::exists(path)) {
      fail("{}: no such file (has the reproduction's comparison {} run in regime {}?)", path,
           folder, regime);
    }
    Comparison c = read_seed_runs(read_file(path), path);
    for (MethodResult& m : c.methods) {
      for (SeedRun& r : m.runs) r.folder = folder + "/" + r.folder;
    }
    for (const MethodResult& m : c.methods)
      seeds_ = std::max(seeds_, static_cast<int>(m.runs.size()));
    return c;
  }

  // Adds `from`'s methods to `into`; a method already there must have the same runs.
  static void merge(Comparison& into, Comparison from) {
    if (into.methods.empty()) {
      into = std::move(from);
      return;
    }
    if (into.targets != from.targets || into.budget.kind != from.budget.kind ||
        into.budget.value != from.budget.value) {
      fail("{}: another target or budget than {}: comparisons judged together must share them",
           from.methods.front().runs.front().folder, into.methods.front().runs.front().folder);
    }
    for (MethodResult& m : from.methods) {
      const auto same = std::find_if(into.methods.begin(), into.methods.end(),
                                     [&](const MethodResult& o) { return o.spec == m.spec; });
      if (same == into.methods.end()) {
        into.methods.push_back(std::move(m));
        continue;
      }
      for (size_t k = 0; k < m.runs.size(); ++k) {
        const SeedRun &a = m.runs[k], &b = same->runs.at(k);
        if (a.seed != b.seed || a.end_steps != b.end_steps || a.reached != b.reached) {
          fail(
              "{}: {} differs from its runs in {} (seed {}): the comparisons are not of the "
              "same runs",
              a.folder, m.spec, b.folder, a.seed);
        }
      }
    }
  }

  std::vector<Labelled> cells(const std::string& regime, const std::string& folder) {
    const SweepLayout layout = read_sweep_layout(base(regime) + "/" + folder);
    std::vector<Labelled> out;
    for (const SweepCell& cell : layout.cells) {
      Labelled l{"", load(regime, folder + "/" + cell.folder), layout.keys, cell.values,
                 fmt::format("{}/{}/{}", regime, folder, cell.folder)};
      std::vector<std::string> assignments;
      for (size_t a = 0; a < layout.keys.size(); ++a) {
        assignments.push_back(layout.keys[a] + " = " + cell.values[a]);
      }
      l.label = fmt::format("{}", fmt::join(assignments, ", "));
      out.push_back(std::move(l));
    }
    return out;
  }

  std::string out_dir_;
  int seeds_ = 0;
  std::vector<std::string> sources_;
};

const MethodResult& method_in(const Labelled& c, const std::string& spec,
                              const std::string& where) {
  for (const MethodResult& m : c.comparison.methods) {
    if (m.spec == spec) return m;
  }
  fail("{}: no method '{}' in {}{}", where, spec, c.where,
       c.label.empty() ? "" : " (" + c.label + ")");
}

// Every path at which `key` holds a number in a summary.json document ("method_stats.x").
void find_numbers(const nlohmann::json& j, const std::string& key, const std::string& path,
                  std::vector<std::pair<std::string, double>>& found) {
  if (!j.is_object()) return;
  for (const auto& [name, child] : j.items()) {
    const std::string here = path.empty() ? name : path + "." + name;
    if (name == key && child.is_number()) found.emplace_back(here, child.get<double>());
    find_numbers(child, key, here, found);
  }
}

SeedValue seed_value(const CheckSpec& c, const SeedRun& r, const std::string& base) {
  if (c.seed_metric != nullptr) return c.seed_metric->of(r);
  const std::string key = c.metric.substr(8), path = base + "/" + r.folder + "/summary.json";
  nlohmann::json summary;
  try {
    summary = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not a JSON document ({})", path, e.what());
  }
  std::vector<std::pair<std::string, double>> found;
  find_numbers(summary, key, "", found);
  if (found.empty()) fail("{}: no number '{}' (claims file: metric {})", path, key, c.metric);
  if (found.size() > 1) {
    fail("{}: '{}' at {} and {}: name one by a key that occurs once", path, key, found[0].first,
         found[1].first);
  }
  return {found.front().second, false};
}

// What the censored seeds make of an estimate: the true value is at least (lower bound) or at
// most (upper bound) what the runs show, or either (unknown).
enum class Bound { kExact, kLower, kUpper, kUnknown };

// The rule's outcome on one interval (claims.h: the outcomes a bound allows).
Outcome judge_interval(const CheckSpec& c, const Estimate& e, Bound bound) {
  if (!e.has_interval()) return Outcome::kUndecided;
  const bool lower_ok = bound == Bound::kExact || bound == Bound::kLower;
  const bool upper_ok = bound == Bound::kExact || bound == Bound::kUpper;
  const double x = c.bounds[0];
  switch (c.rule) {
    case Rule::kAbove:
      if (e.low > x && lower_ok) return Outcome::kHolds;
      if (e.high < x && upper_ok) return Outcome::kFails;
      break;
    case Rule::kBelow:
      if (e.high < x && upper_ok) return Outcome::kHolds;
      if (e.low > x && lower_ok) return Outcome::kFails;
      break;
    case Rule::kWithin:
      if (x <= e.low && e.high <= c.bounds[1] && bound == Bound::kExact) return Outcome::kHolds;
      if (e.high < x && upper_ok) return Outcome::kFails;
      if (e.low > c.bounds[1] && lower_ok) return Outcome::kFails;
      break;
    case Rule::kReaches:  // [x, y]: significant (below y) and reaching x
      if (e.low <= x && e.high < c.bounds[1] && upper_ok) return Outcome::kHolds;
      if (e.low > x && lower_ok) return Outcome::kFails;
      break;
    case Rule::kEquals:
    case Rule::kLeads:
      break;
  }
  return Outcome::kUndecided;
}

// A method's values over seeds, paired by seed with `other`'s (null for a value).
struct Pairs {
  std::vector<double> mine, theirs;
  bool mine_censored = false, theirs_censored = false;
  int diverged = 0;
};

Pairs collect(const CheckSpec& c, const MethodResult& m, const MethodResult* other,
              const std::string& base) {
  Pairs p;
  for (const SeedRun& r : m.runs) {
    const SeedRun* o = nullptr;
    if (other != nullptr) {
      for (const SeedRun& candidate : other->runs) {
        if (candidate.seed == r.seed) o = &candidate;
      }
      if (o == nullptr) continue;
    }
    p.diverged += (r.diverged || (o != nullptr && o->diverged)) ? 1 : 0;
    SeedValue v = seed_value(c, r, base);
    if (c.distance) v.value = std::sqrt(std::max(0.0, v.value - c.minimum) / c.curvature);
    p.mine.push_back(v.value);
    p.mine_censored = p.mine_censored || v.censored;
    if (o != nullptr) {
      const SeedValue w = seed_value(c, *o, base);
      p.theirs.push_back(w.value);
      p.theirs_censored = p.theirs_censored || w.censored;
    }
  }
  return p;
}

Estimate estimate_of(const CheckSpec& c, const Pairs& p) {
  if (c.compare == Compare::kRatio) return paired_ratio(p.mine, p.theirs);
  if (c.compare == Compare::kDifference) {
    std::vector<double> differences;
    for (size_t k = 0; k < p.mine.size(); ++k) differences.push_back(p.mine[k] - p.theirs[k]);
    return estimate(differences, Scale::kReal);
  }
  return estimate(p.mine, c.metric == "test_accuracy" ? Scale::kProportion
                          : c.rule == Rule::kEquals   ? Scale::kReal
                                                      : Scale::kPositive);
}

// `equals`: every seed's value near the expected one (undecided with fewer than two values).
Outcome judge_equals(const CheckSpec& c, double expected, const std::vector<double>& values) {
  if (values.size() < 2 ||
      std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
    return Outcome::kUndecided;
  }
  const bool near = std::all_of(values.begin(), values.end(),
                                [&](double v) { return std::abs(v - expected) <= c.tolerance; });
  return near ? Outcome::kHolds : Outcome::kFails;
}

// One method's case of a ratio, difference or value check. `other` is null for a value.
ClaimCase judge_values(const CheckSpec& c, size_t method_index, const MethodResult& m,
                       const MethodResult* other, const std::string& base) {
  const Pairs p = collect(c, m, other, base);
  ClaimCase out;
  out.estimate = estimate_of(c, p);
  const Bound bound = p.mine_censored && p.theirs_censored ? Bound::kUnknown
                      : p.mine_censored                    ? Bound::kLower
                      : p.theirs_censored                  ? Bound::kUpper
                                                           : Bound::kExact;
  out.bound = bound == Bound::kLower     ? "lower bound"
              : bound == Bound::kUpper   ? "upper bound"
              : bound == Bound::kUnknown ? "unknown (both censored)"
                                         : "";
  if (p.diverged > 0) {
    out.detail = fmt::format("{} seed{} diverged", p.diverged, p.diverged == 1 ? "" : "s");
    return out;
  }
  if (c.rule == Rule::kEquals) {
    out.detail = fmt::format("expected {:g} ± {:g}", c.bounds[method_index], c.tolerance);
    out.outcome = judge_equals(c, c.bounds[method_index], p.mine);
    return out;
  }
  out.outcome = judge_interval(c, out.estimate, bound);
  return out;
}

// A `leads` group: pacer's verdict rule on the group's methods.
ClaimCase judge_group(const Group& g, const Labelled& c, const std::string& where) {
  Comparison sub = c.comparison;
  sub.methods.clear();
  for (const auto* list : {&g.candidates, &g.rivals}) {
    for (const std::string& spec : *list) sub.methods.push_back(method_in(c, spec, where));
  }
  const Verdict v = decide(sub);
  ClaimCase out;
  out.label = c.label.empty() ? g.label : c.label + " · " + g.label;
  out.setting = c.label;
  out.detail = describe_verdict(sub, v);
  if (v.outcome == Verdict::Outcome::kNoneReached) return out;
  std::vector<int> top = {v.leader};
  if (!v.decided()) top.insert(top.end(), v.tied.begin(), v.tied.end());
  const size_t candidates = g.candidates.size();
  const auto is_candidate = [&](int i) { return static_cast<size_t>(i) < candidates; };
  if (std::all_of(top.begin(), top.end(), is_candidate)) out.outcome = Outcome::kHolds;
  if (std::none_of(top.begin(), top.end(), is_candidate)) out.outcome = Outcome::kFails;
  return out;
}

// `every` over the cases: a failing case fails the check, unless the check holds in another
// setting (a sweep cell, a folder judged separately): then it depends on the regime.
Outcome every_case(const std::vector<ClaimCase>& cases) {
  std::vector<std::string> settings;
  for (const ClaimCase& c : cases) {
    if (std::find(settings.begin(), settings.end(), c.setting) == settings.end()) {
      settings.push_back(c.setting);
    }
  }
  size_t holds = 0, fails = 0;
  for (const std::string& setting : settings) {
    bool all_hold = true, any_fails = false;
    for (const ClaimCase& c : cases) {
      if (c.setting != setting) continue;
      all_hold = all_hold && c.outcome == Outcome::kHolds;
      any_fails = any_fails || c.outcome == Outcome::kFails;
    }
    holds += all_hold ? 1 : 0;
    fails += any_fails ? 1 : 0;
  }
  if (holds == settings.size()) return Outcome::kHolds;
  if (fails > 0) return holds > 0 ? Outcome::kRegimeDependent : Outcome::kFails;
  return Outcome::kUndecided;
}

Outcome combine(Quantifier q, const std::vector<ClaimCase>& cases) {
  size_t holds = 0, fails = 0;
  for (const ClaimCase& c : cases) {
    holds += c.outcome == Outcome::kHolds ? 1 : 0;
    fails += c.outcome == Outcome::kFails ? 1 : 0;
  }
  const size_t n = cases.size();
  switch (q) {
    case Quantifier::kEvery:
      return every_case(cases);
    case Quantifier::kSome:
      if (holds > 0) return Outcome::kHolds;
      if (fails == n) return Outcome::kFails;
      break;
    case Quantifier::kMost:
      if (2 * holds >= n) return Outcome::kHolds;
      if (2 * fails > n) return Outcome::kFails;
      break;
  }
  return Outcome::kUndecided;
}

// The comparisons `folders` stand for: together (claims.h), or each its own with `separately`.
std::vector<Labelled> gather(const CheckSpec& c, const std::vector<std::string>& folders,
                             const std::string& regime, Results& results) {
  if (!c.separately) return results.comparisons(regime, folders);
  std::vector<Labelled> out;
  for (const std::string& folder : folders) {
    for (Labelled& l : results.comparisons(regime, {folder})) {
      l.label = l.label.empty() ? folder : folder + ": " + l.label;
      out.push_back(std::move(l));
    }
  }
  return out;
}

CheckResult judge_check(const CheckSpec& c, const std::string& regime, Results& results,
                        const std::string& where) {
  CheckResult out{c.name, claims::describe_rule(c), {}, Outcome::kUndecided, c.informative};
  const std::vector<Labelled> comparisons = gather(c, c.in, regime, results);
  if (c.rule == Rule::kLeads) {
    for (const Labelled& l : comparisons) {
      for (const Group& g : c.groups) out.cases.push_back(judge_group(g, l, where));
    }
  } else {
    std::vector<Labelled> others;
    if (!c.against_in.empty()) others = gather(c, c.against_in, regime, results);
    if (!others.empty() && others.size() != comparisons.size()) {
      fail("{}: in and against_in stand for different numbers of comparisons", where);
    }
    for (size_t k = 0; k < comparisons.size(); ++k) {
      const Labelled& l = comparisons[k];
      if (!others.empty() && others[k].values != l.values) {
        fail("{}: {} and {} are not the same cell of their sweeps ({} against {})", where, l.where,
             others[k].where, l.label, others[k].label);
      }
      for (size_t i = 0; i < c.methods.size(); ++i) {
        const MethodResult& m = method_in(l, c.methods[i], where);
        const MethodResult* other = nullptr;
        if (c.compare != Compare::kValue) {
          const Labelled& o = others.empty() ? l : others[k];
          other = &method_in(o, c.against.empty() ? c.methods[i] : c.against, where);
        }
        ClaimCase one = judge_values(c, i, m, other, results.base(regime));
        one.label = l.label.empty() ? m.spec : l.label + " · " + m.spec;
        one.setting = l.label;
        out.cases.push_back(std::move(one));
      }
    }
  }
  out.outcome = combine(c.quantifier, out.cases);
  return out;
}

std::string claim_verdict(const std::vector<CheckResult>& checks) {
  const auto any = [&](Outcome o) {
    return std::any_of(checks.begin(), checks.end(),
                       [&](const CheckResult& c) { return !c.informative && c.outcome == o; });
  };
  if (std::all_of(checks.begin(), checks.end(),
                  [](const CheckResult& c) { return c.informative; })) {
    return "measured (no claim of the paper)";
  }
  if (any(Outcome::kFails)) return "not reproduced";
  if (any(Outcome::kRegimeDependent)) return "regime-dependent";
  if (any(Outcome::kUndecided)) return "undecided";
  return "reproduced";
}

ClaimsTable judge_table(const TableSpec& t, Results& results) {
  ClaimsTable out{t.title, t.regime, {}, {}};
  for (const Labelled& cell : results.comparisons(t.regime, {t.in})) {
    out.axes = cell.axes;
    std::vector<std::string> row = cell.values;
    row.push_back(describe_verdict(cell.comparison, decide(cell.comparison)));
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace

ClaimsResult evaluate_claims(const std::string& path, const std::string& out_dir) {
  const ClaimsFile file = claims::read_claims_file(path);
  Results results(out_dir);
  ClaimsResult out;
  out.title = file.title;
  out.setup = file.setup;
  out.quick_note = file.quick_note;
  out.regimes = file.regimes;
  for (size_t i = 0; i < file.claims.size(); ++i) {
    const ClaimSpec& spec = file.claims[i];
    for (const std::string& regime : spec.regimes) {
      ClaimResult claim{spec.id, spec.words, spec.paper, regime, {}, ""};
      for (size_t k = 0; k < spec.checks.size(); ++k) {
        const std::string where =
            fmt::format("{}: claim '{}', check '{}'", path, spec.id, spec.checks[k].name);
        claim.checks.push_back(judge_check(spec.checks[k], regime, results, where));
      }
      claim.verdict = claim_verdict(claim.checks);
      out.claims.push_back(std::move(claim));
    }
  }
  for (const TableSpec& t : file.tables) {
    out.tables.push_back(judge_table(t, results));
  }
  out.seeds = results.seeds();
  out.sources = results.sources();
  return out;
}

}  // namespace pacer
