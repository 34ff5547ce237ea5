// The run's Monitor: writes log.csv rows, evaluates the model on a schedule, tracks the targets,
// and decides when the run ends (DESIGN.md section 6).
//
// Keys read (top level unless dotted):
//   max_steps (default 1000), max_time (simulated or wall seconds, default: none), max_work (work
//   units completed by all workers, default: none),
//   eval_every (updates between evaluations, default 50; 0 = off), eval_every_s (engine seconds
//   between evaluations: the first update at or after each multiple is evaluated; default 0 =
//   off); both may be on. The final model is always evaluated (when the last update was not),
//   and that evaluation counts toward the targets; eval_final = false skips it for models whose
//   full evaluation is long (ResNet-18 on CIFAR-10).
//   target.loss (a finite number >= 0 or a list of them: every model's loss is >= 0; default:
//   none), target.on ("full", the default: the full training loss F, the same quantity for every
//   method, judged at the exact step it first meets the target (target_watch.h); "train": the
//   loss the replies report, checked at every update: the PGC paper's criterion, noisier and not
//   method-neutral, since each method averages a different number of minibatch losses),
//   target.hold (consecutive steps the loss must stay at or below a target, default 1),
//   target.check_every (on F: work units per worker between checks of F near the target,
//   default 8, > 0), target.sample (on F: training rows F is estimated on, default 2048; 0 =
//   every row, exact; target_estimate.h), target.stop (end the run once every target is
//   reached, default true).
//   divergence.factor (default 1e4; 0 = off), divergence.hold (default 10): see StopRules.
// A target is reached at the update that completes its hold (on F possibly an update before the
// one at which the watch found it). A non-finite loss or model, or a
// loss that has grown past the divergence rule, ends the run with status "diverged".
//
// Evaluation does not advance the run's clock on any engine: the simulator's clock is virtual, and
// the wall time each evaluation takes is passed to the evaluation listener
// (set_evaluation_listener) so that a real-time engine can exclude it. summary.json reports it as
// evaluation_time.
//
// Besides log.csv the recorder keeps two small series for figures: evals.csv (one row per
// evaluation) and trace.csv (the reported loss as block means over consecutive updates, at most
// 2 * kTraceBlocks rows whatever the run's length).
//
// log.csv is kept in memory (log_csv()) until stream_log() sends it to its file: then it is
// written as the run goes, in whole rows only, and the recorder holds only the rows not yet
// written (DESIGN.md section 6, "Every run also streams").
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"
#include "pacer/core/state.h"
#include "pacer/data/dataset.h"
#include "pacer/method/trainer.h"
#include "pacer/model/objective.h"
#include "pacer/run/target_watch.h"

namespace pacer {

struct StopRules {
  int64_t max_steps = 1000;
  double max_time = 0;  // 0 = no limit
  double max_work = 0;  // 0 = no limit
  int64_t eval_every = 50;
  double eval_every_s = 0;  // 0 = off
  bool eval_final = true;
  std::vector<double> targets;
  int64_t hold = 1;
  bool target_on_full_loss = true;
  double target_check_every = 8;  // target.check_every (target_watch.h)
  int64_t target_sample = 2048;   // target.sample (target_estimate.h)
  bool stop_at_targets = true;
  // Divergence by growth: the run ends "diverged" once the reported loss has been above
  // divergence_factor * max(first reported loss, 1) for divergence_hold consecutive updates
  // (factor 0 = off). The floor of 1 keeps a near-zero first loss from making ordinary noise look
  // like growth. Defaults: a 10^4-fold rise is 200 times the largest transient spike seen in
  // practice (PGC-CR with exact decoding: 0.6 to 30), and 10 updates outlast such spikes; a
  // cross-entropy of 2.3 * 10^4 (from log 10) or a least-squares loss 10^4 times its start is not
  // recovered from at the same stepsize.
  double divergence_factor = 1e4;
  int64_t divergence_hold = 10;
};

// `full_loss_reason`: why the reported loss cannot stand for F in this run ("asynchronous method",
// "partition.scheme = by_class"); choosing target.on = "train" there is allowed with a warning.
StopRules read_stop_rules(const Config& config, const std::string& full_loss_reason = "");

// Where the reported loss cannot stand for F even roughly: the reason, or "" (see
// read_stop_rules).
std::string full_loss_reason(const Config& config, bool synchronous_method);

// The reported training loss as block means: every block averages `stride` consecutive updates
// (non-finite losses skipped); when 2 * kTraceBlocks blocks are full, neighbours merge pairwise
// and the stride doubles. Deterministic, O(1) per update, bounded memory.
class LossTrace {
 public:
  static constexpr size_t kTraceBlocks = 1000;
  void add(const UpdateRecord& record);
  // "time,step,work_units,loss" rows, the open block included.
  std::string csv() const;
  // The blocks and the stride, for checkpoints (core/state.h).
  void checkpoint(StateArchive& a);

