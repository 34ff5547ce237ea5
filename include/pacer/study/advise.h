// `pacer advise`: which method for my cluster, answered from the cluster's own timings (DESIGN.md
// section 9).
//
// Given a run configuration (data, model, target, budget) and a measured trace of job durations
// (a "worker,duration" CSV from pacer profile, or the jobs.csv of any run, MPI runs included),
// advise simulates every applicable method on those timings and ranks them:
//   1. The trace is copied into the advice folder as trace.csv (a jobs.csv is converted first:
//      job_log.h, trace_from_jobs_csv), and every run replays it (timing.model = "trace"): a
//      trace with a step column (every jobs.csv) in blocks of steps (timing.replay = "block",
//      which keeps which workers were slow together and for how long), a classic one by bootstrap
//      per worker; either way from the run's seeded stream, so the seeds differ and the intervals
//      over them include the trace's variability.
//   2. The candidates are `methods` or, by default, every method of the registry with each s (or
//      k) of `s_values` below the worker count; a candidate the configuration cannot run (gc-fr
//      needs s + 1 to divide n, ...) is left out and named in the report with the reason.
//   3. Stepsizes. Every candidate is run with each value of the tuning grid (`tune`, by default
//      optimizer.lr ∈ {lr/3, lr, 3·lr} around the configuration's lr) on `tuning_seeds` seeds that
//      follow the reported ones, and keeps the value with the best criterion (the missed seeds
//      first, then the geometric mean over the tuning seeds).
//   4. The budget (unless `budget` is given): starting from the comparison's default, it is
//      multiplied by 4 until some candidate reaches the target on every tuning seed; every
//      candidate then gets `budget_multiple` (3) times that leader's slowest time to the target,
//      so a method censored at that budget is at least that much slower than the leader. The
//      reported comparison extends it further (×2 at a time) until its leader reaches the target
//      on every reported seed. Each extension reruns only the methods that missed a seed: a run
//      that stopped at the target is the same whatever the budget.
//   5. Three scenarios are compared on the reported seeds with the chosen stepsizes and budget,
//      DGD as the baseline when it is a candidate: the trace as measured; stragglers twice as slow
//      (timing.straggler_slowdown = 2: every duration above the trace's median twice as far above
//      it); stragglers twice as frequent (timing.straggler_frequency = 2: slow rows, above 1.5 ×
//      the median, drawn twice as often).
//   6. The verdict of each scenario is compare's (verdict.h): a method is recommended only when it
//      reached the target on every seed and every other method's paired interval lies above it;
//      otherwise the answer is "no recommendation", with what would decide it. In the measured
//      scenario, a tie that more seeds would decide (by the spread the seeds show) gets them: the
//      leader and the tied methods are run on more seeds, after the tuning seeds, up to
//      `max_seeds` in all, and the verdict is taken again (at most three times). Its speedup over
//      DGD is the paired ratio of DGD's time to target over its own (geometric mean and 95 %
//      interval over seeds); where DGD misses the target within the common budget, DGD alone is
//      run on (×2 at a time, at most 64 times the budget) until it reaches it, so that the speedup
//      is a number, not a bound (said so in the answer).
// The printed answer names the criterion, the budget and how it was found, the seeds, the
// stepsize each method used, the ranking, the verdict, and what would change it (the what-if
// scenarios, and the seeds or budget a tie needs). report.md in the folder has the same with each
// scenario's table and figures.
#pragma once

#include <string>
#include <vector>

#include "pacer/core/config.h"

namespace pacer {

struct AdviseOptions {
  std::string trace;           // a "worker,duration" trace or a jobs.csv
  int seeds = 5;               // seeds per method and scenario
  std::string budget;          // as CompareOptions::budget; "" = found as the file comment says
  double budget_multiple = 3;  // the leader's slowest time to target × this = the budget
  // "KEY=v1,v2,..." as CompareOptions::tune; "" = optimizer.lr at lr/3, lr and 3·lr; "none" = no
  // tuning (every method at the configuration's value).
  std::string tune;
  int tuning_seeds = 2;
  // Seeds at most for the leader and the methods tied with it, when the observed spread says
  // more seeds would decide the tie (run after the tuning seeds; the other methods keep `seeds`).
  int max_seeds = 30;
  std::string methods;                    // comma-separated specs; "" = every applicable method
  std::vector<int> s_values = {1, 2, 3};  // the s (IS-SGD: k) values tried by default
  std::string out_dir;                    // the advice folder (required)
};

// Runs the advice (see the file comment) and returns the text to print. Throws Error for a bad
// trace (naming the file), an empty candidate list, or a comparison that fails; Interrupted on
// SIGINT/SIGTERM, with the completed runs kept: the same advice again (same options, out_dir)
// reuses them and resumes the interrupted one (compare.h), and gives the same answer.
std::string run_advise(const Config& config, const AdviseOptions& options);

// The configuration that replays the measured job times in `trace` (a "worker,duration[,step]
// [,units]" trace or a run's jobs.csv, converted) on the simulator, as advise does (step 1 above):
// the trace is written to `out_dir`/trace.csv and replayed from there, in blocks of steps when it
// has steps; a jobs.csv also sets timing.latency to the message latency it shows unless the
// config sets it, and `latency_note` says so (else it is left empty). An Error names the trace
// when it cannot be read or does not cover every worker.
Config trace_replay_config(const Config& config, const std::string& trace,
                           const std::string& out_dir, std::string& latency_note);

}  // namespace pacer
