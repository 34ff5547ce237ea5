// The checkpoint file (run/checkpoint.h): what is written is read back whole; a truncated,
// corrupt or foreign file is refused naming it; and the configuration keys a resume may change.
#include "pacer/run/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "pacer/core/error.h"
#include "pacer/core/rng.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::read_text;
using testing::TempDir;
using testing::write_text;

CheckpointHeader sample_header() {
  CheckpointHeader h;
  h.pacer_version = "9.9.9";
  h.config_toml = "seed = 4\nmax_steps = 100\n";
  h.config_source = "configs/run.toml";
  h.changes_json = "[]";
  h.step = 42;
  h.time = 12.5;
  return h;
}

std::string error_of(const std::string& path) {
  try {
    read_checkpoint(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CheckpointFile, WhatIsWrittenIsReadBack) {
  TempDir dir;
  const std::string path = dir.file("checkpoint.bin");
  const std::string state("\x00\x01state bytes\xff", 14);
  write_checkpoint(path, sample_header(), state);
  const Checkpoint c = read_checkpoint(path);
  EXPECT_EQ(c.header.pacer_version, "9.9.9");
  EXPECT_EQ(c.header.config_toml, sample_header().config_toml);
  EXPECT_EQ(c.header.config_source, "configs/run.toml");
  EXPECT_EQ(c.header.changes_json, "[]");
  EXPECT_EQ(c.header.step, 42);
  EXPECT_EQ(c.header.time, 12.5);
  EXPECT_EQ(c.state, state);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "checkpoint.bin") << "left behind: " << entry.path();
  }
}

TEST(CheckpointFile, EveryTruncationIsRefused) {
  TempDir dir;
  const std::string path = dir.file("checkpoint.bin");
  write_checkpoint(path, sample_header(), "some state");
  const std::string whole = read_text(path);
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    write_text(path, whole.substr(0, cut));
    const std::string error = error_of(path);
    EXPECT_NE(error.find(path), std::string::npos) << "cut at " << cut << ": '" << error << "'";
  }
}

TEST(CheckpointFile, EverySingleFlippedBitIsRefused) {
  TempDir dir;
  const std::string path = dir.file("checkpoint.bin");
  write_checkpoint(path, sample_header(), "some state");
  const std::string whole = read_text(path);
  for (size_t at = 0; at < whole.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = whole;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      write_text(path, damaged);
      EXPECT_NE(error_of(path), "") << "byte " << at << " bit " << bit << " was accepted";
    }
  }
}

TEST(CheckpointFile, OtherFilesAreRefusedByName) {
  TempDir dir;
  const std::string path = dir.file("checkpoint.bin");
  write_text(path, "seed = 1\n");
  EXPECT_NE(error_of(path).find("not a pacer checkpoint"), std::string::npos);
  EXPECT_NE(error_of(dir.file("missing.bin")).find("no checkpoint"), std::string::npos);
}

TEST(CheckpointConfig, ChangesAreListedAndClassified) {
  const std::vector<ConfigChange> changes =
      config_changes("max_steps = 100\n[optimizer]\nlr = 0.1\n[method]\nname = \"dgd\"\n",
                     "max_steps = 200\n[optimizer]\nlr = 0.1\n[target]\nloss = 0.5\n");
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].describe(), "max_steps: 100 -> 200");
  EXPECT_EQ(changes[1].describe(), "method.name: dgd -> (absent)");
  EXPECT_EQ(changes[2].describe(), "target.loss: (absent) -> 0.5");
  EXPECT_TRUE(change_extends_run(changes[0]));                    // max_steps raised
  EXPECT_FALSE(change_extends_run(changes[1]));                   // another method
  EXPECT_TRUE(change_extends_run(changes[2]));                    // a target added
  EXPECT_FALSE(change_extends_run({"max_steps", "200", "100"}));  // lowered
  EXPECT_TRUE(change_extends_run({"max_time", "50.0", "0.0"}));   // lifted
  EXPECT_FALSE(change_extends_run({"max_time", "0.0", "50.0"}));  // a limit where there was none
  EXPECT_FALSE(change_extends_run({"target.on", "train", "full"}));
  EXPECT_FALSE(change_extends_run({"optimizer.lr", "0.1", "0.2"}));
  EXPECT_TRUE(is_checkpoint_key("checkpoint.every_s"));
  EXPECT_FALSE(is_checkpoint_key("seed"));
}

}  // namespace
}  // namespace pacer
