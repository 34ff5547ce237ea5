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

struct StragglerOptions {
  double q = 0.25;          // per-job straggling probability, used when k == 0
  int k = 0;                // > 0: exactly k stragglers per step
  double delay_mean = 1.0;  // mean of the exponential extra delay, per job
  uint64_t seed = 0;        // run seed, from which the per-step straggler sets derive
};
std::unique_ptr<TimingModel> make_random_stragglers(std::vector<double> tau,
                                                    const StragglerOptions& options);

// How a trace model replays its rows (timing.replay, timing.straggler_*; see timing_model.h).
struct TraceOptions {
  bool bootstrap = false;  // false: each worker's rows in file order, cycling; true: iid draws
  double slowdown = 1.0;   // > 0: a row d > M (pooled median) becomes M + slowdown·(d − M)
  double frequency = 1.0;  // > 0; != 1 only with bootstrap: straggler rows drawn this much more
  double threshold = 1.5;  // > 1: a row is a straggler row when d > threshold·M (before slowdown)
};

// Reads the CSV trace at `path` (read_trace_rows) for a run of `workers` workers, every one of
// which needs at least one row; bad files are Errors naming path and line.
std::unique_ptr<TimingModel> make_trace(const std::string& path, int workers,
                                        const TraceOptions& options = {});

// The rows of the CSV trace at `path`: the header "worker,duration", then one row per job, a
// worker index in [0, workers) and the job's duration in seconds per work unit (> 0). Returns each
// worker's durations in file order; the result has one entry per index up to the largest seen
// (some may be empty). `what` names the file in errors ("timing trace (timing.file)", "trace"); a
// file that cannot be opened, has no header, or a bad row is an Error naming the path and line.
std::vector<std::vector<double>> read_trace_rows(const std::string& path, int workers,
                                                 std::string_view what);

}  // namespace pacer::timing
