#include "pacer/experiment/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "pacer/core/error.h"

namespace pacer {
namespace {

// The criterion's value of one seed: time to target (its end time when it missed) or final F.
double criterion_value(const Comparison& c, const SeedRun& r) {
  if (c.targets.empty()) return r.final_loss;
  return r.reached ? r.time_to_target : r.end_time;
}

const MethodResult& best_method(const Comparison& c) {
  const bool has_target = !c.targets.empty();
  const MethodResult* best = &c.methods.front();
  for (const MethodResult& m : c.methods) {
    if (criterion_score(m, has_target) < criterion_score(*best, has_target)) best = &m;
  }
  return *best;
}

std::string question(const Comparison& c) {
  std::vector<std::string> specs;
  for (const MethodResult& m : c.methods) specs.push_back("`" + m.spec + "`");
  std::string goal =
      c.targets.empty()
          ? "ends with the lowest full training loss F"
          : fmt::format("first brings the {} to {} or below (held for {} {}{})",
                        c.target_on == "full" ? "full training loss F" : "reported training loss",
                        c.targets.front(), c.target_hold,
                        c.target_on == "full" ? "evaluation" : "update",
                        c.target_hold == 1 ? "" : "s");
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
  int pairs = 0, censored = 0;
  Estimate ratio, difference;
};

Paired paired(const Metric& metric, const MethodResult& m, const MethodResult& b) {
  Paired p;
  std::vector<double> ratios, differences;
  for (size_t k = 0; k < m.runs.size() && k < b.runs.size(); ++k) {
    const MetricValue mine = metric.of(m.runs[k]), theirs = metric.of(b.runs[k]);
    if (std::isnan(mine.value) || std::isnan(theirs.value)) continue;
    ++p.pairs;
    p.censored += mine.censored || theirs.censored ? 1 : 0;
    differences.push_back(mine.value - theirs.value);
    if (theirs.value != 0) ratios.push_back(mine.value / theirs.value);
  }
  p.ratio = estimate(ratios);
  p.difference = estimate(differences);
  return p;
}

// "0.87 [0.81, 0.93]" of a ratio estimate for the report; "—" without one.
std::string format_ratio(const Estimate& e) {
  if (e.empty()) return "—";
  if (e.n < 2) return fmt::format("{:.3g}", e.mean);
  return fmt::format("{:.3g} [{:.3g}, {:.3g}]", e.mean, e.low, e.high);
}

std::string against_baseline_section(const Comparison& c) {
  const MethodResult& b = baseline_method(c);
  std::string out = fmt::format(
      "## Against {} (paired over seeds)\n\nPer seed, each method's value divided by {}'s on the "
      "same seed: mean ratio [95 % Student-t interval over the pairs]; below 1 is smaller (for "
      "times and losses, better). \"(k censored)\": in k pairs a seed missed the target and its "
      "end value, a lower bound, stands in. Numbers at full precision, and the differences, in "
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
      out += fmt::format(" {}{} |", censored, format_ratio(p.ratio));
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

std::string versus_best(const Comparison& c, const MethodResult& m, const MethodResult& best) {
  const bool has_target = !c.targets.empty();
  const char* unit = has_target ? " s" : "";
  const char* quantity = has_target ? "time to target" : "final F";
  const char* spec = has_target ? "{:.2f}" : "{:.4g}";
  const Estimate& mine = has_target ? m.time_to_target : m.final_loss;
  const Estimate& theirs = has_target ? best.time_to_target : best.final_loss;
  if (&m == &best) {
    return fmt::format("**{}** is the best by {}: {}{}.", m.spec, c.criterion,
                       format_estimate(mine, spec), unit);
  }
  if (!has_target && (m.diverged > 0 || mine.empty())) {
    return fmt::format("{}: diverged on {} of {} seeds (no final F to compare).", m.spec,
                       m.diverged, m.runs.size());
  }
  const size_t k = m.runs.size();
  if (has_target && (mine.censored > 0 || theirs.censored > 0)) {
    if (theirs.censored > 0) {
      return fmt::format(
          "{}: reached the target on {}/{} seeds (the best, {}, on {}/{}); time to target {} s vs "
          "{} s: lower bounds only, no interval.",
          m.spec, m.reached, k, best.spec, best.reached, best.runs.size(),
          format_estimate(mine, spec), format_estimate(theirs, spec));
    }
    return fmt::format(
        "{}: reached the target on only {}/{} seeds; time to target {} s, at least {:.2f}× the "
        "best's ({}, {} s).",
        m.spec, m.reached, k, format_estimate(mine, spec), mine.mean / theirs.mean, best.spec,
        format_estimate(theirs, spec));
  }
  std::vector<double> differences;
  for (size_t i = 0; i < k && i < best.runs.size(); ++i) {
    differences.push_back(criterion_value(c, m.runs[i]) - criterion_value(c, best.runs[i]));
  }
  const Estimate d = estimate(differences);
  std::string interval = d.n >= 2 ? fmt::format(" [95 % t-interval over {} paired seeds: {}, {}]",
                                                d.n, fmt::format(fmt::runtime(spec), d.low),
                                                fmt::format(fmt::runtime(spec), d.high))
                                  : " (one seed: no interval)";
  return fmt::format("{}: {} {}{}, {:.3g}× the best's ({}); difference {}{}{}.", m.spec, quantity,
                     format_estimate(mine, spec), unit, mine.mean / theirs.mean, best.spec,
                     fmt::format(fmt::runtime(std::string("{:+") + (spec + 2)), d.mean), unit,
                     interval);
}

std::string comparison_report(const Comparison& c, const std::string& table,
                              const std::vector<Figure>& figures) {
  std::string out = fmt::format("# Comparison: {}\n\n", c.name);
  out += question(c) + "\n## Results\n\n" + table + "\n";
  const MethodResult& best = best_method(c);
  out += fmt::format("## Against the best ({})\n\n", c.criterion);
  for (const MethodResult& m : c.methods) out += "* " + versus_best(c, m, best) + "\n";
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
