// Checkpoints of a run, and what resuming one may change (docs/checkpoints.md).
//
// Keys: checkpoint.every_steps (updates between checkpoints; default 0 = off) and
// checkpoint.every_s (wall-clock seconds between checkpoints; default kDefaultCheckpointEveryS =
// 60; 0 = off); either or both. So by default every run with an output folder checkpoints, and
// only a run that sets both to 0 writes none. A run writes <out>/checkpoint.bin at the engine's
// first quiet point at or after each due moment (EngineRun::set_checkpoint_hook), and on the
// simulator once more when it is interrupted (SIGINT, SIGTERM) so that the interruption loses
// nothing (an interrupted MPI run keeps its last periodic checkpoint: docs/mpi.md). `pacer run
// --resume DIR` continues from it, or starts the run again in DIR when it was stopped before its
// first checkpoint; on the simulator the resumed run's log.csv and summary.json are byte for byte
// those of the uninterrupted run either way. The default costs at most 3 % of the main job's time
// (bench/checkpoint_bench.cc; docs/checkpoints.md).
//
// The file (format version kCheckpointFormat, little-endian):
//   "PACERCKP"  8 bytes
//   version     u32
//   length      u64, of the body
//   body        the header (pacer version, the run's resolved configuration, step and engine
//               time at the checkpoint) then the run's state (core/state.h archives of every
//               component, in the order run_experiment visits them)
//   checksum    u64, FNV-1a of the body (any single changed byte changes it)
// It is written to "checkpoint.bin.tmp.<pid>" and renamed over checkpoint.bin once complete, so
// the previous checkpoint stays whole until the new one is. A file that is truncated, corrupt,
// of another format version, or of another run is refused with an Error naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pacer/core/config.h"

namespace pacer {

inline constexpr uint32_t kCheckpointFormat = 5;  // 2: job log, attribution (#14); 3: the
                                                  // queue straggler policy (#26), the target
                                                  // watch on F (#24); 4: the simulator's
                                                  // per-worker statistics (worker_statistics.h);
                                                  // 5: the simulator's loss deadline (#28)

// checkpoint.every_s when the configuration does not set it: a killed run loses at most about a
// minute of work, and a checkpoint a minute is a small part of a minute's work
// (docs/checkpoints.md).
inline constexpr double kDefaultCheckpointEveryS = 60;

struct CheckpointPolicy {
  int64_t every_steps = 0;                    // 0 = off
  double every_s = kDefaultCheckpointEveryS;  // 0 = off
  bool enabled() const { return every_steps > 0 || every_s > 0; }
};

// Reads checkpoint.every_steps and checkpoint.every_s (errors name the key).
CheckpointPolicy read_checkpoint_policy(const Config& config);

struct CheckpointHeader {
  std::string pacer_version;
  std::string config_toml;    // the run's resolved configuration, as config.toml records it
  std::string config_source;  // the configuration file the run started from (figure titles)
  std::string changes_json;   // the extensions of earlier resumes (a JSON array; may be empty)
  int64_t step = 0;           // updates applied when it was written
  double time = 0;            // the engine's clock then
};

struct Checkpoint {
  CheckpointHeader header;
  std::string state;  // the components' archives
};

// Writes the checkpoint file atomically (see the file comment). Throws Error naming the path on
// an I/O failure; the previous checkpoint is then untouched.
void write_checkpoint(const std::string& path, const CheckpointHeader& header,
                      std::string_view state);
// Reads and verifies a checkpoint file. Throws Error naming the path and what is wrong.
Checkpoint read_checkpoint(const std::string& path);

// One key whose value differs between a checkpoint's configuration and a resumed run's.
struct ConfigChange {
  std::string key;
  std::optional<std::string> before, after;  // nullopt: absent
  std::string describe() const;              // "max_steps: 200 -> 400"
};
// The changed keys between two resolved configurations (TOML texts), sorted by key.
std::vector<ConfigChange> config_changes(const std::string& saved_toml,
                                         const std::string& now_toml);
// Whether a change made on resume only extends the run: max_steps, max_time, max_work raised (or
// set to 0, no limit), target.loss, target.hold and target.stop (what ends the run). Everything
// else would make the resumed run a different run, and is refused; checkpoint.* (how often it is
// saved) is allowed too but changes nothing of the run (is_checkpoint_key).
bool change_extends_run(const ConfigChange& change);
bool is_checkpoint_key(std::string_view key);

}  // namespace pacer
