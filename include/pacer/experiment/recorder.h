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
//   none), target.hold (consecutive checks
//   the loss must stay at or below a target, default 1), target.on ("full": the evaluated full
//   training loss F, checked at every evaluation, so target.hold counts evaluations; "train": the
//   loss the replies report, checked at every update). The default is "full" where the reported
//   minibatch loss cannot speak for F (asynchronous methods, by_class and dirichlet partitions:
//   see read_stop_rules) and "train" elsewhere; choosing "train" there is allowed with a warning.
//   target.stop (end the run once every target is reached, default true).
//   divergence.factor (default 1e4; 0 = off), divergence.hold (default 10): see StopRules.
// A target is reached at the update that completes its hold. A non-finite loss or model, or a
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
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/log.h"
#include "pacer/data/dataset.h"
#include "pacer/method/trainer.h"
#include "pacer/model/objective.h"

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
  bool target_on_full_loss = false;
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

// `full_loss_reason`: why target.on defaults to "full" for this run ("asynchronous method",
// "partition.scheme = by_class"); empty when the reported loss may stand for F (default "train").
StopRules read_stop_rules(const Config& config, const std::string& full_loss_reason = "");

// Where the reported loss cannot stand for F: the reason, or "" (see read_stop_rules).
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

 private:
  struct Block {
    double time = 0, work_units = 0, loss_sum = 0;
    int64_t step = 0, count = 0, updates = 0;
  };
  void merge_pairs();
  std::vector<Block> blocks_;
  Block open_;
  int64_t stride_ = 1;
};

class Recorder : public Monitor {
 public:
  // `tilde_weights`: the weights w_i of F̃ = Σ w_i f_i for asynchronous runs (empty otherwise).
  // `test` may be empty. `label` names the run on the progress line.
  Recorder(StopRules rules, const Objective& objective, const Dataset& test,
           std::vector<double> tilde_weights, std::string label);

  bool on_update(const UpdateRecord& record, const Vec& x) override;
  // The method ended the run (e.g. "too_many_lost"): the status becomes `status`, and summary.json
  // says why under "error".
  void on_stopped(std::string_view status, std::string_view reason) override;

  // Evaluates the final model (if the last update was not evaluated and eval_final is on), checks
  // the targets on F against it, and closes the log.
  void finish(const Vec& x, double end_time);

  // Called with the wall seconds of each evaluation, right after it, by engines whose clock is a
  // wall clock (they exclude it). With a listener, summary.json reports evaluation_time.
  void set_evaluation_listener(std::function<void(double)> listener) {
    evaluation_listener_ = std::move(listener);
  }

  // "target_reached", "max_steps", "max_time", "max_work", "diverged", a status the method
  // stopped the run with (on_stopped: "too_many_lost"), or "stopped" (the engine ended it).
  const std::string& status() const { return status_; }
  // Why the method stopped the run (on_stopped); empty otherwise.
  const std::string& stop_reason() const { return stop_reason_; }
  // Why a "diverged" run diverged (non-finite values, or the growth rule and its numbers).
  const std::string& divergence() const { return divergence_; }
  const std::string& log_csv() const { return log_; }
  const std::string& evals_csv() const { return evals_; }
  std::string trace_csv() const { return trace_.csv(); }
  // Adds the monitor's part of summary.json: targets, step times, work, final metrics.
  void summarize(nlohmann::json& out) const;

 private:
  struct Evaluated {
    double full_loss = 0, grad_norm_sq = 0, tilde_loss = 0, test_loss = 0, test_accuracy = 0;
    bool has_test = false, has_tilde = false;
    // Appends "full_loss,grad_norm_sq,tilde_loss,test_loss,test_accuracy\n", the evaluation
    // columns of log.csv and evals.csv, with the absent ones blank.
    void append_csv(std::string& out) const;
  };
  Evaluated evaluate(const Vec& x, const UpdateRecord& at);
  bool evaluation_due(const UpdateRecord& record);
  void append_row(const UpdateRecord& record, const Evaluated* eval);
  void check_target(double loss, const UpdateRecord& record);
  // Applies the divergence growth rule (StopRules) to one reported, finite loss; true when it
  // fires (divergence_ then says why).
  bool loss_grew_too_much(double loss);

  StopRules rules_;
  const Objective& objective_;
  const Dataset& test_;
  std::vector<double> tilde_weights_;
  std::unique_ptr<Objective::Scratch> scratch_;
  std::unique_ptr<Workspace> test_workspace_;
  Vec full_gradient_;
  ProgressLine progress_;

  std::string log_;
  std::string evals_;
  LossTrace trace_;
  std::function<void(double)> evaluation_listener_;
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
  std::vector<int64_t> hold_count_;
  std::vector<std::optional<UpdateRecord>> reached_;
  std::vector<double> step_times_;
  double responders_total_ = 0;
  double staleness_total_ = 0;
};

}  // namespace pacer
