// The simulator as an engine of the registry (engine/registry.h): engine.name = "sim".
#pragma once

#include <memory>

#include "pacer/core/config.h"
#include "pacer/engine/engine.h"

namespace pacer {

// Reads the simulator's keys: the communication model (comm.*, timing/timing_model.h), the
// failures to inject ([faults], FaultPlan in simulator.h), engine.threads (core/compute_pool.h:
// the threads that compute the workers' jobs, at most one per worker) and engine.compute_ahead
// ("auto" or "always", Simulator::ComputeAhead; default: the environment variable
// PACER_COMPUTE_AHEAD, else "auto"). Neither of the last two changes what a run computes. The
// run's worker halves live in this process; max_time stops the simulated clock.
std::unique_ptr<Engine> make_sim_engine(const Config& config, int workers);

}  // namespace pacer
