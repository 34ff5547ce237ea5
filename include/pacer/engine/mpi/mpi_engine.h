// The MPI runtime as an engine of the registry (engine/registry.h): engine.name = "mpi".
#pragma once

#include <memory>

#include "pacer/core/config.h"
#include "pacer/engine/engine.h"
#include "pacer/engine/mpi/mpi_cluster.h"

namespace pacer::mpi {

// Reads the MPI engine's keys (read_mpi_options) and refuses the simulator-only [faults] table:
// on MPI failures are real (kill a rank). Starting a run requires this process to be rank 0 of an
// MPI job of workers + 1 ranks whose other ranks run serve_worker_ranks; MPI is started on first
// use. start() sends the resolved configuration (its source name on the first line, then the
// TOML) to the worker ranks, which build the same problem and method from it. Its runs can be
// checkpointed and resumed (EngineRun::checkpoint): the drain, what is saved and what a resumed
// run does are described in mpi_cluster.h; can_checkpoint_now() is true only inside the
// checkpoint hook's write() that the engine calls itself, so an interrupted run resumes from
// its last periodic checkpoint.
std::unique_ptr<Engine> make_mpi_engine(const Config& config, int workers);

// Starts MPI in this process (engine/registry.h, start_job_processes), waiting at most
// engine.startup_timeout_s of `config` (the default when null or unreadable) for every rank.
std::unique_ptr<JobProcesses> start_mpi_job(const Config* config);

// A worker rank's whole life: serves rank 0's runs (each worker half built with `build` from the
// configuration rank 0 sent) until rank 0 ends the session; returns the exit status rank 0 chose.
int serve_worker_ranks(const WorkerProcessBuilder& build);

}  // namespace pacer::mpi
