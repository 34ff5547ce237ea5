// Replayed compute times: timing.model = "trace".
//
// The file is a trace (timing/trace.h): header "worker,duration", or with a step and/or units
// column. Preparing the rows, in this order (TraceOptions; the keys are described in
// timing_model.h):
//   1. M = the median of all rows of all workers pooled (an even count takes the midpoint of
//      the two middle rows).
//   2. Classify (only when the straggler frequency is != 1): a row d is a straggler row when
//      d > threshold·M, on the rows as read.
//   3. Transform (only when the slowdown is != 1): every row d > M becomes M + slowdown·(d − M).
//      Rows <= M are kept, so M is also the median of the transformed rows.
//   4. A trace with time (a step or units column) splits each row into the worker's per-unit
//      compute c_i (unit_costs of the transformed rows) and the job's delay d = its seconds −
//      units·c_i. A replayed job of u units then takes max(u·c_i + d, u·min(c_i, x_min,i))
//      (x_min,i the worker's smallest row per unit: a negative delay, a row below the typical
//      compute, never makes a job faster per unit than the worker ever was, nor zero).
//      A classic trace's row replays as u·d: everything scales with the job's work.
// Choosing the row of a job of worker i tagged `step`:
//   order       the worker's rows in order (file order; step order with a step column),
//               cycling, one row per job.
//   bootstrap   a uniform draw of the worker's rows from its Rng (reweighted between the two
//               groups of step 2 when the frequency is != 1).
//   sequential  the row standing for grid step k = step mod K (StepGrid, K steps): the trace as
//               recorded, wrapping; every worker at one step reads the same recorded step (a
//               worker with no row there, busy with a longer job, its next row: StepGrid).
//   block       circular moving blocks of L grid steps (Politis and Romano's circular block
//               bootstrap): step t lies in block b = ⌊t / L⌋ at offset t − b·L and replays grid
//               step (s_b + t − b·L) mod K, with s_b uniform on [0, K) drawn from
//               Rng(seed, "trace_blocks", b), the same for every worker. So it keeps which workers
//               were slow together and for how long (up to L steps); wrapping around the end makes
//               every recorded step equally likely (a plain moving-block bootstrap replays the
//               first and last L steps less often). It draws nothing from the worker's Rng.

#include "pacer/timing/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>

#include "models.h"
#include "pacer/core/error.h"
#include "pacer/core/stats.h"

namespace pacer::timing {
namespace {

// The median of all rows pooled; the midpoint of the two middle values for an even count.
double pooled_median(const std::vector<std::vector<double>>& rows) {
  std::vector<double> all;
  for (const std::vector<double>& r : rows) all.insert(all.end(), r.begin(), r.end());
  PACER_CHECK(!all.empty());
  return median(std::move(all));
}

// ⌊a / b⌋ and a − b·⌊a / b⌋ for b > 0, also for negative a.
int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0)); }
int64_t floor_mod(int64_t a, int64_t b) { return a - b * floor_div(a, b); }

// One worker's rows, ready to replay: after the slowdown, split into compute and delay for a
// trace with time, and grouped for a reweighted bootstrap.
struct WorkerRows {
  std::vector<double> rows;          // every row, transformed, in order (seconds per unit)
  std::vector<double> delays;        // with time: each row's seconds − units·cost
  double cost = 0;                   // with time: c_i, the per-unit compute
  double fastest = 0;                // the smallest transformed row
  std::vector<size_t> stragglers;    // indices of the straggler rows (reweighted only)
  std::vector<size_t> others;        // indices of the other rows (reweighted only)
  double straggler_probability = 0;  // min(1, frequency·p_i), the chance a draw is a straggler
  // Whether draws choose a group first: a frequency != 1 and both groups non-empty.
  bool reweighted() const { return !stragglers.empty() && !others.empty(); }
  // Seconds of a job of `units` that replays row r.
  double job(size_t r, double units) const {
    if (delays.empty()) return units * rows[r];
    return std::max(units * cost + delays[r], units * std::min(cost, fastest));
  }
};

