// The results of `pacer compare`, typed: what the table, the figures and report.md are made of.
//
// run_comparison (compare.h) fills a Comparison; write_comparison_figures (plot.h) draws it and
// write_report (report.h) writes report.md from it. Every number here comes from a run's
// summary.json; none is recomputed by the readers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "pacer/report/statistics.h"

namespace pacer {

// The budget every method of a comparison gets: the same number of steps (updates), the same
// simulated (engine) time, or the same number of work units.
struct Budget {
  enum class Kind { kSteps, kTime, kWork };
  Kind kind = Kind::kSteps;
  double value = 0;
  // Whether the runs stop at the target (time-to-target comparisons) or run the whole budget
  // (final-F comparisons).
  bool stop_at_target = true;
  // "1500 steps", "4000 s of simulated time", "3000 work units".
  std::string describe() const;
};

// One seed of one method.
struct SeedRun {
  uint64_t seed = 0;
  std::string folder;  // the run's folder relative to the comparison's: "<spec>/seed<k>"
  std::string status;  // summary.json status: "target_reached", "max_steps", "diverged", ...
  bool diverged = false;
  bool reached = false;  // the first target was reached
  // At the first target (kNotAvailable when not reached).
  double steps_to_target = kNotAvailable, time_to_target = kNotAvailable,
         work_to_target = kNotAvailable;
  // At the run's end: what a seed that did not reach the target contributes (a lower bound).
  double end_steps = 0, end_time = 0, end_work = 0;
  double step_time = kNotAvailable;  // mean engine seconds per update
  double units_per_job = kNotAvailable, units_per_worker_step = kNotAvailable;
  // Final evaluation (kNotAvailable when absent).
  double final_loss = kNotAvailable, tilde_loss = kNotAvailable, grad_norm_sq = kNotAvailable,
         test_accuracy = kNotAvailable;
};

struct MethodResult {
  std::string spec;                     // "pgc-cr:decoder=exact"
  std::string folder;                   // its runs' parent folder: spec with '/' replaced
  bool asynchronous = false;            // F̃ is logged for it
  std::string tuned_value;              // the chosen value of the tuned key ("" = not tuned)
  std::vector<std::string> tuning_log;  // "0.1: time to target ≥ 312 s (1/2 reached)", per value
  std::vector<SeedRun> runs;            // the reported seeds, in order
  int reached = 0, diverged = 0;
  Estimate steps_to_target, time_to_target, work_to_target;  // censored as described
  Estimate step_time, units_per_job, units_per_worker_step;
  Estimate final_loss, tilde_loss, grad_norm_sq, test_accuracy;
};

// How a comparison ranks methods, smaller is better: with a target (has_target), the seeds that
// missed it, then the geometric mean time to target, or, among methods that missed it on some
// seed, the geometric mean final F (their censored times are all about the budget); without a
// target, (0, geometric mean final F). +∞ where a seed diverged.
std::pair<int, double> criterion_score(const MethodResult& m, bool has_target);

// Fills a method's counts and estimates from its runs (compare.h's table cells).
void summarize_method(MethodResult& m, bool has_target);

struct Comparison {
  std::string name;  // the config's name (file stem), for titles
  std::string config_path;
  Budget budget;
  std::vector<double> targets;  // target.loss values (the first one is compared)
  std::string target_on;        // "train" or "full"
  int64_t target_hold = 1;
  std::vector<uint64_t> seeds;         // reported seeds
  std::vector<uint64_t> tuning_seeds;  // disjoint from seeds; empty when nothing was tuned
  std::string tuned_key;               // "optimizer.lr", "" = no tuning
  std::vector<std::string> tuned_grid;
  // How the best method is chosen: "time to target" (targets set) or "final F".
  std::string criterion;
  std::vector<MethodResult> methods;
  std::string baseline;  // the spec every method is held against (report.h), "" = none
};

// runs.csv of a comparison: one row per method and seed, every SeedRun number at full precision
// (blank where absent), then the comparison's first target (blank: none) and its budget, so that
// a reader (pacer sweep) can rebuild the Comparison and apply the verdict (verdict.h) to it. The
// header:
//   method,seed,folder,status,reached,diverged,steps_to_target,time_to_target,work_to_target,
//   end_steps,end_time,end_work,step_time,units_per_job,units_per_worker_step,final_loss,
//   tilde_loss,grad_norm_sq,test_accuracy,target,budget_kind,budget_value
std::string seed_runs_csv(const Comparison& c);
// The Comparison that runs.csv describes: methods (in order), their runs and estimates, the target
// and the budget. An Error naming `source` and the line when the text is not such a file.
Comparison read_seed_runs(const std::string& csv, const std::string& source);

}  // namespace pacer