 private:
  struct Block {
    double time = 0, work_units = 0, loss_sum = 0;
    int64_t step = 0, count = 0, updates = 0;
    void checkpoint(StateArchive& a) {
      a.io(time);
      a.io(work_units);
      a.io(loss_sum);
      a.io(step);
      a.io(count);
      a.io(updates);
    }
  };
  void merge_pairs();
  std::vector<Block> blocks_;
  Block open_;
  int64_t stride_ = 1;
};

class Recorder : public Monitor {
 public:
  // `tilde_weights`: the weights w_i of F̃ = Σ w_i f_i for asynchronous runs (empty otherwise).
  // `test` may be empty. `label` names the run on the progress line. `target_loss`: what targets
  // on F are judged on (required when the rules have targets on F, else ignored); the recorder
  // owns it.
  Recorder(StopRules rules, const Objective& objective, const Dataset& test,
           std::vector<double> tilde_weights, std::string label,
           std::unique_ptr<TargetLossEstimator> target_loss = nullptr);

  bool on_update(const UpdateRecord& record, const Vec& x) override;
  // Evaluations on `threads` threads (engine.threads, core/compute_pool.h; default 1): the
  // partitions of F and F̃ one per task, and the test set beside them. Every partition's result is
  // combined in partition order (Objective's pool overloads), so what an evaluation writes is the
  // same, bit for bit, for any number of threads. Call before the first update.
  void set_threads(int threads);
  // The method ended the run (e.g. "too_many_lost"): the status becomes `status`, and summary.json
  // says why under "error".
  void on_stopped(std::string_view status, std::string_view reason) override;
  // Forwards to the listener (set_unused_reply_listener), if any: the job log's "late".
  void on_unused_reply(int worker) override {
    if (unused_reply_listener_) unused_reply_listener_(worker);
  }
  void set_unused_reply_listener(std::function<void(int)> listener) {
    unused_reply_listener_ = std::move(listener);
  }

  // Gives the target watch the run's last update (targets on F), evaluates the final model (if
  // the last update was not evaluated and eval_final is on), and closes the log.
  void finish(const Vec& x, double end_time);

  // Called with the wall seconds of each evaluation, right after it, by engines whose clock is a
  // wall clock (they exclude it). With a listener, summary.json reports evaluation_time.
  void set_evaluation_listener(std::function<void(double)> listener) {
    evaluation_listener_ = std::move(listener);
  }

  // Streaming (run_experiment with an output folder). From now on log.csv's rows go to the file
  // `path`, which already holds log_header(): appended and flushed, whole rows only, at every
  // evaluation, at least every `interval_s` seconds of wall time and whenever 1 MiB is collected,
  // so the file always ends with a complete row. Throws Error naming the file when it cannot be
  // opened; a write that fails (a full disk) is an Error naming the file, thrown from on_update,
  // flush_log or finish (the run then ends with that error): a row is never silently lost.
  void stream_log(const std::string& path, double interval_s);
  // Writes every complete row so far to log.csv and returns the file's length in bytes (0 when
  // not streaming).
  uint64_t flush_log();
  // Continues a stopped run's log.csv, after stream_log on it and after checkpoint() loaded the
  // state: cuts the file back to where the checkpoint's last row starts and writes that row as it
  // was then (finish() may have given it the final evaluation's columns since), so that the
  // resumed run's rows follow it. Throws Error naming the file when it is shorter than that.
  void continue_log();
  // When streaming: called after an evaluation once its row is in log.csv (the run going on), at
  // most once per interval_s of wall time. run_experiment rewrites summary.json ("status":
  // "running"), evals.csv and trace.csv there.
  void set_snapshot_listener(std::function<void()> listener) {
    snapshot_listener_ = std::move(listener);
  }
  // log.csv's first line (with its newline).
  static std::string_view log_header();
  // Whether a row is in the log (recorded by this recorder, or continued by continue_log).
  bool recorded() const { return last_row_start_ >= 0; }

  // "target_reached", "max_steps", "max_time", "max_work", "diverged", a status the method
  // stopped the run with (on_stopped: "too_many_lost"), or "stopped" (the engine ended it).
  const std::string& status() const { return status_; }
  // Why the method stopped the run (on_stopped); empty otherwise.
  const std::string& stop_reason() const { return stop_reason_; }
  // Why a "diverged" run diverged (non-finite values, or the growth rule and its numbers).
  const std::string& divergence() const { return divergence_; }
  // log.csv, header included, when not streaming; empty once stream_log() was called.
  const std::string& log_csv() const { return log_; }
  const std::string& evals_csv() const { return evals_; }
  // target.csv: every evaluation of F the target watch made ("time,step,work_units,estimate,se,
  // kind"); empty when the targets are not on F.
  std::string target_csv() const;
  std::string trace_csv() const { return trace_.csv(); }
  // Adds the monitor's part of summary.json: targets, step times, work, final metrics.
  void summarize(nlohmann::json& out) const;
  // Everything but log.csv's rows before the last (saving flushes the log and records its length
  // and last row; continue_log restores them): the evaluation schedule, targets' hold counters,
  // divergence counters, step times, the last evaluation, evals.csv and the loss trace. Loading
  // into a recorder whose targets changed (an extended run) keeps the counters of the targets
  // both have and starts the new ones afresh.
  void checkpoint(StateArchive& a);

