// What every engine offers a run (DESIGN.md sections 1 and 5), whichever it is: the simulator in
// this process, the MPI runtime across processes, or one still to be written.
//
// An engine is chosen by engine.name from the table in src/engine/registry.cc. Its lifecycle is
//   1. Engine (make_engine, registry.h): engine.name and the engine's own engine.* keys are read
//      and checked while the run's configuration is validated, before anything starts;
//   2. EngineRun (Engine::start): the engine's part of one run is set up (for MPI: the worker
//      ranks receive the configuration and build their halves), then run() drives the master to
//      its end, stop() ends whatever still works, and stats() describes what happened.
// Everything else of a run (building the problem and the method, recording, writing outputs) is
// the experiment layer's and the same for every engine. Adding an engine takes one folder under
// src/engine/ with a factory, and one entry in the registry's table.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "pacer/core/config.h"
#include "pacer/method/method.h"
#include "pacer/method/protocol.h"
#include "pacer/timing/timing_model.h"

namespace pacer {

// What an engine calls to checkpoint a run (EngineRun::set_checkpoint_hook).
class CheckpointHook {
 public:
  virtual ~CheckpointHook() = default;
  // Whether a checkpoint is due (cheap: called at every quiet point). Must not change the run.
  virtual bool due() = 0;
  // Writes a checkpoint of the whole run, the engine's state included (EngineRun::checkpoint).
  // Must not change the run. Throws Error when it cannot be written.
  virtual void write() = 0;
};

// How a run ended, for EngineRun::stop.
enum class EndKind { kOk, kError, kInterrupted };

// What an engine needs to run one method. Every reference outlives the EngineRun.
struct EngineInputs {
  const Config& config;       // the resolved run configuration
  const TimingModel& timing;  // compute times (simulated, or injected on MPI)
  const Method& method;       // makes the worker halves
  int workers = 0;
  int64_t dim = 0;  // model parameters
  uint64_t seed = 0;
  double max_time = 0;  // seconds of the engine's clock; 0 = no limit
};

// One engine's part of one run.
class EngineRun {
 public:
  virtual ~EngineRun() = default;
  // Runs `master` until it finishes or the engine ends the run; returns true if it was
  // interrupted (SIGINT/SIGTERM). Call once.
  virtual bool run(Master& master) = 0;
  // Stops the workers after run() (or after an error). Idempotent.
  virtual void stop(EndKind end) = 0;
  // The engine's clock at the end of the run.
  virtual double end_time() const = 0;
  // Whether the run's clock is a wall clock (then the master's evaluations are taken out of it).
  virtual bool wall_clock() const { return false; }
  // Takes `seconds` of wall time that the master spent evaluating out of the run's clock.
  virtual void exclude_time(double /*seconds*/) {}
  // summary.json's engine_stats.
  virtual void stats(nlohmann::json& out) const = 0;

  // Checkpoints (run/checkpoint.h). With a hook set, run() asks hook->due() at every
  // quiet point and, when it is, calls hook->write() at a quiet point soon after (at once on the
  // simulator; on MPI once the jobs in flight have come back, see mpi_engine.h). A quiet point is
  // a moment at which the whole run's state is consistent: between two events, outside every
  // master callback. `hook` outlives run(); null = no checkpoints.
  virtual void set_checkpoint_hook(CheckpointHook* /*hook*/) {}
  // Visits the engine's state and its worker halves' (core/state.h), from hook->write() or, to
  // load, before run(): after loading, run() continues the saved run without starting the master
  // again. An engine that cannot be checkpointed keeps this default, which throws Error.
  virtual void checkpoint(StateArchive& /*a*/) { refuse_checkpoint("this engine's run"); }
  // Whether checkpoint() can save the run now, after run() returned (an interrupted run's last
  // checkpoint): true on the simulator; an engine whose workers may be inside a job says false.
  virtual bool can_checkpoint_now() const { return true; }
};

// An engine with its keys read and checked.
class Engine {
 public:
  virtual ~Engine() = default;
  // Its registry name (engine.name; summary.json's "engine").
  virtual std::string name() const = 0;
  // Whether the timing model describes the run's compute times: always on the simulator, on MPI
  // only when it injects them. When it does not, what comes from the timing model (Rescaled
  // ASGD's τ = "model", the F̃ weights) would describe a different run and is not offered.
  virtual bool timing_describes_run() const = 0;
  // Sets the engine's part of a run up (see the file comment).
  virtual std::unique_ptr<EngineRun> start(const EngineInputs& inputs) const = 0;
};

// One worker half as a worker process of a multi-process engine (MPI's ranks 1..n) builds it from
// the configuration rank 0 sent: what JobProcesses::serve needs. `owner` keeps alive what the
// pointers point into (the problem, the timing model, the method).
struct WorkerProcess {
  std::shared_ptr<const void> owner;
  std::unique_ptr<Worker> worker;
  TimingModel* timing = nullptr;   // the worker's own (a trace model advances)
  const Engine* engine = nullptr;  // the engine the configuration chose, its keys read
  uint64_t seed = 0;
  int64_t dim = 0;
  int workers = 0;
};
// Builds worker `index`'s half from a configuration (throws Error on a bad one).
using WorkerProcessBuilder = std::function<WorkerProcess(const Config& config, int index)>;

// The processes of one job of a multi-process engine, as seen from one of them. pacer's main()
// starts them before a command runs; a worker process then serves rank 0's runs instead of
// running the command, and every process ends its part of the job when this object is
// destroyed (for MPI: MPI_Finalize).
class JobProcesses {
 public:
  virtual ~JobProcesses() = default;
  // Whether this process is one of the job's workers (not rank 0).
  virtual bool is_worker() const = 0;
  // A worker process: serves the runs rank 0 starts, building each worker half with `build` from
  // the configuration rank 0 sends, until rank 0 ends the job; returns the exit status rank 0
  // chose. Errors of a run are reported to rank 0.
  virtual int serve(const WorkerProcessBuilder& build) = 0;
  // Rank 0, once the command is done: tells every worker process to exit with `exit_status`.
  virtual void finish(int exit_status) = 0;
};

}  // namespace pacer
