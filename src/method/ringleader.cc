// Ringleader ASGD (Maranjyan & Richtárik), DESIGN.md section 3.2.
//
// The master keeps two tables of per-worker gradient means (GradientTable: sum_i and count B_i of
// the gradients worker i contributed), `current` and `next`, and a flag per worker saying
// whether the worker has already caused an update in this round. Every worker computes without
// pause and always receives the current x after an arrival; no gradient is thrown away.
//
//   round r
//   phase 1 (gather): each arrival from worker i is added to current_i. No update. The phase
//                     ends once every worker has at least one gradient in `current` (if the
//                     table inherited from the previous round is already full, at once).
//   phase 2 (update): on an arrival from worker i
//       i has not updated yet in round r:   add g to current_i ("refreshes its entry"), then
//                                           x ← x − γ (1/n) Σ_j current_j / B_j;  mark i
//       i has already updated in round r:   add g to next_i (kept for round r+1)
//     after the n-th update (every worker has caused exactly one) the round ends: `next`
//     becomes `current`, `next` is emptied, the marks are cleared and round r+1 starts in
//     phase 1.
//
// Interpretation decisions (DESIGN.md states the table in one line):
//   * "refreshing its entry" adds the fresh gradient to worker i's running mean rather than
//     replacing the mean by it, so nothing gathered in phase 1 is lost; when a worker's last
//     phase-1 gradient and its phase-2 gradient were computed at the same x (the usual case) the
//     two readings differ only in variance.
//   * The arrival that completes phase 1 does not update (phase 1 has "no update"); phase 2
//     holds exactly n updates, one triggered by each worker, so every worker's entry weighs 1/n
//     in every update whatever its speed (the method minimises F, not F̃).
//   * Each update's record: responders = gradients in `current`, loss = their mean loss,
//     staleness = their mean age (updates since the model each was computed at was sent).
//
// Lost workers: a lost worker leaves both tables (its entries are dropped), so phase 1 stops
// waiting for its entry, the updates average the live workers' entries only, and the round ends
// once every worker of `current` has caused its update (if the lost one had, its update is not
// counted).
// A worker that comes back joins `next` at once (its gradients are kept for the next round) and
// `current` at once only during phase 1 (in phase 2 every entry of `current` must be filled).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "method_factories.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

class RingleaderMaster : public AsyncMaster {
 public:
  RingleaderMaster(Trainer& trainer, int workers, int64_t dim)
      : AsyncMaster(trainer, workers),
        current_(workers, dim),
        next_(workers, dim),
        updated_(workers, false),
        direction_(Vec::Zero(dim)) {}

 protected:
  void on_gradient(const Reply& reply, int64_t /*delay*/, Cluster& cluster) override {
    const int i = reply.worker;
    if (gathering_) {
      current_.add(i, *reply.payload, reply.loss, reply.tag);
      if (current_.filled() == current_.workers()) gathering_ = false;
      return;
    }
    if (updated_[i] || !current_.member(i)) {
      next_.add(i, *reply.payload, reply.loss, reply.tag);
      return;
    }
    current_.add(i, *reply.payload, reply.loss, reply.tag);
    updated_[i] = true;
    ++updates_in_round_;
    current_.mean_of_means(direction_);
    apply_direction(direction_, 1.0, cluster, i, current_.mean_loss(), current_.total(),
                    current_.mean_age(trainer_.steps()));
    if (updates_in_round_ == current_.workers()) next_round();
  }
  void checkpoint_method(StateArchive& a) override {
    a.section("ringleader");
    current_.checkpoint(a);
    next_.checkpoint(a);
    a.io(updated_);
    a.io(updates_in_round_);
    a.io(gathering_);
    a.io(rounds_);
  }
  void on_worker_lost(int i, Cluster& /*cluster*/) override {
    current_.set_member(i, false);
    next_.set_member(i, false);
    if (updated_[i]) --updates_in_round_;
    updated_[i] = false;
    if (gathering_) {
      gathering_ = current_.filled() < current_.workers();
    } else if (updates_in_round_ == current_.workers()) {
      next_round();
    }
  }
  void on_worker_rejoined(int i) override {
    next_.set_member(i, true);
    if (gathering_) current_.set_member(i, true);
  }

  void summarize_method(nlohmann::json& out) const override {
    out["rounds_completed"] = rounds_;
    out["phase"] = gathering_ ? "gather" : "update";
  }

 private:
  void next_round() {
    for (int j = 0; j < workers(); ++j) count_used(j, current_.count(j));
    current_.swap(next_);
    next_.clear();
    for (int j = 0; j < workers(); ++j) next_.set_member(j, live(j));  // a worker that came back
    std::fill(updated_.begin(), updated_.end(), false);
    updates_in_round_ = 0;
    gathering_ = current_.filled() < current_.workers();
    ++rounds_;
  }

  GradientTable current_;
  GradientTable next_;
  std::vector<bool> updated_;  // worker has caused its update of this round
  int updates_in_round_ = 0;
  bool gathering_ = true;  // phase 1
  int64_t rounds_ = 0;
  Vec direction_;
};

class Ringleader : public AsyncMethod {
 public:
  using AsyncMethod::AsyncMethod;
  std::string name() const override { return "ringleader"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<RingleaderMaster>(trainer, workers(), dim());
  }
};

}  // namespace

std::unique_ptr<Method> make_ringleader(const Config& config, const MethodSetup& setup) {
  return std::make_unique<Ringleader>(config, setup);
}

}  // namespace pacer
