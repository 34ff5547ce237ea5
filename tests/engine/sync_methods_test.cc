// DGD and IS-SGD on the simulator against their definitions (DESIGN.md section 3.1).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pacer/core/error.h"
#include "sync_test_util.h"

namespace pacer::testing {

SimRun run_on_simulator(const Config& config, std::shared_ptr<const Objective> objective,
                        const TimingModel& timing, int64_t steps, double lr, uint64_t seed) {
  MethodSetup setup{objective, &timing, timing.num_workers(), seed};
  std::unique_ptr<Method> method = make_method(config, setup);
  testing::RecordingMonitor monitor(steps);
  OptimizerOptions options;
  options.lr = lr;
  Vec x0 = Vec::Zero(objective->dim());
  Trainer trainer(x0, Optimizer(options), monitor);
  auto master = method->make_master(trainer);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < timing.num_workers(); ++i) workers.push_back(method->make_worker(i));
  Simulator sim(timing, CommModel{}, seed);
  sim.run(*master, workers);
  SimRun run;
  run.records = monitor.records;
  run.trajectory = monitor.models;
  master->summarize(run.method_summary);
  run.stats = sim.stats();
  return run;
}

namespace {

Config method_config(const std::string& text) { return Config::parse(text, "test.toml"); }

std::unique_ptr<TimingModel> timing_from(const std::string& text, int n) {
  return make_timing_model(Config::parse(text, "timing.toml"), n, 5);
}

TEST(Dgd, FullBatchEqualsGradientDescent) {
  const int n = 4;
  auto objective = least_squares_objective(n, 200, 6, /*batch=*/0);
  auto timing = timing_from("[timing]\nmodel = \"exponential\"\n", n);
  const double lr = 0.05;
  SimRun run =
      run_on_simulator(method_config("[method]\nname = \"dgd\"\n"), objective, *timing, 40, lr);
  ASSERT_EQ(run.trajectory.size(), 40u);

  auto scratch = objective->make_scratch();
  Vec x = Vec::Zero(objective->dim()), g(objective->dim());
  for (size_t t = 0; t < run.trajectory.size(); ++t) {
    objective->full_gradient(x, g, *scratch);
    x -= lr * g;
    double scale = std::max(1.0, x.norm());
    EXPECT_LE((run.trajectory[t] - x).norm() / scale, 1e-12) << "step " << t;
  }
  EXPECT_EQ(run.records.back().responders, n);
  EXPECT_DOUBLE_EQ(run.records.back().work_units, 40.0 * n);
}

TEST(IsSgd, RespondersAreTheFastestUnderFixedTiming) {
  const int n = 5;
  auto objective = least_squares_objective(n, 100, 3, 0);
  auto timing = timing_from("[timing]\nmodel = \"fixed\"\ntau = [1.0, 2.0, 3.0, 4.0, 5.0]\n", n);
  SimRun run = run_on_simulator(method_config("[method]\nname = \"is-sgd\"\nk = 2\n"), objective,
                                *timing, 30, 0.01);
  for (const UpdateRecord& r : run.records) EXPECT_EQ(r.responders, 3);
  // Workers 3 and 4 (the slowest) are never among the responders; 0, 1 and 2 always are.
  std::vector<int64_t> not_used = run.method_summary["steps_not_used_per_worker"];
  EXPECT_EQ(not_used, (std::vector<int64_t>{0, 0, 0, 30, 30}));
  // Step close times: 3, then every 3 s (worker 2 is the slowest responder, 1 unit of 3 s).
  EXPECT_DOUBLE_EQ(run.records[0].time, 3.0);
  EXPECT_DOUBLE_EQ(run.records[1].time, 6.0);
  EXPECT_GT(run.method_summary["late_replies"].get<int64_t>(), 0);
}

TEST(IsSgd, DecodesTheMeanOfResponders) {
  // With k = 0, IS-SGD is DGD.
  const int n = 3;
  auto objective = least_squares_objective(n, 90, 4, 0);
  auto timing = timing_from("[timing]\nmodel = \"exponential\"\n", n);
  SimRun a = run_on_simulator(method_config("[method]\nname = \"is-sgd\"\nk = 0\n"), objective,
                              *timing, 10, 0.1);
  SimRun b =
      run_on_simulator(method_config("[method]\nname = \"dgd\"\n"), objective, *timing, 10, 0.1);
  for (size_t t = 0; t < a.trajectory.size(); ++t) {
    EXPECT_EQ(a.trajectory[t], b.trajectory[t]);
  }
}

TEST(SyncMaster, CancelPolicyRestartsStragglersAtOnce) {
  const int n = 3;
  auto objective = least_squares_objective(n, 90, 4, 0);
  auto timing = timing_from("[timing]\nmodel = \"fixed\"\ntau = [1.0, 1.0, 10.0]\n", n);
  SimRun cancel = run_on_simulator(
      method_config("[method]\nname = \"is-sgd\"\nk = 1\nstraggler_policy = \"cancel\"\n"),
      objective, *timing, 5, 0.1);
  // Worker 2 is cancelled at every step close but the last, which ends the run.
  EXPECT_EQ(cancel.method_summary["cancelled_jobs"].get<int64_t>(), 4);
  EXPECT_EQ(cancel.method_summary["late_replies"].get<int64_t>(), 0);
  EXPECT_EQ(cancel.stats.workers.workers[2].jobs_completed, 0);
  EXPECT_DOUBLE_EQ(cancel.records.back().time, 5.0);
}

TEST(SyncMaster, DeterministicForSameSeed) {
  const int n = 4;
  auto objective = least_squares_objective(n, 400, 5, /*batch=*/8);
  auto timing = timing_from(
      "[timing]\nmodel = \"random_stragglers\"\nq = 0.3\ndelay_mean = 2.0\ntau = 0.1\n", n);
  Config c = method_config("[method]\nname = \"is-sgd\"\nk = 1\n");
  SimRun a = run_on_simulator(c, objective, *timing, 25, 0.05);
  SimRun b = run_on_simulator(c, objective, *timing, 25, 0.05);
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t t = 0; t < a.records.size(); ++t) {
    EXPECT_EQ(a.records[t].time, b.records[t].time);
    EXPECT_EQ(a.records[t].loss, b.records[t].loss);
    EXPECT_EQ(a.trajectory[t], b.trajectory[t]);
  }
}

