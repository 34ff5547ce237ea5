#include "pacer/study/advise.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <numeric>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/method/method.h"
#include "pacer/method/optimizer.h"
#include "pacer/report/job_log.h"
#include "pacer/report/verdict.h"
#include "pacer/run/experiment.h"
#include "pacer/study/compare.h"
#include "pacer/timing/timing_model.h"
#include "pacer/timing/trace.h"

namespace pacer {
namespace {

// One what-if: the settings it adds to every run, and where its comparison goes.
struct Scenario {
  std::string name;    // "as measured"
  std::string folder;  // under the advice folder
  std::vector<std::string> settings;
};

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = {
      {"as measured", "measured", {}},
      {"stragglers twice as slow", "slower", {"timing.straggler_slowdown=2"}},
      // Changing how often a worker straggles means drawing its rows anew: per worker by
      // bootstrap, also for a trace with steps (whose block replay keeps each row's frequency).
      {"stragglers twice as frequent",
       "frequent",
       {"timing.replay=bootstrap", "timing.straggler_frequency=2"}}};
  return all;
}

// The key that sets a method's tolerated stragglers, or "" for a method without one.
std::string straggler_key(const std::string& method) {
  if (method == "is-sgd") return "k";
  for (const char* coded : {"gc-fr", "gc-cr", "is-gc-fr", "is-gc-cr", "pgc-fr", "pgc-cr"}) {
    if (method == coded) return "s";
  }
  return "";
}

// Every registry method, those with an s (or k) once per value below n.
std::vector<std::string> default_candidates(const std::vector<int>& s_values, int workers) {
  std::vector<std::string> specs;
  for (const std::string& method : method_names()) {
    const std::string key = straggler_key(method);
    if (key.empty()) {
      specs.push_back(method);
      continue;
    }
    for (int s : s_values) {
      if (s >= 1 && s < workers) specs.push_back(fmt::format("{}:{}={}", method, key, s));
    }
  }
  return specs;
}

struct Candidates {
  std::vector<std::string> specs;
  std::vector<std::pair<std::string, std::string>> excluded;  // spec, why
};

// Keeps the specs whose configuration validates (a dry run on the shared problem).
Candidates applicable(const Config& base, const std::vector<std::string>& specs) {
  Candidates out;
  Config shared = base;
  const Problem problem = build_problem(shared, read_seed(shared));
  for (const std::string& spec : specs) {
    // A spec that names no method or is malformed is the user's mistake, not a method this
    // configuration cannot run: its Error ends advise here.
    const Config config = config_for(shared, spec);
    try {
      RunOptions dry;
      dry.problem = &problem;
      dry.reject_unknown_keys = false;
      dry.dry_run = true;
      run_experiment(config, dry);
      out.specs.push_back(spec);
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      out.excluded.emplace_back(spec, e.what());
    }
  }
  return out;
}

// The trace as "worker,duration" text: a jobs.csv converted (with the message latency it shows),
// anything else as it is (latency unknown: NaN).
JobsTrace read_trace(const std::string& path) {
  if (is_jobs_csv(path)) return trace_from_jobs_csv(path);
  JobsTrace trace;
  trace.csv = read_file(path);
  trace.latency = kNotAvailable;
  return trace;
}

// The trace's shape for the report: rows, workers, per-worker means, the pooled median.
std::string describe_trace(const DurationTrace& trace) {
  std::vector<double> all;
  for (const std::vector<double>& rows : trace.rows)
    all.insert(all.end(), rows.begin(), rows.end());
  if (all.empty()) return "";
  std::sort(all.begin(), all.end());
  const double median = all[all.size() / 2];
  std::string out = fmt::format(
      "{} jobs on {} workers{}; pooled median {:.4g} s per unit; jobs above 1.5 × the median: "
      "{:.1f} %.\n\n| worker | jobs | mean (s/unit) | max (s/unit) |\n|---|---|---|---|\n",
      all.size(), trace.workers(), trace.has_steps ? " (with steps)" : "", median,
      100.0 *
          static_cast<double>(
              std::count_if(all.begin(), all.end(), [&](double d) { return d > 1.5 * median; })) /
          static_cast<double>(all.size()));
  for (int worker = 0; worker < trace.workers(); ++worker) {
    const std::vector<double>& d = trace.rows[static_cast<size_t>(worker)];
    if (d.empty()) continue;
    const double mean = std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size());
    fmt::format_to(std::back_inserter(out), "| {} | {} | {:.4g} | {:.4g} |\n", worker, d.size(),
                   mean, *std::max_element(d.begin(), d.end()));
  }
  return out;
}

