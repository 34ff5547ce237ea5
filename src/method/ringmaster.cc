// Ringmaster ASGD(R) (Maranjyan, Tyurin & Richtárik), DESIGN.md section 3.2.
//
//   on arrival of g = g_i(x_{k−δ}) from worker i:
//     if δ < R:  x ← x − γ g
//     else:      discard g
//     send x to worker i
//
// method.R (integer > 0, default n) is the delay threshold. method.variant:
//   "discard" (default)  every job runs to its end; gradients with δ ≥ R are thrown away on
//                        arrival and the worker restarts at the current x (the paper's algorithm
//                        without calculation stops).
//   "stop"               also stops computations that are already doomed. A job sent at update
//                        t has δ ≥ R as soon as the master has applied update t + R, and δ only
//                        grows, so its gradient would certainly be discarded: right after every
//                        update, each worker whose running job has become that stale is cancelled
//                        and restarted at the current x (the paper's algorithm with calculation
//                        stops). Restarting only the worker whose stale gradient has just arrived
//                        would change nothing (every worker gets the current x after its
//                        arrival), so "stop" means cancelling the others. With this variant no
//                        gradient of delay ≥ R ever arrives. It needs an engine that can cancel
//                        jobs (the simulator); other engines refuse it at start.
// Jobs are sent with non-decreasing tags, so the running jobs, oldest first, sit in a queue and
// the check after an update looks only at its front: amortised O(1) per update.
//
// Lost workers: nothing to do; the survivors' gradients keep arriving (AsyncMaster), and the
// delay threshold R is unchanged.
#include <deque>
#include <nlohmann/json.hpp>

#include "method_factories.h"
#include "pacer/core/error.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

class RingmasterMaster : public AsyncMaster {
 public:
  RingmasterMaster(Trainer& trainer, int workers, int64_t threshold, bool stop)
      : AsyncMaster(trainer, workers), threshold_(threshold), stop_(stop), job_(workers, 0) {}

  void start(Cluster& cluster) override {
    if (stop_ && !cluster.can_cancel()) {
      fail(
          "method.variant: 'stop' needs an engine that can cancel jobs; use "
          "'discard' with this engine");
    }
    AsyncMaster::start(cluster);
  }

 protected:
  void on_gradient(const Reply& reply, int64_t delay, Cluster& cluster) override {
    if (delay >= threshold_) {
      count_discarded(reply.worker);
      return;
    }
    apply_gradient(reply, delay, 1.0, cluster);
    if (stop_ && !trainer_.finished()) stop_stale_jobs(cluster);
  }

  void on_assigned(int worker, int64_t tag) override {
    ++job_[worker];
    if (stop_) running_.push_back(Running{tag, worker, job_[worker]});
  }

  void checkpoint_method(StateArchive& a) override {
    a.section("ringmaster");
    a.io(job_);
    uint64_t count = running_.size();
    a.io(count);
    if (a.loading()) running_.resize(count);
    for (Running& r : running_) {
      a.io(r.tag);
      a.io(r.worker);
      a.io(r.job);
    }
  }

  void summarize_method(nlohmann::json& out) const override {
    out["R"] = threshold_;
    out["variant"] = stop_ ? "stop" : "discard";
  }

 private:
  struct Running {
    int64_t tag;
    int worker;
    int64_t job;  // the worker's job counter when it was sent; a newer job makes the entry stale
  };

  // Restarts every worker whose running job was sent at least R updates ago.
  void stop_stale_jobs(Cluster& cluster) {
    const int64_t limit = trainer_.steps() - threshold_;  // tags <= limit have δ >= R
    while (!running_.empty() && running_.front().tag <= limit) {
      const Running r = running_.front();
      running_.pop_front();
      if (r.job == job_[r.worker] && cluster.busy(r.worker)) restart(r.worker, cluster);
    }
  }

  int64_t threshold_;
  bool stop_;
  std::vector<int64_t> job_;     // jobs sent to each worker so far
  std::deque<Running> running_;  // "stop": jobs in the order sent (non-decreasing tags)
};

class Ringmaster : public AsyncMethod {
 public:
  Ringmaster(const Config& config, const MethodSetup& setup) : AsyncMethod(config, setup) {
    threshold_ = config.get_int("method.R", setup.workers);
    if (threshold_ <= 0) {
      config.fail_key("method.R",
                      "a positive integer (the delay threshold: gradients with delay >= R are "
                      "discarded)");
    }
    stop_ = config.get_choice("method.variant", "discard", {"discard", "stop"}) == "stop";
  }
  std::string name() const override { return "ringmaster"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<RingmasterMaster>(trainer, workers(), threshold_, stop_);
  }

 private:
  int64_t threshold_ = 1;
  bool stop_ = false;
};

}  // namespace

std::unique_ptr<Method> make_ringmaster(const Config& config, const MethodSetup& setup) {
  return std::make_unique<Ringmaster>(config, setup);
}

}  // namespace pacer
