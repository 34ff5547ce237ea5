#include "pacer/experiment/earlier_run.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <system_error>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/run_folder.h"

namespace pacer {
namespace {

namespace fs = std::filesystem;

// The statuses of a run that is not over (Recorder::status, run_experiment).
bool final_status(const std::string& status) {
  return !status.empty() && status != "running" && status != "interrupted" && status != "error";
}

// summary.json when it describes a finished run of this version; nullopt otherwise (absent,
// unreadable, not over, another version).
std::optional<nlohmann::json> finished_summary(const std::string& dir) {
  try {
    nlohmann::json summary = nlohmann::json::parse(read_file(dir + "/summary.json"));
    if (!final_status(summary.value("status", std::string()))) return std::nullopt;
    if (summary.value("pacer_version", std::string()) != PACER_VERSION) return std::nullopt;
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

}  // namespace

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
  if (std::optional<nlohmann::json> summary = finished_summary(dir)) {
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
