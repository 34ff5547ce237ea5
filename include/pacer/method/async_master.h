// What every asynchronous method shares (DESIGN.md section 3.2).
//
// Worker i repeatedly computes a stochastic gradient g_i of its own F_i = f_i (GradientWorker, one
// work unit per job) at the model it last received. Each job is tagged with the number of master
// updates applied when it was sent, so on arrival
//     δ = trainer.steps() − reply.tag
// is the number of updates the model moved on since the gradient's model was sent.
//
// AsyncMaster owns the loop: start() sends x_0 to every worker (Job{tag = 0}); on_reply() counts
// the work, records δ, hands the gradient to the method's rule (on_gradient), and afterwards sends
// the current x to the replying worker if the rule left it idle. Subclasses write only the rule,
// using the helpers below to update the model, discard gradients and restart workers, and may add
// entries to summary.json.
//
// Lost workers (method/protocol.h): an asynchronous method needs no particular worker. AsyncMaster
// keeps the set of live workers, calls the method's on_worker_lost / on_worker_rejoined (to drop
// the lost worker from its own rule), sends the current x to a worker that comes back, and ends
// the run with status "too_many_lost" only when no worker is left.
//
// GradientTable is the per-worker accumulator of the round-based methods (Rennala, Malenia) and of
// Ringleader: for each worker i the sum of the gradients it sent, their count B_i, and the sums of
// their losses and tags (for the log's loss and staleness columns). RoundMaster is the round loop
// Rennala and Malenia share: they differ only in when a round closes and how it combines the table.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/method/method.h"

namespace pacer {

class AsyncMaster : public TrainingMaster {
 public:
  AsyncMaster(Trainer& trainer, int workers);

  // Sends x_0 to every worker, Job{tag = 0}.
  void start(Cluster& cluster) override;
  // Counts the reply's work and its observed duration, records δ in the delay histogram, then (if
  // the run is not finished) applies on_gradient and sends the current x to the replying worker
  // unless the rule already gave it a job.
  void on_reply(const Reply& reply, Cluster& cluster) final;
  void on_lost(int worker, Cluster& cluster) final;
  void on_rejoined(int worker, Cluster& cluster) final;
  // Per-worker counts (arrivals, updates caused, gradients used and discarded), cancelled jobs,
  // observed mean job time per work unit, the delay histogram, then summarize_method's entries.
  void summarize(nlohmann::json& out) const final;
  // Arrival records, observed unit times, the live mask and statistics; then checkpoint_method.
  void checkpoint(StateArchive& a) final;

 protected:
  // The method's rule for one arriving gradient (reply.payload) with delay `delay` = δ. The
  // replying worker is idle while this runs. Called only while the run is not finished.
  virtual void on_gradient(const Reply& reply, int64_t delay, Cluster& cluster) = 0;
  // Method-specific additions to summary.json.
  virtual void summarize_method(nlohmann::json& /*out*/) const {}
  // The method's own state across arrivals (τ estimates, tables, rounds), for checkpoints.
  virtual void checkpoint_method(StateArchive& /*a*/) {}
  // Called every time a worker is sent a job, with the job's tag.
  virtual void on_assigned(int /*worker*/, int64_t /*tag*/) {}
  // The method's part of a loss (live(worker) is already false) and of a return (already true,
  // and the worker is sent the current x afterwards). Called only while the run is not finished.
  virtual void on_worker_lost(int /*worker*/, Cluster& /*cluster*/) {}
  virtual void on_worker_rejoined(int /*worker*/) {}

  int workers() const { return workers_; }
  // Workers not lost now, and whether worker i is one of them.
  int live_workers() const { return live_workers_; }
  bool live(int i) const { return live_[i]; }

  // Sends the current x to idle `worker`, Job{tag = trainer_.steps()}.
  void send_current(int worker, Cluster& cluster);
  // Drops busy `worker`'s job and sends it the current x. Requires cluster.can_cancel().
  void restart(int worker, Cluster& cluster);

