// What every master does about lost workers and failed replies (method/method.h). What a method
// does about a loss is its own file's business; this is only the record and the two ways a run
// ends because of one.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "pacer/core/error.h"
#include "pacer/method/method.h"

namespace pacer {

void TrainingMaster::record_lost(int worker, const Cluster& cluster) {
  losses_.push_back(Loss{.worker = worker, .time = cluster.now(), .step = trainer_.steps()});
}

void TrainingMaster::record_rejoined(int worker, const Cluster& cluster) {
  for (auto it = losses_.rbegin(); it != losses_.rend(); ++it) {
    if (it->worker == worker && it->rejoined_time < 0) {
      it->rejoined_time = cluster.now();
      return;
    }
  }
}

void TrainingMaster::checkpoint(StateArchive& a) {
  a.section("training_master");
  a.io(losses_);
}

nlohmann::json TrainingMaster::lost_workers_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Loss& loss : losses_) {
    nlohmann::json entry{{"worker", loss.worker}, {"time", loss.time}, {"step", loss.step}};
    if (loss.rejoined_time >= 0) entry["rejoined_time"] = loss.rejoined_time;
    out.push_back(entry);
  }
  return out;
}

void TrainingMaster::stop_too_many_lost(const Cluster& cluster, const std::string& needed,
                                        const std::string& advice) {
  std::vector<int> lost;
  for (int i = 0; i < cluster.num_workers(); ++i) {
    if (!cluster.alive(i)) lost.push_back(i);
  }
  std::string reason = fmt::format(
      "too many workers lost: worker{} {} {} lost at t = {:.6g} (step {}), and the "
      "method needs {}",
      lost.size() == 1 ? "" : "s", fmt::join(lost, ", "), lost.size() == 1 ? "is" : "are",
      cluster.now(), trainer_.steps(), needed);
  if (!advice.empty()) reason += "; " + advice;
  trainer_.stop("too_many_lost", reason);
}

void TrainingMaster::fail_on_failed_reply(const Reply& reply) const {
  // The engine's error names the worker and where it ran ("rank 3 (worker 2): ...").
  fail("{} (the worker failed during its job tagged {})", reply.error, reply.tag);
}

}  // namespace pacer
