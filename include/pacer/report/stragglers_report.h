// What `pacer stragglers INPUT` prints and writes: the per-worker straggler report users ask for
// (min/median/p95/max job time per rank, how often each decided a step, the slowest ranks,
// chronic against one-off), from a run folder, a jobs.csv or a trace (timing/stragglers.h holds
// the analysis and its definitions).
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "pacer/timing/stragglers.h"
#include "pacer/timing/trace.h"

namespace pacer {

// What the report reads: the trace (a run's or a jobs.csv's delivered jobs converted as
// trace_from_jobs_csv does, or a trace file) and the analysis, whose decided counts come from
// the best source there is:
//   a run folder DIR  DIR/jobs.csv (required) and, when present, DIR/log.csv: the decisive worker
//                     of each synchronous step (its `worker` column on rows with a `wait`); an
//                     asynchronous run's log has none, and no worker decided anything;
//   a jobs.csv        the worker whose used job of each tag was delivered last;
//   a trace           the worker with the largest job time of each step (stragglers.h).
struct StragglersInput {
  DurationTrace trace;
  StragglerAnalysis analysis;
  std::string kind;  // "run folder", "jobs.csv" or "trace"
};
// Errors: a missing or unreadable input, a folder without jobs.csv, a worker without rows (the
// report covers workers 0..n−1), and those of the readers, each naming the file.
StragglersInput read_stragglers_input(const std::string& input);

// The printed report: one line on the input and M, the per-worker table, the `top` slowest, the
// chronic and one-off workers with their slowdowns and spells, co-occurrence, how "decided" was
// counted, the block length a replay would use and what to run next. Pure.
std::string stragglers_text(const StragglersInput& in, size_t top);

// stragglers.json: the same numbers, typed (NaN as null). Pure.
nlohmann::json stragglers_json(const StragglersInput& in, size_t top);

// Reads INPUT and writes, atomically, into `out_dir` (created if needed):
//   stragglers.md, stragglers.json, stragglers.csv (the per-worker table), trace.csv (the trace
//   the report read, for pacer fit and pacer advise), and the figure stragglers.{gp,png,svg}:
//   each worker's job times (whiskers min to max, box median to p95, chronic workers in red) and
//   the map of slowness over steps (each row's duration per unit / M, workers × steps).
// Returns stragglers_text followed by a line naming the files.
std::string run_stragglers(const std::string& input, const std::string& out_dir, size_t top);

}  // namespace pacer
