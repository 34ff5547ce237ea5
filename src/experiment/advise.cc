#include "pacer/experiment/advise.h"

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
#include "pacer/experiment/compare.h"
#include "pacer/experiment/experiment.h"
#include "pacer/experiment/job_log.h"
#include "pacer/method/method.h"
#include "pacer/timing/timing_model.h"

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
      {"stragglers twice as frequent", "frequent", {"timing.straggler_frequency=2"}}};
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
    try {
      RunOptions dry;
      dry.problem = &problem;
      dry.reject_unknown_keys = false;
      dry.dry_run = true;
      run_experiment(config_for(shared, spec), dry);
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

// A seed's time to the first target, NaN when it missed it.
double time_to_target(const SeedRun& r) { return r.reached ? r.time_to_target : kNotAvailable; }

// DGD's time over the method's, per seed on which both reached the target.
Estimate speedup_over(const MethodResult& m, const MethodResult& dgd) {
  std::vector<double> ratios;
  for (size_t k = 0; k < m.runs.size() && k < dgd.runs.size(); ++k) {
    const double a = time_to_target(dgd.runs[k]), b = time_to_target(m.runs[k]);
    if (!std::isnan(a) && !std::isnan(b) && b > 0) ratios.push_back(a / b);
  }
  return estimate(ratios);
}

// The methods of `c` from best to worst by its criterion (ties: the order given).
std::vector<const MethodResult*> ranking(const Comparison& c) {
  std::vector<const MethodResult*> order;
  for (const MethodResult& m : c.methods) order.push_back(&m);
  const bool has_target = !c.targets.empty();
  std::stable_sort(order.begin(), order.end(), [&](const MethodResult* a, const MethodResult* b) {
    return criterion_score(*a, has_target) < criterion_score(*b, has_target);
  });
  return order;
}

const MethodResult* find_method(const Comparison& c, const std::string& spec) {
  for (const MethodResult& m : c.methods) {
    if (m.spec == spec) return &m;
  }
  return nullptr;
}

// The ranking of one scenario as a Markdown table.
std::string ranking_table(const Comparison& c) {
  const bool has_target = !c.targets.empty();
  const MethodResult* dgd = find_method(c, "dgd");
  std::string out = has_target
                        ? "| rank | method | time to target (s) | reached | time per step (s) "
                          "| speedup over DGD |\n|---|---|---|---|---|---|\n"
                        : "| rank | method | final F | time per step (s) |\n|---|---|---|---|\n";
  int rank = 0;
  for (const MethodResult* m : ranking(c)) {
    ++rank;
    if (!has_target) {
      fmt::format_to(std::back_inserter(out), "| {} | {} | {} | {} |\n", rank, m->spec,
                     format_estimate(m->final_loss, "{:.4g}"),
                     format_estimate(m->step_time, "{:.4g}"));
      continue;
    }
    const std::string speedup = dgd ? format_estimate(speedup_over(*m, *dgd), "{:.2f}") : "—";
    fmt::format_to(std::back_inserter(out), "| {} | {} | {} | {}/{} | {} | {} |\n", rank, m->spec,
                   format_estimate(m->time_to_target, "{:.4g}"), m->reached, m->runs.size(),
                   format_estimate(m->step_time, "{:.4g}"), speedup);
  }
  return out;
}

// "pgc-fr:s=2: time to target 12.3 [11.0, 13.6] s (5/5 seeds reached it), speedup over DGD 1.84
// [1.70, 1.98]" (the speedup: DGD's time over the method's, per seed).
std::string describe_choice(const Comparison& c, const MethodResult& m) {
  const MethodResult* dgd = find_method(c, "dgd");
  if (c.targets.empty()) {
    return fmt::format("{}: final F {} at {}", m.spec, format_estimate(m.final_loss, "{:.4g}"),
                       c.budget.describe());
  }
  std::string text =
      fmt::format("{}: time to target {} s ({}/{} seeds reached it)", m.spec,
                  format_estimate(m.time_to_target, "{:.4g}"), m.reached, m.runs.size());
  if (dgd && &m != dgd) {
    text += fmt::format(", speedup over DGD {}", format_estimate(speedup_over(m, *dgd), "{:.2f}"));
  }
  return text;
}

// The top three of a ranking: "a > b > c".
std::string top_three(const Comparison& c) {
  std::vector<std::string> names;
  for (const MethodResult* m : ranking(c)) {
    if (names.size() == 3) break;
    names.push_back(m->spec);
  }
  return fmt::format("{}", fmt::join(names, " > "));
}

// The trace's shape for the report: rows, workers, per-worker means, the pooled median.
std::string describe_trace(const std::string& text) {
  std::map<long, std::vector<double>> rows;
  std::vector<double> all;
  size_t begin = text.find('\n') + 1;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    const size_t comma = line.find(',');
    if (comma != std::string::npos) {
      const double d = std::strtod(line.c_str() + comma + 1, nullptr);
      rows[std::strtol(line.c_str(), nullptr, 10)].push_back(d);
      all.push_back(d);
    }
    begin = end + 1;
  }
  if (all.empty()) return "";
  std::sort(all.begin(), all.end());
  const double median = all[all.size() / 2];
  std::string out = fmt::format(
      "{} jobs on {} workers; pooled median {:.4g} s per unit; jobs above 1.5 × the median: "
      "{:.1f} %.\n\n| worker | jobs | mean (s/unit) | max (s/unit) |\n|---|---|---|---|\n",
      all.size(), rows.size(), median,
      100.0 *
          static_cast<double>(
              std::count_if(all.begin(), all.end(), [&](double d) { return d > 1.5 * median; })) /
          static_cast<double>(all.size()));
  for (const auto& [worker, d] : rows) {
    const double mean = std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size());
    fmt::format_to(std::back_inserter(out), "| {} | {} | {:.4g} | {:.4g} |\n", worker, d.size(),
                   mean, *std::max_element(d.begin(), d.end()));
  }
  return out;
}