// A budget as --budget takes it: "time=120", "steps=300" (rounded up: whole steps).
std::string budget_text(Budget::Kind kind, double value) {
  switch (kind) {
    case Budget::Kind::kSteps:
      return fmt::format("steps={}", static_cast<int64_t>(std::ceil(value)));
    case Budget::Kind::kTime:
      return fmt::format("time={}", value);
    case Budget::Kind::kWork:
      return fmt::format("work={}", value);
  }
  return "";
}

bool reached_everywhere(const MethodResult& m) {
  return !m.runs.empty() && m.reached == static_cast<int>(m.runs.size());
}

// The method that reached the target on every seed with the best criterion (nullptr: none).
const MethodResult* full_leader(const Comparison& c) {
  const MethodResult* best = nullptr;
  for (const MethodResult& m : c.methods) {
    if (!reached_everywhere(m)) continue;
    if (!best || criterion_score(m, true) < criterion_score(*best, true)) best = &m;
  }
  return best;
}

// What one series of comparisons runs: the methods, the seeds, where.
struct Round {
  Config base;
  std::vector<std::string> specs;
  uint64_t first_seed = 1;
  int seeds = 1;
  std::string folder;
  std::string baseline;  // "" or one of specs
};

// Runs `round` at `budget` ("" = compare's default), then, while no method reached the target on
// every seed and `growth` > 0, reruns the methods that missed a seed at `growth` times the budget
// (at most `max_rounds` times). A run that stopped at its target is the same at any larger budget,
// so the methods that reached it everywhere keep their runs. Returns the merged comparison at the
// last budget; every round's runs stay in <folder>/round<k>/.
Comparison run_extending(const Round& round, const std::string& budget, double growth,
                         int max_rounds) {
  Comparison merged;
  std::vector<std::string> pending = round.specs;
  std::string next_budget = budget;
  for (int k = 1;; ++k) {
    Config config = round.base;
    config.set_int("seed", static_cast<int64_t>(round.first_seed));
    CompareOptions options;
    options.methods = pending;
    options.seeds = round.seeds;
    options.budget = next_budget;
    options.out_dir = fmt::format("{}/round{}", round.folder, k);
    const bool has_baseline =
        std::find(pending.begin(), pending.end(), round.baseline) != pending.end();
    options.baseline = has_baseline ? round.baseline : "";
    Comparison c = run_comparison(config, options).comparison;
    for (MethodResult& m : c.methods) {
      for (SeedRun& r : m.runs) r.folder = fmt::format("round{}/{}", k, r.folder);
    }
    if (merged.methods.empty()) {
      merged = std::move(c);
    } else {
      for (MethodResult& m : c.methods) {
        *std::find_if(merged.methods.begin(), merged.methods.end(),
                      [&](const MethodResult& old) { return old.spec == m.spec; }) = std::move(m);
      }
      merged.budget = c.budget;
    }
    if (merged.targets.empty() || full_leader(merged) || growth <= 0 || k > max_rounds) break;
    pending.clear();
    for (const MethodResult& m : merged.methods) {
      if (!reached_everywhere(m)) pending.push_back(m.spec);
    }
    Budget next = merged.budget;
    next.value *= growth;
    next_budget = budget_text(next.kind, next.value);
    log_info("advise: {} the target on every seed within {}; trying {}",
             merged.methods.size() == 1 ? merged.methods.front().spec + " did not reach"
                                        : std::string("no method reached"),
             merged.budget.describe(), next.describe());
  }
  merged.baseline = round.baseline;
  return merged;
}

