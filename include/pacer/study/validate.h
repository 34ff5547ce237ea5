// `pacer validate`: the simulator's prediction held against the real engine on the user's own
// machines (DESIGN.md section 9: the error of the advice, as a number).
//
// Given a configuration and a real engine (mpi under mpirun, or local), validate
//   1. runs every method of `methods` for real, one seed each, for `steps` steps (a comparison
//      on that engine: OUT/measured/, every run's jobs.csv among its outputs);
//   2. predicts every method from DGD's run alone: its jobs.csv replayed by the simulator as
//      `pacer advise` replays a profile (study/advise.h, trace_replay_config: blocks of steps,
//      per-unit compute and per-job delay separated, the message latency the log shows), over
//      `seeds` seeds (OUT/predicted/): how well one profile transfers to other methods;
//   3. predicts every other method from its own jobs.csv the same way (OUT/own/<method>/; DGD's
//      own prediction is step 2's): the replay's own fidelity, without the transfer;
//   4. writes OUT/validate.csv and OUT/report.md, and returns the table: per method the measured
//      time per step and time to the target, the predicted ones with their 95 % intervals over
//      the replay seeds, and measured / predicted.
// Every method runs with the configuration's stepsize (no tuning: the question is the time, not
// the method) and the budget of `steps` updates (max_time and max_work lifted, as compare's
// budgets do; record.jobs forced on). The measured runs are one seed each: their time per step is
// a mean over `steps` steps, the interval is the prediction's. The predictions drop the config's
// [engine] table (they run on the simulator) and replace its [timing] by the replayed trace;
// timing.latency comes from the log unless the config sets it. The own-log prediction is of the
// time per step only. The same command again (same options and folder) reuses the finished runs
// and resumes an interrupted one (compare.h), measuring nothing twice.
#pragma once

#include <cstdint>
#include <string>

#include "pacer/core/config.h"

namespace pacer {

struct ValidateOptions {
  std::string methods = "dgd,gc-cr,pgc-cr,rescaled-asgd";  // specs; dgd is required
  int seeds = 5;                                           // replay seeds per prediction
  int64_t steps = 0;    // the budget of every run, in steps (updates); 0 = the config's max_steps
  std::string out_dir;  // required
};

// Runs the validation (see the file comment) on `config`'s engine, which must be a real one (an
// Error naming engine.name otherwise), and returns the table to print. Errors, before anything
// runs: a method list without DGD ("dgd" or "dgd:..."), seeds < 2, steps < 0 or no steps, no
// out_dir; after: any run that fails, named.
std::string run_validate(const Config& config, const ValidateOptions& options);

}  // namespace pacer
