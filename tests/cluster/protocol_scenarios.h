// The cluster protocol (engine/cluster/remote_cluster.h) with toy master and worker halves, on
// any transport: run by tests/cluster (the in-process transport, workers on threads) and by
// tests/mpi/mpi_engine_test.cc (under mpirun). Worker 2 is the special one in each scenario, so a
// job has at least 3 workers:
//   worker_error  worker 1 fails on its job tagged 3: the master receives one Reply with status
//                 kFailed, tag 3 and an error naming rank 2 and the message, and throws it (as
//                 every training master does); run() passes it on, and shutdown stops every
//                 worker with status error;
//   lost_rejoin   worker 2's job tagged 2 takes 2 s, every other job 0.01 s, worker_timeout_s =
//                 0.5: worker 2 is declared lost once (on_lost with alive() false and the worker
//                 idle) while the others go on, its late reply is not delivered but brings it back
//                 (on_rejoined, alive and idle), and the jobs it is given then are answered;
//                 engine_stats counts one loss and one rejoin, no worker lost at the end, and
//                 the dropped job as cancelled, and has every key of kWorkerStatisticsKeys;
//   drain         worker 2 takes 0.5 s per job (inject = pace), workers 0 and 1 take 0.01 s; the
//                 master finishes after 10 replies, while worker 2 is still busy: its reply is not
//                 delivered but drained at shutdown (as may be one of the fast workers'); replies
//                 of one worker arrive in assignment order with the payload, loss and versions its
//                 worker half produced; engine_stats has every key of kWorkerStatisticsKeys.
//   checkpoint    a run whose workers keep state (a count of their jobs, in every payload) is
//                 checkpointed at its quiet point after 10 replies (the drain holds the jobs
//                 assigned meanwhile) and runs to its end; a second run in the same job, on fresh
//                 worker halves, loads that checkpoint and continues it: every worker's sequence
//                 of (tag, payload) equals the first run's, so the held jobs were sent and the
//                 workers' state restored. Saving outside the hook's write() is refused.
//   float32       worker halves that read their model in float32 (Worker::model_precision): each
//                 worker's first job carries x in double, every later one x rounded to float (the
//                 value the worker sees, echoed in its loss); payloads that are exact floats
//                 (even tags) travel in float32 and others (odd tags) in double, and arrive
//                 unchanged; the master swaps every payload out (Reply::owned_payload) and the
//                 next replies still arrive whole; engine_stats counts the float32 jobs and
//                 replies.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/state.h"
#include "pacer/engine/cluster/remote_cluster.h"
#include "pacer/engine/cluster/transport.h"
#include "pacer/engine/worker_statistics.h"
#include "pacer/timing/timing_model.h"

namespace pacer::scenarios {

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

// Reads its model in float32; loss = x[0] as received, payload = index + tag + 0.5 (an exact
// float) for even tags and index + tag + 0.1 (not one) for odd tags, versions = {tag}.
class Float32Worker : public Worker {
 public:
  explicit Float32Worker(int index) : index_(index) {}
  Precision model_precision() const override { return Precision::kFloat32; }
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    out.payload = Vec::Constant(kDim, expected_payload(index_, job.tag));
    out.loss = x[0];
    out.versions.assign(1, job.tag);
  }
  static double expected_payload(int index, int64_t tag) {
    return static_cast<double>(index + tag) + (tag % 2 == 0 ? 0.5 : 0.1);
  }

 private:
  int index_;
};

// Gives every worker jobs tagged 0..jobs−1 with x = 0.1 + tag (not a float) and checks what
// comes back (file comment, float32).
class Float32Master : public Master {
 public:
  Float32Master(int workers, int jobs) : next_(workers, 0), jobs_(jobs), workers_(workers) {}
  void start(Cluster& cluster) override {
    for (int w = 0; w < workers_; ++w) give(w, cluster);
  }
  void on_reply(const Reply& reply, Cluster& cluster) override {
    const int w = reply.worker;
    const double x0 = model(reply.tag)[0];
    // The first job went in double (the worker had not said yet how it reads its model).
    const double seen = reply.tag == 0 ? x0 : static_cast<double>(static_cast<float>(x0));
    if (reply.status != ReplyStatus::kOk || reply.loss != seen) {
      problem = fmt::format("worker {}, tag {}: saw x[0] = {}, expected {}", w, reply.tag,
                            reply.loss, seen);
    }
    if (reply.owned_payload != reply.payload ||
        *reply.payload != Vec::Constant(kDim, Float32Worker::expected_payload(w, reply.tag))) {
      problem = fmt::format("worker {}, tag {}: wrong payload", w, reply.tag);
    }
    // Taken: the engine fills kept_'s old vector with a later reply.
    if (reply.owned_payload != nullptr) reply.owned_payload->swap(kept_);
    ++replies;
    if (next_[w] < jobs_) give(w, cluster);
  }
  bool finished() const override { return replies >= workers_ * jobs_; }

