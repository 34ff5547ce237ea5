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
  // sqrt(2(i + 1)/π); trace the expectation of a one-unit job (the mean of worker i's rows unless
  // the trace keys reweight or transform them). The straggler models have no per-unit mean (their
  // delay is per job, whatever u): they return the mean of a ONE-unit job (parametric.cc), e.g.
  // random_stragglers τ_i + p·m with p = q (or k/n), and a job of u units has mean u·τ_i + p·m; so
  // does a trace with time (u·c_i + d).
  virtual std::optional<double> mean_unit_time(int worker) const = 0;
  // The model's own state, for checkpoints (core/state.h): none for the immutable models, each
  // worker's replay position for trace.
  virtual void checkpoint(StateArchive& /*a*/) {}
  // A sentence on a choice the model made from its data, for the run's summary ("" for none):
  // trace with replay = "block" states its block length and how it was chosen.
  virtual std::string describe() const { return ""; }
};

// Cost of one message: latency + bytes / bandwidth. Both 0 (the default) means free messages.
struct CommModel {
  double latency = 0;    // seconds
  double bandwidth = 0;  // bytes per second; 0 = infinite
  double time(double bytes) const { return latency + (bandwidth > 0 ? bytes / bandwidth : 0.0); }
};

// Builds the model of the [timing] table for n = `workers` (> 0) workers. Keys (under "timing."):
//   model   = "fixed" (default) | "exponential" | "shifted_exponential" | "random_stragglers"
//             | "common_shock" | "persistent_stragglers" | "pareto" | "noisy_linear" | "trace"
//   tau     = [τ_0, ..., τ_{n-1}] or a number (same for all), > 0, default 1.0
//   profile = "uniform" (default) | "harmonic" (τ_i = tau·2^floor(i/2): {1,1,2,2,4,4,...}·tau;
//             needs a number, not a list)
//   lambda  > 0, default 1 (shifted_exponential: u·τ_i + Exp(mean u·τ_i·λ))
//   alpha   > 0, default 2 (pareto: u·τ_i·P, P ~ Pareto(α) with scale 1)
// The straggler models (parametric.cc states their law in full): a job of u units takes
// u·τ_i·(1 + σZ), times the worker's slowdown while its host is slow (persistent_stragglers),
// plus an Exp(mean delay_mean) delay that does NOT scale with u when the job straggles.
//   random_stragglers: k in [0, n], default 0; q in [0, 1], default 0.25 (read only when k = 0);
//             delay_mean >= 0, default 1; jitter (σ) in [0, 0.25], default 0. A job straggles
//             with probability q, or when k > 0 on the jobs of exactly k workers per step, the set
//             a pure function of (seed, step).
//   common_shock: q (default 0), delay_mean (default 1), jitter (default 0) as above, and
//             shock_probability in [0, 1] (default 0.1): each step is a shock step with this
//             probability, a pure function of (seed, step); shock_share in [0, 1] (default 0.5):
//             in a shock step each job straggles with this probability (many workers at once),
//             otherwise with probability q.
//   persistent_stragglers: per worker a two-state Markov chain over steps, normal or slow:
//             slowdown (>= 1, default 3), p_slow (probability per step that a normal chain turns
//             slow, default 0.01) and p_recover (that a slow one recovers, > 0, default 0.1: slow
//             spells last 1/p_recover steps on average), each a number or a list of n; host
//             (a list of n integers >= 0, default every worker its own): the workers of one host
//             share one chain, driven by the probabilities of its first worker, each keeping its
//             own slowdown. The chain starts from its stationary law (slow with probability
//             p_slow / (p_slow + p_recover)). jitter as above (default 0); q (default 0),
//             delay_mean, shock_probability (default 0) and shock_share add per-job delays as in
//             common_shock. The step of a job is its tag (a synchronous run's step; an
//             asynchronous run's update count).
//   file    (trace, required: a trace file, timing/trace.h: "worker,duration" in seconds per work
//             unit, or with step and units columns; the path is used as given)
//   The trace model reads more keys. Let M be the median of all rows of all workers pooled
//   (for an even count, the mean of the two middle rows), taken on the rows as read.
//   replay  = "order" (default) | "bootstrap" | "sequential" | "block". With "order", worker i
//             replays its own rows in order, one row per job, and starts again from its first
//             row when they run out; it draws nothing from the Rng. With "bootstrap", each job of
//             worker i draws one of worker i's own rows uniformly at random (with replacement)
//             from the Rng passed to compute_time, so the same seed gives the same draws. With
//             "sequential", a job tagged t replays the trace's step t mod K (K steps, StepGrid:
//             a classic trace's k-th row of each worker is its step k), the same recorded step for
//             every worker (a worker with no row at that step: its next row). With "block",
//             circular moving blocks of block_length steps, each starting at a recorded step drawn
//             from (seed, block) and wrapping around the end: it keeps which workers were slow
//             together and for how long, and replays every recorded step equally often. Sequential
//             and block draw nothing from the Rng.
//   block_length  an integer >= 1, read only with replay = "block"; unset: the automatic choice
//             of timing/trace.h (automatic_block_length), stated in summary.json (timing_note).
//   A trace with a step or units column replays a job of u units as u·c_i + d (c_i the worker's
//   per-unit compute, timing/trace.h: unit_costs; d the chosen row's seconds minus its units·c_i),
//   never below u·min(c_i, the worker's smallest row), so delays do not scale with the work; a
//   classic "worker,duration" trace replays u·row.
//   straggler_slowdown > 0, default 1. Every row d > M becomes M + straggler_slowdown·(d − M)
//             and rows <= M are unchanged, so 2 doubles every excess over the typical duration
//             (a persistently slow worker's as well as a transient straggler's). It applies in
//             every replay mode; at 1 the rows are used exactly as read.
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
//   expectation of a one-unit job under these settings. A checkpoint holds each worker's replay
//   position in every mode; only order moves it (bootstrap's state is the Rng's; sequential and
//   block are pure functions of the seed and the step).
// noisy_linear (u·(i + 1 + |N(0, i + 1)|), variance i + 1) and trace read no tau or profile.
// Only the keys the chosen model uses are read, so Config::reject_unread_keys() reports the
// others. `seed` is the run seed (for per-step shared choices). Bad values and bad trace files
// are Errors naming the key or the file (and line).
//
// Models other than trace are immutable and may be shared (persistent_stragglers caches its
// chains behind a mutex). A trace model keeps each worker's replay position (advanced by
// compute_time): it belongs to one run and is not thread-safe.
std::unique_ptr<TimingModel> make_timing_model(const Config& config, int workers, uint64_t seed);
// Reads timing.latency (seconds, >= 0, default 0) and timing.bandwidth (bytes per second, >= 0,
// default 0 = infinite).
CommModel make_comm_model(const Config& config);

}  // namespace pacer
