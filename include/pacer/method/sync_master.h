// The step loop shared by every synchronous method (DESIGN.md section 3.1).
//
// Step t: the master sends (t, x_t) to every idle worker; workers answer with one message tagged
// t; after each arrival the method's close rule decides whether step t is complete; when it is,
// the method decodes ĝ_t from the step's messages (in worker-index order, so the result does not
// depend on arrival order), the trainer applies x_{t+1} = x_t − η_t ĝ_t, and step t+1 begins.
//
// Stragglers between steps (method.straggler_policy):
//   finish  a worker still busy at step close completes its job (its worker half updates any
//           cache), its late reply is counted and ignored, and it then receives the newest x.
//   cancel  (engines that can cancel) unfinished jobs are dropped at step close and every worker
//           starts step t+1 at once.
//   queue   (the PGC authors' Ray actors) a worker still busy at step close is sent step t+1 all
//           the same: the master queues (t+1, x_{t+1}) for it and hands it over when the worker's
//           late reply arrives, so a late worker computes, in order, every step it was sent, each
//           at that step's model; a result counts only if its step is still open (only a worker's
//           newest result can). The queue lives in the master, so every engine runs it; a queued
//           job leaves the master when the previous reply arrives (one message delay later than a
//           Ray actor, which holds its queue itself: the same when messages cost nothing). A
//           worker slower than the steps' pace falls further behind every step, and the master
//           holds one model per step still queued.
// A subclass supplies the close rule and the decoder; everything else lives here.
//
// The reported loss (UpdateRecord::loss, log.csv's loss; DESIGN.md section 6, and the criterion of
// target.on = "train"): the mean of the losses of every message of the step received by its close
// (WorkerOutput::loss: the minibatch loss of the partitions the job freshly evaluated), whether or
// not the decoder used it, as the PGC authors report it. So it averages the same messages for
// every decoder of a close rule: DGD n, IS-SGD n − k, GC-CR, IS-GC and PGC-CR n − s, GC-FR and
// PGC-FR every message in by the time each group has one (docs/methods.md has the table).
//
// Attribution: the decisive worker of a step is the one whose message closed it (or whose loss
// did, when the close rule was waiting for it); the step waited for it alone from the arrival of
// the message before (the step's start when the decisive message came first) to the close. Each
// step's record carries both (UpdateRecord::worker, ::wait: log.csv's worker and wait columns),
// and summary.json counts per worker the steps it decided and the seconds of waiting it caused.
//
// Lost workers (method/protocol.h): a lost worker is a permanent straggler. Its message for the
// current step, if it arrived before the loss, is kept; it is sent nothing while lost, and the
// current step when it comes back. After each loss the master asks whether the close rule can
// still be met by the survivors alone (step_complete() of a step in which only they answer);
// when it cannot, the run ends with status "too_many_lost" and a message naming the lost workers
// (lost_advice() adds what the method could do instead).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/method/gradient_worker.h"
#include "pacer/method/method.h"

namespace pacer {

enum class StragglerPolicy { kFinish, kCancel, kQueue };

// Reads method.straggler_policy ("finish", "cancel" or "queue").
StragglerPolicy read_straggler_policy(const Config& config);

class SyncMaster : public TrainingMaster {
 public:
  SyncMaster(Trainer& trainer, int workers, int64_t dim, StragglerPolicy policy);

  void start(Cluster& cluster) override;
  void on_reply(const Reply& reply, Cluster& cluster) override;
  void on_lost(int worker, Cluster& cluster) override;
  void on_rejoined(int worker, Cluster& cluster) override;
  void summarize(nlohmann::json& out) const override;
  // The current step's messages (only those that arrived: a decoder reads no other), the
  // assignment and loss records and the statistics; then checkpoint_method.
  void checkpoint(StateArchive& a) final;

 protected:
  // True when the messages received so far for the current step suffice to close it.
  virtual bool step_complete() const = 0;
  // Writes ĝ into g from the current step's messages and lists, in `used`, the workers whose
  // messages it combined (for staleness statistics). Called once per step, at close.
  virtual void decode(Vec& g, std::vector<int>& used) = 0;
  // Method-specific additions to summary.json (decode statistics).
  virtual void summarize_method(nlohmann::json& /*out*/) const {}
  // The method's own state across steps (decoder caches, statistics), for checkpoints.
  virtual void checkpoint_method(StateArchive& /*a*/) {}
  // What the close rule needs of the survivors, for the too_many_lost message ("at most s = 1
  // workers lost"), and what the user could do instead (may be empty).
  virtual std::string lost_requirement() const = 0;
  virtual std::string lost_advice() const { return ""; }