  int replies = 0;
  std::string problem;

 private:
  static Vec model(int64_t tag) { return Vec::Constant(kDim, 0.1 + static_cast<double>(tag)); }
  void give(int w, Cluster& cluster) {
    const int64_t tag = next_[w]++;
    cluster.assign(w, Job{tag}, model(tag));
  }
  std::vector<int64_t> next_;
  int jobs_, workers_;
  Vec kept_ = Vec::Zero(kDim);
};

// Gives every worker jobs tagged 0, 1, 2, ... and finishes after `limit` replies.
class ToyMaster : public Master {
 public:
  ToyMaster(int workers, int limit)
      : replies_per_worker(workers, 0), next_(workers, 0), limit_(limit) {}
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
    if (reply.worker == 2 && reply.tag == 2 && lost > 0)
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
  std::vector<int> replies_per_worker;
  std::string problem;

 private:
  void give(int w, Cluster& cluster) { cluster.assign(w, Job{next_[w]++}, Vec::Zero(kDim)); }
  std::vector<int64_t> next_;
  int limit_;
};

// payload = index + tag + 1000 × (jobs computed before), which the checkpoint restores.
class CountingWorker : public Worker {
 public:
  explicit CountingWorker(int index) : index_(index) {}
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec&, WorkerOutput& out) override {
    out.payload = Vec::Constant(kDim, static_cast<double>(index_ + job.tag + 1000 * count_++));
    out.loss = 0;
    out.versions.assign(1, job.tag);
  }
  void checkpoint(StateArchive& a) override { a.io(count_); }

 private:
  int index_;
  int64_t count_ = 0;
};

// Gives every worker `jobs` jobs tagged 0, 1, ... and records each worker's payloads.
class RecordingMaster : public Master {
 public:
  RecordingMaster(int workers, int64_t jobs) : next_(workers, 0), seen(workers), jobs_(jobs) {}
  void start(Cluster& cluster) override {
    for (int w = 0; w < cluster.num_workers(); ++w) give(w, cluster);
  }
  void on_reply(const Reply& reply, Cluster& cluster) override {
    if (reply.status != ReplyStatus::kOk) fail("{}", reply.error);
    seen[reply.worker].push_back(static_cast<double>(reply.tag));
    seen[reply.worker].push_back((*reply.payload)[0]);
    ++replies;
    give(reply.worker, cluster);
  }
  bool finished() const override {
    for (const std::vector<double>& s : seen) {
      if (static_cast<int64_t>(s.size()) < 2 * jobs_) return false;
    }
    return true;
  }
  void checkpoint(StateArchive& a) override {
    a.io(next_);
    a.io(seen);
    a.io(replies);
  }

  std::vector<int64_t> next_;
  std::vector<std::vector<double>> seen;  // per worker: tag, payload[0], tag, ...
  int64_t replies = 0;

 private:
  void give(int w, Cluster& cluster) {
    if (next_[w] < jobs_) cluster.assign(w, Job{next_[w]++}, Vec::Zero(kDim));
  }
  int64_t jobs_;
};

// Saves the cluster and the master once, at the first quiet point after 10 replies.
class SaveOnce : public CheckpointHook {
 public:
  SaveOnce(cluster::RemoteCluster& cluster, RecordingMaster& master)
      : cluster_(cluster), master_(master) {}
  bool due() override { return bytes.empty() && master_.replies >= 10; }
  void write() override {
    if (!cluster_.can_checkpoint_now()) problem = "can_checkpoint_now() is false inside write()";
    StateArchive a = StateArchive::for_saving();
    cluster_.checkpoint(a);
    master_.checkpoint(a);
    bytes = a.bytes();
    replies_at_save = master_.replies;
  }
  std::string bytes, problem;
  int64_t replies_at_save = 0;

 private:
  cluster::RemoteCluster& cluster_;
  RecordingMaster& master_;
};

