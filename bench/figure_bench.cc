// What drawing a run's figure costs next to the run (plot.h; DESIGN.md section 7): a synthetic
// least-squares ASGD run of 10^6 updates (12 workers, exponential times, an evaluation every
// 10^5 updates) written to a folder, and write_run_figure on that folder, side by side.
//   BM_Run/figures       the whole run, outputs and figure included (pacer run)
//   BM_Run/no_gnuplot    the same with gnuplot off the PATH: outputs, figure data and script only
//   BM_RunFigure/gnuplot write_run_figure alone: reading evals.csv and trace.csv, writing the
//                        data and script, gnuplot rendering PNG and SVG
//   BM_RunFigure/script_only   write_run_figure with gnuplot off the PATH (pacer's part alone)
//   BM_WriteLog/alone    writing the run's log.csv (90 MB), as write_outputs does
//   BM_WriteLog/while_drawing  the same while the figure is drawn (RunFigureJob), as pacer run
//                        does: the difference is the wall time the figure adds to a run
// Real (wall-clock) time: gnuplot runs in a child process, whose CPU time the counter child_cpu
// (seconds per iteration, user + system) reports; cpu_with_children adds the process's own. Run
// with
//   build/bench/figure_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "pacer/core/config.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"
#include "pacer/report/plot.h"
#include "pacer/run/experiment.h"

namespace pacer {
namespace {

constexpr const char* kConfig = R"(
seed = 1
workers = 12
max_steps = 1000000
eval_every = 100000
[data]
source = "synthetic"
generator = "least_squares"
samples = 1200
features = 4
[model]
name = "least_squares"
[training]
batch = 8
[optimizer]
lr = 0.01
[timing]
model = "exponential"
tau = 1.0
[method]
name = "asgd"
)";

std::string bench_dir() {
  static const std::string dir = [] {
    std::string d = (std::filesystem::temp_directory_path() / "pacer-figure-bench").string();
    std::filesystem::remove_all(d);
    return d;
  }();
  return dir;
}

// PATH without gnuplot while it lives.
class NoGnuplot {
 public:
  NoGnuplot() : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    setenv("PATH", "/nonexistent", 1);
  }
  ~NoGnuplot() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

// User + system CPU seconds of the finished children (gnuplot) so far.
double children_cpu() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}
double self_cpu() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

void report_cpu(benchmark::State& state, double children_before, double self_before) {
  const double n = static_cast<double>(state.iterations());
  state.counters["child_cpu"] = (children_cpu() - children_before) / n;
  state.counters["cpu_with_children"] =
      (children_cpu() - children_before + self_cpu() - self_before) / n;
}

void run_once(const std::string& out) {
  RunOptions options;
  options.out_dir = out;
  run_experiment(Config::parse(kConfig, "figure-bench.toml"), options);
}

void BM_Run(benchmark::State& state, bool gnuplot) {
  set_log_level(LogLevel::kError);  // no "gnuplot not found" line per iteration
  const double children = children_cpu(), self = self_cpu();
  for (auto _ : state) {
    if (gnuplot) {
      run_once(bench_dir() + "/run");
    } else {
      NoGnuplot off;
      run_once(bench_dir() + "/run-no-gnuplot");
    }
  }
  state.SetItemsProcessed(state.iterations() * 1000000);
  report_cpu(state, children, self);
}
BENCHMARK_CAPTURE(BM_Run, figures, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Run, no_gnuplot, false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

void BM_RunFigure(benchmark::State& state, bool gnuplot) {
  set_log_level(LogLevel::kError);
  const std::string dir = bench_dir() + "/run";
  if (!std::filesystem::exists(dir + "/trace.csv")) run_once(dir);
  const double children = children_cpu(), self = self_cpu();
  for (auto _ : state) {
    if (gnuplot) {
      write_run_figure(dir, "asgd, seed 1", {}, "train", Clock::kSimulated);
    } else {
      NoGnuplot off;
      write_run_figure(dir, "asgd, seed 1", {}, "train", Clock::kSimulated);
    }
  }
  report_cpu(state, children, self);
}
BENCHMARK_CAPTURE(BM_RunFigure, gnuplot, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_RunFigure, script_only, false)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WriteLog(benchmark::State& state, bool drawing) {
  set_log_level(LogLevel::kError);
  const std::string dir = bench_dir() + "/run";
  if (!std::filesystem::exists(dir + "/trace.csv")) run_once(dir);
  const std::string log = read_file(dir + "/log.csv");
  const double children = children_cpu(), self = self_cpu();
  for (auto _ : state) {
    if (drawing) {
      RunFigureJob figure(dir, "asgd, seed 1", {}, "train", Clock::kSimulated);
      write_file_atomic(dir + "/log-copy.csv", log);
      figure.finish();
    } else {
      write_file_atomic(dir + "/log-copy.csv", log);
    }
  }
  report_cpu(state, children, self);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(log.size()));
}
BENCHMARK_CAPTURE(BM_WriteLog, alone, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_WriteLog, while_drawing, true)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace pacer
