// Simulator throughput: events per second, (a) of the engine alone with a worker that does no
// math, and (b) of a whole synchronous method (DGD, IS-SGD) with a trivial model (least squares on
// one feature, one-row partitions), so that engine + method overhead per event is measured.
//
//   build/sim_bench --benchmark_counters_tabular=true
// items_per_second is simulated events per second on one core.
#include <benchmark/benchmark.h>

#include "pacer/data/partition.h"
#include "pacer/data/synthetic.h"
#include "pacer/engine/sim/simulator.h"
#include "pacer/method/method.h"
#include "pacer/model/eigen_models.h"
#include "step_limit_monitor.h"

namespace pacer {
namespace {

class NullWorker : public Worker {
 public:
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    out.payload = x;
    out.loss = 0;
    out.versions.assign(1, job.tag);
  }
};

// Keeps every worker busy: reassigns the arriving worker at once, until `limit` replies.
class RelayMaster : public Master {
 public:
  explicit RelayMaster(int64_t limit) : limit_(limit), x_(Vec::Zero(1)) {}
  void start(Cluster& c) override {
    for (int i = 0; i < c.num_workers(); ++i) c.assign(i, Job{0}, x_);
  }
  void on_reply(const Reply& r, Cluster& c) override {
    if (++replies_ < limit_) c.assign(r.worker, Job{r.tag + 1}, x_);
  }
  bool finished() const override { return replies_ >= limit_; }

 private:
  int64_t limit_;
  int64_t replies_ = 0;
  Vec x_;
};

void BM_EngineOnly(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Config timing_config = Config::parse("[timing]\nmodel = \"exponential\"\n", "bench");
  auto timing = make_timing_model(timing_config, n, 1);
  uint64_t events = 0;
  for (auto _ : state) {
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < n; ++i) workers.push_back(std::make_unique<NullWorker>());
    RelayMaster master(200000);
    Simulator sim(*timing, CommModel{}, 1);
    sim.run(master, workers);
    events += sim.stats().events;
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
}
BENCHMARK(BM_EngineOnly)->Arg(12)->Arg(100)->Unit(benchmark::kMillisecond);

void BM_SyncMethodTrivialModel(benchmark::State& state, const char* method_toml) {
  const int n = 12;
  Rng rng(1, "bench");
  SyntheticOptions o;
  o.samples = n;
  o.features = 1;
  Dataset data = make_least_squares(o, rng);
  auto objective = std::make_shared<Objective>(make_least_squares_model(1, 0.0), data,
                                               partition_contiguous(n, n), 0);
  auto timing =
      make_timing_model(Config::parse("[timing]\nmodel = \"random_stragglers\"\n", "bench"), n, 1);
  Config config = Config::parse(method_toml, "bench");
  auto method = make_method(config, MethodSetup{objective, timing.get(), n, 1});
  uint64_t events = 0;
  for (auto _ : state) {
    StepLimitMonitor monitor(20000);
    Trainer trainer(Vec::Zero(1), Optimizer(OptimizerOptions{}), monitor);
    auto master = method->make_master(trainer);
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < n; ++i) workers.push_back(method->make_worker(i));
    Simulator sim(*timing, CommModel{}, 1);
    sim.run(*master, workers);
    events += sim.stats().events;
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
}
BENCHMARK_CAPTURE(BM_SyncMethodTrivialModel, dgd, "[method]\nname = \"dgd\"\n")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SyncMethodTrivialModel, is_sgd, "[method]\nname = \"is-sgd\"\nk = 2\n")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pacer
