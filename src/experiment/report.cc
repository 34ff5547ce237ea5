#include "pacer/experiment/report.h"

#include <fmt/format.h>

#include <algorithm>

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

}  // namespace

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
