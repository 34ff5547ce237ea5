// The MPI engine with toy master and worker halves, under mpirun -np 4 (rank 0 + 3 workers):
//   worker_error  worker 1 fails on its job tagged 3: the master receives one Reply with status
//                 kFailed, tag 3 and an error naming rank 2 and the message, and throws it (as
//                 every training master does); run() passes it on, and shutdown stops every
//                 worker with status error;
//   lost_rejoin   worker 2's job tagged 2 takes 2 s, every other job 0.01 s, worker_timeout_s =
//                 0.5: worker 2 is declared lost once (on_lost with alive() false and the worker
//                 idle) while the others go on, its late reply is not delivered but brings it back
//                 (on_rejoined, alive and idle), and the jobs it is given then are answered;
//                 engine_stats counts one loss and one rejoin and no worker lost at the end;
//   drain         worker 2 takes 0.5 s per job (inject = pace), workers 0 and 1 take 0.01 s; the
//                 master finishes after 10 replies, while worker 2 is still busy: its reply is not
//                 delivered but drained at shutdown (as may be one of the fast workers'); replies
//                 of one worker arrive in assignment order with the payload, loss and versions its
//                 worker half produced.
// Exits 0 when every rank saw what it expected; prints what differed otherwise.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/engine/mpi/mpi_cluster.h"
#include "pacer/engine/mpi/runtime.h"
#include "pacer/timing/timing_model.h"

namespace pacer {
namespace {

constexpr int kDim = 5;

// payload = (index + tag) everywhere, loss = tag, versions = {tag}; fails or sleeps 2 s on
// request.
class ToyWorker : public Worker {
 public:
  ToyWorker(int index, int64_t fail_tag, int64_t slow_tag)
      : index_(index), fail_tag_(fail_tag), slow_tag_(slow_tag) {}
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec&, WorkerOutput& out) override {
    if (job.tag == fail_tag_) fail("toy failure at tag {}", job.tag);
    if (job.tag == slow_tag_) std::this_thread::sleep_for(std::chrono::seconds(2));
    out.payload = Vec::Constant(kDim, static_cast<double>(index_ + job.tag));
    out.loss = static_cast<double>(job.tag);
    out.versions.assign(1, job.tag);
  }

 private:
  int index_;
  int64_t fail_tag_;
  int64_t slow_tag_;
};

// Gives every worker jobs tagged 0, 1, 2, ... and finishes after `limit` replies.
class ToyMaster : public Master {
 public:
  ToyMaster(int workers, int limit) : next_(workers, 0), limit_(limit) {}
  void start(Cluster& cluster) override {
    for (int w = 0; w < cluster.num_workers(); ++w) give(w, cluster);
  }
  void on_reply(const Reply& reply, Cluster& cluster) override {
    if (reply.status == ReplyStatus::kFailed) {
      ++failed;
      if (reply.worker != 1 || reply.tag != 3 || reply.payload != nullptr) {
        problem =
            fmt::format("unexpected failed reply: worker {}, tag {}", reply.worker, reply.tag);
      }
      fail("{}", reply.error);  // what fail_on_failed_reply does, in short
    }
    if (finished()) problem = "a reply was delivered after the master finished";
    if (!cluster.alive(reply.worker)) problem = "a reply was delivered from a lost worker";
    if (cluster.busy(reply.worker)) problem = "busy() is true during on_reply";
    if (reply.tag != next_[reply.worker] - 1) {
      problem = fmt::format("worker {}: reply tagged {}, expected {}", reply.worker, reply.tag,
                            next_[reply.worker] - 1);
    }
    if (reply.payload->size() != kDim ||
        (*reply.payload)[0] != static_cast<double>(reply.worker + reply.tag) ||
        reply.loss != static_cast<double>(reply.tag) || reply.versions.size() != 1 ||
        reply.versions[0] != reply.tag || reply.units != 1.0) {
      problem = fmt::format("worker {}: wrong reply content for tag {}", reply.worker, reply.tag);
    }
    ++replies;
    ++replies_per_worker[reply.worker];
    if (reply.worker == 2 && reply.tag == 2)
      problem = "the late reply of a lost worker was delivered";
    if (!finished()) give(reply.worker, cluster);
  }
  void on_lost(int worker, Cluster& cluster) override {
    ++lost;
    if (worker != 2 || cluster.alive(2) || cluster.busy(2)) {
      problem = fmt::format("on_lost({}): alive {}, busy {}", worker, cluster.alive(worker),
                            cluster.busy(worker));
    }
    lost_at_replies = replies;
  }
  void on_rejoined(int worker, Cluster& cluster) override {
    ++rejoined;
    if (worker != 2 || !cluster.alive(2) || cluster.busy(2) || lost != 1) {
      problem = fmt::format("on_rejoined({}): alive {}, busy {}, after {} losses", worker,
                            cluster.alive(worker), cluster.busy(worker), lost);
    }
    if (replies <= lost_at_replies) problem = "no other worker answered while worker 2 was lost";
    give(worker, cluster);
  }
  bool finished() const override { return replies >= limit_; }

  int replies = 0, failed = 0, lost = 0, rejoined = 0, lost_at_replies = 0;
  std::vector<int> replies_per_worker = std::vector<int>(3, 0);
  std::string problem;

