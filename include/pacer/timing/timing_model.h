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
  // Expected duration of one work unit on `worker` (τ_i), if the model defines finite per-worker
  // means; nullopt otherwise (e.g. trace, pareto with alpha <= 1).
  virtual std::optional<double> mean_unit_time(int worker) const = 0;
};

// Cost of one message: latency + bytes / bandwidth. Both 0 (the default) means free messages.
struct CommModel {
  double latency = 0;    // seconds
  double bandwidth = 0;  // bytes per second; 0 = infinite
  double time(double bytes) const { return latency + (bandwidth > 0 ? bytes / bandwidth : 0.0); }
};

// Builds the model of the [timing] table for n workers. Keys (under "timing."):
//   model   = "fixed" | "exponential" | "shifted_exponential" | "random_stragglers" | "pareto"
//             | "noisy_linear" | "trace"
//   tau     = [τ_0, ..., τ_{n-1}] or a number (same for all), default 1.0
//   profile = "uniform" (default) | "harmonic" (τ ∈ {1,1,2,2,4,4,...} times `tau` scalar)
//   lambda  (shifted_exponential), q, k, delay_mean (random_stragglers: per job with
//   probability q, or exactly k workers per step when k > 0), alpha (pareto), file (trace)
// `seed` is the run seed (for per-step shared choices). Bad values are Errors naming the key.
std::unique_ptr<TimingModel> make_timing_model(const Config& config, int workers, uint64_t seed);
// Reads timing.latency and timing.bandwidth.
CommModel make_comm_model(const Config& config);

}  // namespace pacer
