// A whole `pacer run` against the engine alone, side by side in one process (DESIGN.md sections 5
// and 7; issue #15): how much of a run's time goes to what is outside the engine (log.csv rows,
// evaluations, targets, the progress line, jobs.csv, the final files and the figures).
//
// The workload is async_bench's: ASGD on least squares with one feature, 12 workers holding 8
// rows each (contiguous partitions, full-partition gradients), fixed harmonic compute times
// τ_i = 2^floor(i/2), stepsize 0.01, for `updates` updates. Both halves build it from the same
// configuration (build_problem, make_timing_model, make_method), so they hold the same data.
//   engine   the simulator, the method's master and workers and the trainer, with a monitor that
//            only counts updates (async_bench's loop)
//   run      run_experiment into a fresh folder, as `pacer run` calls it: config.toml, log.csv
//            (one row per update), jobs.csv, evals.csv, trace.csv, summary.json, the loss and
//            timeline figures; an evaluation every updates/10 updates
//   figures  write_run_figure and write_timeline on the run's folder, the figures the run
//            drew (gnuplot included, when it is on the PATH)
// Each benchmark iteration runs `rounds` rounds of (engine, run), alternating so that both see
// the same machine load, and keeps the fastest of each (wall-clock seconds). Counters:
//   engine_upd/s, run_upd/s    updates per wall second of each
//   run/engine                 run_upd/s ÷ engine_upd/s (1 = a run costs no more than its engine)
//   figures_share              the figures' seconds ÷ the run's seconds
// and at the end one line per size:
//   updates 1000000: end-to-end / engine = 0.62 (run 1.23 M/s, engine 1.98 M/s); figures 3.1 % ...
// The simulator computes jobs on one thread in both halves (PACER_ENGINE_THREADS=1 unless it is
// set). Run with
//   build/bench/end_to_end_bench
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/log.h"
#include "pacer/engine/sim/simulator.h"
#include "pacer/method/method.h"
#include "pacer/report/plot.h"
#include "pacer/report/timeline.h"
#include "pacer/run/experiment.h"
#include "pacer/timing/timing_model.h"
#include "step_limit_monitor.h"

namespace pacer {
namespace {

constexpr int kWorkers = 12;

std::string config_text(int64_t updates) {
  return fmt::format(R"(seed = 1
workers = {}
max_steps = {}
eval_every = {}
[data]
source = "synthetic"
generator = "least_squares"
samples = {}
features = 1
[partition]
scheme = "contiguous"
[model]
name = "least_squares"
[training]
batch = 0
[optimizer]
lr = 0.01
[timing]
model = "fixed"
profile = "harmonic"
tau = 1.0
[method]
name = "asgd"
)",
                     kWorkers, updates, std::max<int64_t>(1, updates / 10), kWorkers * 8);
}

// The engine alone on the run's problem: async_bench's loop. Returns wall seconds.
double engine_seconds(const Config& config, int64_t updates) {
  const Problem problem = build_problem(config, 1);
  const std::unique_ptr<TimingModel> timing = make_timing_model(config, kWorkers, 1);
  const std::unique_ptr<Method> method =
      make_method(config, MethodSetup{problem.objective, timing.get(), kWorkers, 1});
  OptimizerOptions options;
  options.lr = 0.01;
  const double begin = steady_seconds();
  StepLimitMonitor monitor(updates);
  Trainer trainer(Vec::Zero(problem.objective->dim()), Optimizer(options), monitor);
  std::unique_ptr<TrainingMaster> master = method->make_master(trainer);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < kWorkers; ++i) workers.push_back(method->make_worker(i));
  Simulator simulator(*timing, CommModel{}, 1);
  simulator.run(*master, workers);
  benchmark::DoNotOptimize(trainer.x().data());
  const double seconds = steady_seconds() - begin;
  if (trainer.steps() != updates) {
    std::fprintf(stderr, "engine: %lld updates, expected %lld\n",
                 static_cast<long long>(trainer.steps()), static_cast<long long>(updates));
  }
  return seconds;
}

std::string bench_dir() {
  return (std::filesystem::temp_directory_path() / "pacer-end-to-end-bench").string();
}

// The whole run, as pacer run makes it, into a fresh folder. Returns wall seconds.
double run_seconds(const Config& config, const std::string& dir) {
  std::filesystem::remove_all(dir);
  RunOptions options;
  options.out_dir = dir;
  options.timeline_figure = true;
  const double begin = steady_seconds();
  run_experiment(config, options);
  return steady_seconds() - begin;
}

// The run's two figures drawn again on its folder. Returns wall seconds.
double figure_seconds(const std::string& dir) {
  const double begin = steady_seconds();
  write_run_figure(dir, "asgd, seed 1", {}, "full", Clock::kSimulated);
  TimelineOptions timeline;
  timeline.title = "asgd, seed 1";
  write_timeline(dir, dir + "/jobs.csv", timeline);
  return steady_seconds() - begin;
}

struct Result {
  int64_t updates = 0;
  double engine_s = 0, run_s = 0, figure_s = 0;
};
std::vector<Result>& results() {
  static std::vector<Result> all;
  return all;
}

void BM_EndToEnd(benchmark::State& state) {
  const int64_t updates = state.range(0);
  const int rounds = static_cast<int>(state.range(1));
  const std::string dir = bench_dir() + "/run";
  Result best{updates, std::numeric_limits<double>::infinity(),
              std::numeric_limits<double>::infinity(), 0};
  for (auto _ : state) {
    for (int round = 0; round < rounds; ++round) {
      best.engine_s = std::min(
          best.engine_s, engine_seconds(Config::parse(config_text(updates), "e2e.toml"), updates));
      best.run_s =
          std::min(best.run_s, run_seconds(Config::parse(config_text(updates), "e2e.toml"), dir));
    }
    best.figure_s = figure_seconds(dir);
  }
  const double n = static_cast<double>(updates);
  state.counters["engine_upd/s"] = n / best.engine_s;
  state.counters["run_upd/s"] = n / best.run_s;
  state.counters["run/engine"] = best.engine_s / best.run_s;
  state.counters["figures_share"] = best.figure_s / best.run_s;
  results().push_back(best);
  std::filesystem::remove_all(bench_dir());
}
BENCHMARK(BM_EndToEnd)
    ->ArgNames({"updates", "rounds"})
    ->Args({100000, 5})
    ->Args({1000000, 3})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

void print_results() {
  for (const Result& r : results()) {
    const double n = static_cast<double>(r.updates);
    std::printf(
        "updates %lld: end-to-end / engine = %.3f (run %.3f M updates/s, %.3f s; engine %.3f M "
        "updates/s, %.3f s); figures %.3f s = %.1f %% of the run\n",
        static_cast<long long>(r.updates), r.engine_s / r.run_s, n / r.run_s / 1e6, r.run_s,
        n / r.engine_s / 1e6, r.engine_s, r.figure_s, 100 * r.figure_s / r.run_s);
  }
}

}  // namespace
}  // namespace pacer

// Its own main (it replaces benchmark_main's, which the linker then leaves out) to print the
// ratios after the table.
int main(int argc, char** argv) {
  setenv("PACER_ENGINE_THREADS", "1", /*overwrite=*/0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  pacer::print_results();
  return 0;
}
