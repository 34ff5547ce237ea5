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
  // sqrt(2(i + 1)/π); trace the mean of worker i's rows. random_stragglers has no per-unit mean
  // (its delay is per job, whatever u): it returns the mean of a ONE-unit job, τ_i + p·m with
  // p = q (or k/n), and a job of u units has mean u·τ_i + p·m.
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
//   file    (trace, required: CSV "worker,duration" of seconds per work unit; worker i replays
//             its own rows in order, cycling, one row per job; the path is used as given)
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