// The tuning grid: options.tune, or optimizer.lr at lr/3, lr, 3·lr.
std::pair<std::string, std::vector<std::string>> tuning_grid(const Config& base,
                                                             const AdviseOptions& options) {
  if (options.tune == "none") return {"", {}};
  if (!options.tune.empty()) {
    const size_t eq = options.tune.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == options.tune.size()) {
      fail("--tune '{}': expected KEY=v1,v2,... (or none)", options.tune);
    }
    return {options.tune.substr(0, eq), split_method_list(options.tune.substr(eq + 1))};
  }
  const double lr = base.get_double("optimizer.lr", OptimizerOptions{}.lr);
  return {
      "optimizer.lr",
      {fmt::format("{:.4g}", lr / 3), fmt::format("{:.4g}", lr), fmt::format("{:.4g}", 3 * lr)}};
}

// What tuning chose: each candidate's spec with its value, and how the budget was found.
struct Tuned {
  std::vector<std::string> specs;   // with ":KEY=value" appended when tuned
  std::vector<std::string> values;  // per candidate; "" without tuning
  std::string key;
  std::vector<std::string> grid;
  Budget budget;              // the tuning runs' final budget
  std::string leader;         // the tuning leader, "" when none reached the target everywhere
  double leader_slowest = 0;  // its slowest tuning seed, in the budget's unit
};

Tuned tune_candidates(const Config& base, const std::vector<std::string>& specs,
                      const AdviseOptions& options, uint64_t first_seed) {
  Tuned t;
  std::tie(t.key, t.grid) = tuning_grid(base, options);
  Round round{base,
              {},
              first_seed + static_cast<uint64_t>(options.seeds),
              options.tuning_seeds,
              options.out_dir + "/tuning",
              ""};
  for (const std::string& spec : specs) {
    if (t.grid.empty()) round.specs.push_back(spec);
    for (const std::string& value : t.grid) {
      round.specs.push_back(spec + ":" + t.key + "=" + value);
    }
  }
  log_info("advise: tuning {} on seeds {}..{} ({} runs a round)", t.key.empty() ? "nothing" : t.key,
           round.first_seed, round.first_seed + static_cast<uint64_t>(round.seeds) - 1,
           round.specs.size() * static_cast<size_t>(round.seeds));
  const bool user_budget = !options.budget.empty();
  const Comparison c = run_extending(round, options.budget, user_budget ? 0 : 4, 6);
  t.budget = c.budget;
  if (const MethodResult* leader = full_leader(c)) {
    t.leader = leader->spec;
    // The criterion is a time: the budget that follows is one too, whatever the pilot's kind.
    for (const SeedRun& r : leader->runs)
      t.leader_slowest = std::max(t.leader_slowest, r.time_to_target);
  }
  const size_t values = std::max<size_t>(1, t.grid.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    size_t best = 0;
    for (size_t v = 1; v < values; ++v) {
      const bool has_target = !c.targets.empty();
      if (criterion_score(c.methods[i * values + v], has_target) <
          criterion_score(c.methods[i * values + best], has_target)) {
        best = v;
      }
    }
    t.specs.push_back(c.methods[i * values + best].spec);
    t.values.push_back(t.grid.empty() ? "" : t.grid[best]);
  }
  return t;
}

// The first of the seeds add_seeds_for_ties gives the tied methods: right after the tuning seeds,
// so never a reported or a tuning one.
uint64_t first_extra_seed(const AdviseOptions& options, uint64_t first_seed) {
  return first_seed + static_cast<uint64_t>(options.seeds + options.tuning_seeds);
}

// Whether a spec is DGD's ("dgd" or "dgd:key=value...").
bool is_dgd(const std::string& spec) { return spec == "dgd" || spec.rfind("dgd:", 0) == 0; }

