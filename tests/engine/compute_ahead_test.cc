// Computing jobs ahead of virtual time on a thread pool (Simulator::set_threads, ComputePool):
// the pool runs every task once, and the simulator commits computations in event order and undoes
// those of cancelled jobs, so every run is the same whatever the number of threads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "linear_timing.h"
#include "pacer/core/compute_pool.h"
#include "pacer/core/error.h"
#include "pacer/core/state.h"
#include "pacer/engine/sim/simulator.h"

namespace pacer {
namespace {

TEST(ComputePool, RunsEveryTaskOnceAndWaitSeesItsEffect) {
  for (int threads : {1, 2, 7}) {
    ComputePool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    std::vector<int> runs(50, 0);
    std::vector<ComputePool::Ticket> tickets;
    for (int k = 0; k < 50; ++k) tickets.push_back(pool.submit(50 - k, [&runs, k] { ++runs[k]; }));
    for (int k = 0; k < 50; ++k) {
      pool.wait(tickets[k]);
      EXPECT_EQ(runs[k], 1) << "task " << k << " with " << threads << " threads";
    }
    pool.wait(tickets[0]);  // waiting again returns at once
    EXPECT_EQ(runs[0], 1);
  }
}

TEST(ComputePool, OneThreadRunsTasksOnlyInWaitOnTheCallingThread) {
  ComputePool pool(1);
  std::thread::id ran_on;
  bool ran = false;
  ComputePool::Ticket ticket = pool.submit(0, [&] {
    ran = true;
    ran_on = std::this_thread::get_id();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(ran);
  pool.wait(ticket);
  EXPECT_TRUE(ran);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(ComputePool, DropSkipsTasksNoThreadStarted) {
  ComputePool pool(1);  // no background thread: nothing starts without a waiter
  bool ran = false;
  ComputePool::Ticket ticket = pool.submit(0, [&] { ran = true; });
  EXPECT_TRUE(pool.drop(ticket));
  pool.wait(ticket);  // a dropped task counts as done
  EXPECT_FALSE(ran);
  ComputePool::Ticket second = pool.submit(0, [&] { ran = true; });
  pool.wait(second);
  EXPECT_FALSE(pool.drop(second));  // it ran
  EXPECT_TRUE(ran);
}

TEST(ComputePool, BackgroundThreadsRunTasksWithoutAWaiter) {
  ComputePool pool(2);
  std::atomic<int> ran{0};
  ComputePool::Ticket ticket = pool.submit(0, [&] { ran = 1; });
  for (int k = 0; k < 2000 && ran.load() == 0; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(ran.load(), 1);
  pool.wait(ticket);
}

using testing::LinearTiming;

// A worker with state: payload = x + (jobs it has answered so far). Counts every compute() call,
// undone or not, in `calls`.
class CountingWorker : public Worker {
 public:
  explicit CountingWorker(std::atomic<int>* calls) : calls_(calls) {}
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    ++*calls_;
    out.payload = x.array() + static_cast<double>(answered_);
    ++answered_;
    out.loss = 0;
    out.versions.assign(1, job.tag);
  }
  void checkpoint(StateArchive& a) override { a.io(answered_); }
  int64_t answered() const { return answered_; }

 private:
  std::atomic<int>* calls_;
  int64_t answered_ = 0;
};

// Synchronous rounds over 3 workers (worker i takes i + 1 s): each round assigns every worker,
// and closes as soon as the two fastest answered, cancelling the third (worker 2, whose job would
// end last). Records the payloads it received.
class CancellingMaster : public Master {
 public:
  explicit CancellingMaster(int rounds) : rounds_(rounds) {}
  void start(Cluster& c) override { assign_all(c); }
  void on_reply(const Reply& r, Cluster& c) override {
    received.push_back((*r.payload)(0));
    if (++arrived_ < 2) return;
    for (int i = 0; i < c.num_workers(); ++i) {
      if (c.busy(i)) c.cancel(i);
    }
    arrived_ = 0;
    if (++round_ < rounds_) assign_all(c);
  }
  bool finished() const override { return round_ >= rounds_; }
  std::vector<double> received;

 private:
  void assign_all(Cluster& c) {
    for (int i = 0; i < c.num_workers(); ++i)
      c.assign(i, Job{round_}, Vec::Constant(1, 100.0 * round_));
  }
  int rounds_;
  int round_ = 0;
  int arrived_ = 0;
};

struct CancelRun {
  std::vector<double> received;
  std::vector<int64_t> answered;
  int calls = 0;
};

CancelRun run_cancelling(int threads) {
  LinearTiming timing(3);
  Simulator sim(timing, CommModel{}, 1);
  sim.set_threads(threads);
  sim.set_compute_ahead(Simulator::ComputeAhead::kAlways);
  std::atomic<int> calls{0};
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(std::make_unique<CountingWorker>(&calls));
  CancellingMaster master(5);
  sim.run(master, workers);
  CancelRun out{master.received, {}, calls.load()};
  for (auto& w : workers) out.answered.push_back(static_cast<CountingWorker&>(*w).answered());
  return out;
}

TEST(ComputeAhead, CancelledJobsLeaveNoTraceInWorkerState) {
  const CancelRun inline_run = run_cancelling(1);
  // Worker 2 is cancelled every round, so it never answers; the others answer every round.
  EXPECT_EQ(inline_run.answered, (std::vector<int64_t>{5, 5, 0}));
  EXPECT_EQ(inline_run.calls, 10);  // one thread computes only what virtual time reaches
  for (int threads : {2, 7}) {
    const CancelRun ahead = run_cancelling(threads);
    EXPECT_EQ(ahead.received, inline_run.received) << threads << " threads";
    EXPECT_EQ(ahead.answered, inline_run.answered) << threads << " threads";
    // Worker 2's jobs that a thread started before their cancellation ran and were undone.
    EXPECT_GE(ahead.calls, 10) << threads << " threads";
    EXPECT_LE(ahead.calls, 15) << threads << " threads";
  }
}

// A CountingWorker whose every job takes at least `seconds` of wall time.
class SlowWorker : public CountingWorker {
 public:
  SlowWorker(std::atomic<int>* calls, double seconds) : CountingWorker(calls), seconds_(seconds) {}
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds_));
    CountingWorker::compute(job, x, out);
  }

 private:
  double seconds_;
};

// Under kAuto the first kProbeJobs jobs are timed: jobs that take no time are never computed
// ahead, jobs well above kMinAheadJobSeconds are; both give the one-thread run.
TEST(ComputeAhead, TheAutomaticChoiceComputesAheadOnlyJobsLongEnoughToPayForIt) {
  const CancelRun inline_run = run_cancelling(1);
  const int rounds = Simulator::kProbeJobs;  // 2 answered jobs per round: the probe ends midway
  for (double seconds : {0.0, 10 * Simulator::kMinAheadJobSeconds}) {
    LinearTiming timing(3);
    Simulator sim(timing, CommModel{}, 1);
    sim.set_threads(2);
    std::atomic<int> calls{0};
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < 3; ++i) {
      if (seconds > 0) {
        workers.push_back(std::make_unique<SlowWorker>(&calls, seconds));
      } else {
        workers.push_back(std::make_unique<CountingWorker>(&calls));
      }
    }
    CancellingMaster master(rounds);
    sim.run(master, workers);
    EXPECT_EQ(sim.computed_ahead(), seconds > 0) << seconds << " s per job";
    EXPECT_EQ(std::vector<double>(master.received.begin(), master.received.begin() + 10),
              inline_run.received);
    EXPECT_EQ(static_cast<CountingWorker&>(*workers[2]).answered(), 0);
  }
}

// A worker that cannot be checkpointed is never computed ahead, and still gives the same run.
class PlainWorker : public Worker {
 public:
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    out.payload = x.array() + static_cast<double>(answered_++);
    out.versions.assign(1, job.tag);
  }