  // Both update helpers step through the configured optimizer (plain x ← x − η·d with momentum
  // and weight decay 0), η = optimizer.lr (after its schedule) · lr_scale, and record the update.
  //
  // x ← x − γ·lr_scale·g with the single gradient g = *reply.payload, recorded as caused by
  // reply.worker: loss = reply.loss, responders = 1, staleness = delay. Counts the gradient as
  // used.
  void apply_gradient(const Reply& reply, int64_t delay, double lr_scale, const Cluster& cluster);
  // x ← x − γ·lr_scale·direction, where direction combines `responders` gradients of mean loss
  // `loss` and mean age `staleness` (in updates); caused by the arrival of `worker` (-1: of none).
  // The caller counts the gradients it used with count_used().
  void apply_direction(const Vec& direction, double lr_scale, const Cluster& cluster, int worker,
                       double loss, int64_t responders, double staleness);
  // Statistics: `count` gradients of `worker` went into updates; one was thrown away.
  void count_used(int worker, int64_t count) { used_[worker] += count; }
  void count_discarded(int worker) {
    ++discarded_[worker];
    trainer_.reply_unused(worker);
  }

  // Mean observed duration of one work unit on worker i over its replies so far
  // (reply.compute_time / reply.units); only meaningful once reported(i).
  double observed_unit_time(int i) const { return observed_mean_[i]; }
  bool reported(int i) const { return arrivals_[i] > 0; }
  bool all_reported() const { return reported_workers_ == workers_; }

 private:
  int workers_;
  std::vector<int64_t> arrivals_;
  std::vector<int64_t> updates_caused_;
  std::vector<int64_t> used_;
  std::vector<int64_t> discarded_;
  std::vector<double> observed_mean_;
  int reported_workers_ = 0;
  std::vector<bool> live_;
  int live_workers_;
  int64_t cancelled_jobs_ = 0;
  std::map<int64_t, int64_t> delay_histogram_;  // δ at arrival -> arrivals
};

// Per-worker sums of gradients (see the file comment). Entries are combined in worker-index
// order, so a combination does not depend on arrival order.
class GradientTable {
 public:
  GradientTable(int workers, int64_t dim);

  // Adds gradient g of `worker`, computed at the model tagged `tag`, whose minibatch loss was
  // `loss`.
  void add(int worker, const Vec& g, double loss, int64_t tag);
  // Empties every entry.
  void clear();
  void swap(GradientTable& other) noexcept;
  // Takes `worker` out of the table (a lost worker: its entry is emptied and every rule below
  // then ranges over the members only) or puts it back (empty). Membership survives clear().
  void set_member(int worker, bool member);
  // The entries (a sum only where a count is non-zero: the others are zero) and membership.
  void checkpoint(StateArchive& a);

  // n: the members (every worker unless some were taken out).
  int workers() const { return members_; }
  bool member(int worker) const { return member_[worker]; }
  // B_i, Σ_i B_i, and the number of members with B_i ≥ 1.
  int64_t count(int worker) const { return count_[worker]; }
  int64_t total() const { return total_; }
  int filled() const { return filled_; }
  // Whether ((1/n) Σ_i 1/B_i)⁻¹ ≥ s/n over the n members (Malenia's close rule, s = S), decided
  // exactly: it is n² ≥ s · Σ_i 1/B_i, evaluated in double where rounding cannot change the
  // answer and in rational arithmetic otherwise, so that a tie closes (n = 3, B = (5, 5, 5),
  // S = 15: the harmonic mean computes to 4.999999999999999 < 5 in double). False while some
  // member's B_i = 0.
  bool harmonic_mean_count_reaches(double s) const;

  // out = (Σ_i sum_i) / (Σ_i B_i). Requires total() > 0.
  void pooled_mean(Vec& out) const;
  // out = (1/n) Σ_i sum_i / B_i over the members. Requires filled() == workers().
  void mean_of_means(Vec& out) const;
  // Mean loss and mean age (now − tag, in updates) over every gradient in the table.
  double mean_loss() const { return loss_sum_ / static_cast<double>(total_); }
  double mean_age(int64_t now) const {
    return static_cast<double>(now) - tag_sum_ / static_cast<double>(total_);
  }

 private:
  // Removes worker i's entry from the totals and empties it.
  void empty_entry(int worker);

