#include "pacer/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "pacer/core/error.h"

namespace pacer {
namespace {

std::string question(const Comparison& c) {
  std::vector<std::string> specs;
  for (const MethodResult& m : c.methods) specs.push_back("`" + m.spec + "`");
  std::string goal =
      c.targets.empty()
          ? "ends with the lowest full training loss F"
          : fmt::format("first brings the {} to {} or below (held for {} {}{})",
                        c.target_on == "full"
                            ? "full training loss F"
                            : "reported minibatch loss (target.on = \"train\": the PGC paper's "
                              "criterion; noisier than F, and not method-neutral, since each "
                              "method averages a different number of minibatch losses)",
                        c.targets.front(), c.target_hold, "step", c.target_hold == 1 ? "" : "s");
  std::string tuning;
  if (!c.tuned_key.empty()) {
    tuning = fmt::format(
        ", each with its own `{}` chosen from {{{}}} on tuning seeds {} (disjoint from the "
        "reported ones) by the same criterion",
        c.tuned_key, fmt::join(c.tuned_grid, ", "), fmt::join(c.tuning_seeds, ", "));
  }
  return fmt::format(
      "**Question.** Which of {} {} on `{}`, every method with the same budget of {}{}? "
      "Reported over {} seed{} ({}){}.\n",
      fmt::join(specs, ", "), goal, c.config_path.empty() ? c.name : c.config_path,
      c.budget.describe(),
      !c.targets.empty() && c.budget.stop_at_target ? " (a run stops at the target)" : "",
      c.seeds.size(), c.seeds.size() == 1 ? "" : "s", fmt::join(c.seeds, ", "), tuning);
}

// One metric of one seed run, and whether it is a lower bound (the seed missed the target).
struct MetricValue {
  double value = kNotAvailable;
  bool censored = false;
};

struct Metric {
  const char* name;
  bool needs_target;
  MetricValue (*of)(const SeedRun&);
};

constexpr Metric kAgainstMetrics[] = {
    {"steps_to_target", true,
     [](const SeedRun& r) {
       return MetricValue{r.reached ? r.steps_to_target : r.end_steps, !r.reached};
     }},
    {"time_to_target", true,
     [](const SeedRun& r) {
       return MetricValue{r.reached ? r.time_to_target : r.end_time, !r.reached};
     }},
    {"step_time", false,
     [](const SeedRun& r) {
       return MetricValue{r.step_time, false};
     }},
    {"final_loss", false,
     [](const SeedRun& r) {
       return MetricValue{r.final_loss, false};
     }},
    {"tilde_loss", false,
     [](const SeedRun& r) {
       return MetricValue{r.tilde_loss, false};
     }},
};

const MethodResult& baseline_method(const Comparison& c) {
  for (const MethodResult& m : c.methods) {
    if (m.spec == c.baseline) return m;
  }
  fail("--baseline {}: not one of the compared methods", c.baseline);
}

// The paired per-seed ratios and differences of one metric, m against b.
struct Paired {
  // censored: pairs with a lower bound on either side; mine_censored / theirs_censored: pairs
  // with one on m's side only / on b's side only.
  int pairs = 0, censored = 0, mine_censored = 0, theirs_censored = 0;
  Estimate ratio, difference;
  // "≥ " when every censored pair has its bound on m's side (the ratio is then a lower bound),
  // "≤ " when on b's side (an upper bound), "" otherwise.
  std::string bound() const {
    if (censored == 0) return "";
    if (mine_censored == censored) return "≥ ";
    if (theirs_censored == censored) return "≤ ";
    return "";
  }
};

Paired paired(const Metric& metric, const MethodResult& m, const MethodResult& b) {
  Paired p;
  std::vector<double> ratios, differences;
  for (size_t k = 0; k < m.runs.size() && k < b.runs.size(); ++k) {
    const MetricValue mine = metric.of(m.runs[k]), theirs = metric.of(b.runs[k]);
    if (std::isnan(mine.value) || std::isnan(theirs.value)) continue;
    ++p.pairs;
    p.censored += mine.censored || theirs.censored ? 1 : 0;
    p.mine_censored += mine.censored && !theirs.censored ? 1 : 0;
    p.theirs_censored += theirs.censored && !mine.censored ? 1 : 0;
    differences.push_back(mine.value - theirs.value);
    if (theirs.value != 0) ratios.push_back(mine.value / theirs.value);
  }
  p.ratio = estimate(ratios, Scale::kPositive);
  p.difference = estimate(differences, Scale::kReal);
  return p;
}

// "0.87 [0.81, 0.93]" of a ratio estimate for the report, "(tie not excluded)" where the interval
// includes 1; "—" without one.
std::string format_ratio(const Estimate& e) {
  if (e.empty()) return "—";
  if (!e.has_interval()) return format_ratio_estimate(e) + " (one pair: no interval)";
  return format_ratio_estimate(e) + (e.includes(1) ? " (tie not excluded)" : "");
}

std::string against_baseline_section(const Comparison& c) {
  const MethodResult& b = baseline_method(c);
  std::string out = fmt::format(
      "## Against {} (paired over seeds)\n\nPer seed, each method's value divided by {}'s on the "
      "same seed: geometric mean ratio [95 % interval: Student t on the log scale over the "
      "pairs]; below 1 is smaller (for times and losses, better); \"tie not excluded\" where the "
      "interval includes 1. \"(k censored)\": in k pairs a seed missed the target and its end "
      "value, a lower bound, stands in; the ratio is then marked ≥ (a lower bound) when the "
      "method missed and the baseline did not, ≤ (an upper bound) when the baseline missed and "
      "the method did not, and left unmarked when both sides hold bounds. Numbers at full "
      "precision, and the differences, in "
      "against.csv.\n\n| method |",
      b.spec, b.spec);
  std::vector<const Metric*> metrics;
  for (const Metric& metric : kAgainstMetrics) {
    if (metric.needs_target && c.targets.empty()) continue;
    bool any = false;
    for (const MethodResult& m : c.methods) any = any || paired(metric, m, b).pairs > 0;
    if (any) metrics.push_back(&metric);
  }
  for (const Metric* metric : metrics) out += fmt::format(" {} |", metric->name);
  out += "\n|---|";
  for (size_t k = 0; k < metrics.size(); ++k) out += "---|";
  out += "\n";
  for (const MethodResult& m : c.methods) {
    out += fmt::format("| {} |", m.spec);
    for (const Metric* metric : metrics) {
      const Paired p = paired(*metric, m, b);
      const std::string censored =
          p.censored > 0 ? fmt::format("({} censored) ", p.censored) : std::string();
      out += fmt::format(" {}{}{} |", censored, p.bound(), format_ratio(p.ratio));
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string against_baseline_csv(const Comparison& c) {
  const MethodResult& b = baseline_method(c);
  auto num = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); };
  std::string out =
      "method,metric,pairs,censored,ratio_mean,ratio_low,ratio_high,difference_mean,"
      "difference_low,difference_high\n";
  for (const MethodResult& m : c.methods) {
    for (const Metric& metric : kAgainstMetrics) {
      if (metric.needs_target && c.targets.empty()) continue;
      const Paired p = paired(metric, m, b);
      if (p.pairs == 0) continue;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", m.spec, metric.name, p.pairs,
                         p.censored, num(p.ratio.mean), num(p.ratio.low), num(p.ratio.high),
                         num(p.difference.mean), num(p.difference.low), num(p.difference.high));
    }
  }
  return out;
}

std::string versus_leader(const Comparison& c, const Verdict& v, size_t m) {
  const MethodResult& method = c.methods[m];
  const bool has_target = !c.targets.empty();
  const Estimate& own = has_target ? method.time_to_target : method.final_loss;
  const std::string value =
      format_estimate(own, has_target ? "{:.2f}" : "{:.4g}") + (has_target ? " s" : "");
  std::string out = fmt::format("{}: {} {}", method.spec, v.criterion, value);
  if (has_target)
    out += fmt::format(", target reached on {}/{} seeds", method.reached, method.runs.size());
  if (method.diverged > 0) out += fmt::format(", diverged on {} seeds", method.diverged);
  if (static_cast<int>(m) == v.leader) return out + (v.decided() ? " — best." : " — leads.");
  if (v.leader < 0) return out + ".";
  const Estimate& r = v.versus_leader[m];
  if (r.empty()) return out + fmt::format("; no seed to pair with {}.", c.methods[v.leader].spec);
  // "its time to target over pgc-fr's, paired over 3 seeds: 1.92 [1.71, 2.16]".
  return out +
         fmt::format("; its {} over {}'s, paired over {} seed{}: {}{}{}.", v.criterion,
                     c.methods[static_cast<size_t>(v.leader)].spec, r.n, r.n == 1 ? "" : "s",
                     r.censored > 0 ? "≥ " : "", format_ratio(r),
                     r.censored > 0 ? " (a lower bound: it missed the target on some seeds)" : "");
}

std::string comparison_report(const Comparison& c, const Verdict& verdict, const std::string& table,
                              const std::vector<Figure>& figures) {
  std::string out = fmt::format("# Comparison: {}\n\n", c.name);
  out += question(c) + "\n## Verdict\n\n" + describe_verdict(c, verdict) +
         "\n\nThe rule (the same for every method, pacer's verdict.h): a method is best only if it "
         "reached the target on every seed and the paired 95 % interval of every other method's "
         "ratio to it lies above 1; otherwise the comparison is undecided, and says what would "
         "decide it.\n\n## Results\n\n" +
         table + "\n";
  out += fmt::format("## Each method against the leader ({})\n\n", c.criterion);
  for (size_t m = 0; m < c.methods.size(); ++m) out += "* " + versus_leader(c, verdict, m) + "\n";
  if (!c.baseline.empty()) {
    out += "\n";
    out += against_baseline_section(c);
  }
  if (!c.tuned_key.empty()) {
    out += fmt::format("\n## Tuning of `{}`\n\n", c.tuned_key);
    for (const MethodResult& m : c.methods) {
      out += fmt::format("* {}: **{}** (", m.spec, m.tuned_value);
      out += fmt::format("{})\n", fmt::join(m.tuning_log, "; "));
    }
  }
  if (!figures.empty()) {
    out += "\n## Figures\n\n";
    for (const Figure& f : figures) {
      out += fmt::format("![{}]({})\n\n{} ([SVG]({}))\n\n", f.caption, f.png, f.caption, f.svg);
    }
  }
  return out;
}

}  // namespace pacer
