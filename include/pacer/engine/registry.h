// The engines pacer knows, by name (engine.name): what each is, how its processes are organised,
// and how to build one. The table is in src/engine/registry.cc, the one place that knows which
// engines this build has; nothing above the engine layer names an engine.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/engine/engine.h"

namespace pacer {

// One engine as the commands see it.
struct EngineInfo {
  std::string name;
  bool built = false;   // this build has it
  std::string missing;  // why it does not (built == false)
  // Its clock is simulated: runs are deterministic and many of them may run side by side on one
  // machine, as `pacer sweep` and `pacer advise` do; otherwise its clock is the wall clock.
  bool simulated = false;
  // A launcher (mpirun) starts the job's processes: rank 0 runs the command, the others serve
  // its runs (JobProcesses). Otherwise the workers live in this process.
  bool multi_process = false;
};

// Every engine pacer knows, built or not, in table order; the first is engine.name's default.
const std::vector<EngineInfo>& engines();

// The engine named `name`, or null when pacer knows none of that name.
const EngineInfo* find_engine(const std::string& name);

// engine.name's default: the first engine of the table.
const std::string& default_engine();

// Reads engine.name (default default_engine()) and builds that engine, which reads and checks its
// own engine.* keys (and refuses keys of features it does not have, such as [faults] on MPI). An
// unknown name, or one this build lacks (MPI without Open MPI), is an Error naming engine.name.
std::unique_ptr<Engine> make_engine(const Config& config, int workers);

// Starts this process's part of a job of engine `name` (for MPI: MPI_Init, waiting at most
// engine.startup_timeout_s of `config` for every rank, or the default when `config` is null).
// Returns null for an engine whose workers live in this process, or one pacer does not know (the
// run reports that). Throws an Error when the runtime cannot start or the build lacks the engine.
std::unique_ptr<JobProcesses> start_job_processes(const std::string& name, const Config* config);

}  // namespace pacer
