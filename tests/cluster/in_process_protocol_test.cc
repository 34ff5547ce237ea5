// The cluster protocol on the in-process transport: the scenarios that tests/mpi runs under
// mpirun (protocol_scenarios.h), here with 4 workers on threads inside this test process, plus
// what only an in-process job can do cheaply: a worker endpoint that dies in the middle of a run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "pacer/engine/cluster/in_process_transport.h"
#include "protocol_scenarios.h"

namespace pacer {
namespace {

constexpr int kWorkers = 4;

// What each endpoint's function returned (0 = saw what it expected).
struct Statuses {
  int master = 1;
  std::vector<int> workers;
};

// Runs `scenario` with kWorkers worker threads on `hub`, rank 0 on this thread.
Statuses run_scenario(const std::string& scenario, cluster::InProcessHub& hub) {
  const cluster::ClusterOptions options = scenarios::options_for(scenario);
  Statuses out;
  out.workers.assign(kWorkers, 1);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      try {
        out.workers[w] = scenarios::run_worker(hub.endpoint(w + 1), scenario, options, kWorkers);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "worker " << w << ": " << e.what();
      }
    });
  }
  try {
    out.master = scenarios::run_rank0(hub.endpoint(0), scenario, options, kWorkers);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank 0: " << e.what();
  }
  for (std::thread& t : threads) t.join();
  return out;
}

void expect_all_ok(const Statuses& s) {
  EXPECT_EQ(s.master, 0);
  for (int w = 0; w < kWorkers; ++w) EXPECT_EQ(s.workers[w], 0) << "worker " << w;
}

TEST(InProcessProtocol, AWorkerErrorEndsTheRunNamingItsRank) {
  cluster::InProcessHub hub(kWorkers + 1);
  expect_all_ok(run_scenario("worker_error", hub));
}

TEST(InProcessProtocol, LateRepliesAreDrainedAtShutdown) {
  cluster::InProcessHub hub(kWorkers + 1);
  expect_all_ok(run_scenario("drain", hub));
}

TEST(InProcessProtocol, AnOverdueWorkerIsLostThenReadmittedByItsLateReply) {
  cluster::InProcessHub hub(kWorkers + 1);
  expect_all_ok(run_scenario("lost_rejoin", hub));
  EXPECT_FALSE(hub.lost(3)) << "worker 2 came back: it is not recorded as lost";
}

TEST(InProcessProtocol, ACheckpointHeldJobsAndWorkerStatesResumeTheSameRun) {
  cluster::InProcessHub hub(kWorkers + 1);
  expect_all_ok(run_scenario("checkpoint", hub));
}

TEST(InProcessProtocol, Float32ModelsAndPayloadsTravelUnchanged) {
  cluster::InProcessHub hub(kWorkers + 1);
  expect_all_ok(run_scenario("float32", hub));
}

// Worker 2's endpoint dies (as a killed process) after a few of its jobs: with a 0.5 s deadline it
// is declared lost, the others carry the run to its end, and at shutdown nothing is waited for
// from it: it is lost at the end, in the statistics and in the hub.
TEST(InProcessProtocol, ADeadWorkerIsLostAndTheRunEndsWithoutIt) {
  cluster::InProcessHub hub(kWorkers + 1);
  cluster::ClusterOptions options = scenarios::options_for("lost_rejoin");
  Config config = Config::parse("[timing]\nmodel = \"fixed\"\ntau = 0.01\n", "test");
  // Each worker's timing model, made here: a Config is not to be read by two threads at once.
  std::vector<std::unique_ptr<TimingModel>> timings;
  for (int w = 0; w < kWorkers; ++w) timings.push_back(make_timing_model(config, kWorkers, 1));
  std::vector<std::thread> threads;
  std::atomic<int> worker2_status{-1};
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      TimingModel* timing = timings[w].get();
      scenarios::ToyWorker worker(w, -1, -1);
      try {
        cluster::serve_jobs(hub.endpoint(w + 1), worker, *timing, w, 1, options, scenarios::kDim);
        if (w == 2) worker2_status = 0;
      } catch (const Error&) {
        if (w == 2) worker2_status = 1;  // its endpoint was killed: it leaves with an Error
      }
    });
  }
  // 600 replies take about 600 × 0.01 s / 3 = 2 s; the kill comes after 0.3 s.
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    hub.kill(3);
  });
  scenarios::ToyMaster master(kWorkers, 600);
  nlohmann::json stats;
  {
    cluster::RemoteCluster cluster(hub.endpoint(0), options, kWorkers, scenarios::kDim);
    EXPECT_EQ(cluster.run(master, 60), cluster::RemoteCluster::Outcome::kFinished);
    cluster.shutdown(cluster::StopStatus::kOk);
    cluster.to_json(stats);
  }
  killer.join();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(master.problem, "");
  EXPECT_EQ(master.lost, 1);
  EXPECT_EQ(master.rejoined, 0);
  EXPECT_EQ(worker2_status, 1);
  EXPECT_EQ(stats["lost_per_worker"], nlohmann::json({false, false, true, false}));
  EXPECT_EQ(stats["losses_per_worker"], nlohmann::json({0, 0, 1, 0}));
  EXPECT_TRUE(hub.lost(3));
  EXPECT_GT(master.replies_per_worker[0], 50) << "the others carried the run";
}

}  // namespace
}  // namespace pacer
