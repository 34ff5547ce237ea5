// Simulated updates per second of every asynchronous method (DESIGN.md sections 3.2, 5 and 7), on
// a trivial model so that the method's master logic and the simulator dominate: least squares
// with one feature, 12 workers holding 8 rows each (full-partition gradients), fixed harmonic
// compute times τ_i = 2^floor(i/2). Each iteration runs a fresh simulation of kUpdates updates.
//   items/s      model updates per wall-clock second (SetItemsProcessed)
//   arrivals/s   gradients delivered to the master per second (the round-based methods and
//                Ringleader use several arrivals per update; Ringmaster and Rennala also discard
//                some)
// DGD is listed as the synchronous reference.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/data/dataset.h"
#include "pacer/data/partition.h"
#include "pacer/engine/sim/simulator.h"
#include "pacer/method/method.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/objective.h"
#include "pacer/timing/timing_model.h"
#include "step_limit_monitor.h"

namespace pacer {
namespace {

constexpr int kWorkers = 12;
constexpr int kRowsPerWorker = 8;
constexpr int64_t kUpdates = 20000;

std::shared_ptr<const Objective> trivial_objective() {
  Rng rng(1, "bench-data");
  Dataset data;
  data.name = "bench";
  data.features = RowMatrix(kWorkers * kRowsPerWorker, 1);
  data.labels = Vec(kWorkers * kRowsPerWorker);
  for (int r = 0; r < data.rows(); ++r) {
    data.features(r, 0) = rng.normal();
    data.labels[r] = rng.normal();
  }
  std::shared_ptr<const Model> model = make_least_squares_model(1, 0.0);
  return std::make_shared<Objective>(model, data, partition_contiguous(data.rows(), kWorkers),
                                     /*batch=*/0);
}

void BM_SimulatedUpdates(benchmark::State& state, const std::string& name) {
  const std::shared_ptr<const Objective> objective = trivial_objective();
  const Config timing_config = Config::parse(
      "[timing]\nmodel = \"fixed\"\nprofile = \"harmonic\"\ntau = 1.0\n", "bench-timing");
  const std::unique_ptr<TimingModel> timing = make_timing_model(timing_config, kWorkers, 1);
  const Config method_config = Config::parse("[method]\nname = \"" + name + "\"\n", "bench");
  const std::unique_ptr<Method> method =
      make_method(method_config, MethodSetup{objective, timing.get(), kWorkers, 1});
  OptimizerOptions options;
  options.lr = 0.01;

  int64_t arrivals = 0;
  for (auto _ : state) {
    StepLimitMonitor monitor(kUpdates);
    Trainer trainer(Vec::Zero(1), Optimizer(options), monitor);
    std::unique_ptr<TrainingMaster> master = method->make_master(trainer);
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < kWorkers; ++i) workers.push_back(method->make_worker(i));
    Simulator simulator(*timing, CommModel{}, 1);
    simulator.run(*master, workers);
    for (const WorkerStatistics& w : simulator.stats().workers.workers)
      arrivals += w.jobs_completed;
    benchmark::DoNotOptimize(trainer.x().data());
  }
  state.SetItemsProcessed(state.iterations() * kUpdates);
  state.counters["arrivals/s"] =
      benchmark::Counter(static_cast<double>(arrivals), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_SimulatedUpdates, dgd, std::string("dgd"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulatedUpdates, asgd, std::string("asgd"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulatedUpdates, rescaled_asgd, std::string("rescaled-asgd"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulatedUpdates, delay_adaptive_asgd, std::string("delay-adaptive-asgd"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulatedUpdates, ringmaster, std::string("ringmaster"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulatedUpdates, rennala, std::string("rennala"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulatedUpdates, malenia, std::string("malenia"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulatedUpdates, ringleader, std::string("ringleader"))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pacer