// The baseline of the speedups: the first DGD spec of `c` (null: none).
const MethodResult* dgd_of(const Comparison& c) {
  for (const MethodResult& m : c.methods) {
    if (is_dgd(m.spec)) return &m;
  }
  return nullptr;
}

// DGD's times to the target on every seed of `c`, running DGD alone with a larger budget (×2 at a
// time, at most 64 times c's) when it missed some within c's budget. Empty when DGD is not in
// `c`; `note` says what was done.
std::vector<double> dgd_times(const Round& reported, const Comparison& c, std::string& note) {
  const MethodResult* dgd = dgd_of(c);
  if (dgd == nullptr || c.targets.empty()) return {};
  const MethodResult* source = dgd;
  Comparison extended;
  if (!reached_everywhere(*dgd)) {
    Round alone = reported;
    alone.specs = {dgd->spec};
    alone.folder = reported.folder + "/dgd-extended";
    alone.baseline = "";
    extended = run_extending(alone, budget_text(c.budget.kind, c.budget.value * 2), 2, 5);
    source = &extended.methods.front();
    note = reached_everywhere(*source)
               ? fmt::format("DGD alone was run with {} to reach the target on every seed",
                             extended.budget.describe())
               : fmt::format(
                     "DGD missed the target on some seeds even with {}: its times are "
                     "lower bounds",
                     extended.budget.describe());
  }
  return criterion_values(extended.methods.empty() ? c : extended, *source);
}

// The answer's ranking of one scenario: rank, method, stepsize, reached, time to target, ratio to
// the leader, speedup over DGD.
std::string ranking_table(const Comparison& c, const Verdict& v, const std::vector<double>& dgd) {
  const bool has_target = !c.targets.empty();
  std::vector<size_t> order(c.methods.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return criterion_score(c.methods[a], has_target) < criterion_score(c.methods[b], has_target);
  });
  std::string out = fmt::format(
      "| rank | method | reached | {} | × leader | speedup over DGD (paired over DGD's seeds) "
      "|\n|---|---|---|---|---|---|\n",
      has_target ? "time to target (s)" : "final F");
  int rank = 0;
  for (size_t i : order) {
    const MethodResult& m = c.methods[i];
    std::string speedup = "—";
    if (!dgd.empty() && has_target && &m == dgd_of(c)) {
      speedup = "1 (the baseline)";  // its own runs, extended where they missed the target
    } else if (!dgd.empty() && has_target) {
      const Estimate s = paired_ratio(dgd, criterion_values(c, m), m.runs.size() - m.reached);
      // A method that missed a seed has a lower bound of its time there: its speedup is a bound.
      if (!s.empty()) {
        speedup = s.censored > 0 ? "≤ " + format_ratio_number(s.mean, RatioDigits::kTwoDecimals)
                                 : format_ratio_estimate(s, "", RatioDigits::kTwoDecimals);
      }
    }
    fmt::format_to(std::back_inserter(out), "| {} | {} | {}/{} | {} | {} | {} |\n", ++rank, m.spec,
                   m.reached, m.runs.size(),
                   format_estimate(has_target ? m.time_to_target : m.final_loss,
                                   has_target ? "{:.4g}" : "{:.4g}"),
                   format_versus_leader(v, i), speedup);
  }
  return out;
}

// One scenario's comparison, verdict and DGD times.
struct ScenarioResult {
  CompareResult compare;
  std::vector<double> dgd;  // DGD's times per seed (extended when needed); empty: none
  std::string dgd_note;
  std::string extra_seeds;  // what add_seeds_for_ties did ("" = nothing)
};