// The checkpoint scenario on rank 0 (file comment); returns what went wrong, empty if nothing.
inline std::string checkpoint_rank0(cluster::Transport& transport,
                                    const cluster::ClusterOptions& options, int workers) {
  constexpr int64_t kJobs = 20;
  RecordingMaster whole(workers, kJobs);
  std::string bytes;
  {
    cluster::RemoteCluster cluster(transport, options, workers, kDim);
    SaveOnce hook(cluster, whole);
    cluster.set_checkpoint_hook(&hook);
    if (cluster.run(whole, 60) != cluster::RemoteCluster::Outcome::kFinished)
      return "run 1 ended early";
    if (!hook.problem.empty()) return hook.problem;
    if (hook.bytes.empty()) return "run 1 wrote no checkpoint";
    if (hook.replies_at_save < 10) return "the checkpoint came before it was due";
    StateArchive late = StateArchive::for_saving();
    try {
      cluster.checkpoint(late);
      return "saving after run() was not refused";
    } catch (const Error&) {
    }
    cluster.shutdown(cluster::StopStatus::kOk);
    nlohmann::json stats;
    cluster.to_json(stats);
    if (stats["checkpoints"] != 1) return "run 1's statistics: " + stats.dump();
    bytes = hook.bytes;
  }
  RecordingMaster resumed(workers, kJobs);
  cluster::RemoteCluster cluster(transport, options, workers, kDim);
  StateArchive a = StateArchive::for_loading(bytes, "the test's checkpoint");
  cluster.checkpoint(a);
  resumed.checkpoint(a);
  a.expect_end();
  if (cluster.run(resumed, 60) != cluster::RemoteCluster::Outcome::kFinished)
    return "run 2 ended early";
  cluster.shutdown(cluster::StopStatus::kOk);
  nlohmann::json stats;
  cluster.to_json(stats);
  if (stats["resumed_at"].is_null()) return "run 2 does not say it was resumed";
  for (int w = 0; w < workers; ++w) {
    if (resumed.seen[w] != whole.seen[w]) {
      return fmt::format("worker {}: the resumed run's replies differ from the whole run's", w);
    }
  }
  return {};
}

inline int run_rank0(cluster::Transport& transport, const std::string& scenario,
                     const cluster::ClusterOptions& options, int workers) {
  std::string problem;
  if (scenario == "checkpoint") {
    problem = checkpoint_rank0(transport, options, workers);
    if (!problem.empty()) std::fprintf(stderr, "FAIL (checkpoint, rank 0): %s\n", problem.c_str());
    return problem.empty() ? 0 : 1;
  }
  cluster::RemoteCluster cluster(transport, options, workers, kDim);
  if (scenario == "float32") {
    Float32Master master(workers, 6);
    if (cluster.run(master, 60) != cluster::RemoteCluster::Outcome::kFinished) {
      problem = "run() did not finish";
    }
    cluster.shutdown(cluster::StopStatus::kOk);
    nlohmann::json stats;
    cluster.to_json(stats);
    // Jobs 1..5 of each worker went in float32; the payloads of tags 0, 2 and 4 did.
    if (stats["float32_jobs"] != workers * 5 || stats["float32_replies"] != workers * 3) {
      problem = "unexpected float32 counts: " + stats.dump();
    }
    if (!master.problem.empty()) problem = master.problem;
  } else if (scenario == "worker_error") {
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
    cluster.shutdown(cluster::StopStatus::kError);
  } else if (scenario == "lost_rejoin") {
    // Enough replies for worker 2 to be lost (after 0.5 s), come back (after 2 s) and answer
    // again: the others answer every ~0.01 s.
    ToyMaster master(workers, 800);
    auto outcome = cluster.run(master, 60);
    if (outcome != cluster::RemoteCluster::Outcome::kFinished) problem = "run() did not finish";
    if (master.lost != 1 || master.rejoined != 1) {
      problem =
          fmt::format("{} losses and {} rejoins, expected 1 each", master.lost, master.rejoined);
    }
    if (master.replies_per_worker[2] < 2) problem = "worker 2 answered no job after it came back";
    if (!master.problem.empty()) problem = master.problem;
    cluster.shutdown(cluster::StopStatus::kOk);
    nlohmann::json stats;
    cluster.to_json(stats);
    std::vector<int> once(workers, 0);
    once[2] = 1;
    if (stats["losses_per_worker"] != nlohmann::json(once) ||
        stats["rejoins_per_worker"] != nlohmann::json(once) ||
        stats["lost_per_worker"] != nlohmann::json(std::vector<bool>(workers, false)) ||
        stats["losses"].size() != 1 || stats["losses"][0]["tag"] != 2 ||
        !stats["losses"][0].contains("rejoined_time") || stats["worker_timeout"] != "fixed") {
      problem = "unexpected loss statistics: " + stats.dump();
    }
    // The job dropped at the loss is counted as cancelled, and the loss's time is the last one.
    if (stats["jobs_cancelled_per_worker"] != nlohmann::json(once) ||
        stats["lost_time_per_worker"][2] != stats["losses"][0]["time"] ||
        !stats["lost_time_per_worker"][0].is_null() || stats["workers_lost"] != 1) {
      problem = "unexpected per-worker loss statistics: " + stats.dump();
    }
    const std::string missing = missing_worker_statistics(stats, workers);
    if (!missing.empty()) problem = "engine_stats lacks a common key: " + missing;
    if (!stats.contains("worker_reported")) problem = "no worker statistics: " + stats.dump();
  } else {
    ToyMaster master(workers, 10);
    auto outcome = cluster.run(master, 60);
    if (outcome != cluster::RemoteCluster::Outcome::kFinished) problem = "run() did not finish";
    if (!cluster.busy(2)) problem = "worker 2 is not busy at the end, its reply must be in flight";
    if (!master.problem.empty()) problem = master.problem;
    cluster.shutdown(cluster::StopStatus::kOk);
    nlohmann::json stats;
    cluster.to_json(stats);
    if (stats["late_replies_drained_per_worker"][2] != 1) {
      problem = "expected worker 2's reply to be drained, stats say " + stats.dump();
    }
    const std::string missing = missing_worker_statistics(stats, workers);
    if (!missing.empty()) problem = "engine_stats lacks a common key: " + missing;
    if (!stats.contains("worker_reported")) problem = "no worker statistics: " + stats.dump();
  }
  if (!problem.empty())
    std::fprintf(stderr, "FAIL (%s, rank 0): %s\n", scenario.c_str(), problem.c_str());
  return problem.empty() ? 0 : 1;
}

