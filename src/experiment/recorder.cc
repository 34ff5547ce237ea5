#include "pacer/experiment/recorder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pacer/core/error.h"
#include "pacer/core/stats.h"

namespace pacer {
namespace {

constexpr const char* kLogHeader =
    "time,step,work_units,loss,grad_norm,responders,staleness,stepsize,worker,"
    "full_loss,grad_norm_sq,tilde_loss,test_loss,test_accuracy\n";

}  // namespace

StopRules read_stop_rules(const Config& config) {
  StopRules r;
  r.max_steps = config.get_int("max_steps", r.max_steps);
  if (r.max_steps <= 0) config.fail_key("max_steps", "a positive integer");
  r.max_time = config.get_double("max_time", 0.0);
  if (!(r.max_time >= 0)) config.fail_key("max_time", "a number >= 0 (0 = no limit)");
  r.eval_every = config.get_int("eval_every", r.eval_every);
  if (r.eval_every < 0) config.fail_key("eval_every", "an integer >= 0 (0 = only at the end)");
  r.eval_final = config.get_bool("eval_final", true);
  if (config.has("target.loss")) {
    // A single number or a list.
    try {
      r.targets = {config.get_double("target.loss", 0)};
    } catch (const Error&) {
      r.targets = config.get_doubles("target.loss", {});
    }
    for (double t : r.targets) {
      if (!std::isfinite(t)) config.fail_key("target.loss", "finite numbers");
    }
  }
  r.hold = config.get_int("target.hold", 1);
  if (r.hold <= 0) config.fail_key("target.hold", "a positive integer");
  r.target_on_full_loss = config.get_choice("target.on", "train", {"train", "full"}) == "full";
  r.stop_at_targets = config.get_bool("target.stop", true);
  if (r.target_on_full_loss && !r.targets.empty() && r.eval_every == 0) {
    config.fail_key("eval_every",
                    "a positive integer when target.on = \"full\" (the full loss is checked at "
                    "each evaluation, and target.hold counts evaluations)");
  }
  return r;
}

Recorder::Recorder(StopRules rules, const Objective& objective, const Dataset& test,
                   std::vector<double> tilde_weights, std::string label)
    : rules_(std::move(rules)),
      objective_(objective),
      test_(test),
      tilde_weights_(std::move(tilde_weights)),
      scratch_(objective.make_scratch()),
      full_gradient_(Vec::Zero(objective.dim())),
      progress_(std::move(label)),
      log_(kLogHeader),
      hold_count_(rules_.targets.size(), 0),
      reached_(rules_.targets.size()) {
  if (test_.rows() > 0) test_workspace_ = objective.model().make_workspace(1024);
}

Recorder::Evaluated Recorder::evaluate(const Vec& x) {
  Evaluated e;
  e.full_loss = objective_.full_gradient(x, full_gradient_, *scratch_);
  e.grad_norm_sq = full_gradient_.squaredNorm();
  if (!tilde_weights_.empty()) {
    std::vector<double> losses = objective_.partition_losses(x, *scratch_);
    e.tilde_loss = 0;
    for (size_t i = 0; i < losses.size(); ++i) e.tilde_loss += tilde_weights_[i] * losses[i];
    e.has_tilde = true;
  }
  if (test_workspace_) {
    Evaluation t = objective_.model().evaluate(x, test_, *test_workspace_);
    e.test_loss = t.loss;
    e.test_accuracy = t.accuracy;
    e.has_test = true;
  }
  return e;
}

void Recorder::append_row(const UpdateRecord& r, const Evaluated* e) {
  fmt::format_to(std::back_inserter(log_), "{},{},{},{},{},{},{},{},{}", r.time, r.step,
                 r.work_units, r.loss, r.grad_norm, r.responders, r.staleness, r.stepsize,
                 r.worker >= 0 ? std::to_string(r.worker) : std::string());
  if (e) {
    fmt::format_to(std::back_inserter(log_), ",{},{},", e->full_loss, e->grad_norm_sq);
    if (e->has_tilde) fmt::format_to(std::back_inserter(log_), "{}", e->tilde_loss);
    if (e->has_test) {
      fmt::format_to(std::back_inserter(log_), ",{},{}\n", e->test_loss, e->test_accuracy);
    } else {
      log_ += ",,\n";
    }
  } else {
    log_ += ",,,,,\n";
  }
}

void Recorder::check_target(double loss, const UpdateRecord& record) {
  for (size_t k = 0; k < rules_.targets.size(); ++k) {
    if (reached_[k]) continue;
    hold_count_[k] = loss <= rules_.targets[k] ? hold_count_[k] + 1 : 0;
    if (hold_count_[k] >= rules_.hold) reached_[k] = record;
  }
}

bool Recorder::on_update(const UpdateRecord& record, const Vec& x) {
  step_times_.push_back(record.time - last_.time);
  last_ = record;
  responders_total_ += record.responders;
  staleness_total_ += record.staleness;

  const bool due = rules_.eval_every > 0 && record.step % rules_.eval_every == 0;
  std::optional<Evaluated> eval;
  if (due) eval = evaluate(x);
  last_evaluated_ = due;
  if (eval) final_ = eval;
  append_row(record, eval ? &*eval : nullptr);

  if (!std::isfinite(record.loss) || !x.allFinite()) {
    status_ = "diverged";
    return false;
  }
  if (rules_.target_on_full_loss) {
    if (eval) check_target(eval->full_loss, record);
  } else {
    check_target(record.loss, record);
  }
  progress_.update(
      fmt::format("step {}  t={:.1f}  loss {:.4f}", record.step, record.time, record.loss));

  const bool all_reached =
      !reached_.empty() &&
      std::all_of(reached_.begin(), reached_.end(), [](const auto& r) { return r.has_value(); });
  if (all_reached && rules_.stop_at_targets) {
    status_ = "target_reached";
    return false;
  }
  if (record.step >= rules_.max_steps) {
    status_ = "max_steps";
    return false;
  }
  if (rules_.max_time > 0 && record.time >= rules_.max_time) {
    status_ = "max_time";
    return false;
  }
  return true;
}

void Recorder::finish(const Vec& x, double end_time) {
  progress_.clear();
  if (status_ == "stopped" && rules_.max_time > 0 && end_time >= rules_.max_time) {
    status_ = "max_time";
  }
  if (!last_evaluated_ && status_ != "diverged" && rules_.eval_final) {
    final_ = evaluate(x);
    last_evaluated_ = true;
  }
}

void Recorder::summarize(nlohmann::json& out) const {
  out["status"] = status_;
  out["steps"] = last_.step;
  out["time"] = last_.time;
  out["work_units"] = last_.work_units;
  const double steps = static_cast<double>(std::max<int64_t>(1, last_.step));
  out["work_units_per_step"] = last_.work_units / steps;
  out["jobs"] = last_.jobs;
  // The cost of one job: 1 for DGD and PGC (after PGC's warm-up), s+1 for gradient coding.
  out["work_units_per_job"] = last_.jobs > 0 ? last_.work_units / last_.jobs : 0.0;
  out["responders_per_step"] = responders_total_ / steps;
  out["mean_staleness"] = staleness_total_ / steps;
  double total = std::accumulate(step_times_.begin(), step_times_.end(), 0.0);
  out["mean_step_time"] = step_times_.empty() ? 0.0 : total / step_times_.size();
  out["median_step_time"] = median(step_times_);

  nlohmann::json targets = nlohmann::json::array();
  for (size_t k = 0; k < rules_.targets.size(); ++k) {
    nlohmann::json t;
    t["loss"] = rules_.targets[k];
    t["on"] = rules_.target_on_full_loss ? "full" : "train";
    t["hold"] = rules_.hold;
    t["reached"] = reached_[k].has_value();
    if (reached_[k]) {
      t["steps"] = reached_[k]->step;
      t["time"] = reached_[k]->time;
      t["work_units"] = reached_[k]->work_units;
    } else {
      t["steps"] = nullptr;
      t["time"] = nullptr;
      t["work_units"] = nullptr;
    }
    targets.push_back(t);
  }
  out["targets"] = targets;

  nlohmann::json final_metrics;
  final_metrics["train_loss"] = last_.loss;
  if (final_) {
    final_metrics["full_loss"] = final_->full_loss;
    final_metrics["grad_norm_sq"] = final_->grad_norm_sq;
    if (final_->has_tilde) final_metrics["tilde_loss"] = final_->tilde_loss;
    if (final_->has_test) {
      final_metrics["test_loss"] = final_->test_loss;
      final_metrics["test_accuracy"] = final_->test_accuracy;
    }
  }
  out["final"] = final_metrics;
}

}  // namespace pacer