// While `c`'s verdict is a tie that the observed spread says more seeds would decide, runs the
// leader and the tied methods on more seeds (from `first_extra` on, the same seeds for each: the
// pairs stay paired), at c's budget, up to `max_seeds` seeds in all, and adds their runs to c.
// The other methods keep their seeds: their intervals against the leader already exclude a tie.
// Returns what it did, for the answer.
std::string add_seeds_for_ties(const Round& round, uint64_t first_extra, int max_seeds,
                               Comparison& c) {
  std::string done;
  for (int pass = 0; pass < 3; ++pass) {
    const Verdict v = decide(c);
    if (v.outcome != Verdict::Outcome::kUndecided) break;
    const size_t have = c.methods[static_cast<size_t>(v.leader)].runs.size();
    int wanted = 0;
    for (int j : v.tied) wanted = std::max(wanted, v.seeds_needed[static_cast<size_t>(j)]);
    if (std::any_of(v.tied.begin(), v.tied.end(),
                    [&](int j) { return v.seeds_needed[static_cast<size_t>(j)] <= 0; })) {
      break;  // a tie that seeds would not decide (no spread, no difference, or a censored side)
    }
    const int total = std::min(max_seeds, std::max(wanted, static_cast<int>(have) + 1));
    if (total <= static_cast<int>(have)) break;
    Round more = round;
    more.specs = {c.methods[static_cast<size_t>(v.leader)].spec};
    for (int j : v.tied) more.specs.push_back(c.methods[static_cast<size_t>(j)].spec);
    more.first_seed = first_extra + have - static_cast<uint64_t>(round.seeds);
    more.seeds = total - static_cast<int>(have);
    more.folder = fmt::format("{}/more-seeds-{}", round.folder, pass + 1);
    more.baseline = "";
    log_info("advise: {} methods tied; {} more seeds for them", more.specs.size(), more.seeds);
    const Comparison added = run_extending(more, budget_text(c.budget.kind, c.budget.value), 0, 0);
    for (const MethodResult& m : added.methods) {
      MethodResult& into =
          *std::find_if(c.methods.begin(), c.methods.end(),
                        [&](const MethodResult& old) { return old.spec == m.spec; });
      for (SeedRun r : m.runs) {
        r.folder = fmt::format("more-seeds-{}/{}", pass + 1, r.folder);
        into.runs.push_back(std::move(r));
      }
      summarize_method(into, !c.targets.empty());
    }
    done = fmt::format(
        "the leader and the methods tied with it were run on {} seeds in all ({}..{} and {}..{}, "
        "after the tuning seeds), the others on {}",
        total, round.first_seed, round.first_seed + static_cast<uint64_t>(round.seeds) - 1,
        first_extra, first_extra + static_cast<uint64_t>(total - round.seeds) - 1, round.seeds);
  }
  return done;
}

ScenarioResult run_scenario(const Config& base, const Scenario& scenario, const Tuned& tuned,
                            const std::string& budget, const AdviseOptions& options,
                            uint64_t first_seed, bool extend_dgd) {
  Config config = base;
  // Errors about a scenario's keys name the scenario, not the command line.
  for (const std::string& setting : scenario.settings) {
    config.set(setting, fmt::format("advise's scenario \"{}\" ({})", scenario.name, setting));
  }
  Round round{
      config, tuned.specs, first_seed, options.seeds, options.out_dir + "/" + scenario.folder, ""};
  for (const std::string& spec : tuned.specs) {
    if (is_dgd(spec) && round.baseline.empty()) round.baseline = spec;  // dgd_of's
  }
  log_info("advise: {} ({} methods x {} seeds)", scenario.name, tuned.specs.size(), options.seeds);
  const bool user_budget = !options.budget.empty();
  ScenarioResult result;
  Comparison c = run_extending(round, budget, user_budget ? 0 : 2, 5);
  if (extend_dgd) {
    result.dgd = dgd_times(round, c, result.dgd_note);
    result.extra_seeds =
        add_seeds_for_ties(round, first_extra_seed(options, first_seed), options.max_seeds, c);
  }
  result.compare = finish_comparison(std::move(c), round.folder);
  return result;
}

