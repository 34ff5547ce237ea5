// Running one configuration end to end: config -> data -> partitions -> model -> timing model ->
// method -> engine -> log.csv, summary.json, config.toml (DESIGN.md section 6).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "pacer/core/config.h"
#include "pacer/data/dataset.h"
#include "pacer/engine/engine.h"
#include "pacer/model/objective.h"
#include "pacer/run/earlier_run.h"

namespace pacer {

// What every method of a run or a comparison shares: the data, its partitions and the model.
// Reads workers, seed-independent data keys (data.*; synthetic data is drawn from data.seed,
// default 1, so changing the run seed never changes the data set), partition.scheme
// ("iid" default, "contiguous", "by_class", "dirichlet") and partition.alpha, model.*, and
// training.batch (rows per partition-gradient minibatch; 0 = the whole partition).
struct Problem {
  int workers = 0;
  DataSplit data;
  std::shared_ptr<const Objective> objective;
};

// `seed` is the run seed (it drives the iid shuffle and the Dirichlet draw of the partitions).
Problem build_problem(const Config& config, uint64_t seed);

struct RunOptions {
  // The run's folder; empty = write nothing (log.csv is then kept in memory). Once the run is
  // built and checked, the folder is created (core/run_folder.h: an earlier run's folder is
  // replaced as a whole, and only a run's folder or an empty one is) holding config.toml,
  // log.csv's header and summary.json with "status": "running"; log.csv then streams into it
  // in whole rows (Recorder::stream_log), summary.json, evals.csv and trace.csv are rewritten at
  // evaluations, at most every PACER_STREAM_INTERVAL_S seconds of wall time (default 2; 0 = at
  // every evaluation), and the final files are written at the end.
  std::string out_dir;
  // Reuse a Problem built from the same data/partition/model keys and seed (pacer compare).
  const Problem* problem = nullptr;
  // Reject keys no component read, and note (log_info) the file keys a component switch dropped
  // (off when pacer compare has done both across methods). The keys are dropped either way.
  bool reject_unknown_keys = true;
  // Progress-line label.
  std::string label;
  // Draw timeline.{gp,png,svg} and write the Chrome trace timeline.json from the run's jobs.csv
  // at the end (timeline.h; the window is record.timeline, default automatic; the title
  // timeline_run_title). pacer run does; comparisons' runs do not (pacer timeline draws one
  // later), so that a comparison does not start a gnuplot per run for it.
  bool timeline_figure = false;
  // Build and validate everything (reading every key), then return without running. The outcome's
  // summary then holds "synchronous" (the method's family), "gradients_per_second" (Σ 1/τ_i of
  // the timing model's mean unit times, null when it states none), max_steps, max_time, targets,
  // target_on, target_hold and stop_at_targets.
  bool dry_run = false;
  // Continue the run in out_dir from its checkpoint.bin (run/checkpoint.h) instead of
  // starting one: `config` must be that run's configuration (its config.toml), changed only in
  // keys that extend the run (key_extends_run; anything else is an Error naming the keys). The
  // folder is continued, not replaced; log.csv is cut back to the checkpoint and continued. A
  // run stopped before its first checkpoint (checkpoint.every_s, 60 s by default) starts again
  // from step 0 in out_dir, its config.toml checked in the same way. On the simulator the outputs
  // are then byte for byte those of the uninterrupted run (unless an extending key changed;
  // summary.json's resumed_with_changes then lists the changes).
  bool resume = false;
  // Continue what an earlier run of the same configuration left in out_dir (earlier_run.h; pacer
  // compare, sweep and advise given the same command again): a finished run is not run again (its
  // summary.json is returned), an interrupted or killed one is resumed from its checkpoint, and
  // anything else (another configuration, no checkpoint yet) starts afresh. RunOutcome::
  // earlier_note says which. Ignored without out_dir; `resume` is then not needed.
  bool continue_earlier = false;
};

struct RunOutcome {
  // See Recorder::status(), or "interrupted" (SIGINT/SIGTERM, either engine). A "diverged" run
  // returns normally, its outputs written and summary["divergence"] saying why: pacer run reports
  // it as an error, pacer compare counts it.
  std::string status;
  nlohmann::json summary;
  // RunOptions::continue_earlier: what became of the earlier run in out_dir (kFresh also when
  // there was none), and for the terminal ("finished earlier, reused", "resumed from step 340",
  // why it started afresh; "" when there was none).
  std::string earlier_note;
  EarlierRun::Kind earlier = EarlierRun::Kind::kFresh;
};

// Runs one configuration on the engine named by engine.name (engine/registry.h): in this process
// for an engine whose workers live here (the simulator), or, for a multi-process engine (MPI), as
// rank 0 of a job whose other processes run serve_job_worker() and receive the resolved
// configuration from rank 0 to build the same problem and method.
// Every engine shares everything else: building, recording, outputs. `save_model = true` also
// writes model.bin, the final model as raw native-endian doubles (for bit-exact comparisons).
// Bad configuration is an Error before anything runs. A diverged run, and one the method ended
// because too many workers were lost (status "too_many_lost", summary "error" saying which),
// write their outputs and return normally; summary.json's lost_workers lists every loss. A run
// interrupted by SIGINT or SIGTERM (core/interrupt.h: the caller installs the handlers, as pacer
// does; the simulator stops between two events, MPI in rank 0's poll loop) writes its outputs
// with status "interrupted" and no final evaluation (before stopping MPI workers), and returns
// status "interrupted". Every file is complete whenever it is looked at (RunOptions::out_dir).
// A file that cannot be written (a full disk) is an Error naming it; before the folder was
// swapped in, the earlier run is untouched. An Error during the run writes the outputs with
// status "error" and its message first.
// The config.toml written (and sent to MPI workers) leaves out the file keys that a component
// switch dropped (Config::drop_replaced_keys); `config` itself is not changed.
RunOutcome run_experiment(const Config& config, const RunOptions& options);

// A worker process of a multi-process engine's job (engine/engine.h, JobProcesses): serves the
// runs rank 0 makes (each with the configuration rank 0 sends) until rank 0 ends the job, and
// returns the exit status rank 0 chose. Errors of a run are reported to rank 0, which prints
// them; only when rank 0 cannot be reached does this process print the error and abort the job.
int serve_job_worker(JobProcesses& job);

// Reads the run seed (key "seed", default 1, >= 0).
uint64_t read_seed(const Config& config);

// `pacer profile` on this process (DESIGN.md section 9): builds the run `config` describes and
// times `jobs` jobs of its method's worker half on every worker, in this process and one after
// the other (job k of worker 0, of worker 1, ..., then job k + 1), each at the initial model, with
// a steady clock around Worker::units and Worker::compute. Returns the trace as the text of a CSV
// "worker,duration" (seconds per work unit, one row per job), the format timing.model = "trace"
// and pacer fit read. The timing model is not used: the durations are this machine's.
std::string profile_jobs(const Config& config, int jobs);

}  // namespace pacer
