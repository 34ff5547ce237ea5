// The target of a run judged on F (target.on = "full", the default; DESIGN.md section 6): the
// first step at which F(x_t) is at or below the target for `hold` consecutive steps, found while
// evaluating F (target_estimate.h) at few steps.
//
// How. The watch keeps the model of every step since the last step it has decided (a window of
// snapshots) and checks F at some of them. The schedule depends on F's values and the work done
// only, never on wall time, so it is the same on every machine.
//   * Checks. Far from the target F is checked every `far_factor` × `check_every` work units per
//     worker (64: a DGD or PGC step is one unit per worker, a GC step s + 1, an asynchronous
//     update 1/n), every `check_every` (8) once a check found F at or below near_ratio (1.1)
//     times the largest target not yet reached, and every `hold` steps once a check found that F
//     may have met a target or may do so before the next check (its estimate, less 3 standard
//     errors and less the largest change of F between two checks near the target so far, at or
//     below it): from then on every stretch of `hold` steps at or below the target holds a
//     checked step, so none goes unseen. A check is also made when the window is full, at every
//     step while a target's hold is under way, and at the run's last update. Before F may have met
//     a target, a stretch below it that starts and ends between two checks is not seen.
//   * Resolution. When a check finds F at or below a target, the steps since that target's last
//     decided step are searched, in order, for the first step from which F stays at or below it
//     for `hold` steps: coarsely (8 evenly spaced steps at a time) and then step by step, on the
//     saved models.
//   * Decisions. "F(x_t) ≤ target" is decided on the estimate of target_estimate.h only where it
//     is at least 3 standard errors from the target (wrong with probability below 1 %); closer,
//     the estimate is refined on twice the rows, and again (TargetLossEstimator::
//     refinement_ceiling), up to F itself.
//   * Anchors. The estimate is anchored (an exact evaluation of loss and gradient,
//     target_estimate.h) at the first check where F may have met a target, and again when its
//     standard error has grown past half the plain estimate's. A run that stops at an
//     anchor needs no other final evaluation: the anchor is one (anchored_at, Recorder::finish).
//   * The resolution is checked against evaluating F at every step in
//     tests/experiment/target_watch_test.cc; docs/decisions.md has the measurements.
// A target is reached at the step that completes its hold: its step, time and work units are that
// update's, whatever step the run had reached when the watch found it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pacer/core/vector.h"
#include "pacer/method/trainer.h"
#include "pacer/run/target_estimate.h"

namespace pacer {

class StateArchive;

struct TargetWatchOptions {
  std::vector<double> targets;  // target.loss
  int64_t hold = 1;             // target.hold: consecutive steps
  double check_every = 8;       // target.check_every: work units per worker between checks
  double far_factor = 8;        // checks this many times further apart far from the target
  double near_ratio = 1.1;  // "near": the last check's F ≤ near_ratio × the largest target left
  int64_t window = 512;     // snapshots kept at most (steps); a check is due when it is full
  int workers = 1;          // n, to turn work units into units per worker
};

// Where a target was reached.
struct TargetHit {
  UpdateRecord record;  // the update that completed the hold
  TargetLoss loss;      // F there (or its estimate)
  void checkpoint(StateArchive& a);
};

class TargetWatch {
 public:
  TargetWatch(TargetWatchOptions options, TargetLossEstimator& estimator);

  // After every update, with the new model: saves it, and checks when a check is due (which may
  // reach targets at this step or at earlier ones).
  void on_update(const UpdateRecord& record, const Vec& x);
  // The run ends at the update last given: checks it unless it was checked.
  void on_run_end();

  const std::optional<TargetHit>& hit(size_t k) const { return hits_[k]; }
  // The step of the last anchor (-1: none): F and ‖∇F‖² there are exact (TargetLossEstimator).
  int64_t anchored_at() const { return anchor_step_; }
  bool all_reached() const;
  // Evaluations the watch made (refinements included), and the training rows they covered.
  int64_t evaluations() const { return evaluations_; }
  int64_t rows_evaluated() const { return rows_evaluated_; }
  // "time,step,work_units,estimate,se,rows,kind" with kind "check", "search", "refine" or
  // "anchor", one row per evaluation in the order made (estimate and se as the decision after it
  // saw them).
  const std::string& evaluations_csv() const { return csv_; }
  // summary.json's "target_estimate": how F was evaluated (rows, exact or not) and how often.
  nlohmann::json describe() const;

  // The window, the decisions so far and the estimator's anchor.
  void checkpoint(StateArchive& a);

 private:
  struct Snapshot {
    UpdateRecord record;
    Vec x;
  };
  // Per target: every step up to `decided` is decided, and the last `streak` of them are known
  // to be at or below the target.
  struct Progress {
    int64_t decided = 0;
    int64_t streak = 0;
    void checkpoint(StateArchive& a);
  };

  bool check_due(const UpdateRecord& record) const;
  void check(int64_t step);
  // The evaluation of a step of the window (kept until the window moves past it), made at the
  // lowest level when there is none.
  TargetLossEstimator::Sums& sums_at(int64_t step, const char* kind);
  // The estimate of F at a step of the memo, against the current anchor.
  TargetLoss loss_at(int64_t step) const;
  // Evaluates `step` up to `level`, recording it.
  void extend(int64_t step, int level, const char* kind);
  // Makes `step` the anchor (an exact evaluation with gradients), recording it.
  void anchor_at(int64_t step);
  // Adds an evaluation of `rows` rows at `step` to the counts and to the CSV.
  void record(int64_t step, int64_t rows, const char* kind);
  const Snapshot& snapshot(int64_t step) const;
  void maybe_anchor(int64_t step);
  // Whether F at `step` is at or below target k, refined until the estimate decides it.
  bool below(size_t k, int64_t step, const char* kind);
  // Decides target k's steps up to `last` (a checked step).
  void resolve(size_t k, int64_t last);
  // The first step in (from, to] at which F is at or below target k, searched coarse to fine;
  // nullopt when none of the steps looked at is.
  std::optional<int64_t> first_below(size_t k, int64_t from, int64_t to);
  double largest_open_target() const;
  void drop_decided_snapshots();

  TargetWatchOptions options_;
  TargetLossEstimator& estimator_;
  std::deque<Snapshot> window_;  // consecutive steps, oldest first
  std::vector<Vec> spare_;       // vectors of dropped snapshots, reused
  std::map<int64_t, TargetLossEstimator::Sums> memo_;
  int64_t anchor_step_ = -1;
  std::vector<Progress> progress_;
  std::vector<std::optional<TargetHit>> hits_;
  double last_check_work_ = 0;
  int64_t last_checked_step_ = 0;
  bool last_check_near_ = false;
  bool dense_ = false;  // a check found that F may have met a target: checks every `hold` steps
  double swing_ = 0;    // the largest change of F between two checks near the target
  double last_check_value_ = 0;
  int64_t evaluations_ = 0, rows_evaluated_ = 0;
  std::string csv_;
};

}  // namespace pacer
