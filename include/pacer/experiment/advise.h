// `pacer advise`: which method for my cluster, answered from the cluster's own timings (DESIGN.md
// section 9).
//
// Given a run configuration (data, model, target, budget) and a measured trace of job durations
// (a "worker,duration" CSV from pacer profile, or the jobs.csv of any run, MPI runs included),
// advise simulates every applicable method on those timings and ranks them:
//   1. The trace is copied into the advice folder as trace.csv (a jobs.csv is converted first:
//      job_log.h, trace_from_jobs_csv), and every run replays it by bootstrap
//      (timing.model = "trace", timing.replay = "bootstrap"): each job of worker i draws one of
//      worker i's measured durations from the run's seeded stream, so the seeds differ and the
//      intervals over them include the trace's variability.
//   2. The candidates are `methods` or, by default, every method of the registry with each s (or
//      k) of `s_values` below the worker count; a candidate the configuration cannot run (gc-fr
//      needs s + 1 to divide n, ...) is left out and named in the report with the reason.
//   3. Three scenarios are compared, each a pacer compare (compare.h) with the same seeds and
//      budget and DGD as baseline when DGD is a candidate: the trace as measured; stragglers twice
//      as slow (timing.straggler_slowdown = 2: every duration above the trace's median twice as
//      far above it); stragglers twice as frequent (timing.straggler_frequency = 2: slow rows,
//      above 1.5 × the median, drawn twice as often).
//   4. Each scenario's methods are ranked by the comparison's criterion (time to the first target,
//      seeds that missed it ranking last; without a target, the final F at the equal budget). The
//      first of the measured scenario is recommended; its speedup over DGD is the mean over seeds
//      of DGD's time to target divided by the method's on the same seed, with a 95 % t interval,
//      over the seeds on which both reached it.
// The printed answer holds the ranking, a line beginning "recommended:" and one line per other
// scenario saying how the recommendation and the top of the ranking change. report.md in the
// folder has the same with each scenario's table and figures.
#pragma once

#include <string>
#include <vector>

#include "pacer/core/config.h"

namespace pacer {

struct AdviseOptions {
  std::string trace;    // a "worker,duration" trace or a jobs.csv
  int seeds = 5;        // seeds per method and scenario
  std::string budget;   // as CompareOptions::budget ("" = the comparison's default)
  std::string methods;  // comma-separated specs; "" = every applicable method
  std::vector<int> s_values = {1, 2, 3};  // the s (IS-SGD: k) values tried by default
  std::string out_dir;                    // the advice folder (required)
};

// Runs the advice (see the file comment) and returns the text to print. Throws Error for a bad
// trace (naming the file), an empty candidate list, or a comparison that fails; Interrupted on
// SIGINT/SIGTERM, with the completed runs kept.
std::string run_advise(const Config& config, const AdviseOptions& options);

}  // namespace pacer