inline int run_worker(cluster::Transport& transport, const std::string& scenario,
                      const cluster::ClusterOptions& options, int workers) {
  const int index = transport.rank() - 1;
  // checkpoint: worker 2 is the slowest, so the drain holds the others' next jobs for it.
  // Worker 2 is the slow one: in checkpoint the slowest (so the drain holds the others' next
  // jobs for it), in drain still busy when the master finishes.
  std::vector<std::string> tau(workers, "0.01");
  if (scenario == "checkpoint") tau[2] = "0.05";
  if (scenario == "drain") tau[2] = "0.5";
  Config config = Config::parse(
      fmt::format("[timing]\nmodel = \"fixed\"\ntau = [{}]\n", fmt::join(tau, ", ")), "test");
  auto timing = make_timing_model(config, workers, 1);
  if (scenario == "checkpoint") {
    // Two runs, each on a fresh worker half.
    for (int run = 0; run < 2; ++run) {
      CountingWorker counting(index);
      if (cluster::serve_jobs(transport, counting, *timing, index, 1, options, kDim) !=
          cluster::StopStatus::kOk) {
        std::fprintf(stderr, "FAIL (checkpoint, rank %d): run %d did not stop ok\n",
                     transport.rank(), run);
        return 1;
      }
    }
    return 0;
  }
  if (scenario == "float32") {
    Float32Worker worker(index);
    return cluster::serve_jobs(transport, worker, *timing, index, 1, options, kDim) ==
                   cluster::StopStatus::kOk
               ? 0
               : 1;
  }
  ToyWorker worker(index, scenario == "worker_error" && index == 1 ? 3 : -1,
                   scenario == "lost_rejoin" && index == 2 ? 2 : -1);
  const cluster::StopStatus status =
      cluster::serve_jobs(transport, worker, *timing, index, 1, options, kDim);
  const cluster::StopStatus expected =
      scenario == "worker_error" ? cluster::StopStatus::kError : cluster::StopStatus::kOk;
  if (status != expected) {
    std::fprintf(stderr, "FAIL (%s, rank %d): stop status %d\n", scenario.c_str(), transport.rank(),
                 static_cast<int>(status));
    return 1;
  }
  return 0;
}

inline const char* const kScenarios[] = {"worker_error", "drain", "lost_rejoin", "checkpoint",
                                         "float32"};

// The options every scenario runs with: paced jobs, and a worker deadline only in lost_rejoin
// (worker 2's 2 s job is overdue after 0.5 s; otherwise no worker is ever declared lost).
inline cluster::ClusterOptions options_for(const std::string& scenario) {
  cluster::ClusterOptions options;
  options.inject = cluster::Inject::kPace;
  options.poll_sleep_us = 50;
  options.timeout_s = 60;
  options.worker_timeout_s = scenario == "lost_rejoin" ? 0.5 : 0;
  return options;
}

}  // namespace pacer::scenarios