// Steps 2 and 3 for one worker's rows as read, given the pooled median M.
WorkerRows prepare_rows(const std::vector<double>& raw, double median,
                        const TraceOptions& options) {
  WorkerRows w;
  for (size_t r = 0; r < raw.size(); ++r) {
    const double d = raw[r];
    w.rows.push_back(options.slowdown != 1 && d > median ? median + options.slowdown * (d - median)
                                                         : d);
    if (options.frequency == 1) continue;
    (d > options.threshold * median ? w.stragglers : w.others).push_back(r);
  }
  w.fastest = *std::min_element(w.rows.begin(), w.rows.end());
  const double p = static_cast<double>(w.stragglers.size()) / static_cast<double>(raw.size());
  w.straggler_probability = std::min(1.0, options.frequency * p);
  if (!w.reweighted()) {
    w.stragglers.clear();
    w.others.clear();
  }
  return w;
}

// Step 4: each worker's cost and delays, from the transformed rows.
void split_delays(const DurationTrace& trace, std::vector<WorkerRows>& workers) {
  DurationTrace transformed = trace;
  for (size_t i = 0; i < workers.size(); ++i) transformed.rows[i] = workers[i].rows;
  const std::vector<double> costs = unit_costs(transformed);
  for (size_t i = 0; i < workers.size(); ++i) {
    WorkerRows& w = workers[i];
    w.cost = costs[i];
    for (size_t r = 0; r < w.rows.size(); ++r) {
      const double units = trace.job_units(static_cast<int>(i), r);
      w.delays.push_back(units * w.rows[r] - units * w.cost);
    }
  }
}

class TraceModel : public TimingModel {
 public:
  TraceModel(std::vector<WorkerRows> workers, StepGrid grid, TraceOptions options)
      : workers_(std::move(workers)),
        grid_(std::move(grid)),
        options_(options),
        next_(workers_.size(), 0) {
    if (options_.replay == Replay::kBlock) {
      const int64_t steps = static_cast<int64_t>(grid_.size());
      options_.block_length = std::clamp<int64_t>(options_.block_length, 1, steps);
    }
  }
  std::string name() const override { return "trace"; }
  int num_workers() const override { return static_cast<int>(workers_.size()); }

  // Base 0, extra the job's seconds. Order consumes the worker's next row; bootstrap draws from
  // `rng` (one uniform_int; reweighted, a uniform() first); sequential and block draw nothing.
  Duration compute_time(int worker, double units, int64_t step, Rng& rng) const override {
    PACER_CHECK(worker >= 0 && worker < num_workers());
    PACER_CHECK(units > 0);
    const WorkerRows& w = workers_[worker];
    return {0.0, w.job(row_of(worker, step, rng), units)};
  }

  // The replay positions (order mode; they stay 0 in the others, whose state is the worker's
  // Rng, which its owner checkpoints, or none: sequential and block are pure functions of the
  // seed and the step).
  void checkpoint(StateArchive& a) override {
    a.section("trace_model");
    a.expect(static_cast<int64_t>(workers_.size()), "workers");
    a.io(next_);
    for (size_t i = 0; i < next_.size(); ++i) {
      if (next_[i] >= workers_[i].rows.size())
        a.mismatch("a replay position past the trace's rows");
    }
  }

  // Exactly the expectation of a one-unit job: over the rows (order, bootstrap; reweighted,
  // q·mean over straggler rows + (1 − q)·mean over the others), or over the grid's steps
  // (sequential, block: every step is equally likely in the long run).
  std::optional<double> mean_unit_time(int worker) const override {
    const WorkerRows& w = workers_[worker];
    auto mean_over = [&](const auto& indices) {
      double sum = 0;
      for (const auto r : indices) sum += w.job(r, 1.0);
      return sum / static_cast<double>(indices.size());
    };
    if (options_.replay == Replay::kBlock || options_.replay == Replay::kSequential) {
      return mean_over(grid_.at[worker]);
    }
    if (!w.reweighted()) {
      std::vector<size_t> all(w.rows.size());
      std::iota(all.begin(), all.end(), 0);
      return mean_over(all);
    }
    const double q = w.straggler_probability;
    return q * mean_over(w.stragglers) + (1 - q) * mean_over(w.others);
  }

