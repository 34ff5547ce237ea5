#include "pacer/study/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/engine/registry.h"
#include "pacer/study/advise.h"
#include "pacer/study/compare.h"

namespace pacer {
namespace {

// The real engine's comparison: one seed per method, `budget`, no tuning.
Comparison measure(const Config& config, const std::vector<std::string>& specs,
                   const std::string& budget, const std::string& out_dir) {
  CompareOptions o;
  o.methods = specs;
  o.seeds = 1;
  o.budget = budget;
  o.out_dir = out_dir;
  Config measured = config;
  measured.set("record.jobs=true");  // the logs the predictions replay
  return run_comparison(measured, o).comparison;
}

// The configuration of `config` on the simulator: the real engine's table dropped.
Config on_simulator(const Config& config) {
  Config sim = config;
  sim.unset("engine");
  return sim;
}

// `specs` predicted on the simulator from the jobs.csv at `trace`, over `seeds` seeds.
Comparison predict(const Config& config, const std::string& trace,
                   const std::vector<std::string>& specs, const std::string& budget, int seeds,
                   const std::string& out_dir, std::string& latency_note) {
  CompareOptions o;
  o.methods = specs;
  o.seeds = seeds;
  o.budget = budget;
  o.out_dir = out_dir;
  const Config replay = trace_replay_config(on_simulator(config), trace, out_dir, latency_note);
  return run_comparison(replay, o).comparison;
}

const MethodResult& method_of(const Comparison& c, const std::string& spec) {
  for (const MethodResult& m : c.methods) {
    if (m.spec == spec) return m;
  }
  fail("pacer validate: no method {} in the comparison", spec);
}

// The measured run's jobs.csv of `spec`.
std::string jobs_csv(const Comparison& measured, const std::string& spec,
                     const std::string& measured_dir) {
  return measured_dir + "/" + method_of(measured, spec).runs.front().folder + "/jobs.csv";
}

struct Row {
  std::string spec;
  double step_time = kNotAvailable, time_to_target = kNotAvailable;  // measured
  Estimate predicted_step, predicted_target, own_step;
};

double ratio(double measured, const Estimate& predicted) {
  return predicted.empty() || std::isnan(measured) ? kNotAvailable : measured / predicted.mean;
}

std::string number(double v, const char* spec = "{:.3g}") {
  return std::isnan(v) ? "—" : fmt::format(fmt::runtime(spec), v);
}

std::string table(const std::vector<Row>& rows, bool has_target) {
  std::string md =
      "| method | measured s/step | predicted from DGD's log [95 %] | measured / predicted | "
      "measured time to target (s) | predicted [95 %] | predicted from its own log | measured / "
      "predicted |\n|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", r.spec, number(r.step_time),
                      format_estimate(r.predicted_step, "{:.3g}"),
                      number(ratio(r.step_time, r.predicted_step), "{:.3f}"),
                      !has_target                    ? "—"
                      : std::isnan(r.time_to_target) ? "not reached"
                                                     : number(r.time_to_target),
                      format_estimate(r.predicted_target, "{:.3g}"),
                      format_estimate(r.own_step, "{:.3g}"),
                      number(ratio(r.step_time, r.own_step), "{:.3f}"));
  }
  return md;
}

std::string csv(const std::vector<Row>& rows) {
  std::string out =
      "method,measured_step_time,predicted_step_time_mean,predicted_step_time_low,"
      "predicted_step_time_high,predicted_step_time_censored,measured_over_predicted,"
      "measured_time_to_target,predicted_time_to_target_mean,predicted_time_to_target_low,"
      "predicted_time_to_target_high,predicted_time_to_target_censored,own_step_time_mean,"
      "own_step_time_low,own_step_time_high,own_step_time_censored,measured_over_own\n";
  const auto field = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); };
  for (const Row& r : rows) {
    out += fmt::format("{},{},{},{},{},{},{},{}\n", r.spec, field(r.step_time),
                       csv_estimate(r.predicted_step), field(ratio(r.step_time, r.predicted_step)),
                       field(r.time_to_target), csv_estimate(r.predicted_target),
                       csv_estimate(r.own_step), field(ratio(r.step_time, r.own_step)));
  }
  return out;
}

