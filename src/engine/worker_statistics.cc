#include "pacer/engine/worker_statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "pacer/core/state.h"

namespace pacer {

void WorkerStatistics::checkpoint(StateArchive& a) {
  a.io(jobs_completed);
  a.io(jobs_cancelled);
  a.io(jobs_drained);
  a.io(busy_time);
  a.io(compute_time);
  a.io(injected_time);
  a.io(losses);
  a.io(rejoins);
  a.io(lost);
  a.io(last_loss_time);
}

double EngineWorkerStatistics::idle_time(int w) const {
  return std::max(0.0, end_time - workers[w].busy_time);
}

double EngineWorkerStatistics::utilisation(int w) const {
  return end_time > 0 ? workers[w].busy_time / end_time : 0.0;
}

int64_t EngineWorkerStatistics::total_losses() const {
  int64_t total = 0;
  for (const WorkerStatistics& s : workers) total += s.losses;
  return total;
}

int64_t EngineWorkerStatistics::total_rejoins() const {
  int64_t total = 0;
  for (const WorkerStatistics& s : workers) total += s.rejoins;
  return total;
}

void EngineWorkerStatistics::to_json(nlohmann::json& out) const {
  // One array per key of kWorkerStatisticsKeys, in its order.
  nlohmann::json columns[kWorkerStatisticsKeys.size()];
  int64_t drained = 0;
  for (int w = 0; w < static_cast<int>(workers.size()); ++w) {
    const WorkerStatistics& s = workers[w];
    const nlohmann::json row[] = {
        s.jobs_completed,  // jobs_completed_per_worker
        s.jobs_cancelled,  // jobs_cancelled_per_worker
        s.jobs_drained,    // late_replies_drained_per_worker
        s.busy_time,       // busy_time_per_worker
        s.compute_time,    // compute_time_per_worker
        s.injected_time,   // injected_time_per_worker
        idle_time(w),      // idle_time_per_worker
        utilisation(w),    // utilisation_per_worker
        s.losses,          // losses_per_worker
        s.rejoins,         // rejoins_per_worker
        s.lost,            // lost_per_worker
        // lost_time_per_worker (null: never lost)
        s.last_loss_time ? nlohmann::json(*s.last_loss_time) : nlohmann::json(),
    };
    static_assert(std::size(row) == kWorkerStatisticsKeys.size());
    for (size_t k = 0; k < std::size(row); ++k) columns[k].push_back(row[k]);
    drained += s.jobs_drained;
  }
  for (size_t k = 0; k < kWorkerStatisticsKeys.size(); ++k) {
    // An empty run has empty arrays, not nulls.
    out[std::string(kWorkerStatisticsKeys[k])] =
        columns[k].is_null() ? nlohmann::json::array() : std::move(columns[k]);
  }
  out["end_time"] = end_time;
  out["workers_lost"] = total_losses();
  out["workers_rejoined"] = total_rejoins();
  out["late_replies_drained"] = drained;
}

std::string missing_worker_statistics(const nlohmann::json& engine_stats, int workers) {
  if (!engine_stats.is_object()) return "engine_stats is not an object";
  for (std::string_view key : kWorkerStatisticsKeys) {
    const std::string name(key);
    if (!engine_stats.contains(name)) return fmt::format("no \"{}\"", name);
    const nlohmann::json& values = engine_stats[name];
    if (!values.is_array() || values.size() != static_cast<size_t>(workers)) {
      return fmt::format("\"{}\" is {}, expected an array of {} entries (one per worker)", name,
                         values.dump(), workers);
    }
  }
  return "";
}

}  // namespace pacer
