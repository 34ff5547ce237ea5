// Measured job durations: the trace that timing.model = "trace" replays and that pacer fit, pacer
// stragglers and pacer advise read (DESIGN.md sections 4 and 9).
//
// A trace file is a CSV whose header names its columns, in any order:
//   worker    required: the worker index, an integer in [0, n)
//   duration  required: the job's duration in seconds per work unit (> 0), i.e. its seconds
//             divided by its units
//   step      optional: the step the job belongs to, an integer (a synchronous run's step; a
//             jobs.csv's tag). Jobs of one step ran at the same time, so the step keeps which
//             workers were slow together and for how long.
//   units     optional: the job's work units (> 0), default 1
// "worker,duration" alone is the classic trace (pacer profile on the simulator writes it); its rows
// are replayed as seconds per unit that scale with a job's units, as they always were. A trace
// with a step or units column is a trace "with time": its jobs are replayed as u·c_i + d (a
// per-unit compute c_i and a per-job delay d that does not scale with the job's work, see
// unit_costs). Blank lines are skipped; a trailing '\r' is ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pacer {

// A trace in memory. rows[i] holds worker i's durations in seconds per work unit (> 0, finite),
// ordered by step (rows of one step in file order); steps[i] and units[i], when not empty, are
// aligned with rows[i]. Empty steps mean that each worker's rows are its steps 0, 1, 2, ... in
// order (the classic trace, as pacer profile writes one row per worker and step); empty units
// mean one unit per row.
struct DurationTrace {
  std::string source;  // the file it was read from, for messages
  std::vector<std::vector<double>> rows;
  std::vector<std::vector<int64_t>> steps;
  std::vector<std::vector<double>> units;
  bool has_steps = false;  // the file had a step column
  bool has_units = false;  // the file had a units column

  int workers() const { return static_cast<int>(rows.size()); }
  size_t size() const;  // rows of all workers
  // The step of worker i's row j (j itself when the trace has no steps).
  int64_t step(int worker, size_t row) const;
  // The work units of worker i's row j (1 when the trace has no units).
  double job_units(int worker, size_t row) const;
  // Seconds of worker i's row j: duration × units.
  double job_seconds(int worker, size_t row) const;
  // Whether its jobs replay as u·c_i + d (a step or units column) rather than u·duration.
  bool with_time() const { return has_steps || has_units; }
};

// Parses trace text (the file format above) for at most `max_workers` workers; `source` names it
// in errors ("<source>:<line>: ..."). A bad header (a missing worker or duration column, an
// unknown or repeated column), a bad row (wrong field count, a worker index out of [0,
// max_workers), a duration or units that is not a positive number, a step that is not an integer)
// and a text without a header are Errors naming the source and line. The result has one entry
// per worker index up to the largest seen (some may be empty).
DurationTrace parse_trace(std::string_view text, const std::string& source, int max_workers);

// Reads and parses the trace file at `path`; `what` names it in errors ("timing trace
// (timing.file)", "trace"). A file that cannot be opened is an Error naming it.
DurationTrace read_trace_file(const std::string& path, int max_workers, std::string_view what);

// The trace as a step-ordered grid. steps lists the distinct steps of all rows, ascending (K of
// them). For worker i and grid index k, at[i][k] is the index of the worker's row that stands for
// step steps[k]: its first row with a step >= steps[k], or its last row when it has none that
// late. A worker that has no row at a step (it was busy: asynchronous methods, late workers)
// stands there for its next job, not its latest one: a long job spans many steps, and repeating
// it at each would replay slow jobs in proportion to their length (measured: `pacer validate`'s
// replay of Rescaled ASGD's own log predicted 0.0217 s per update against 0.0119 s measured).
// own[i][k] says whether that row's step is steps[k] itself. Every worker needs at least one row.
struct StepGrid {
  std::vector<int64_t> steps;
  std::vector<std::vector<uint32_t>> at;
  std::vector<std::vector<bool>> own;
  size_t size() const { return steps.size(); }
};
StepGrid step_grid(const DurationTrace& trace);

// Each worker's per-unit compute c_i in the job model duration(u units) = u·c_i + d:
//   * a worker whose rows hold jobs of two or more sizes: the weighted least-squares slope of the
//     median job seconds of each size on the size (weights: the jobs of each size), which is
//     c_i whatever the law of d as long as d's median does not depend on the size; when that
//     slope is not positive, the next rule;
//   * otherwise c_i = the median of the worker's durations per unit (the typical compute; what a
//     job takes above or below it is its delay).
// Every worker needs at least one row.
std::vector<double> unit_costs(const DurationTrace& trace);

// The automatic block length of a (circular) moving-block bootstrap over the trace's steps (Politis
// and White 2004, with the correction of Patton, Politis and White 2009): for each worker the
// optimal block length of its series of per-unit durations in step order, and the largest over
// workers (the longest-lasting slowness must survive the resampling), at least 1 and at most
// max(1, K/3) for K steps. A constant series asks for 1.
struct BlockLength {
  int64_t length = 1;
  int worker = -1;               // the worker whose series asked for it (-1: none varies)
  std::string describe() const;  // "87 steps (Politis–White; worker 3's series)"
};
BlockLength automatic_block_length(const DurationTrace& trace);

}  // namespace pacer