 private:
  int64_t answered_ = 0;
};

TEST(ComputeAhead, WorkersWithoutCheckpointsAreComputedAtTheirEvent) {
  std::vector<double> received[2];
  for (int k = 0; k < 2; ++k) {
    LinearTiming timing(3);
    Simulator sim(timing, CommModel{}, 1);
    sim.set_threads(k == 0 ? 1 : 3);
    sim.set_compute_ahead(Simulator::ComputeAhead::kAlways);
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < 3; ++i) workers.push_back(std::make_unique<PlainWorker>());
    CancellingMaster master(4);
    sim.run(master, workers);
    received[k] = master.received;
  }
  EXPECT_EQ(received[0], received[1]);
}

// A worker whose compute() fails on its third job: the error surfaces at that job's completion
// event whatever the number of threads, and not at all when the job is cancelled first.
class FailingWorker : public CountingWorker {
 public:
  FailingWorker(std::atomic<int>* calls, int64_t fail_at)
      : CountingWorker(calls), fail_at_(fail_at) {}
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    if (job.tag == fail_at_) fail("worker failed on job {}", job.tag);
    CountingWorker::compute(job, x, out);
  }

 private:
  int64_t fail_at_;
};

TEST(ComputeAhead, ErrorsSurfaceAtTheJobsEventOrNotAtAllWhenCancelled) {
  for (int threads : {1, 2}) {
    LinearTiming timing(3);
    std::atomic<int> calls{0};
    {
      // Worker 0 answers every round: its failure on round 2 ends the run.
      Simulator sim(timing, CommModel{}, 1);
      sim.set_threads(threads);
      sim.set_compute_ahead(Simulator::ComputeAhead::kAlways);
      std::vector<std::unique_ptr<Worker>> workers;
      workers.push_back(std::make_unique<FailingWorker>(&calls, 2));
      for (int i = 1; i < 3; ++i) workers.push_back(std::make_unique<CountingWorker>(&calls));
      CancellingMaster master(5);
      EXPECT_THROW(sim.run(master, workers), Error) << threads << " threads";
      EXPECT_EQ(master.received.size(), 4u) << threads << " threads";  // rounds 0 and 1
    }
    {
      // Worker 2 is cancelled every round: its failure never happens in virtual time.
      Simulator sim(timing, CommModel{}, 1);
      sim.set_threads(threads);
      sim.set_compute_ahead(Simulator::ComputeAhead::kAlways);
      std::vector<std::unique_ptr<Worker>> workers;
      for (int i = 0; i < 2; ++i) workers.push_back(std::make_unique<CountingWorker>(&calls));
      workers.push_back(std::make_unique<FailingWorker>(&calls, 2));
      CancellingMaster master(5);
      EXPECT_NO_THROW(sim.run(master, workers)) << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace pacer