// A scenario's comparison, its folder under `out`.
CompareResult compare_scenario(const Config& base, const Scenario& scenario,
                               const std::vector<std::string>& specs, const AdviseOptions& options,
                               const std::string& out) {
  Config config = base;
  for (const std::string& setting : scenario.settings) config.set(setting);
  CompareOptions compare;
  compare.methods = specs;
  compare.seeds = options.seeds;
  compare.budget = options.budget;
  compare.out_dir = out + "/" + scenario.folder;
  if (std::find(specs.begin(), specs.end(), "dgd") != specs.end()) compare.baseline = "dgd";
  log_info("advise: {} ({} methods x {} seeds)", scenario.name, specs.size(), options.seeds);
  return run_comparison(config, compare);
}

std::string report_text(const AdviseOptions& options, const std::string& trace_summary,
                        const Candidates& candidates, const std::vector<CompareResult>& results,
                        const std::string& answer) {
  std::string out = "# Which method for this cluster?\n\n";
  fmt::format_to(std::back_inserter(out),
                 "Every applicable method simulated on the measured job times of `{}` "
                 "(replayed by bootstrap, {} seeds per method), ranked by {}.\n\n"
                 "## The answer\n\n```\n{}```\n\n## The trace\n\n{}\n",
                 options.trace, options.seeds, results.front().comparison.criterion, answer,
                 trace_summary);
  for (size_t k = 0; k < results.size(); ++k) {
    const Scenario& scenario = scenarios()[k];
    const Comparison& c = results[k].comparison;
    fmt::format_to(
        std::back_inserter(out),
        "## {} ({})\n\nBudget: {}. Runs and the full comparison report: "
        "[{}/report.md]({}/report.md).\n\n{}\n"
        "![loss]({}/loss.png)\n\n",
        scenario.name,
        scenario.settings.empty() ? "the trace as measured"
                                  : fmt::format("{}", fmt::join(scenario.settings, ", ")),
        c.budget.describe(), scenario.folder, scenario.folder, ranking_table(c), scenario.folder);
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

}  // namespace

std::string run_advise(const Config& config, const AdviseOptions& options) {
  if (options.out_dir.empty()) fail("pacer advise: an output folder is required (--out)");
  if (options.seeds < 2)
    fail("--seeds {}: expected at least 2 (intervals need two)", options.seeds);
  make_directories(options.out_dir);
  const JobsTrace measured_trace = read_trace(options.trace);
  const std::string& trace = measured_trace.csv;
  const std::string trace_path = options.out_dir + "/trace.csv";
  write_file_atomic(trace_path, trace);

  Config base = config;
  // A job log also shows what messages cost: unless the configuration says, runs replay that.
  std::string latency_note;
  if (!std::isnan(measured_trace.latency) && !base.has("timing.latency")) {
    base.set_double("timing.latency", measured_trace.latency);
    latency_note = fmt::format(
        "message latency {:.3g} s per message, from the job log (half the median time from "
        "assignment to delivery not spent computing)\n",
        measured_trace.latency);
  }
  base.set_string("timing.model", "trace");
  base.set_string("timing.file", std::filesystem::absolute(trace_path).string());
  base.set_string("timing.replay", "bootstrap");
  const int workers = static_cast<int>(base.get_int("workers", 12));  // read_workers's default
  // The trace must cover every worker of the configuration: said once, here, not per method, and
  // of the user's file (a jobs.csv was checked while it was converted).
  if (!is_jobs_csv(options.trace)) {
    Config check = base;
    check.set_string("timing.file", options.trace);
    make_timing_model(check, workers, read_seed(check));
  }
  try {
    make_timing_model(base, workers, read_seed(base));
  } catch (const Error& e) {
    fail("{} (the durations of {})", e.what(), options.trace);
  }
  const std::vector<std::string> specs = options.methods.empty()
                                             ? default_candidates(options.s_values, workers)
                                             : split_method_list(options.methods);
  const Candidates candidates = applicable(base, specs);
  if (candidates.specs.empty()) {
    fail("pacer advise: no method of {} can run this configuration", fmt::join(specs, ", "));
  }

  std::vector<CompareResult> results;
  for (const Scenario& scenario : scenarios()) {
    results.push_back(compare_scenario(base, scenario, candidates.specs, options, options.out_dir));
  }
  const Comparison& measured = results.front().comparison;
  const MethodResult& best = *ranking(measured).front();
  std::string answer =
      latency_note + fmt::format("ranking on the measured trace ({}, {} seeds):\n{}\n",
                                 measured.criterion, options.seeds, ranking_table(measured));
  fmt::format_to(std::back_inserter(answer), "recommended: {}\n", describe_choice(measured, best));
  for (size_t k = 1; k < results.size(); ++k) {
    const Comparison& c = results[k].comparison;
    const MethodResult& top = *ranking(c).front();
    fmt::format_to(std::back_inserter(answer), "if {}: {} recommended ({}); top three: {}\n",
                   scenarios()[k].name, top.spec == best.spec ? "the same" : top.spec,
                   describe_choice(c, top), top_three(c));
  }
  write_file_atomic(options.out_dir + "/report.md",
                    report_text(options, describe_trace(trace), candidates, results, answer));
  return answer +
         fmt::format("report: {}/report.md; trace replayed: {}\n", options.out_dir, trace_path);
}

}  // namespace pacer