// A worker half that records every job it computes (its tag and model), then lets the method's
// own worker half answer it.
class RecordingWorker : public Worker {
 public:
  explicit RecordingWorker(std::unique_ptr<Worker> inner) : inner_(std::move(inner)) {}
  double units(const Job& job) const override { return inner_->units(job); }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    jobs.emplace_back(job.tag, x);
    inner_->compute(job, x, out);
  }
  std::vector<std::pair<int64_t, Vec>> jobs;

 private:
  std::unique_ptr<Worker> inner_;
};

// straggler_policy = "queue" on the simulator. IS-SGD(k = 1) on 3 workers, worker 2 taking 2.7 s
// per job and the others 1 s: steps close every second, at 1, 2, ..., 20 s. Worker 2 is sent every
// step: it computes steps 0, 1, 2, ... in order, each at its own model, finishing one every 2.7 s
// (7 by 20 s), every one of them late; each of the 19 closes before the last queued a step for it.
// Under finish it jumps to the newest step instead: 0, 2, 5, 8, ...
TEST(SyncMaster, QueuePolicyHandsALateWorkerEveryStepInOrder) {
  const int n = 3;
  const int64_t steps = 20;
  auto objective = least_squares_objective(n, 90, 4, /*batch=*/2);
  auto timing = timing_from("[timing]\nmodel = \"fixed\"\ntau = [1.0, 1.0, 2.7]\n", n);
  auto run = [&](const std::string& policy, std::vector<std::pair<int64_t, Vec>>& late_jobs) {
    const Config config = method_config(
        "[method]\nname = \"is-sgd\"\nk = 1\nstraggler_policy = \"" + policy + "\"\n");
    std::unique_ptr<Method> method =
        make_method(config, MethodSetup{objective, timing.get(), n, 1});
    RecordingMonitor monitor(steps);
    OptimizerOptions options;
    options.lr = 0.05;
    Trainer trainer(Vec::Zero(objective->dim()), Optimizer(options), monitor);
    auto master = method->make_master(trainer);
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < n; ++i) {
      workers.push_back(std::make_unique<RecordingWorker>(method->make_worker(i)));
    }
    Simulator sim(*timing, CommModel{}, 1);
    sim.run(*master, workers);
    late_jobs = static_cast<RecordingWorker&>(*workers[2]).jobs;
    SimRun result{monitor.records, monitor.models, {}, sim.stats()};
    master->summarize(result.method_summary);
    return result;
  };
  std::vector<std::pair<int64_t, Vec>> jobs;
  const SimRun queue = run("queue", jobs);
  ASSERT_EQ(queue.records.size(), static_cast<size_t>(steps));
  EXPECT_DOUBLE_EQ(queue.records.back().time, 20.0);
  ASSERT_EQ(jobs.size(), 7u);
  for (size_t k = 0; k < jobs.size(); ++k) {
    EXPECT_EQ(jobs[k].first, static_cast<int64_t>(k));
    const Vec model = k == 0 ? Vec::Zero(objective->dim()) : queue.trajectory[k - 1];
    EXPECT_EQ(jobs[k].second, model) << "step " << k;
  }
  EXPECT_EQ(queue.stats.workers.workers[2].jobs_completed, 7);
  EXPECT_EQ(queue.method_summary["late_replies"].get<int64_t>(), 7);
  EXPECT_EQ(queue.method_summary["queued_jobs"].get<int64_t>(), 19);
  EXPECT_EQ(queue.method_summary["straggler_policy"], "queue");

  const SimRun finish = run("finish", jobs);
  std::vector<int64_t> tags;
  for (const auto& job : jobs) tags.push_back(job.first);
  EXPECT_EQ(tags, (std::vector<int64_t>{0, 2, 5, 8, 10, 13, 16}));
  EXPECT_FALSE(finish.method_summary.contains("queued_jobs"));
}

TEST(IsSgd, RefusesKOutOfRange) {
  auto objective = least_squares_objective(4, 40, 2, 0);
  auto timing = timing_from("[timing]\nmodel = \"fixed\"\n", 4);
  MethodSetup setup{objective, timing.get(), 4, 1};
  for (const char* k : {"4", "-1", "7"}) {
    Config c = method_config(std::string("[method]\nname = \"is-sgd\"\nk = ") + k + "\n");
    try {
      make_method(c, setup);
      FAIL() << "k = " << k;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("method.k"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pacer::testing