  int workers() const { return workers_; }
  int64_t step() const { return step_; }
  // Whether worker i's message for the current step has arrived, and its payload.
  bool arrived(int i) const { return arrived_[i]; }
  const Vec& message(int i) const { return messages_[i]; }
  // Workers in the order their current-step messages arrived.
  const std::vector<int>& arrival_order() const { return arrival_order_; }
  int num_arrived() const { return static_cast<int>(arrival_order_.size()); }
  // Whether worker i is lost now, and how many are.
  bool lost(int i) const { return lost_[i]; }
  int num_lost() const { return static_cast<int>(std::count(lost_.begin(), lost_.end(), true)); }

 private:
  // Closes the step that `decisive`'s message (by_message) or loss completed.
  void close_step(Cluster& cluster, int decisive, bool by_message);
  // The step's reported loss (the file comment); NaN when no message arrived.
  double reported_loss() const;
  void assign_current(int worker, Cluster& cluster);
  // kQueue: queue_current appends the step just begun (and keeps its model) to a busy worker's
  // queue; assign_queued gives an idle worker the oldest step of its queue, at that step's model.
  void queue_current(int worker);
  void assign_queued(int worker, Cluster& cluster);
  // Forgets the model of `step` unless a queue still holds the step.
  void release_queued_model(int64_t step);
  // Keeps worker w's message for the current step: swapped with the engine's vector when the
  // reply offers it (Reply::owned_payload), else copied.
  void keep_message(int w, const Reply& reply);
  // Whether a step can close on the survivors' messages alone.
  bool survivors_can_close();

  int workers_;
  StragglerPolicy policy_;
  int64_t step_ = 0;
  std::vector<Vec> messages_;
  std::vector<double> losses_;
  std::vector<std::vector<int64_t>> versions_;
  std::vector<bool> arrived_;
  std::vector<int> arrival_order_;
  std::vector<double> arrival_times_;   // engine time of each arrival in arrival_order_
  double step_start_ = 0;               // engine time at which the current step began
  std::vector<int64_t> assigned_step_;  // the step each worker was last given
  std::vector<bool> lost_;
  // kQueue: per worker, the steps sent to it while it was busy, oldest first; and the model of
  // every step some worker's queue holds.
  std::vector<std::vector<int64_t>> queued_;
  std::map<int64_t, Vec> queued_models_;
  Vec direction_;
  std::vector<int> used_;

  // Statistics for summary.json (step times, work and responders are the monitor's).
  std::vector<int64_t> straggled_;  // per worker: steps it was not among the used responders
  std::vector<int64_t> late_;       // per worker: steps that closed before its message arrived
  std::map<int64_t, int64_t> staleness_histogram_;  // age in steps -> gradients used
  std::vector<int64_t> decisive_;    // per worker: steps it decided (see Attribution)
  std::vector<double> wait_caused_;  // per worker: Σ seconds steps waited for it alone
  int64_t late_replies_ = 0;
  int64_t cancelled_jobs_ = 0;
  int64_t queued_jobs_ = 0;
};

// The method half of the synchronous methods whose worker i sends g_i(x_t) of its own partition
// (DGD, IS-SGD): reads method.straggler_policy and training.sampling and makes GradientWorkers.
class GradientSyncMethod : public Method {
 public:
  GradientSyncMethod(const Config& config, const MethodSetup& setup)
      : setup_(setup),
        policy_(read_straggler_policy(config)),
        sampling_(read_minibatch_sampling(config)) {}
  bool synchronous() const final { return true; }
  std::unique_ptr<Worker> make_worker(int worker) const final;

 protected:
  int workers() const { return setup_.workers; }
  int64_t dim() const { return setup_.objective->dim(); }
  StragglerPolicy policy() const { return policy_; }

 private:
  MethodSetup setup_;
  StragglerPolicy policy_;
  MinibatchSampling sampling_;
};

}  // namespace pacer
