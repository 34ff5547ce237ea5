// The run's Monitor: writes log.csv rows, evaluates the model every eval_every updates, tracks
// the targets, and decides when the run ends (DESIGN.md section 6).
//
// Keys read (top level unless dotted):
//   max_steps (default 1000), max_time (simulated or wall seconds, default: none),
//   eval_every (updates between evaluations, default 50; 0 = only at the end),
//   eval_final (evaluate the final model when the last update was not evaluated, default true;
//   false skips it for models whose full evaluation is long, e.g. ResNet-18 on CIFAR-10),
//   target.loss (a number or a list of numbers; default: none), target.hold (consecutive updates
//   the loss must stay at or below a target, default 1), target.on ("train": the loss the replies
//   report, the default; "full": the evaluated full training loss F, checked at evaluations, so
//   that target.hold counts evaluations; needs eval_every > 0),
//   target.stop (end the run once every target is reached, default true).
// A target is reached at the update that completes its hold. A non-finite loss ends the run with
// status "diverged".
#pragma once

#include <cstdint>
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
  int64_t eval_every = 50;
  bool eval_final = true;
  std::vector<double> targets;
  int64_t hold = 1;
  bool target_on_full_loss = false;
  bool stop_at_targets = true;
};

StopRules read_stop_rules(const Config& config);

class Recorder : public Monitor {
 public:
  // `tilde_weights`: the weights w_i of F̃ = Σ w_i f_i for asynchronous runs (empty otherwise).
  // `test` may be empty. `label` names the run on the progress line.
  Recorder(StopRules rules, const Objective& objective, const Dataset& test,
           std::vector<double> tilde_weights, std::string label);

  bool on_update(const UpdateRecord& record, const Vec& x) override;

  // Evaluates the final model (if the last update was not evaluated) and closes the log.
  void finish(const Vec& x, double end_time);

  // "target_reached", "max_steps", "max_time", "diverged" or "stopped" (engine ended it).
  const std::string& status() const { return status_; }
  const std::string& log_csv() const { return log_; }
  // Adds the monitor's part of summary.json: targets, step times, work, final metrics.
  void summarize(nlohmann::json& out) const;

 private:
  struct Evaluated {
    double full_loss = 0, grad_norm_sq = 0, tilde_loss = 0, test_loss = 0, test_accuracy = 0;
    bool has_test = false, has_tilde = false;
  };
  Evaluated evaluate(const Vec& x);
  void append_row(const UpdateRecord& record, const Evaluated* eval);
  void check_target(double loss, const UpdateRecord& record);

  StopRules rules_;
  const Objective& objective_;
  const Dataset& test_;
  std::vector<double> tilde_weights_;
  std::unique_ptr<Objective::Scratch> scratch_;
  std::unique_ptr<Workspace> test_workspace_;
  Vec full_gradient_;
  ProgressLine progress_;

  std::string log_;
  std::string status_ = "stopped";
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