// "recommended: ..." or "no recommendation: ..." for the measured scenario.
std::string recommendation(const ScenarioResult& r) {
  const Comparison& c = r.compare.comparison;
  const Verdict& v = r.compare.verdict;
  const std::string seeds = r.extra_seeds.empty() ? "" : "\n  (" + r.extra_seeds + ")";
  // A tie whose every member is ahead of every other method (each paired interval above 1, each
  // member at the target on every seed) is a recommendation of the group, not of one member: the
  // runs decide that much and no more.
  // Two methods that cannot be told apart and nothing else is no recommendation at all.
  const bool group =
      !v.decided() && v.leader >= 0 && v.tie_ahead_of_rest && v.tied.size() + 1 < c.methods.size();
  if (!v.decided() && !group) {
    return "no recommendation: " + describe_verdict(c, v) + seeds + "\n";
  }
  std::vector<int> members = {v.leader};
  if (group) members.insert(members.end(), v.tied.begin(), v.tied.end());
  std::string text;
  if (group) {
    std::vector<std::string> names;
    for (int j : members) names.push_back(c.methods[static_cast<size_t>(j)].spec);
    text = fmt::format(
        "recommended: one of {} (tied with each other; each ahead of every other method)",
        fmt::join(names, ", "));
  } else {
    text = "recommended:";
  }
  for (int j : members) {
    const MethodResult& m = c.methods[static_cast<size_t>(j)];
    text += fmt::format("{}{}: {} {} s on {}/{} seeds", group ? "\n  " : " ", m.spec, v.criterion,
                        format_estimate(m.time_to_target, "{:.4g}"), m.reached, m.runs.size());
    if (!c.targets.empty() && !r.dgd.empty() && &m != dgd_of(c)) {
      const Estimate s = paired_ratio(r.dgd, criterion_values(c, m));
      text += fmt::format("; speedup over DGD {}× (paired over {} seeds{})",
                          format_ratio_estimate(s, "", RatioDigits::kTwoDecimals), s.n,
                          r.dgd_note.empty() ? "" : "; " + r.dgd_note);
    }
  }
  return text + "\n  (" + describe_verdict(c, v) + ")" + seeds + "\n";
}

std::string report_text(const AdviseOptions& options, const std::string& trace_summary,
                        const Candidates& candidates, const std::vector<ScenarioResult>& results,
                        const std::string& answer) {
  std::string out = "# Which method for this cluster?\n\n";
  fmt::format_to(std::back_inserter(out),
                 "Every applicable method simulated on the measured job times of `{}` (replayed "
                 "in blocks of steps when the trace has steps, else by bootstrap per worker), its "
                 "stepsize tuned on seeds it is not reported on, every method "
                 "with the same budget, judged by one rule (pacer compare's verdict).\n\n"
                 "## The answer\n\n```\n{}```\n\n## The trace\n\n{}\n",
                 options.trace, answer, trace_summary);
  for (size_t k = 0; k < results.size(); ++k) {
    const Scenario& scenario = scenarios()[k];
    const Comparison& c = results[k].compare.comparison;
    fmt::format_to(std::back_inserter(out),
                   "## {} ({})\n\nBudget: {}. Verdict: {}\n\nRuns and the full comparison report: "
                   "[{}/report.md]({}/report.md).\n\n{}\n![loss]({}/loss.png)\n\n",
                   scenario.name,
                   scenario.settings.empty()
                       ? "the trace as measured"
                       : fmt::format("{}", fmt::join(scenario.settings, ", ")),
                   c.budget.describe(), describe_verdict(c, results[k].compare.verdict),
                   scenario.folder, scenario.folder,
                   ranking_table(c, results[k].compare.verdict, results[k].dgd), scenario.folder);
    if (!c.targets.empty()) {
      fmt::format_to(std::back_inserter(out), "![time to target]({}/time_to_target.png)\n\n",
                     scenario.folder);
    }
  }
  if (!candidates.excluded.empty()) {
    out += "## Not applicable here\n\n";
    for (const auto& [spec, why] : candidates.excluded) {
      fmt::format_to(std::back_inserter(out), "* {}: {}\n", spec, why);
    }
  }
  return out;
}

