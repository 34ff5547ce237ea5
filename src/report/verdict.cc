#include "pacer/report/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace pacer {
namespace {

bool has_target(const Comparison& c) { return !c.targets.empty(); }

// Step 1 of the rule: the method reached the target on every seed without diverging (without a
// target: has a final F on every seed).
bool contender(const Comparison& c, const MethodResult& m) {
  if (m.runs.empty() || m.diverged > 0) return false;
  if (has_target(c)) return m.reached == static_cast<int>(m.runs.size());
  const std::vector<double> values = criterion_values(c, m);
  return std::none_of(values.begin(), values.end(), [](double v) { return std::isnan(v); });
}

// Pairs of (m, leader) in which m's value is a lower bound.
int censored_pairs(const Comparison& c, const MethodResult& m, const MethodResult& leader) {
  if (!has_target(c)) return 0;
  int count = 0;
  for (size_t k = 0; k < m.runs.size() && k < leader.runs.size(); ++k) {
    count += m.runs[k].reached ? 0 : 1;
  }
  return count;
}

std::string format_ratio(const Estimate& e) { return format_ratio_estimate(e, "×"); }

// The sentence for kNoneReached.
std::string nothing_decided(const Comparison& c) {
  if (!has_target(c)) {
    return fmt::format(
        "no method ended every seed with a final F (each diverged on some seed) at {}",
        c.budget.describe());
  }
  const MethodResult* closest = nullptr;
  for (const MethodResult& m : c.methods) {
    if (m.diverged > 0) continue;
    if (!closest || m.reached > closest->reached ||
        (m.reached == closest->reached && m.final_loss.mean < closest->final_loss.mean)) {
      closest = &m;
    }
  }
  std::string out =
      fmt::format("no method reached the target on every seed within {}", c.budget.describe());
  if (closest) {
    out += fmt::format("; closest: {} ({}/{} seeds, final F {})", closest->spec, closest->reached,
                       closest->runs.size(), format_estimate(closest->final_loss, "{:.4g}"));
  }
  return out + ". A larger budget would decide it";
}

// "a, b and c", or "a, b, c and 5 more": every item when there are at most named + 1 of them
// (never "and 1 more"), otherwise the first `named` and a count of the rest.
std::string some_of(const std::vector<std::string>& items, size_t named) {
  if (items.size() <= named + 1) {
    if (items.size() < 2) return items.empty() ? "" : items.front();
    return fmt::format("{} and {}", fmt::join(items.begin(), items.end() - 1, ", "), items.back());
  }
  return fmt::format("{} and {} more", fmt::join(items.begin(), items.begin() + named, ", "),
                     items.size() - named);
}

// Methods named in a list of a verdict's sentence (one more where that names them all, with
// some_of); the table lists every one.
constexpr size_t kNamedInVerdict = 4;

std::string what_decides(const Comparison& c, const Verdict& v) {
  const MethodResult& leader = c.methods[static_cast<size_t>(v.leader)];
  std::vector<std::string> parts;
  // Tied methods that missed the target on some seed, and "missed k of n" for each; tied methods
  // that no number of seeds would tell from the leader.
  std::vector<std::string> censored, missed, no_difference;
  bool one_seed = false;
  int seeds = 0;
  for (int j : v.tied) {
    const MethodResult& m = c.methods[static_cast<size_t>(j)];
    if (m.runs.size() < 2) {
      one_seed = true;
    } else if (has_target(c) && m.reached < static_cast<int>(m.runs.size())) {
      censored.push_back(m.spec);
      missed.push_back(fmt::format("missed {} of {}",
                                   m.runs.size() - static_cast<size_t>(m.reached), m.runs.size()));
    } else if (v.seeds_needed[static_cast<size_t>(j)] > 0) {
      seeds = std::max(seeds, v.seeds_needed[static_cast<size_t>(j)]);
    } else {
      no_difference.push_back(m.spec);
    }
  }
  if (one_seed) parts.push_back("at least 2 seeds (one seed gives no interval)");
  if (!no_difference.empty()) {
    parts.push_back(fmt::format(
        "no number of seeds: {} and {} do not differ on average at all over these seeds",
        some_of(no_difference, kNamedInVerdict), leader.spec));
  }
  if (censored.size() == 1) {
    parts.push_back(fmt::format(
        "a budget at which {} reaches the target on every seed (it {} within {}: its times "
        "there are lower bounds)",
        censored.front(), missed.front(), c.budget.describe()));
  } else if (censored.size() > 1) {
    std::vector<std::string> each;
    for (size_t k = 0; k < censored.size(); ++k) {
      each.push_back(fmt::format("{} ({})", censored[k], missed[k]));
    }
    parts.push_back(fmt::format(
        "a budget at which {} reach the target on every seed (seeds missed within {}: their "
        "times there are lower bounds)",
        some_of(each, kNamedInVerdict), c.budget.describe()));
  }
  if (seeds > 0) {
    parts.insert(parts.begin(), fmt::format("about {} seeds (from the spread the {} seeds show)",
                                            seeds, leader.runs.size()));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Whether every method of the tie is ahead of every method outside it (Verdict's field).
bool tie_ahead_of_rest(const Comparison& c, const Verdict& v) {
  std::vector<int> tie = v.tied;
  tie.push_back(v.leader);
  for (int member : tie) {
    const MethodResult& m = c.methods[static_cast<size_t>(member)];
    if (!contender(c, m)) return false;
    for (size_t other = 0; other < c.methods.size(); ++other) {
      if (std::find(tie.begin(), tie.end(), static_cast<int>(other)) != tie.end()) continue;
      const MethodResult& o = c.methods[other];
      if (o.diverged > 0) continue;  // behind wherever it diverged
      const Estimate r = paired_ratio(criterion_values(c, o), criterion_values(c, m));
      if (!(r.n >= 2 && r.low > 1)) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<double> criterion_values(const Comparison& c, const MethodResult& m) {
  std::vector<double> values;
  for (const SeedRun& r : m.runs) {
    if (has_target(c)) {
      values.push_back(r.diverged ? kNotAvailable : r.reached ? r.time_to_target : r.end_time);
    } else {
      values.push_back(r.diverged ? kNotAvailable : r.final_loss);
    }
  }
  return values;
}

Verdict decide(const Comparison& c) {
  Verdict v;
  v.criterion = has_target(c) ? "time to target" : "final F";
  const size_t n = c.methods.size();
  v.versus_leader.assign(n, Estimate{});
  v.is_tie.assign(n, false);
  v.seeds_needed.assign(n, 0);
  double best = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!contender(c, c.methods[i])) continue;
    const double score = estimate(criterion_values(c, c.methods[i]), Scale::kPositive).mean;
    if (v.leader < 0 || score < best) {
      v.leader = static_cast<int>(i);
      best = score;
    }
  }
  if (v.leader < 0) {
    v.what_would_decide = nothing_decided(c);
    return v;
  }
  const MethodResult& leader = c.methods[static_cast<size_t>(v.leader)];
  const std::vector<double> theirs = criterion_values(c, leader);
  for (size_t j = 0; j < n; ++j) {
    if (static_cast<int>(j) == v.leader) continue;
    const MethodResult& m = c.methods[j];
    const std::vector<double> mine = criterion_values(c, m);
    v.versus_leader[j] = paired_ratio(mine, theirs, censored_pairs(c, m, leader));
    // Diverged on a seed: behind there by any measure, never a tie (the file comment, step 3).
    if (m.diverged > 0) continue;
    const Estimate& r = v.versus_leader[j];
    v.is_tie[j] = r.n < 2 || !(r.low > 1);
    if (v.is_tie[j]) {
      v.tied.push_back(static_cast<int>(j));
      v.seeds_needed[j] = r.censored > 0 ? -1 : seeds_to_exclude_tie(log_ratios(mine, theirs));
    }
  }
  std::stable_sort(v.tied.begin(), v.tied.end(), [&](int a, int b) {
    return v.versus_leader[static_cast<size_t>(a)].mean <
           v.versus_leader[static_cast<size_t>(b)].mean;
  });
  v.outcome = v.tied.empty() ? Verdict::Outcome::kBest : Verdict::Outcome::kUndecided;
  if (!v.decided()) {
    v.what_would_decide = what_decides(c, v);
    v.tie_ahead_of_rest = tie_ahead_of_rest(c, v);
  }
  return v;
}

std::string format_versus_leader(const Verdict& v, size_t method) {
  if (static_cast<int>(method) == v.leader || method >= v.versus_leader.size()) return "—";
  const Estimate& r = v.versus_leader[method];
  if (r.empty()) return "—";
  std::string text = (r.censored > 0 ? "≥ " : "") + format_ratio(r);
  if (v.is_tie[method]) text += " (tie not excluded)";
  return text;
}

std::string describe_verdict(const Comparison& c, const Verdict& v) {
  if (v.outcome == Verdict::Outcome::kNoneReached) return v.what_would_decide + ".";
  const MethodResult& leader = c.methods[static_cast<size_t>(v.leader)];
  const std::string how =
      has_target(c) ? fmt::format("{}/{} seeds reached it", leader.reached, leader.runs.size())
                    : fmt::format("at {}", c.budget.describe());
  if (v.decided()) {
    // The closest other method: the smallest ratio.
    int runner_up = -1;
    for (size_t j = 0; j < c.methods.size(); ++j) {
      if (static_cast<int>(j) == v.leader || v.versus_leader[j].empty()) continue;
      if (runner_up < 0 ||
          v.versus_leader[j].mean < v.versus_leader[static_cast<size_t>(runner_up)].mean) {
        runner_up = static_cast<int>(j);
      }
    }
    std::string out = fmt::format("best: {} ({}; {})", leader.spec, v.criterion, how);
    if (runner_up >= 0) {
      const Estimate& r = v.versus_leader[static_cast<size_t>(runner_up)];
      out += fmt::format("; the runner-up {} has {}{} its {}, paired over {} seeds",
                         c.methods[static_cast<size_t>(runner_up)].spec,
                         r.censored > 0 ? "at least " : "", format_ratio(r), v.criterion, r.n);
    }
    return out;
  }
  // Past kNamedInVerdict tied methods (the closest first) the sentence counts the rest: the table
  // marks each of them "tie not excluded".
  std::vector<std::string> names = {leader.spec};
  std::vector<std::string> ratios;
  for (int j : v.tied) {
    const MethodResult& m = c.methods[static_cast<size_t>(j)];
    names.push_back(m.spec);
    ratios.push_back(fmt::format("{}/{} = {}{}", m.spec, leader.spec,
                                 v.versus_leader[static_cast<size_t>(j)].censored > 0 ? "≥ " : "",
                                 format_ratio(v.versus_leader[static_cast<size_t>(j)])));
  }
  std::string ratio_text = some_of(ratios, kNamedInVerdict);
  if (ratios.size() > kNamedInVerdict + 1) ratio_text += " (in the table, \"tie not excluded\")";
  return fmt::format(
      "undecided between {} ({}; {} leads, {}: intervals include 1){}; what "
      "would decide it: {}",
      some_of(names, kNamedInVerdict + 1), v.criterion, leader.spec, ratio_text,
      v.tie_ahead_of_rest ? "; each of them is ahead of every other method (paired "
                            "95 % intervals above 1)"
                          : "",
      v.what_would_decide);
}

}  // namespace pacer
