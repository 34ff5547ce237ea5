// The simulator as an engine of the registry (engine/registry.h): engine.name = "sim".
#pragma once

#include <memory>

#include "pacer/core/config.h"
#include "pacer/engine/engine.h"

namespace pacer {

// Reads the simulator's keys: the communication model (comm.*, timing/timing_model.h) and the
// failures to inject ([faults], FaultPlan in simulator.h). The run's worker halves live in this
// process; max_time stops the simulated clock.
std::unique_ptr<Engine> make_sim_engine(const Config& config, int workers);

}  // namespace pacer
