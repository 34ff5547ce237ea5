// `pacer compare`: several methods on the same data, model, timing model and seeds, one table.
//
// A method spec is a registry name optionally followed by per-method keys:
//   "pgc-cr", "is-sgd:k=2", "pgc-cr:decoder=exact"  (each key=value sets method.<key>),
//   "asgd:optimizer.lr=0.01"                          (a dotted key is set as written, so each
//                                                       method can have its own stepsize).
// Every run of a comparison shares the data set and, per seed, the partitions; each gets its own
// folder <out_dir>/<spec>/seed<k>/ with the usual outputs. Keys that no method of the comparison
// reads are rejected before anything runs.
//
// A comparison writes, in its folder: compare.md and compare.csv (the table, with each method's
// paired ratio to the leader and its role in the verdict, verdict.h), runs.csv (every seed's
// values: comparison.h, seed_runs_csv), report.md (the question, the table, the verdict, the
// figures, the tuned values and one line per method against the leader),
// against.csv when a baseline is named (each method against it, paired over seeds),
// the figures, and each run's folder <spec>/seed<k>/ (tuning runs under tuning/<spec>/<value>/).
// Same config and seeds ⇒ byte-identical tables and report.
//
// After SIGINT or SIGTERM (core/interrupt.h) the comparison stops at the run it was in (that run's
// folder says "interrupted" and holds a checkpoint where it stopped) and run_comparison throws
// Interrupted: the completed runs' folders are kept, and the table, figures and report are not
// written. Run again with the same configuration, options and out_dir (after an interrupt, a
// SIGKILL, a crash), a comparison reuses every run that finished and resumes the one that was
// interrupted (run/earlier_run.h: each run's stored configuration must be the one it
// would run now, else that run starts afresh), saying so per run on the terminal, and ends with
// the tables an uninterrupted comparison writes.
#pragma once

#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/report/comparison.h"
#include "pacer/report/verdict.h"

namespace pacer {

struct CompareOptions {
  std::vector<std::string> methods;  // specs, as above
  int seeds = 1;                     // reported seeds: seed, seed+1, ..., seed+seeds-1
  std::string out_dir;               // "" = write nothing
  // "time=T" (engine seconds), "work=W" (work units) or "steps=S" (updates): every method gets
  // the same budget; its max_time/max_work/max_steps are set to it and the other limits lifted.
  // "" = the default: with an asynchronous method in the comparison, equal time T = max_time when
  // the config sets it, else max_steps / Σ_i 1/τ_i (the time in which the workers deliver
  // max_steps gradients at their mean speeds); otherwise the config's max_steps.
  std::string budget;
  // "KEY=v1,v2,...": each method's KEY is chosen from the list on `tuning_seeds` seeds that follow
  // the reported ones (seed+seeds, ...), by the comparison's criterion (mean time to the first
  // target, censored runs counting their end time and ranking below runs that reached it; or
  // without a target, the mean final F, a diverged seed counting as +∞). "" = no tuning.
  std::string tune;
  int tuning_seeds = 2;
  // A spec of `methods` (as written there) to hold every other method against, seed by seed:
  // against.csv and a report.md section give per metric the mean per-seed ratio and difference
  // with their 95 % t intervals (report.h: against_baseline_csv). "" = none.
  std::string baseline;
};

// What a comparison found of an earlier one in its folder (RunOptions::continue_earlier).
struct EarlierRuns {
  int reused = 0;     // finished runs not run again
  int resumed = 0;    // interrupted runs continued from their checkpoints
  int restarted = 0;  // runs whose folder held another configuration or no checkpoint
  bool any() const { return reused + resumed + restarted > 0; }
  // "4 runs reused, 1 resumed, 0 started afresh".
  std::string describe() const;
};

struct CompareResult {
  std::string markdown;  // the table as printed: its legend, the table and the verdict's line
  std::string csv;
  Comparison comparison;
  Verdict verdict;  // verdict.h
  EarlierRuns earlier;
};

CompareResult run_comparison(const Config& config, const CompareOptions& options);

// What run_comparison does once every run is done: the verdict, the table, and, unless `out_dir`
// is empty, compare.md, compare.csv, runs.csv, against.csv, the figures and report.md written
// there (the runs' folders, SeedRun::folder, are relative to it). For callers that assemble a
// comparison from runs of their own (pacer advise); every method's estimates must be summarized
// (summarize_method).
CompareResult finish_comparison(Comparison c, const std::string& out_dir);

// An Error unless `baseline` is "" or one of `methods` as written (CompareOptions::baseline).
void check_baseline(const std::vector<std::string>& methods, const std::string& baseline);

// The config of one method spec (see the file comment): `base` with method.name and the spec's
// keys set. A spec whose method is not one of method_names() (method/method.h), that sets a shared
// key (workers, seed, data.*, partition.*, model.*, training.*) or that has a part without '=' is
// an Error naming it.
Config config_for(const Config& base, const std::string& spec);

// Splits "a,b:k=1,c" into specs; an empty spec is an Error.
std::vector<std::string> split_method_list(const std::string& list);

}  // namespace pacer
