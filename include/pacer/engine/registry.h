// The engines pacer knows, by name (engine.name). The table is in src/engine/registry.cc, the one
// place that knows which engines this build has.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/engine/engine.h"

namespace pacer {

// Reads engine.name (default "sim") and builds that engine, which reads and checks its own
// engine.* keys (and refuses keys of features it does not have, such as [faults] on MPI). An
// unknown name, or one this build lacks (MPI without Open MPI), is an Error naming engine.name.
std::unique_ptr<Engine> make_engine(const Config& config, int workers);

// The names of the engines this build has, in table order.
std::vector<std::string> engine_names();

// Runs this process as a worker process of the multi-process engine `name` ("mpi"): serves the
// runs rank 0 starts, building each worker half with `build`, until rank 0 says the job ends;
// returns the process's exit status. An Error for an engine without worker processes, or one
// this build lacks.
int serve_worker_process(const std::string& name, const WorkerProcessBuilder& build);

}  // namespace pacer