void check_engine(const Config& config) {
  const std::string engine = config.get_string("engine.name", default_engine());
  const EngineInfo* info = find_engine(engine);
  if (info == nullptr || info->simulated) {
    fail(
        "pacer validate: engine.name: expected a real engine (--engine local, or --engine mpi "
        "under mpirun), got \"{}\": validate holds the simulator's prediction against real runs",
        engine);
  }
}

}  // namespace

std::string run_validate(const Config& config, const ValidateOptions& options) {
  check_engine(config);
  if (options.out_dir.empty()) fail("pacer validate: an output folder is required (--out)");
  if (options.seeds < 2)
    fail("--seeds {}: expected at least 2 (intervals need two)", options.seeds);
  const std::vector<std::string> specs = split_method_list(options.methods);
  const auto dgd = std::find_if(specs.begin(), specs.end(), [](const std::string& spec) {
    return spec == "dgd" || spec.rfind("dgd:", 0) == 0;
  });
  if (dgd == specs.end()) {
    fail("--methods {}: expected a list with dgd (every method is predicted from DGD's log)",
         options.methods);
  }
  if (options.steps < 0) {
    fail("--steps {}: expected a number of steps > 0 (0 or absent: the config's max_steps)",
         options.steps);
  }
  const int64_t steps = options.steps > 0 ? options.steps : config.get_int("max_steps", 0);
  if (steps <= 0) fail("pacer validate: max_steps: expected a number of steps > 0 (or --steps)");
  const std::string budget = fmt::format("steps={}", steps);
  const std::string measured_dir = options.out_dir + "/measured";
  const Comparison measured = measure(config, specs, budget, measured_dir);

  std::string latency_note;
  const Comparison from_dgd = predict(config, jobs_csv(measured, *dgd, measured_dir), specs, budget,
                                      options.seeds, options.out_dir + "/predicted", latency_note);
  std::vector<Row> rows;
  for (const std::string& spec : specs) {
    const MethodResult& m = method_of(measured, spec);
    Row row{spec,
            m.runs.front().step_time,
            m.runs.front().reached ? m.runs.front().time_to_target : kNotAvailable,
            {},
            {},
            {}};
    const MethodResult& p = method_of(from_dgd, spec);
    row.predicted_step = p.step_time;
    row.predicted_target = p.time_to_target;
    if (spec == *dgd) {  // DGD's own log is the one every method was predicted from
      row.own_step = p.step_time;
    } else {
      std::string own_note;
      const Comparison own = predict(config, jobs_csv(measured, spec, measured_dir), {spec}, budget,
                                     options.seeds, options.out_dir + "/own/" + m.folder, own_note);
      row.own_step = own.methods.front().step_time;
    }
    rows.push_back(row);
  }
  const std::string engine = config.get_string("engine.name", default_engine());
  const std::string text = fmt::format(
      "Measured on engine {} ({} steps, one seed per method) against the simulator's replay of "
      "the measured logs ({} seeds; {}):\n\n{}",
      engine, steps, options.seeds,
      latency_note.empty() ? "no message latency in the log"
                           : latency_note.substr(0, latency_note.size() - 1),
      table(rows, config.has("target.loss")));
  write_file_atomic(options.out_dir + "/validate.csv", csv(rows));
  write_file_atomic(options.out_dir + "/report.md",
                    "# The simulator against real runs (pacer validate)\n\n" + text +
                        "\nEvery run: measured/ (real), predicted/ (replaying DGD's jobs.csv), "
                        "own/<method>/ (replaying the method's own jobs.csv).\n");
  return text + fmt::format("\nreport: {}/report.md; every number: {}/validate.csv\n",
                            options.out_dir, options.out_dir);
}

}  // namespace pacer