  std::string describe() const override {
    if (options_.replay != Replay::kBlock) return "";
    return fmt::format("block replay of the trace's {} steps: circular moving blocks of {}",
                       grid_.size(), block_note());
  }

 private:
  size_t row_of(int worker, int64_t step, Rng& rng) const {
    const WorkerRows& w = workers_[worker];
    switch (options_.replay) {
      case Replay::kOrder: {
        size_t& next = next_[worker];
        const size_t row = next;
        next = (next + 1) % w.rows.size();
        return row;
      }
      case Replay::kBootstrap:
        if (!w.reweighted()) return rng.uniform_int(w.rows.size());
        return pick(rng.uniform() < w.straggler_probability ? w.stragglers : w.others, rng);
      case Replay::kSequential:
        return grid_.at[worker][floor_mod(step, static_cast<int64_t>(grid_.size()))];
      case Replay::kBlock:
        return grid_.at[worker][block_step(step)];
    }
    return 0;
  }
  static size_t pick(const std::vector<size_t>& indices, Rng& rng) {
    return indices[rng.uniform_int(indices.size())];
  }
  size_t block_step(int64_t step) const {
    const int64_t length = options_.block_length;
    const int64_t block = floor_div(step, length);
    Rng starts(options_.seed, "trace_blocks", static_cast<uint64_t>(block));
    const uint64_t start = starts.uniform_int(grid_.size());
    return static_cast<size_t>((start + static_cast<uint64_t>(step - block * length)) %
                               grid_.size());
  }
  std::string block_note() const {
    return options_.block_note.empty()
               ? fmt::format("{} steps (timing.block_length)", options_.block_length)
               : options_.block_note;
  }

  std::vector<WorkerRows> workers_;
  StepGrid grid_;
  TraceOptions options_;
  // Replay position of each worker (the row its next job consumes; order mode only).
  // compute_time advances it, so one TraceModel belongs to one run and is not safe to share
  // between threads.
  mutable std::vector<size_t> next_;
};

}  // namespace

std::unique_ptr<TimingModel> make_trace(const std::string& path, int workers,
                                        const TraceOptions& options) {
  PACER_CHECK(options.slowdown > 0 && options.frequency > 0 && options.threshold > 1);
  PACER_CHECK(options.replay == Replay::kBootstrap || options.frequency == 1);
  DurationTrace trace = read_trace_file(path, workers, "timing trace (timing.file)");
  if (trace.workers() < workers) {
    fail(
        "{}: no rows for worker {} (every worker 0..{} needs at least one; the run has {} "
        "workers)",
        path, trace.workers(), workers - 1, workers);
  }
  for (int i = 0; i < workers; ++i) {
    if (trace.rows[i].empty()) {
      fail(
          "{}: no rows for worker {} (every worker 0..{} needs at least one; the run has {} "
          "workers)",
          path, i, workers - 1, workers);
    }
  }
  const double median = pooled_median(trace.rows);
  std::vector<WorkerRows> prepared;
  for (const std::vector<double>& raw : trace.rows) {
    prepared.push_back(prepare_rows(raw, median, options));
  }
  if (trace.with_time()) split_delays(trace, prepared);
  TraceOptions resolved = options;
  if (resolved.replay == Replay::kBlock && resolved.block_length == 0) {
    const BlockLength automatic = automatic_block_length(trace);
    resolved.block_length = automatic.length;
    resolved.block_note = automatic.describe();
  }
  return std::make_unique<TraceModel>(std::move(prepared), step_grid(trace), resolved);
}

}  // namespace pacer::timing