  std::vector<Vec> sum_;
  std::vector<int64_t> count_;
  std::vector<double> entry_loss_sum_, entry_tag_sum_;  // per worker, to take an entry out
  std::vector<bool> member_;
  int members_;
  int64_t total_ = 0;
  int filled_ = 0;
  double loss_sum_ = 0;
  double tag_sum_ = 0;
};

// Rounds at one model x_k (Rennala and Malenia, DESIGN.md section 3.2). Every worker computes at
// x_k over and over; gradients computed at x_k (reply.tag == k, i.e. δ = 0) are added to the table;
// older ones are discarded (the worker then receives x_k). When round_complete(table) holds, the
// master steps x_{k+1} = x_k − γ·direction(table), empties the table and restarts every worker at
// x_{k+1}: busy workers are cancelled when the engine can cancel; otherwise they finish and their
// stale gradient is discarded on arrival.
class RoundMaster : public AsyncMaster {
 public:
  // `round_size` is S (method.S). `cancel_busy`: at a round change, cancel the busy workers' jobs
  // and restart them at x_{k+1} (method.restart = "cancel"; refused at start on an engine that
  // cannot cancel); otherwise they finish, their stale gradients are discarded on arrival and
  // they then get x_{k+1}.
  RoundMaster(Trainer& trainer, int workers, int64_t dim, double round_size, bool cancel_busy);

  void start(Cluster& cluster) override;

 protected:
  // Whether the gradients gathered at x_k suffice to close the round.
  virtual bool round_complete(const GradientTable& table) const = 0;
  // The update direction the round's gradients give.
  virtual void direction(const GradientTable& table, Vec& out) const = 0;

  void on_gradient(const Reply& reply, int64_t delay, Cluster& cluster) final;
  // A lost worker leaves the table (its gradients at x_k are dropped, and the close rule and the
  // combination range over the live workers); the round may then be complete. One that comes back
  // joins the table again.
  void on_worker_lost(int worker, Cluster& cluster) final;
  void on_worker_rejoined(int worker) final;
  void summarize_method(nlohmann::json& out) const override;
  void checkpoint_method(StateArchive& a) override;
  double round_size() const { return round_size_; }

 private:
  // Steps x_{k+1} = x_k − γ·direction(table), empties the table and restarts the busy workers;
  // `worker` is the one whose arrival closed the round (-1: a loss closed it).
  void close_round(int worker, Cluster& cluster);

  double round_size_;
  GradientTable table_;
  Vec direction_;
  bool cancel_busy_;
  int64_t stale_discarded_ = 0;
};

// The method half shared by every asynchronous method: worker i is a GradientWorker on partition
// D_i, drawing its minibatches from its own stream (MinibatchSampling::kIndependent). The
// constructor refuses fewer than two workers (key "workers") and a training.sampling other than
// "independent" (check_asynchronous_sampling).
class AsyncMethod : public Method {
 public:
  AsyncMethod(const Config& config, const MethodSetup& setup);
  bool synchronous() const final { return false; }
  std::unique_ptr<Worker> make_worker(int worker) const final;

 protected:
  const MethodSetup& setup() const { return setup_; }
  int workers() const { return setup_.workers; }
  int64_t dim() const { return setup_.objective->dim(); }

 private:
  MethodSetup setup_;
};

// Reads method.S (> 0, default n), the gradients a round of Rennala or Malenia gathers.
double read_round_size(const Config& config, int workers);
// Reads method.restart: "cancel" (default; DESIGN.md's "restart all workers") or "discard" (let
// busy workers finish and drop their stale gradients: the only choice on the MPI engine).
bool read_round_restart_cancels(const Config& config);

// The method half of a round-based method (Rennala, Malenia): reads method.S and method.restart
// and builds MasterT(trainer, workers, dim, S, cancel_busy).
template <typename MasterT>
class RoundMethod : public AsyncMethod {
 public:
  RoundMethod(const Config& config, const MethodSetup& setup, std::string name)
      : AsyncMethod(config, setup),
        name_(std::move(name)),
        round_size_(read_round_size(config, setup.workers)),
        cancel_busy_(read_round_restart_cancels(config)) {}
  std::string name() const override { return name_; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<MasterT>(trainer, workers(), dim(), round_size_, cancel_busy_);
  }

 private:
  std::string name_;
  double round_size_;
  bool cancel_busy_;
};

}  // namespace pacer