// The base configuration: the trace replayed, the message latency a job log shows.
Config replay_config(const Config& config, const std::string& trace, const JobsTrace& measured,
                     const std::string& trace_path, std::string& latency_note) {
  Config base = config;
  if (!std::isnan(measured.latency) && !base.has("timing.latency")) {
    base.set_double("timing.latency", measured.latency);
    latency_note = fmt::format(
        "message latency {:.3g} s per message, from the job log (half the median time from "
        "assignment to delivery not spent computing)\n",
        measured.latency);
  }
  const int workers = static_cast<int>(base.get_int("workers", 12));  // read_workers's default
  base.set_string("timing.model", "trace");
  base.set_string("timing.file", std::filesystem::absolute(trace_path).string());
  // A trace with steps keeps which workers were slow together and for how long: replayed in
  // blocks of steps; a classic one per worker by bootstrap (timing/trace.h).
  const bool with_steps = parse_trace(measured.csv, trace, workers).has_steps;
  base.set_string("timing.replay", with_steps ? "block" : "bootstrap");
  // The trace must cover every worker of the configuration: said once, here, not per method, and
  // of the user's file (a jobs.csv was checked while it was converted).
  if (!is_jobs_csv(trace)) {
    Config check = base;
    check.set_string("timing.file", trace);
    make_timing_model(check, workers, read_seed(check));
  }
  try {
    make_timing_model(base, workers, read_seed(base));
  } catch (const Error& e) {
    fail("{} (the durations of {})", e.what(), trace);
  }
  return base;
}

// The first lines of the answer: criterion, seeds, stepsizes, budget.
std::string answer_header(const AdviseOptions& options, const Comparison& c, const Tuned& tuned,
                          uint64_t first_seed, const std::string& requested_budget) {
  std::string out = fmt::format(
      "criterion: {} (compare's verdict: a method is recommended only if it reached the target "
      "on every seed and every other method's paired 95 % interval lies above it)\n"
      "seeds: {}..{} reported",
      c.targets.empty()
          ? "the final full training loss F at equal budget"
          : fmt::format(
                "the time until {} is at or below {:g} for {} consecutive step{}",
                c.target_on == "full" ? "the full training loss F" : "the reported minibatch loss",
                c.targets.front(), c.target_hold, c.target_hold == 1 ? "" : "s"),
      first_seed, first_seed + static_cast<uint64_t>(options.seeds) - 1);
  size_t most_runs = 0;
  for (const MethodResult& m : c.methods) most_runs = std::max(most_runs, m.runs.size());
  if (most_runs > static_cast<size_t>(options.seeds)) {
    const uint64_t extra = first_extra_seed(options, first_seed);
    out += fmt::format(" (the leader and the methods tied with it also {}..{}: {} in all)", extra,
                       extra + most_runs - static_cast<size_t>(options.seeds) - 1, most_runs);
  }
  if (!tuned.key.empty()) {
    out += fmt::format("; {} tuned on seeds {}..{} over {{{}}}", tuned.key,
                       first_seed + static_cast<uint64_t>(options.seeds),
                       first_seed + static_cast<uint64_t>(options.seeds + options.tuning_seeds) - 1,
                       fmt::join(tuned.grid, ", "));
  }
  if (tuned.grid.size() > 2) {
    std::vector<std::string> edge;
    for (size_t i = 0; i < tuned.values.size(); ++i) {
      if (tuned.values[i] == tuned.grid.front() || tuned.values[i] == tuned.grid.back()) {
        edge.push_back(tuned.specs[i]);
      }
    }
    if (!edge.empty()) {
      out += fmt::format(
          "\n{} of {} methods chose a value at the edge of the grid (a wider --tune grid may "
          "serve them better): {}",
          edge.size(), tuned.values.size(),
          fmt::join(edge.begin(),
                    edge.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(edge.size(), 6)),
                    ", "));
      if (edge.size() > 6) out += fmt::format(" and {} more", edge.size() - 6);
    }
  }
  out += fmt::format("\nbudget: {} per run", c.budget.describe());
  if (!options.budget.empty()) return out + " (--budget)\n";
  if (tuned.leader.empty()) {
    return out + " (no method reached the target on every tuning seed, even with this budget)\n";
  }
  out += fmt::format(" ({:g} × {:.4g} s, the slowest tuning seed of the tuning leader {}{})",
                     options.budget_multiple, tuned.leader_slowest, tuned.leader,
                     budget_text(c.budget.kind, c.budget.value) == requested_budget
                         ? ""
                         : fmt::format("; extended from {} until a method reached the target on "
                                       "every reported seed",
                                       requested_budget));
  return out + "\n";
}

}  // namespace

