// Constructors of the timing models, shared by the model files and the config factory.
//
// Parameters arrive validated (factory.cc turns bad config values into Errors naming the key);
// the constructors only PACER_CHECK them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pacer/timing/timing_model.h"

namespace pacer::timing {

// tau[i] > 0 is worker i's time per work unit; tau.size() is the number of workers.
std::unique_ptr<TimingModel> make_fixed(std::vector<double> tau);
std::unique_ptr<TimingModel> make_exponential(std::vector<double> tau);
std::unique_ptr<TimingModel> make_shifted_exponential(std::vector<double> tau, double lambda);
std::unique_ptr<TimingModel> make_pareto(std::vector<double> tau, double alpha);
std::unique_ptr<TimingModel> make_noisy_linear(int workers);

// The largest jitter σ: the compute factor 1 + σZ is redrawn while <= 0, which happens with
// probability Φ(−1/σ) <= Φ(−4) = 3.2e-5 per draw.
inline constexpr double kMaxJitter = 0.25;

// The straggler models' parts (parametric.cc states the whole law).
struct StragglerOptions {
  double q = 0.25;               // per-job straggling probability, used when k == 0
  int k = 0;                     // > 0: exactly k stragglers per step
  double delay_mean = 1.0;       // mean of the exponential extra delay, per job
  uint64_t seed = 0;             // run seed, from which the per-step choices derive
  double jitter = 0;             // σ in [0, kMaxJitter]: compute u·τ_i·(1 + σZ)
  double shock_probability = 0;  // a step is a shock step with this probability
  double shock_share = 0;        // in a shock step, each job is delayed with this probability
};
// persistent_stragglers' Markov chains: one per host (workers with one host value share it, with
// the switching probabilities of the host's first worker); each worker's own slowdown (>= 1).
struct SpellOptions {
  std::vector<double> slowdown, p_slow, p_recover;  // per worker; probabilities per step
  std::vector<int> host;                            // per worker, >= 0
};
// random_stragglers: shock_probability must be 0. common_shock: k must be 0.
std::unique_ptr<TimingModel> make_random_stragglers(std::vector<double> tau,
                                                    const StragglerOptions& options);
std::unique_ptr<TimingModel> make_common_shock(std::vector<double> tau,
                                               const StragglerOptions& options);
// k must be 0; every list of `spells` has one entry per worker.
std::unique_ptr<TimingModel> make_persistent_stragglers(std::vector<double> tau,
                                                        const StragglerOptions& options,
                                                        SpellOptions spells);

// How a trace model replays its rows (timing.replay, timing.block_length, timing.straggler_*; see
// timing_model.h and trace.cc).
enum class Replay { kOrder, kBootstrap, kSequential, kBlock };
struct TraceOptions {
  Replay replay = Replay::kOrder;
  double slowdown = 1.0;   // > 0: a row d > M (pooled median) becomes M + slowdown·(d − M)
  double frequency = 1.0;  // > 0; != 1 only with bootstrap: straggler rows drawn this much more
  double threshold = 1.5;  // > 1: a row is a straggler row when d > threshold·M (before slowdown)
  int64_t block_length = 0;  // block: steps per block, 0 = automatic (automatic_block_length)
  std::string block_note;    // block: how the length was chosen, for describe() (set by make_trace)
  uint64_t seed = 0;         // block: the run seed, from which the block starts derive
};

// Reads the trace at `path` (timing/trace.h: read_trace_file) for a run of `workers` workers,
// every one of which needs at least one row; bad files are Errors naming path and line.
std::unique_ptr<TimingModel> make_trace(const std::string& path, int workers,
                                        const TraceOptions& options = {});

}  // namespace pacer::timing
