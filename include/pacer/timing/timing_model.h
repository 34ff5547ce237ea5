// Compute-time models (DESIGN.md section 4).
//
// A TimingModel says how long a job of `units` work units takes on worker i. It draws only from
// the Rng the caller passes, which is worker i's own "duration" stream, so the same seed gives the
// same durations whatever method runs. Models that need a choice shared across workers (exactly
// k stragglers per step) derive it from (seed, step) alone, never from call order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/rng.h"
#include "pacer/core/state.h"

namespace pacer {

// A job's duration split in two: `base` is the deterministic part (u·τ_i where the model has
// one), `extra` the random delay on top. The MPI engine's `inject = delay` sleeps `extra`;
// `inject = pace` pads the job to total().
struct Duration {
  double base = 0;
  double extra = 0;
  double total() const { return base + extra; }
};

class TimingModel {
 public:
  virtual ~TimingModel() = default;
  virtual std::string name() const = 0;
  virtual int num_workers() const = 0;
  // Duration of a job of `units` (> 0) work units on `worker`, for the job tagged `step`.
  virtual Duration compute_time(int worker, double units, int64_t step, Rng& rng) const = 0;
  // Expected duration of one work unit on `worker`, if the model defines a finite per-worker
  // mean; nullopt otherwise (pareto with alpha <= 1). Per model: fixed and exponential τ_i;
  // shifted_exponential τ_i·(1 + λ); pareto τ_i·α/(α − 1); noisy_linear (i + 1) +
  // sqrt(2(i + 1)/π); trace the expectation of a draw (the mean of worker i's rows unless the trace
  // keys reweight or transform them). random_stragglers has no per-unit mean (its delay is per job,
  // whatever u): it returns the mean of a ONE-unit job, τ_i + p·m with p = q (or k/n), and a job of
  // u units has mean u·τ_i + p·m.
  virtual std::optional<double> mean_unit_time(int worker) const = 0;
  // The model's own state, for checkpoints (core/state.h): none for the immutable models, each
  // worker's replay position for trace.
  virtual void checkpoint(StateArchive& /*a*/) {}
};

// Cost of one message: latency + bytes / bandwidth. Both 0 (the default) means free messages.
struct CommModel {
  double latency = 0;    // seconds
  double bandwidth = 0;  // bytes per second; 0 = infinite
  double time(double bytes) const { return latency + (bandwidth > 0 ? bytes / bandwidth : 0.0); }
};

// Builds the model of the [timing] table for n = `workers` (> 0) workers. Keys (under "timing."):
//   model   = "fixed" (default) | "exponential" | "shifted_exponential" | "random_stragglers"
//             | "pareto" | "noisy_linear" | "trace"
//   tau     = [τ_0, ..., τ_{n-1}] or a number (same for all), > 0, default 1.0
//   profile = "uniform" (default) | "harmonic" (τ_i = tau·2^floor(i/2): {1,1,2,2,4,4,...}·tau;
//             needs a number, not a list)
//   lambda  > 0, default 1 (shifted_exponential: u·τ_i + Exp(mean u·τ_i·λ))
//   k       in [0, n], default 0; q in [0, 1], default 0.25 (read only when k = 0);
//   delay_mean >= 0, default 1 (random_stragglers: u·τ_i, plus an Exp(mean delay_mean) delay
//             that does NOT scale with u, on each job with probability q, or when k > 0 on the
//             jobs of exactly k workers per step, the set a pure function of (seed, step))
//   alpha   > 0, default 2 (pareto: u·τ_i·P, P ~ Pareto(α) with scale 1)
//   file    (trace, required: CSV "worker,duration" of seconds per work unit, one row per
//             recorded job; the path is used as given)
//   The trace model reads four more keys. Let M be the median of all rows of all workers pooled
//   (for an even count, the mean of the two middle rows), taken on the rows as read.
//   replay  = "order" (default) | "bootstrap". With "order", worker i replays its own rows in
//             file order, one row per job, and starts again from its first row when they run
//             out; it draws nothing from the Rng. With "bootstrap", each job of worker i draws
//             one of worker i's own rows uniformly at random (with replacement) from the Rng
//             passed to compute_time, so the same seed gives the same draws.
//   straggler_slowdown > 0, default 1. Every row d > M becomes M + straggler_slowdown·(d − M)
//             and rows <= M are unchanged, so 2 doubles every excess over the typical duration
//             (a persistently slow worker's as well as a transient straggler's). It applies in
//             both replay modes; at 1 the rows are used exactly as read.
//   straggler_frequency > 0, default 1; a value != 1 needs replay = "bootstrap". A row is a
//             straggler row when d > straggler_threshold·M. For a worker whose fraction p_i of
//             straggler rows is strictly between 0 and 1, a draw picks a straggler row with
//             probability min(1, straggler_frequency·p_i) and otherwise one of its other rows,
//             uniformly within each group. A worker with p_i = 0 or p_i = 1 is unchanged: the
//             frequency changes how often a worker straggles, not which workers are slow.
//   straggler_threshold > 1, default 1.5. It is read only when straggler_frequency != 1 (and
//             is reported as an unknown key otherwise).
//   The rows are classified before the slowdown transforms them: straggler rows are those of the
//   trace as read, and a draw returns the transformed row. mean_unit_time is the exact
//   expectation of a draw under these settings. A checkpoint holds each worker's replay
//   position in both modes; bootstrap has no position (it stays 0), its state being the Rng's.
// noisy_linear (u·(i + 1 + |N(0, i + 1)|), variance i + 1) and trace read no tau or profile.
// Only the keys the chosen model uses are read, so Config::reject_unread_keys() reports the
// others. `seed` is the run seed (for per-step shared choices). Bad values and bad trace files
// are Errors naming the key or the file (and line).
//
// Models other than trace are immutable and may be shared. A trace model keeps each worker's
// replay position (advanced by compute_time): it belongs to one run and is not thread-safe.
std::unique_ptr<TimingModel> make_timing_model(const Config& config, int workers, uint64_t seed);
// Reads timing.latency (seconds, >= 0, default 0) and timing.bandwidth (bytes per second, >= 0,
// default 0 = infinite).
CommModel make_comm_model(const Config& config);

}  // namespace pacer