 private:
  void give(int w, Cluster& cluster) { cluster.assign(w, Job{next_[w]++}, Vec::Zero(kDim)); }
  std::vector<int64_t> next_;
  int limit_;
};

int run_rank0(const std::string& scenario, const mpi::MpiOptions& options, int workers) {
  std::string problem;
  mpi::MpiCluster cluster(options, workers, kDim);
  if (scenario == "worker_error") {
    ToyMaster master(workers, 1000);
    try {
      cluster.run(master, 60);
      problem = "run() returned although worker 1 failed";
    } catch (const Error& e) {
      const std::string what = e.what();
      if (what.find("rank 2 (worker 1): job 3: toy failure at tag 3") == std::string::npos) {
        problem = "unexpected error: " + what;
      }
    }
    if (master.failed != 1) problem = fmt::format("{} failed replies, expected 1", master.failed);
    if (!master.problem.empty()) problem = master.problem;
    cluster.shutdown(mpi::StopStatus::kError);
  } else if (scenario == "lost_rejoin") {
    // Enough replies for worker 2 to be lost (after 0.5 s), come back (after 2 s) and answer
    // again: the others answer every ~0.01 s.
    ToyMaster master(workers, 800);
    auto outcome = cluster.run(master, 60);
    if (outcome != mpi::MpiCluster::Outcome::kFinished) problem = "run() did not finish";
    if (master.lost != 1 || master.rejoined != 1) {
      problem =
          fmt::format("{} losses and {} rejoins, expected 1 each", master.lost, master.rejoined);
    }
    if (master.replies_per_worker[2] < 2) problem = "worker 2 answered no job after it came back";
    if (!master.problem.empty()) problem = master.problem;
    cluster.shutdown(mpi::StopStatus::kOk);
    nlohmann::json stats;
    cluster.to_json(stats);
    if (stats["losses_per_worker"] != nlohmann::json({0, 0, 1}) ||
        stats["rejoins_per_worker"] != nlohmann::json({0, 0, 1}) ||
        stats["lost_per_worker"] != nlohmann::json({false, false, false}) ||
        stats["losses"].size() != 1 || stats["losses"][0]["tag"] != 2 ||
        !stats["losses"][0].contains("rejoined_time") || stats["worker_timeout"] != "fixed") {
      problem = "unexpected loss statistics: " + stats.dump();
    }
    if (!stats.contains("worker_reported")) problem = "no worker statistics: " + stats.dump();
    if (!mpi::lost_ranks().empty()) problem = "a rank is still recorded as lost";
  } else {
    ToyMaster master(workers, 10);
    auto outcome = cluster.run(master, 60);
    if (outcome != mpi::MpiCluster::Outcome::kFinished) problem = "run() did not finish";
    if (!cluster.busy(2)) problem = "worker 2 is not busy at the end, its reply must be in flight";
    if (!master.problem.empty()) problem = master.problem;
    cluster.shutdown(mpi::StopStatus::kOk);
    nlohmann::json stats;
    cluster.to_json(stats);
    if (stats["late_replies_drained_per_worker"][2] != 1) {
      problem = "expected worker 2's reply to be drained, stats say " + stats.dump();
    }
    if (!stats.contains("worker_reported")) problem = "no worker statistics: " + stats.dump();
  }
  if (!problem.empty())
    std::fprintf(stderr, "FAIL (%s, rank 0): %s\n", scenario.c_str(), problem.c_str());
  return problem.empty() ? 0 : 1;
}

int run_worker(const std::string& scenario, const mpi::MpiOptions& options, int workers) {
  const int index = mpi::rank() - 1;
  Config config = Config::parse(scenario == "lost_rejoin"
                                    ? "[timing]\nmodel = \"fixed\"\ntau = 0.01\n"
                                    : "[timing]\nmodel = \"fixed\"\ntau = [0.01, 0.01, 0.5]\n",
                                "test");
  auto timing = make_timing_model(config, workers, 1);
  ToyWorker worker(index, scenario == "worker_error" && index == 1 ? 3 : -1,
                   scenario == "lost_rejoin" && index == 2 ? 2 : -1);
  mpi::StopStatus status = mpi::serve_jobs(worker, *timing, index, 1, options, kDim);
  const mpi::StopStatus expected =
      scenario == "worker_error" ? mpi::StopStatus::kError : mpi::StopStatus::kOk;
  if (status != expected) {
    std::fprintf(stderr, "FAIL (%s, rank %d): stop status %d\n", scenario.c_str(), mpi::rank(),
                 static_cast<int>(status));
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace pacer

int main(int argc, char** argv) {
  using namespace pacer;
  const std::string scenario = argc > 1 ? argv[1] : "";
  if (scenario != "worker_error" && scenario != "drain" && scenario != "lost_rejoin") {
    std::fprintf(stderr,
                 "usage: mpirun -np 4 pacer_mpi_engine_test worker_error|drain|lost_rejoin\n");
    return 2;
  }
  int status = 1;
  try {
    mpi::init();
    const int workers = mpi::size() - 1;
    if (workers != 3) fail("run with mpirun -np 4 (got {} ranks)", mpi::size());
    mpi::MpiOptions options;
    options.inject = mpi::Inject::kPace;
    options.poll_sleep_us = 50;
    options.timeout_s = 60;
    // lost_rejoin: worker 2's 2 s job is overdue after 0.5 s. Otherwise never declare a worker
    // lost (and so no warning about --enable-recovery).
    options.worker_timeout_s = scenario == "lost_rejoin" ? 0.5 : 0;
    status = mpi::rank() == 0 ? run_rank0(scenario, options, workers)
                              : run_worker(scenario, options, workers);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL (%s, rank %d): %s\n", scenario.c_str(), mpi::rank(), e.what());
    status = 1;
  }
  mpi::finalize();
  return status;
}