std::string run_advise(const Config& config, const AdviseOptions& options) {
  if (options.out_dir.empty()) fail("pacer advise: an output folder is required (--out)");
  if (options.seeds < 2)
    fail("--seeds {}: expected at least 2 (intervals need two)", options.seeds);
  if (options.tuning_seeds < 1) fail("--tune-seeds {}: expected at least 1", options.tuning_seeds);
  if (!(options.budget_multiple >= 1)) {
    fail("--budget-multiple {}: expected a number >= 1", options.budget_multiple);
  }
  // A --methods spec that names no method, or is malformed, is an Error before anything is
  // written (applicable() would stop there too, after the trace was copied into the folder).
  if (!options.methods.empty()) {
    for (const std::string& spec : split_method_list(options.methods)) config_for(config, spec);
  }
  std::string latency_note;
  const Config base = trace_replay_config(config, options.trace, options.out_dir, latency_note);
  const std::string trace_path = options.out_dir + "/trace.csv";
  const int workers = static_cast<int>(base.get_int("workers", 12));
  const std::vector<std::string> specs = options.methods.empty()
                                             ? default_candidates(options.s_values, workers)
                                             : split_method_list(options.methods);
  const Candidates candidates = applicable(base, specs);
  if (!options.methods.empty()) {
    for (const auto& [spec, why] : candidates.excluded) {
      log_warning("advise: --methods {} cannot run this configuration, left out: {}", spec, why);
    }
  }
  if (candidates.specs.empty()) {
    fail("pacer advise: no method of {} can run this configuration", fmt::join(specs, ", "));
  }
  const uint64_t first_seed = read_seed(base);
  const Tuned tuned = tune_candidates(base, candidates.specs, options, first_seed);
  std::string budget = options.budget;
  if (budget.empty()) {
    budget = tuned.leader.empty()
                 ? budget_text(tuned.budget.kind, tuned.budget.value)
                 : budget_text(Budget::Kind::kTime, options.budget_multiple * tuned.leader_slowest);
  }
  std::vector<ScenarioResult> results;
  for (size_t k = 0; k < scenarios().size(); ++k) {
    results.push_back(
        run_scenario(base, scenarios()[k], tuned, budget, options, first_seed, k == 0));
  }
  const Comparison& measured = results.front().compare.comparison;
  std::string answer = latency_note + answer_header(options, measured, tuned, first_seed, budget);
  answer += "\nranking on the measured trace:\n" +
            ranking_table(measured, results.front().compare.verdict, results.front().dgd) + "\n" +
            recommendation(results.front());
  answer += "what would change it:\n";
  for (size_t k = 1; k < results.size(); ++k) {
    fmt::format_to(std::back_inserter(answer), "  if {}: {}\n", scenarios()[k].name,
                   describe_verdict(results[k].compare.comparison, results[k].compare.verdict));
  }
  write_file_atomic(
      options.out_dir + "/report.md",
      report_text(options,
                  describe_trace(parse_trace(read_file(trace_path), options.trace, workers)),
                  candidates, results, answer));
  return answer +
         fmt::format("report: {}/report.md; trace replayed: {}\n", options.out_dir, trace_path);
}

Config trace_replay_config(const Config& config, const std::string& trace,
                           const std::string& out_dir, std::string& latency_note) {
  make_directories(out_dir);
  const JobsTrace measured = read_trace(trace);
  const std::string trace_path = out_dir + "/trace.csv";
  write_file_atomic(trace_path, measured.csv);
  return replay_config(config, trace, measured, trace_path, latency_note);
}

}  // namespace pacer
