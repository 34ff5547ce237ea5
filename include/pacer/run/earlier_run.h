// What an earlier run left in a run folder, judged for running the same configuration there
// again (pacer compare, sweep and advise given the same command and --out again; pacer run
// --resume). docs/checkpoints.md, "Studies that survive interruption".
//
// The folder's stored configuration (config.toml, or checkpoint.bin's) is compared with the one
// about to run, key by key (checkpoint.h, config_changes); checkpoint.* keys may differ, since they
// change nothing of a run's results. Then:
// Results are reused only from the same build of pacer: summary.json's pacer_build
// (pacer_build_id) must be this process's, so that a rebuilt pacer (a fixed bug, a changed method)
// never passes off an earlier build's runs as its own.
//   finished   summary.json has a final status (anything but "running", "interrupted" and
//              "error"; "diverged" and "too_many_lost" are results), the same build and the same
//              configuration: the run need not run again, its summary stands.
//   resumable  checkpoint.bin is whole and of the same configuration, and summary.json of the
//              same build: the run continues from it (a killed run's log.csv rows past it are
//              cut back when it is loaded).
//   fresh      anything else: the run starts afresh (RunFolder::create replaces the folder), and
//              `note` says why when there was a folder: another configuration, no checkpoint
//              written yet, a damaged checkpoint.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pacer/run/checkpoint.h"

namespace pacer {

struct EarlierRun {
  enum class Kind { kFresh, kFinished, kResumable };
  Kind kind = Kind::kFresh;
  nlohmann::json summary;                // kFinished: its summary.json
  std::optional<Checkpoint> checkpoint;  // kResumable: its checkpoint.bin
  // For the terminal: "finished earlier, reused", "resumed from step 340", or why it starts
  // afresh ("interrupted before its first checkpoint: started again from step 0"); "" when `dir`
  // held no run.
  std::string note;
};

// Judges what `dir` holds for a run whose resolved configuration is `config_toml` (Config::
// to_toml). Never throws for what it finds (a damaged file only makes the run start afresh);
// repairs a folder swap a crash interrupted first (RunFolder::reopen).
EarlierRun find_earlier_run(const std::string& dir, const std::string& config_toml);

// The identity of the code this process runs: FNV-1a (core/rng.h, stable_hash) of the executable
// or shared library that holds pacer's code, as 16 hex digits, or "unknown" when that file
// cannot be read (nothing is then reused). Computed once per process; summary.json records it as
// pacer_build.
const std::string& pacer_build_id();

// The first key (in key order) in which two resolved configurations differ, checkpoint.* keys
// aside, described as ConfigChange::describe() does; "" when they are the same run.
std::string first_run_difference(const std::string& saved_toml, const std::string& now_toml);

}  // namespace pacer