 private:
  // A row of log.csv or evals.csv being written (recorder.cc): numbers as fmt's "{}" writes them,
  // without allocating.
  class RowText;
  // The text of a column's last value, so that a value repeated from row to row (a constant
  // stepsize, a whole number of work units) is formatted once (RowText::number).
  struct NumberCache {
    uint64_t bits = 0;  // the value's bits
    uint8_t size = 0;   // 0: empty
    char text[31];
  };
  struct Evaluated {
    double full_loss = 0, grad_norm_sq = 0, tilde_loss = 0, test_loss = 0, test_accuracy = 0;
    bool has_test = false, has_tilde = false;
    // Writes "full_loss,grad_norm_sq,tilde_loss,test_loss,test_accuracy\n", the evaluation
    // columns of log.csv and evals.csv, with the absent ones blank.
    void write_csv(RowText& row) const;
    void checkpoint(StateArchive& a) {
      a.io(full_loss);
      a.io(grad_norm_sq);
      a.io(tilde_loss);
      a.io(test_loss);
      a.io(test_accuracy);
      a.io(has_test);
      a.io(has_tilde);
    }
  };
  // Evaluates x (F, ‖∇F‖², F̃, the test set) and appends the row to evals.csv. `at_anchor`: x is
  // the target watch's anchor, whose F and ∇F are taken from it.
  Evaluated evaluate(const Vec& x, const UpdateRecord& at, bool at_anchor = false);
  bool evaluation_due(const UpdateRecord& record);
  // Writes "time,step,work_units," of `record`: the first columns of log.csv and evals.csv.
  void write_position(RowText& row, const UpdateRecord& record);
  void append_row(const UpdateRecord& record, const Evaluated* eval);
  // Whether the run goes on after `record` (the stop rules; sets status_ when not).
  bool keep_running(const UpdateRecord& record, const Vec& x);
  // log.csv, in memory or streamed: its length, appending, cutting it to `length` bytes.
  uint64_t log_length() const;
  void append_log(std::string_view text);
  void cut_log(uint64_t length);
  // When streaming, after a row: flushes when due and calls the snapshot listener.
  void stream(bool evaluated);
  // Gives the last row the final evaluation's columns.
  void fill_last_row(const Evaluated& e);
  // The part of the budget (max_steps, max_time, max_work: the nearest) done at `r`, in [0, 1].
  double budget_done(const UpdateRecord& r) const;
  void show_progress(const UpdateRecord& r);
  // Targets on the reported loss: counts the hold at every update.
  void check_target(double loss, const UpdateRecord& record);
  // Targets on F: copies what the watch has reached into reached_.
  void take_watch_hits();
  // The budget limit this update reaches ("max_steps", "max_time", "max_work"), or "".
  const char* budget_reached(const UpdateRecord& record) const;
  // Applies the divergence growth rule (StopRules) to one reported, finite loss; true when it
  // fires (divergence_ then says why).
  bool loss_grew_too_much(double loss);

  StopRules rules_;
  const Objective& objective_;
  const Dataset& test_;
  std::vector<double> tilde_weights_;
  std::unique_ptr<Objective::Scratch> scratch_;
  std::unique_ptr<Workspace> test_workspace_;
  std::unique_ptr<ComputePool> pool_;  // set_threads(> 1)
  Objective::Slots slots_;             // a scratch per thread of pool_
  Vec full_gradient_;
  ProgressLine progress_;

  std::string log_;      // log.csv while not streaming
  AppendFile log_file_;  // log.csv once streaming
  double stream_interval_s_ = 2;
  double last_flush_wall_ = 0;
  double last_snapshot_wall_ = 0;
  std::function<void()> snapshot_listener_;
  int64_t last_row_start_ = -1;    // where log.csv's last row starts; -1 = no row
  std::string last_row_;           // that row
  NumberCache column_cache_[5];    // time, work_units, staleness, stepsize, wait
  uint64_t saved_log_length_ = 0;  // loaded from a checkpoint: log.csv's length then
  std::string evals_;
  LossTrace trace_;
  std::function<void(double)> evaluation_listener_;
  std::function<void(int)> unused_reply_listener_;
  double evaluation_seconds_ = 0;
  int64_t evaluations_ = 0;
  double next_eval_time_ = 0;
  std::string status_ = "stopped";
  std::string divergence_;
  std::string stop_reason_;
  double first_loss_ = std::numeric_limits<double>::quiet_NaN();
  int64_t grown_updates_ = 0;  // consecutive updates above the divergence threshold
  UpdateRecord last_;
  bool last_evaluated_ = false;
  std::optional<Evaluated> final_;
  std::unique_ptr<TargetLossEstimator> target_loss_;
  std::optional<TargetWatch> watch_;  // targets on F
  std::vector<int64_t> hold_count_;
  std::vector<std::optional<UpdateRecord>> reached_;
  std::vector<double> step_times_;
  double responders_total_ = 0;
  double staleness_total_ = 0;
};

}  // namespace pacer
