#include "pacer/method/sync_master.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "pacer/core/error.h"
#include "pacer/core/stats.h"
#include "pacer/method/gradient_worker.h"

namespace pacer {

StragglerPolicy read_straggler_policy(const Config& config) {
  std::string policy =
      config.get_choice("method.straggler_policy", "finish", {"finish", "cancel", "queue"});
  if (policy == "queue") return StragglerPolicy::kQueue;
  return policy == "cancel" ? StragglerPolicy::kCancel : StragglerPolicy::kFinish;
}

namespace {

const char* policy_name(StragglerPolicy policy) {
  switch (policy) {
    case StragglerPolicy::kCancel:
      return "cancel";
    case StragglerPolicy::kQueue:
      return "queue";
    case StragglerPolicy::kFinish:
      break;
  }
  return "finish";
}

}  // namespace

SyncMaster::SyncMaster(Trainer& trainer, int workers, int64_t dim, StragglerPolicy policy)
    : TrainingMaster(trainer),
      workers_(workers),
      policy_(policy),
      messages_(workers, Vec::Zero(dim)),
      losses_(workers, 0.0),
      versions_(workers),
      arrived_(workers, false),
      assigned_step_(workers, -1),
      lost_(workers, false),
      queued_(workers),
      direction_(Vec::Zero(dim)),
      straggled_(workers, 0),
      late_(workers, 0),
      decisive_(workers, 0),
      wait_caused_(workers, 0.0) {
  arrival_order_.reserve(workers);
  arrival_times_.reserve(workers);
  used_.reserve(workers);
}

void SyncMaster::start(Cluster& cluster) {
  if (policy_ == StragglerPolicy::kCancel && !cluster.can_cancel()) {
    fail(
        "method.straggler_policy: 'cancel' needs an engine that can cancel jobs; use 'finish' "
        "with this engine");
  }
  step_start_ = cluster.now();
  for (int i = 0; i < workers_; ++i) assign_current(i, cluster);
}

void SyncMaster::assign_current(int worker, Cluster& cluster) {
  cluster.assign(worker, Job{step_}, trainer_.x());
  assigned_step_[worker] = step_;
}

void SyncMaster::queue_current(int worker) {
  queued_[worker].push_back(step_);
  queued_models_.try_emplace(step_, trainer_.x());
  ++queued_jobs_;
}

void SyncMaster::assign_queued(int worker, Cluster& cluster) {
  std::vector<int64_t>& queue = queued_[worker];
  const int64_t step = queue.front();
  queue.erase(queue.begin());
  cluster.assign(worker, Job{step}, queued_models_.at(step));
  assigned_step_[worker] = step;
  release_queued_model(step);
}

void SyncMaster::release_queued_model(int64_t step) {
  for (const std::vector<int64_t>& queue : queued_) {
    if (std::find(queue.begin(), queue.end(), step) != queue.end()) return;
  }
  queued_models_.erase(step);
}

void SyncMaster::on_reply(const Reply& reply, Cluster& cluster) {
  if (reply.status == ReplyStatus::kFailed) fail_on_failed_reply(reply);
  trainer_.add_work(reply.units);
  if (trainer_.finished()) return;
  const int w = reply.worker;
  if (reply.tag != step_) {
    // A straggler finishing a closed step: its message is not used; it takes its next queued step
    // (kQueue) or the newest x.
    ++late_replies_;
    trainer_.reply_unused(w);
    if (!queued_[w].empty()) {
      assign_queued(w, cluster);
    } else if (assigned_step_[w] != step_) {
      assign_current(w, cluster);
    }
    return;
  }
  keep_message(w, reply);
  losses_[w] = reply.loss;
  versions_[w].assign(reply.versions.begin(), reply.versions.end());
  arrived_[w] = true;
  arrival_order_.push_back(w);
  arrival_times_.push_back(cluster.now());
  if (step_complete()) close_step(cluster, w, /*by_message=*/true);
}

void SyncMaster::keep_message(int w, const Reply& reply) {
  // The engine's vector, when offered, is taken instead of copied (an MPI reply of 8 MB: ~1 ms).
  if (reply.owned_payload != nullptr && reply.owned_payload->size() == messages_[w].size()) {
    messages_[w].swap(*reply.owned_payload);
  } else {
    messages_[w] = *reply.payload;
  }
}

void SyncMaster::on_lost(int worker, Cluster& cluster) {
  record_lost(worker, cluster);
  lost_[worker] = true;
  // Its queued steps are lost with it; a worker that comes back takes the current step.
  while (!queued_[worker].empty()) {
    const int64_t step = queued_[worker].back();
    queued_[worker].pop_back();
    release_queued_model(step);
  }
  if (trainer_.finished()) return;
  if (!survivors_can_close()) {
    stop_too_many_lost(cluster, lost_requirement(), lost_advice());
    return;
  }
  // The close rule may have been waiting for the lost worker alone (DGD with on_lost = "drop").
  if (step_complete()) close_step(cluster, worker, /*by_message=*/false);
}

void SyncMaster::on_rejoined(int worker, Cluster& cluster) {
  record_rejoined(worker, cluster);
  lost_[worker] = false;
  // A worker whose message for this step arrived before its loss gets the next step at close.
  if (!trainer_.finished() && !arrived_[worker]) assign_current(worker, cluster);
}

bool SyncMaster::survivors_can_close() {
  // A step from its start: let the survivors "arrive" one by one in index order, asking the close
  // rule after each (close rules count arrivals as they come), then restore the real state. A
  // message a lost worker sent before its loss does not count: later steps will not have it.
  std::vector<bool> real_arrived(workers_, false);
  std::vector<int> real_order;
  arrived_.swap(real_arrived);
  arrival_order_.swap(real_order);
  bool closable = false;
  for (int i = 0; i < workers_ && !closable; ++i) {
    if (lost_[i]) continue;
    arrived_[i] = true;
    arrival_order_.push_back(i);
    closable = step_complete();
  }
  arrived_.swap(real_arrived);
  arrival_order_.swap(real_order);
  return closable;
}

void SyncMaster::close_step(Cluster& cluster, int decisive, bool by_message) {
  used_.clear();
  decode(direction_, used_);

  UpdateRecord record;
  record.time = cluster.now();
  record.responders = static_cast<int>(used_.size());
  // The step waited for `decisive` alone since the arrival before its message (by_message: its
  // message is the last arrival) or since the last arrival (a loss closed the step).
  const size_t waited_from = arrival_times_.size() - (by_message ? 1 : 0);
  record.worker = decisive;
  record.wait = record.time - (waited_from > 0 ? arrival_times_[waited_from - 1] : step_start_);
  ++decisive_[decisive];
  wait_caused_[decisive] += record.wait;
  int64_t ages = 0, age_sum = 0;
  std::vector<bool> used_mask(workers_, false);
  for (int w : used_) {
    used_mask[w] = true;
    for (int64_t version : versions_[w]) {
      const int64_t age = step_ - version;
      ++staleness_histogram_[age];
      age_sum += age;
      ++ages;
    }
  }
  record.loss = reported_loss();
  record.staleness = ages ? static_cast<double>(age_sum) / static_cast<double>(ages) : 0.0;
  for (int w = 0; w < workers_; ++w) {
    if (!used_mask[w]) ++straggled_[w];
    if (!arrived_[w]) ++late_[w];
  }

  trainer_.apply(direction_, record);
  ++step_;
  std::fill(arrived_.begin(), arrived_.end(), false);
  arrival_order_.clear();
  arrival_times_.clear();
  step_start_ = record.time;
  if (trainer_.finished()) return;

  for (int w = 0; w < workers_; ++w) {
    if (lost_[w]) continue;
    if (!cluster.busy(w)) {
      assign_current(w, cluster);
    } else if (policy_ == StragglerPolicy::kCancel) {
      cluster.cancel(w);
      ++cancelled_jobs_;
      assign_current(w, cluster);
    } else if (policy_ == StragglerPolicy::kQueue) {
      queue_current(w);
    }
    // kFinish: a busy worker receives step t+1 when its late reply arrives.
  }
}

double SyncMaster::reported_loss() const {
  // Every message of the step in by the close (the file comment), summed in worker-index order
  // so that the mean does not depend on the order of arrival.
  double sum = 0;
  int count = 0;
  for (int w = 0; w < workers_; ++w) {
    if (!arrived_[w]) continue;
    sum += losses_[w];
    ++count;
  }
  return count > 0 ? sum / count : std::numeric_limits<double>::quiet_NaN();
}

void SyncMaster::checkpoint(StateArchive& a) {
  TrainingMaster::checkpoint(a);
  a.section("sync_master");
  a.expect(workers_, "workers");
  a.io(step_);
  a.io(arrived_);
  for (int w = 0; w < workers_; ++w) {
    if (!arrived_[w]) continue;
    a.io(messages_[w]);
    a.io(losses_[w]);
    a.io(versions_[w]);
  }
  a.io(arrival_order_);
  a.io(arrival_times_);
  a.io(step_start_);
  a.io(assigned_step_);
  a.io(lost_);
  a.io(queued_);
  a.io(queued_models_);
  a.io(straggled_);
  a.io(late_);
  a.io(decisive_);
  a.io(wait_caused_);
  a.io(staleness_histogram_);
  a.io(late_replies_);
  a.io(cancelled_jobs_);
  a.io(queued_jobs_);
  checkpoint_method(a);
}

std::unique_ptr<Worker> GradientSyncMethod::make_worker(int worker) const {
  return std::make_unique<GradientWorker>(setup_.objective, worker, setup_.seed, sampling_);
}

void SyncMaster::summarize(nlohmann::json& out) const {
  out["straggler_policy"] = policy_name(policy_);
  out["late_replies"] = late_replies_;
  out["cancelled_jobs"] = cancelled_jobs_;
  // kQueue: jobs sent to a worker still busy (each one computed later, in order, unless lost).
  if (policy_ == StragglerPolicy::kQueue) out["queued_jobs"] = queued_jobs_;
  // A straggler is late: the step closed before its message arrived. A message can also arrive in
  // time and not be used (not the first of its FR group, overlapping in IS-GC).
  out["steps_late_per_worker"] = late_;
  out["steps_not_used_per_worker"] = straggled_;
  // Attribution (sync_master.h): who closed each step, and how long steps waited for them.
  out["decisive_steps_per_worker"] = decisive_;
  out["wait_caused_per_worker"] = wait_caused_;
  out["staleness_histogram"] = histogram_json(staleness_histogram_);
  summarize_method(out);
}

}  // namespace pacer
