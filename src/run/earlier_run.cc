#include "pacer/run/earlier_run.h"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <sstream>
#include <system_error>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/rng.h"
#include "pacer/core/run_folder.h"

namespace pacer {
namespace {

namespace fs = std::filesystem;

// The statuses of a run that is not over (Recorder::status, run_experiment).
bool final_status(const std::string& status) {
  return !status.empty() && status != "running" && status != "interrupted" && status != "error";
}

// The folder's summary.json when this build of pacer wrote it; nullopt otherwise (absent,
// unreadable, another build).
std::optional<nlohmann::json> own_summary(const std::string& dir) {
  try {
    nlohmann::json summary = nlohmann::json::parse(read_file(dir + "/summary.json"));
    const std::string build = summary.value("pacer_build", std::string());
    if (build != pacer_build_id() || build == "unknown") return std::nullopt;
    return summary;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The folder's config.toml, or nullopt when it has none readable.
std::optional<std::string> stored_config(const std::string& dir) {
  try {
    return read_file(dir + "/config.toml");
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The file this code was loaded from (the executable, or the shared library of a binding): the
// mapping of /proc/self/maps that holds this function. Throws Error when there is none.
std::string code_file() {
  const auto here = reinterpret_cast<uintptr_t>(&code_file);
  std::istringstream maps(read_file("/proc/self/maps"));
  std::string line;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode path"
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode;
    std::getline(fields >> std::ws, path);  // the rest: a path may hold spaces
    const size_t dash = range.find('-');
    if (dash == std::string::npos || path.empty() || path[0] != '/') continue;
    const uintptr_t start = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (here >= start && here < end) return path;
  }
  fail("/proc/self/maps: no file holds pacer's code");
}

}  // namespace

const std::string& pacer_build_id() {
  static const std::string id = [] {
    try {
      return fmt::format("{:016x}", stable_hash(read_file(code_file())));
    } catch (const std::exception&) {
      return std::string("unknown");
    }
  }();
  return id;
}

std::string first_run_difference(const std::string& saved_toml, const std::string& now_toml) {
  for (const ConfigChange& change : config_changes(saved_toml, now_toml)) {
    if (!is_checkpoint_key(change.key)) return change.describe();
  }
  return "";
}

EarlierRun find_earlier_run(const std::string& dir, const std::string& config_toml) {
  EarlierRun earlier;
  try {
    RunFolder::reopen(dir);  // a swap a crash interrupted is undone first
  } catch (const std::exception&) {
    return earlier;  // no folder: nothing ran there
  }
  const std::optional<std::string> stored = stored_config(dir);
  if (!stored) return earlier;  // no run's folder (RunFolder::create refuses what it must)
  if (const std::string changed = first_run_difference(*stored, config_toml); !changed.empty()) {
    earlier.note = fmt::format(
        "its folder holds a run of another configuration ({}): started afresh", changed);
    return earlier;
  }
  std::optional<nlohmann::json> summary = own_summary(dir);
  if (!summary) {
    earlier.note = "its folder holds a run of another build of pacer: started afresh";
    return earlier;
  }
  if (final_status(summary->value("status", std::string()))) {
    earlier.kind = EarlierRun::Kind::kFinished;
    earlier.summary = std::move(*summary);
    earlier.note = "finished earlier, reused";
    return earlier;
  }
  const std::string path = dir + "/checkpoint.bin";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    earlier.note = "stopped before its first checkpoint: started again from step 0";
    return earlier;
  }
  try {
    Checkpoint checkpoint = read_checkpoint(path);
    const std::string differs = first_run_difference(checkpoint.header.config_toml, config_toml);
    if (!differs.empty()) {
      earlier.note =
          fmt::format("its checkpoint is of another configuration ({}): started afresh", differs);
      return earlier;
    }
    earlier.kind = EarlierRun::Kind::kResumable;
    earlier.note = fmt::format("resumed from step {}", checkpoint.header.step);
    earlier.checkpoint = std::move(checkpoint);
  } catch (const Error& e) {
    earlier.note = fmt::format("{}: started afresh", e.what());
  }
  return earlier;
}

}  // namespace pacer
