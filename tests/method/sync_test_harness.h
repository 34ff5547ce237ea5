// A minimal virtual-time engine and helpers for the synchronous-method tests of this suite, which
// links only the method layer.
//
// FakeCluster: job durations come from a TimingModel on each worker's own stream, a reply reaches
// the master the moment its job finishes, and replies that finish together arrive in the order
// their jobs were assigned.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/rng.h"
#include "pacer/data/partition.h"
#include "pacer/data/synthetic.h"
#include "pacer/method/method.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/objective.h"
#include "pacer/timing/timing_model.h"
#include "recording_monitor.h"

namespace pacer::testing {

class FakeCluster : public Cluster {
 public:
  FakeCluster(const TimingModel& timing, uint64_t seed) : timing_(timing) {
    for (int i = 0; i < timing.num_workers(); ++i) {
      state_.emplace_back(Rng(seed, "duration", static_cast<uint64_t>(i)));
    }
  }

  // Delivers replies in order of finishing time (ties to the earlier assignment) until the master
  // is finished.
  void run(Master& master, std::vector<std::unique_ptr<Worker>>& workers) {
    workers_ = &workers;
    master.start(*this);
    while (!master.finished()) {
      int next = -1;
      for (int i = 0; i < num_workers(); ++i) {
        const State& s = state_[i];
        if (!s.busy) continue;
        if (next < 0 || s.finish < state_[next].finish ||
            (s.finish == state_[next].finish && s.sequence < state_[next].sequence)) {
          next = i;
        }
      }
      ASSERT_GE(next, 0) << "the master stalled";
      State& s = state_[next];
      now_ = s.finish;
      workers[next]->compute(s.job, s.x, s.output);
      s.busy = false;
      Reply reply{.worker = next,
                  .tag = s.job.tag,
                  .payload = &s.output.payload,
                  .loss = s.output.loss,
                  .units = s.units,
                  .compute_time = s.duration,
                  .versions = s.output.versions};
      master.on_reply(reply, *this);
    }
  }

  int num_workers() const override { return static_cast<int>(state_.size()); }
  double now() const override { return now_; }
  void assign(int worker, const Job& job, const Vec& x) override {
    State& s = state_[worker];
    ASSERT_FALSE(s.busy);
    assignments.push_back(Assignment{worker, job.tag, x, now_});
    s.busy = true;
    s.job = job;
    s.x = x;
    s.units = (*workers_)[worker]->units(job);
    s.duration = timing_.compute_time(worker, s.units, job.tag, s.rng).total();
    s.finish = now_ + s.duration;
    s.sequence = sequence_++;
  }
  bool busy(int worker) const override { return state_[worker].busy; }
  bool can_cancel() const override { return true; }
  void cancel(int worker) override { state_[worker].busy = false; }
  bool alive(int /*worker*/) const override { return true; }
  void set_timer(double /*time*/) override { ADD_FAILURE() << "no coded master sets a timer"; }

  // Every job assigned, in order, with the model it was sent and when.
  struct Assignment {
    int worker;
    int64_t tag;
    Vec x;
    double time;
  };
  std::vector<Assignment> assignments;

 private:
  struct State {
    explicit State(Rng r) : rng(r) {}
    Rng rng;
    bool busy = false;
    Job job;
    Vec x;
    double units = 0, duration = 0, finish = 0;
    uint64_t sequence = 0;
    WorkerOutput output;
  };
  const TimingModel& timing_;
  std::vector<State> state_;
  std::vector<std::unique_ptr<Worker>>* workers_ = nullptr;
  double now_ = 0;
  uint64_t sequence_ = 0;
};

// Least squares with `rows` samples over n contiguous partitions.
inline std::shared_ptr<const Objective> least_squares(int n, int rows, int features, int batch) {
  Rng rng(3, "test-data");
  SyntheticOptions o;
  o.samples = rows;
  o.features = features;
  o.noise = 0.5;
  o.condition_number = 10;
  Dataset data = make_least_squares(o, rng);
  return std::make_shared<Objective>(make_least_squares_model(features, 0.0), data,
                                     partition_contiguous(rows, n), batch);
}

inline std::unique_ptr<TimingModel> timing(const std::string& toml, int n, uint64_t seed = 5) {
  return make_timing_model(Config::parse(toml, "timing.toml"), n, seed);
}

struct RunResult {
  std::vector<Vec> trajectory;  // x_1, x_2, ...: the model after each step
  std::vector<UpdateRecord> records;
  nlohmann::json summary;
  std::vector<FakeCluster::Assignment> assignments;
};

inline RunResult run_method(const std::string& method_toml,
                            std::shared_ptr<const Objective> objective, const TimingModel& timing,
                            int64_t steps, double lr, uint64_t seed = 1) {
  Config config = Config::parse(method_toml, "method.toml");
  MethodSetup setup{objective, &timing, timing.num_workers(), seed};
  std::unique_ptr<Method> method = make_method(config, setup);
  EXPECT_TRUE(method->synchronous());
  testing::RecordingMonitor monitor(steps);
  OptimizerOptions options;
  options.lr = lr;
  Trainer trainer(Vec::Zero(objective->dim()), Optimizer(options), monitor);
  std::unique_ptr<TrainingMaster> master = method->make_master(trainer);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < timing.num_workers(); ++i) workers.push_back(method->make_worker(i));
  FakeCluster cluster(timing, seed);
  cluster.run(*master, workers);
  RunResult result{monitor.models, monitor.records, {}, std::move(cluster.assignments)};
  master->summarize(result.summary);
  return result;
}

// Plain gradient descent on F = (1/n) Σ_p f_p from x = 0.
inline std::vector<Vec> gradient_descent(const Objective& objective, int64_t steps, double lr) {
  auto scratch = objective.make_scratch();
  Vec x = Vec::Zero(objective.dim()), g;
  std::vector<Vec> trajectory;
  for (int64_t t = 0; t < steps; ++t) {
    objective.full_gradient(x, g, *scratch);
    x -= lr * g;
    trajectory.push_back(x);
  }
  return trajectory;
}

inline void expect_same_trajectory(const std::vector<Vec>& actual, const std::vector<Vec>& expected,
                                   double tolerance, const std::string& label) {
  ASSERT_EQ(actual.size(), expected.size()) << label;
  for (size_t t = 0; t < actual.size(); ++t) {
    const double scale = std::max(1.0, expected[t].norm());
    ASSERT_LE((actual[t] - expected[t]).norm() / scale, tolerance) << label << " step " << t;
  }
}

inline std::string method_toml(const std::string& name, int s, const std::string& extra = "") {
  return "[method]\nname = \"" + name + "\"\ns = " + std::to_string(s) + "\n" + extra;
}

}  // namespace pacer::testing
