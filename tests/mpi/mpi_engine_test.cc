// The MPI engine with toy master and worker halves, under mpirun -np 4 (rank 0 + 3 workers):
//   worker_error  worker 1 fails on its job tagged 3: rank 0's run() throws an Error naming rank 2
//                 and the message, and shutdown stops every worker with status error;
//   drain         worker 2 takes 0.5 s per job (inject = pace), workers 0 and 1 take 0.01 s; the
//                 master finishes after 10 replies, while worker 2 is still busy: its reply is not
//                 delivered but drained at shutdown (as may be one of the fast workers'); replies
//                 of one worker arrive in assignment order with the payload, loss and versions its
//                 worker half produced.
// Exits 0 when every rank saw what it expected; prints what differed otherwise.
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/engine/mpi/mpi_cluster.h"
#include "pacer/engine/mpi/runtime.h"
#include "pacer/timing/timing_model.h"

namespace pacer {
namespace {

constexpr int kDim = 5;

// payload = (index + tag) everywhere, loss = tag, versions = {tag}; fails on request.
class ToyWorker : public Worker {
 public:
  ToyWorker(int index, int64_t fail_tag) : index_(index), fail_tag_(fail_tag) {}
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec&, WorkerOutput& out) override {
    if (job.tag == fail_tag_) fail("toy failure at tag {}", job.tag);
    out.payload = Vec::Constant(kDim, static_cast<double>(index_ + job.tag));
    out.loss = static_cast<double>(job.tag);
    out.versions.assign(1, job.tag);
  }

 private:
  int index_;
  int64_t fail_tag_;
};

// Gives every worker jobs tagged 0, 1, 2, ... and finishes after `limit` replies.
class ToyMaster : public Master {
 public:
  ToyMaster(int workers, int limit) : next_(workers, 0), limit_(limit) {}
  void start(Cluster& cluster) override {
    for (int w = 0; w < cluster.num_workers(); ++w) give(w, cluster);
  }
  void on_reply(const Reply& reply, Cluster& cluster) override {
    if (finished()) problem = "a reply was delivered after the master finished";
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
    if (!finished()) give(reply.worker, cluster);
  }
  bool finished() const override { return replies >= limit_; }

  int replies = 0;
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
      if (what.find("rank 2 (worker 1)") == std::string::npos ||
          what.find("toy failure at tag 3") == std::string::npos) {
        problem = "unexpected error: " + what;
      }
    }
    cluster.shutdown(mpi::StopStatus::kError);
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
  Config config = Config::parse("[timing]\nmodel = \"fixed\"\ntau = [0.01, 0.01, 0.5]\n", "test");
  auto timing = make_timing_model(config, workers, 1);
  ToyWorker worker(index, scenario == "worker_error" && index == 1 ? 3 : -1);
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
  if (scenario != "worker_error" && scenario != "drain") {
    std::fprintf(stderr, "usage: mpirun -np 4 pacer_mpi_engine_test worker_error|drain\n");
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
    status = mpi::rank() == 0 ? run_rank0(scenario, options, workers)
                              : run_worker(scenario, options, workers);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL (%s, rank %d): %s\n", scenario.c_str(), mpi::rank(), e.what());
    status = 1;
  }
  mpi::finalize();
  return status;
}
