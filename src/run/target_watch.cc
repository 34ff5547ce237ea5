#include "pacer/run/target_watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "pacer/core/error.h"
#include "pacer/core/state.h"

namespace pacer {
namespace {

// Steps searched one by one; a longer stretch is first searched at this many evenly spaced steps.
constexpr int64_t kLeafSteps = 8;
// An anchored estimate is re-anchored once its standard error exceeds this part of the plain one's:
// the model has moved far enough from the anchor that the control variates lost most of their use
// (near the anchor they make it some 50 times more precise: target_estimate.h); re-anchoring
// sooner costs more (a pass of loss and gradient over every row) than the refinements it saves.
constexpr double kReanchorRatio = 0.5;
// A decision is made on an estimate at least this many standard errors from the target: with at
// least 15 degrees of freedom, wrong with probability below 1 % (target_estimate.h).
constexpr double kDecisiveErrors = 3;

}  // namespace

void TargetHit::checkpoint(StateArchive& a) {
  record.checkpoint(a);
  a.io(loss.value);
  a.io(loss.se);
}

void TargetWatch::Progress::checkpoint(StateArchive& a) {
  a.io(decided);
  a.io(streak);
}

TargetWatch::TargetWatch(TargetWatchOptions options, TargetLossEstimator& estimator)
    : options_(std::move(options)),
      estimator_(estimator),
      progress_(options_.targets.size()),
      hits_(options_.targets.size()) {
  PACER_CHECK(options_.hold >= 1 && options_.check_every > 0 && options_.window >= 1 &&
              options_.workers >= 1);
}

bool TargetWatch::all_reached() const {
  return std::all_of(hits_.begin(), hits_.end(), [](const auto& h) { return h.has_value(); });
}

double TargetWatch::largest_open_target() const {
  double largest = -1;
  for (size_t k = 0; k < hits_.size(); ++k) {
    if (!hits_[k]) largest = std::max(largest, options_.targets[k]);
  }
  return largest;
}

bool TargetWatch::check_due(const UpdateRecord& record) const {
  for (size_t k = 0; k < hits_.size(); ++k) {
    if (!hits_[k] && progress_[k].streak > 0) return true;  // a hold under way: every step
  }
  if (static_cast<int64_t>(window_.size()) >= options_.window) return true;
  // Once F may have met a target, every `hold`-th step: every stretch of `hold` steps at or below
  // it then holds a checked step, so none goes unseen.
  if (dense_ && record.step - last_checked_step_ >= options_.hold) return true;
  const double interval = options_.check_every * (last_check_near_ ? 1.0 : options_.far_factor);
  return (record.work_units - last_check_work_) / options_.workers >= interval;
}

void TargetWatch::on_update(const UpdateRecord& record, const Vec& x) {
  if (hits_.empty() || all_reached()) return;
  Snapshot& s = window_.emplace_back();
  s.record = record;
  if (!spare_.empty()) {
    s.x = std::move(spare_.back());
    spare_.pop_back();
  }
  s.x = x;
  if (check_due(record)) check(record.step);
}

void TargetWatch::on_run_end() {
  if (hits_.empty() || all_reached() || window_.empty()) return;
  if (window_.back().record.step != last_checked_step_) check(window_.back().record.step);
}

const TargetWatch::Snapshot& TargetWatch::snapshot(int64_t step) const {
  PACER_CHECK(!window_.empty() && step >= window_.front().record.step &&
              step <= window_.back().record.step);
  return window_[static_cast<size_t>(step - window_.front().record.step)];
}

TargetLoss TargetWatch::loss_at(int64_t step) const {
  return estimator_.estimate(memo_.at(step), snapshot(step).x);
}

void TargetWatch::record(int64_t step, int64_t rows, const char* kind) {
  const Snapshot& s = snapshot(step);
  ++evaluations_;
  rows_evaluated_ += rows;
  const TargetLoss loss = loss_at(step);
  fmt::format_to(std::back_inserter(csv_), "{},{},{},{},{},{},{}\n", s.record.time, s.record.step,
                 s.record.work_units, loss.value, loss.se, rows, kind);
}

void TargetWatch::extend(int64_t step, int level, const char* kind) {
  TargetLossEstimator::Sums& sums = memo_[step];
  const int64_t before = sums.y.empty() ? 0 : estimator_.rows_at(estimator_.level_of(sums));
  estimator_.extend(snapshot(step).x, level, sums);
  record(step, estimator_.rows_at(level) - before, kind);
}

void TargetWatch::anchor_at(int64_t step) {
  memo_[step] = estimator_.anchor(snapshot(step).x);
  anchor_step_ = step;
  record(step, estimator_.population(), "anchor");
}

TargetLossEstimator::Sums& TargetWatch::sums_at(int64_t step, const char* kind) {
  auto it = memo_.find(step);
  if (it == memo_.end()) extend(step, 0, kind);
  return memo_.at(step);
}

bool TargetWatch::below(size_t k, int64_t step, const char* kind) {
  TargetLossEstimator::Sums& sums = sums_at(step, kind);
  const double target = options_.targets[k];
  // Up to the ceiling one level at a time; past it, at once to F itself: the levels between
  // would be estimated without the second-order term, less precisely than the ceiling's.
  const int ceiling = estimator_.refinement_ceiling();
  for (;;) {
    const TargetLoss loss = loss_at(step);
    const bool decided = std::abs(loss.value - target) >= kDecisiveErrors * loss.se;
    if (decided || estimator_.exact(sums)) return loss.value <= target;
    const int level = estimator_.level_of(sums);
    extend(step, level < ceiling ? level + 1 : estimator_.levels() - 1, "refine");
  }
}

void TargetWatch::maybe_anchor(int64_t step) {
  TargetLossEstimator::Sums& sums = sums_at(step, "check");
  if (estimator_.exact(sums) || step == anchor_step_) return;
  const TargetLoss plain = estimator_.plain_estimate(sums);
  const TargetLoss here = loss_at(step);
  // F may be at or below a target here: the steps up to here are about to be decided, and the
  // plain estimate is too coarse for that (and if the run stops here, the final evaluation is the
  // anchor's: Recorder::finish).
  const bool possible_hit = here.value - kDecisiveErrors * here.se <= largest_open_target();
  const bool drifted = estimator_.anchored() && here.se > kReanchorRatio * plain.se;
  if ((possible_hit && !estimator_.anchored()) || drifted) anchor_at(step);
}

void TargetWatch::check(int64_t step) {
  maybe_anchor(step);
  const TargetLoss here = loss_at(step);
  // How far F moved between two checks near the target (the largest so far): F between them may
  // have been that much lower than at either.
  if (last_check_near_ && last_checked_step_ > 0) {
    swing_ = std::max(swing_, std::abs(here.value - last_check_value_));
  }
  last_check_value_ = here.value;
  dense_ = dense_ || here.value - kDecisiveErrors * here.se - swing_ <= largest_open_target();
  const Snapshot& s = snapshot(step);
  last_check_work_ = s.record.work_units;
  last_checked_step_ = step;
  for (size_t k = 0; k < hits_.size(); ++k) {
    if (!hits_[k]) resolve(k, step);
  }
  // Once near, the checks stay close together: F's noise may lift it above the threshold again.
  const double open = largest_open_target();
  last_check_near_ =
      last_check_near_ || (open >= 0 && loss_at(step).value <= options_.near_ratio * open);
  drop_decided_snapshots();
}

std::optional<int64_t> TargetWatch::first_below(size_t k, int64_t from, int64_t to) {
  if (to - from <= kLeafSteps) {
    for (int64_t s = from + 1; s <= to; ++s) {
      if (below(k, s, "search")) return s;
    }
    return std::nullopt;
  }
  const int64_t stride = (to - from + kLeafSteps - 1) / kLeafSteps;
  for (int64_t previous = from; previous < to;) {
    const int64_t point = std::min(previous + stride, to);
    if (below(k, point, "search")) return first_below(k, previous, point);
    previous = point;
  }
  return std::nullopt;
}

void TargetWatch::resolve(size_t k, int64_t last) {
  Progress& p = progress_[k];
  if (!below(k, last, "check")) {  // the steps between are not looked at (see the header)
    p.decided = last;
    p.streak = 0;
    return;
  }
  int64_t cursor = p.decided, streak = p.streak;
  while (cursor < last) {
    if (streak > 0) {
      ++cursor;
      streak = below(k, cursor, "search") ? streak + 1 : 0;
    } else {
      const std::optional<int64_t> next = first_below(k, cursor, last);
      if (!next) break;  // cannot happen while `last` is below; kept for safety
      cursor = *next;
      streak = 1;
    }
    if (streak >= options_.hold) {
      hits_[k] = TargetHit{snapshot(cursor).record, loss_at(cursor)};
      return;
    }
  }
  p.decided = last;
  p.streak = streak;
}

void TargetWatch::drop_decided_snapshots() {
  int64_t keep_after = window_.empty() ? 0 : window_.back().record.step;  // all decided
  for (size_t k = 0; k < hits_.size(); ++k) {
    if (!hits_[k]) keep_after = std::min(keep_after, progress_[k].decided);
  }
  while (!window_.empty() && window_.front().record.step <= keep_after) {
    memo_.erase(window_.front().record.step);
    spare_.push_back(std::move(window_.front().x));
    window_.pop_front();
  }
  if (all_reached()) {
    window_.clear();
    spare_.clear();
    memo_.clear();
  }
}

nlohmann::json TargetWatch::describe() const {
  nlohmann::json j;
  j["rows"] = estimator_.population();
  j["first_level_rows"] = estimator_.rows_at(0);
  j["evaluations"] = evaluations_;
  j["rows_evaluated"] = rows_evaluated_;
  // The evaluations' cost in evaluations of F on every row.
  j["full_evaluations"] =
      static_cast<double>(rows_evaluated_) / static_cast<double>(estimator_.population());
  j["check_every"] = options_.check_every;
  return j;
}

void TargetWatch::checkpoint(StateArchive& a) {
  a.section("target_watch");
  estimator_.checkpoint(a);
  int64_t size = static_cast<int64_t>(window_.size());
  a.io(size);
  if (a.loading()) window_.resize(static_cast<size_t>(size));
  for (Snapshot& s : window_) {
    s.record.checkpoint(a);
    a.io(s.x);
  }
  std::map<int64_t, std::vector<double>> memo;
  for (const auto& [step, sums] : memo_) memo.emplace(step, sums.y);
  a.io(memo);
  if (a.loading()) {
    memo_.clear();
    for (auto& [step, y] : memo) memo_[step].y = std::move(y);
  }
  a.io(anchor_step_);
  a.io(progress_);
  a.io(hits_);
  a.io(last_check_work_);
  a.io(last_checked_step_);
  a.io(last_check_near_);
  a.io(dense_);
  a.io(swing_);
  a.io(last_check_value_);
  a.io(evaluations_);
  a.io(rows_evaluated_);
  a.io(csv_);
}

}  // namespace pacer
