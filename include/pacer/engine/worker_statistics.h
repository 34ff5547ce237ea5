// What every engine measured of each of its workers in one run, and how summary.json writes it
// (engine_stats; docs/outputs.md). Every engine fills the same structure and writes it through
// EngineWorkerStatistics::to_json, so the per-worker keys, their meaning and their order are the
// same whatever the engine: a reader of summary.json (figures, pacer compare, scripts) needs no
// case per engine. What only one engine knows (the simulator's event count, MPI's messages and
// round trips) stays beside these keys as that engine's extras.
//
// Times are on the engine's clock: simulated seconds on the simulator, wall seconds of the run on
// rank 0 (evaluations excluded) on MPI.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer {

class StateArchive;

// One worker over one run. An engine counts what it can observe and leaves the rest at zero; the
// comments say how the simulator and MPI differ where they do.
struct WorkerStatistics {
  // Jobs whose reply was handed to the master (Master::on_reply).
  int64_t jobs_completed = 0;
  // Jobs given up before their reply was handed to the master: cancelled by the master, or dropped
  // because the worker was declared lost while it had them. A job still out when the run ends is
  // neither completed nor cancelled.
  int64_t jobs_cancelled = 0;
  // Replies that arrived after the master had finished and were drained at shutdown (MPI). An
  // engine that ends a run at once (the simulator) drains none: its count is 0.
  int64_t jobs_drained = 0;
  // Seconds the worker spent on jobs. The simulator counts every job's modelled duration, and the
  // part of a cancelled or dropped job that ran before it was given up; MPI counts the job seconds
  // (receipt of the job to send of the reply, as the worker measured them) of delivered replies.
  double busy_time = 0;
  // The part of busy_time spent computing (MPI: inside the worker half; the simulator: all of it).
  double compute_time = 0;
  // The part of busy_time slept to impose the timing model (MPI's engine.inject; 0 elsewhere).
  double injected_time = 0;
  // Times the worker was declared lost, and times it was re-admitted after a loss.
  int64_t losses = 0;
  int64_t rejoins = 0;
  // Whether the worker is lost at the end of the run (while it runs: lost now).
  bool lost = false;
  // When the worker was last declared lost; empty if never.
  std::optional<double> last_loss_time;

  void checkpoint(StateArchive& a);
};

// The per-worker keys EngineWorkerStatistics::to_json writes, each an array with one entry per
// worker (index = worker): the keys every engine's engine_stats has. Tests of each engine check
// their engine_stats against this list (missing_worker_statistics).
inline constexpr std::array<std::string_view, 12> kWorkerStatisticsKeys = {
    "jobs_completed_per_worker",        // WorkerStatistics::jobs_completed
    "jobs_cancelled_per_worker",        // jobs_cancelled
    "late_replies_drained_per_worker",  // jobs_drained
    "busy_time_per_worker",             // busy_time
    "compute_time_per_worker",          // compute_time
    "injected_time_per_worker",         // injected_time
    "idle_time_per_worker",             // EngineWorkerStatistics::idle_time
    "utilisation_per_worker",           // EngineWorkerStatistics::utilisation
    "losses_per_worker",                // losses
    "rejoins_per_worker",               // rejoins
    "lost_per_worker",                  // lost (true/false)
    "lost_time_per_worker",             // last_loss_time (null if never lost)
};

// Every worker of one run, and the run's end on the same clock.
struct EngineWorkerStatistics {
  std::vector<WorkerStatistics> workers;
  double end_time = 0;  // when the run ended (the clock starts at 0)

  // Seconds worker `w` was not busy: end_time − busy_time, at least 0 (on MPI a job's seconds
  // may overlap time excluded from the clock, an evaluation).
  double idle_time(int w) const;
  // The fraction of the run worker `w` was busy: busy_time / end_time (0 when end_time is 0). It
  // may exceed 1 on MPI for the same reason.
  double utilisation(int w) const;
  // Losses and rejoins of all the workers.
  int64_t total_losses() const;
  int64_t total_rejoins() const;

  // Writes every key of kWorkerStatisticsKeys, "end_time", the totals "workers_lost" and
  // "workers_rejoined", and "late_replies_drained" (the sum of jobs_drained) into `out`,
  // replacing those keys and leaving the others.
  void to_json(nlohmann::json& out) const;
};

// What is wrong with an engine_stats object against kWorkerStatisticsKeys for `workers` workers:
// the first key that is missing, not an array, or not of `workers` entries, named; empty when
// every key is there. Other keys (an engine's extras) are not looked at.
std::string missing_worker_statistics(const nlohmann::json& engine_stats, int workers);

}  // namespace pacer
