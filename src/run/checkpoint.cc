#include "pacer/run/checkpoint.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include "pacer/core/crash_point.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/rng.h"
#include "pacer/core/state.h"

namespace pacer {
namespace {

constexpr char kMagic[8] = {'P', 'A', 'C', 'E', 'R', 'C', 'K', 'P'};
constexpr size_t kPrefixBytes = sizeof(kMagic) + sizeof(uint32_t) + sizeof(uint64_t);

template <typename T>
void append_raw(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T read_raw(const std::string& bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

void visit_header(StateArchive& a, CheckpointHeader& h) {
  a.section("checkpoint_header");
  a.io(h.pacer_version);
  a.io(h.config_toml);
  a.io(h.config_source);
  a.io(h.changes_json);
  a.io(h.step);
  a.io(h.time);
}

}  // namespace

CheckpointPolicy read_checkpoint_policy(const Config& config) {
  CheckpointPolicy p;
  p.every_steps = config.get_int("checkpoint.every_steps", 0);
  if (p.every_steps < 0) config.fail_key("checkpoint.every_steps", "an integer >= 0 (0 = off)");
  p.every_s = config.get_double("checkpoint.every_s", kDefaultCheckpointEveryS);
  if (!(p.every_s >= 0) || !std::isfinite(p.every_s)) {
    config.fail_key("checkpoint.every_s", "a number of wall-clock seconds >= 0 (0 = off)");
  }
  return p;
}

void write_checkpoint(const std::string& path, const CheckpointHeader& header,
                      std::string_view state) {
  StateArchive body = StateArchive::for_saving();
  CheckpointHeader h = header;
  visit_header(body, h);
  std::string bytes(kMagic, sizeof(kMagic));
  append_raw(bytes, kCheckpointFormat);
  append_raw<uint64_t>(bytes, body.bytes().size() + state.size());
  bytes += body.bytes();
  bytes += state;
  const uint64_t checksum =
      stable_hash(std::string_view(bytes).substr(kPrefixBytes, body.bytes().size() + state.size()));
  append_raw(bytes, checksum);

  // Temp + rename by hand (not write_file_atomic) so that a test can crash between the steps.
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) fail("{}: cannot open for writing", temp);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
    out.flush();
    crash_point("checkpoint.half_written");
    out.write(bytes.data() + bytes.size() / 2,
              static_cast<std::streamsize>(bytes.size() - bytes.size() / 2));
    out.flush();
    if (!out) {
      out.close();
      std::remove(temp.c_str());
      fail("{}: write failed (disk full?); the previous checkpoint is kept", temp);
    }
  }
  crash_point("checkpoint.written");
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    fail("{}: cannot rename {} into place: {}", path, temp, std::strerror(errno));
  }
  crash_point("checkpoint.renamed");
}

Checkpoint read_checkpoint(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_file(path);
  } catch (const Error&) {
    fail(
        "{}: no checkpoint to resume from (the run was not started with checkpoint.every_steps "
        "or checkpoint.every_s, or it wrote none yet)",
        path);
  }
  if (bytes.size() < kPrefixBytes + sizeof(uint64_t) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    fail("{}: not a pacer checkpoint (or truncated before its header)", path);
  }
  const uint32_t format = read_raw<uint32_t>(bytes, sizeof(kMagic));
  if (format != kCheckpointFormat) {
    fail("{}: checkpoint format {}, this pacer reads format {}", path, format, kCheckpointFormat);
  }
  const uint64_t length = read_raw<uint64_t>(bytes, sizeof(kMagic) + sizeof(uint32_t));
  if (length != bytes.size() - kPrefixBytes - sizeof(uint64_t)) {
    fail("{}: truncated or padded checkpoint: the header says {} bytes of state, the file has {}",
         path, length, bytes.size() - kPrefixBytes - sizeof(uint64_t));
  }
  const uint64_t checksum = read_raw<uint64_t>(bytes, kPrefixBytes + length);
  if (stable_hash(std::string_view(bytes).substr(kPrefixBytes, length)) != checksum) {
    fail("{}: corrupt checkpoint: its checksum does not match its contents", path);
  }
  StateArchive body = StateArchive::for_loading(bytes.substr(kPrefixBytes, length), path);
  Checkpoint checkpoint;
  visit_header(body, checkpoint.header);
  const size_t header_bytes = body.bytes().size() - body.remaining();
  checkpoint.state = bytes.substr(kPrefixBytes + header_bytes, length - header_bytes);
  return checkpoint;
}

std::string ConfigChange::describe() const {
  return fmt::format("{}: {} -> {}", key, before.value_or("(absent)"), after.value_or("(absent)"));
}

std::vector<ConfigChange> config_changes(const std::string& saved_toml,
                                         const std::string& now_toml) {
  const std::map<std::string, std::string> before =
      Config::parse(saved_toml, "checkpoint").values();
  const std::map<std::string, std::string> after = Config::parse(now_toml, "config").values();
  std::map<std::string, ConfigChange> changes;
  for (const auto& [key, value] : before) {
    auto it = after.find(key);
    if (it == after.end() || it->second != value) {
      changes[key] =
          ConfigChange{key, value, it == after.end() ? std::nullopt : std::optional(it->second)};
    }
  }
  for (const auto& [key, value] : after) {
    if (!before.count(key)) changes[key] = ConfigChange{key, std::nullopt, value};
  }
  std::vector<ConfigChange> out;
  for (auto& [key, change] : changes) out.push_back(std::move(change));
  return out;
}

bool is_checkpoint_key(std::string_view key) { return key.starts_with("checkpoint."); }

bool change_extends_run(const ConfigChange& change) {
  const std::string& key = change.key;
  if (key == "target.loss" || key == "target.hold" || key == "target.stop") return true;
  if (key != "max_steps" && key != "max_time" && key != "max_work") return false;
  // A limit: raised, or lifted (0); never lowered.
  auto number = [](const std::optional<std::string>& text) {
    return text ? std::strtod(text->c_str(), nullptr) : 0.0;
  };
  const double before = number(change.before), after = number(change.after);
  return after == 0 || (before != 0 && after >= before);
}

}  // namespace pacer
