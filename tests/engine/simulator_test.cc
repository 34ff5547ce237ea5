// The simulator against scripted masters and workers: virtual time, cancellation, communication
// delays and stalls.
#include "pacer/engine/sim/simulator.h"

#include <gtest/gtest.h>

#include "linear_timing.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

using testing::LinearTiming;

// Worker answering with payload = x + 1 and recording what it computed.
class EchoWorker : public Worker {
 public:
  explicit EchoWorker(std::vector<int64_t>* computed) : computed_(computed) {}
  double units(const Job& job) const override { return job.tag == 0 ? 2.0 : 1.0; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    computed_->push_back(job.tag);
    out.payload = x.array() + 1.0;
    out.loss = static_cast<double>(job.tag);
    out.versions.assign(1, job.tag);
  }

 private:
  std::vector<int64_t>* computed_;
};

struct Arrival {
  int worker;
  int64_t tag;
  double time;
  double payload0;
};

// Assigns every worker `rounds` jobs back to back and records arrivals.
class ScriptedMaster : public Master {
 public:
  explicit ScriptedMaster(int rounds) : rounds_(rounds) {}
  void start(Cluster& c) override {
    for (int i = 0; i < c.num_workers(); ++i) c.assign(i, Job{0}, Vec::Constant(1, 10.0 * i));
  }
  void on_reply(const Reply& r, Cluster& c) override {
    arrivals.push_back({r.worker, r.tag, c.now(), (*r.payload)(0)});
    EXPECT_FALSE(c.busy(r.worker));  // a worker whose reply is delivered is idle
    if (r.tag + 1 < rounds_) c.assign(r.worker, Job{r.tag + 1}, Vec::Constant(1, 0.0));
    if (static_cast<int>(arrivals.size()) == rounds_ * c.num_workers()) done_ = true;
  }
  bool finished() const override { return done_; }
  std::vector<Arrival> arrivals;

 private:
  int rounds_;
  bool done_ = false;
};

std::vector<std::unique_ptr<Worker>> echo_workers(int n, std::vector<int64_t>* computed) {
  std::vector<std::unique_ptr<Worker>> w;
  for (int i = 0; i < n; ++i) w.push_back(std::make_unique<EchoWorker>(&computed[i]));
  return w;
}

TEST(Simulator, VirtualTimeFollowsTimingModelAndUnits) {
  LinearTiming timing(3);
  Simulator sim(timing, CommModel{}, 1);
  std::vector<int64_t> computed[3];
  auto workers = echo_workers(3, computed);
  ScriptedMaster master(2);
  sim.run(master, workers);
  // Worker i: first job 2 units -> 2(i+1); second job 1 unit -> finishes at 3(i+1).
  ASSERT_EQ(master.arrivals.size(), 6u);
  std::vector<std::pair<int, double>> got;
  for (const auto& a : master.arrivals) got.push_back({a.worker, a.time});
  std::vector<std::pair<int, double>> want = {{0, 2}, {0, 3}, {1, 4}, {2, 6}, {1, 6}, {2, 9}};
  EXPECT_EQ(got, want);
  EXPECT_DOUBLE_EQ(master.arrivals[0].payload0, 1.0);   // x = 0 for worker 0, plus 1
  EXPECT_DOUBLE_EQ(master.arrivals[2].payload0, 11.0);  // worker 1 got x = 10
  EXPECT_DOUBLE_EQ(sim.stats().workers.workers[2].busy_time, 9.0);
  EXPECT_EQ(sim.stats().workers.workers[1].jobs_completed, 2);
}

TEST(Simulator, CommunicationDelaysBothDirections) {
  LinearTiming timing(1);
  CommModel comm{.latency = 0.5, .bandwidth = 8.0};  // 1-entry vector: 8 bytes -> 1 s
  Simulator sim(timing, comm, 1);
  std::vector<int64_t> computed[1];
  auto workers = echo_workers(1, computed);
  ScriptedMaster master(1);
  sim.run(master, workers);
  ASSERT_EQ(master.arrivals.size(), 1u);
  EXPECT_DOUBLE_EQ(master.arrivals[0].time, 1.5 + 2.0 + 1.5);
}

// Cancels worker 1's first job when worker 0 replies, then gives it a new one.
class CancellingMaster : public Master {
 public:
  void start(Cluster& c) override {
    c.assign(0, Job{0}, Vec::Zero(1));
    c.assign(1, Job{0}, Vec::Zero(1));
  }
  void on_reply(const Reply& r, Cluster& c) override {
    tags.push_back({r.worker, r.tag});
    if (r.worker == 0 && r.tag == 0) {
      EXPECT_TRUE(c.busy(1));
      c.cancel(1);
      EXPECT_FALSE(c.busy(1));
      c.assign(1, Job{7}, Vec::Zero(1));
    }
    if (r.worker == 1) done = true;
  }
  bool finished() const override { return done; }
  std::vector<std::pair<int, int64_t>> tags;
  bool done = false;
};

TEST(Simulator, CancelledJobsNeverComputeNorReply) {
  LinearTiming timing(2);
  Simulator sim(timing, CommModel{}, 1);
  std::vector<int64_t> computed[2];
  auto workers = echo_workers(2, computed);
  CancellingMaster master;
  sim.run(master, workers);
  EXPECT_EQ(master.tags, (std::vector<std::pair<int, int64_t>>{{0, 0}, {1, 7}}));
  EXPECT_EQ(computed[1], std::vector<int64_t>{7});
  EXPECT_EQ(sim.stats().workers.workers[1].jobs_cancelled, 1);
  // Worker 1 was busy 2 s on the cancelled job, then 2 s on job 7 (1 unit x 2 s).
  EXPECT_DOUBLE_EQ(sim.stats().workers.workers[1].busy_time, 4.0);
  EXPECT_DOUBLE_EQ(sim.now(), 4.0);
}

class IdleMaster : public Master {
 public:
  void start(Cluster&) override {}
  void on_reply(const Reply&, Cluster&) override {}
  bool finished() const override { return false; }
};

TEST(Simulator, StalledMethodIsAnError) {
  LinearTiming timing(1);
  Simulator sim(timing, CommModel{}, 1);
  std::vector<int64_t> computed[1];
  auto workers = echo_workers(1, computed);
  IdleMaster master;
  EXPECT_THROW(sim.run(master, workers), Error);
}

TEST(Simulator, StopsAtMaxTime) {
  LinearTiming timing(1);
  Simulator sim(timing, CommModel{}, 1, 4.5);
  std::vector<int64_t> computed[1];
  auto workers = echo_workers(1, computed);
  ScriptedMaster master(100);
  sim.run(master, workers);
  EXPECT_EQ(master.arrivals.size(), 3u);  // at t = 2, 3, 4
  EXPECT_LE(sim.now(), 4.5);
}

}  // namespace
}  // namespace pacer
