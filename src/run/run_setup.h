// Building one run from its configuration, for run_experiment and the MPI worker ranks
// (experiment.cc). Private to src/run.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/engine/engine.h"
#include "pacer/report/job_log.h"
#include "pacer/report/timeline.h"
#include "pacer/run/checkpoint.h"
#include "pacer/run/experiment.h"
#include "pacer/run/recorder.h"

namespace pacer {

// Everything a run builds from its configuration. Rank 0 of an MPI job (and the simulator's
// single process) uses all of it; an MPI worker rank builds the same and uses its worker half.
struct RunSetup {
  uint64_t seed = 0;
  std::unique_ptr<Problem> own_problem;
  const Problem* problem = nullptr;
  int workers = 0;
  std::unique_ptr<TimingModel> timing;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Method> method;
  StopRules rules;
  OptimizerOptions optimizer;
  bool save_model = false;
  CheckpointPolicy checkpoints;
  JobLogOptions jobs;
  TimelineWindow timeline;
  int threads = 1;  // engine.threads: the recorder's evaluations (every engine)
};

// Reads and checks everything the run needs from `config` (the problem: `shared` when not null,
// else built), and builds the engine, the timing model and the method. Throws Error naming the
// key on a bad configuration.
RunSetup build_run(const Config& config, const Problem* shared);

// The engine's part of the run `s` builds, set up (for MPI: the worker ranks have the
// configuration and built their halves).
std::unique_ptr<EngineRun> start_engine(const Config& config, const RunSetup& s);

// summary.json's description of the run's setup: version, seed, method, workers, model, data,
// timing model, engine, and the clock its times are on (the started engine's own answer).
nlohmann::json describe_setup(const RunSetup& s, const EngineRun& engine);

// A dry run's summary (RunOptions::dry_run): what the run would do, for pacer compare's plan.
nlohmann::json dry_run_summary(const RunSetup& s);

// Weights w_i ∝ 1/τ_i of the objective F̃ that vanilla ASGD minimises (DESIGN.md section 3.2);
// empty when the timing model does not state every τ_i.
std::vector<double> frequency_weights(const TimingModel& timing);

}  // namespace pacer
