// Checkpoints and `pacer run --resume` (run/checkpoint.h): a simulator run killed with
// SIGKILL at a checkpoint, or with no checkpoint keys set before its first (default) checkpoint,
// and resumed gives log.csv and summary.json byte for byte those of the uninterrupted run, for
// every method; a damaged checkpoint or a changed configuration is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "pacer/core/rng.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::read_text;
using testing::run_command;
using testing::run_pacer;
using testing::TempDir;
using testing::write_text;

constexpr int kSteps = 240;
constexpr int kEvery = 20;  // checkpoint.every_steps: kSteps / kEvery = 12 checkpoints

struct Case {
  const char* method;
  const char* extra;           // more [method] keys, then other tables
  const char* optimizer = "";  // more [optimizer] keys
  const char* top = "";        // more top-level keys
  const char* training = "";   // more [training] keys
};

// Every method, with the state that checkpoints must carry switched on: minibatches (each
// worker's random stream and permutation), pipeline caches, exact decoder caches, momentum,
// adaptive decoding's response counts, Rescaled ASGD's τ estimates, Ringleader's tables,
// Ringmaster's running jobs, lost workers.
const Case kCases[] = {
    {"dgd", ""},
    {"is-sgd", "k = 2\n"},
    {"gc-fr", "s = 1\n"},
    {"gc-cr", "s = 1\n"},
    {"is-gc-fr", "s = 1\n"},
    {"is-gc-cr", "s = 1\n"},
    {"pgc-fr", "s = 1\n"},
    {"pgc-cr", "s = 2\n"},
    {"pgc-cr", "s = 1\ndecoder = \"exact\"\n"},
    {"pgc-cr", "s = 2\ndecoder = \"adaptive\"\nadaptive_every = 3\n"},
    // The queue policy's queued steps and their models; the other two minibatch samplings.
    {"pgc-cr", "s = 2\nstraggler_policy = \"queue\"\n"},
    {"gc-cr", "s = 1\n", "", "", "sampling = \"independent\"\n"},
    {"pgc-fr", "s = 1\nstraggler_policy = \"queue\"\n", "", "", "sampling = \"fixed\"\n"},
    {"asgd", "", "momentum = 0.9\n"},
    {"rescaled-asgd", "tau = \"estimate\"\n"},
    {"delay-adaptive-asgd", ""},
    {"ringmaster", "R = 3\nvariant = \"stop\"\n"},
    {"rennala", ""},
    {"malenia", ""},
    {"ringleader", ""},
    {"asgd", "[faults]\nkill_workers = [1, 4]\nkill_at = [10.0, 25.0]\nrejoin_after = 15.0\n"},
    // Two targets never reached (empty records in the checkpoint), and a summary whose "final"
    // is the last scheduled evaluation (eval_final = false).
    {"dgd", "[target]\nloss = [1e-9, 1e-10]\n", "", "eval_final = false\n"},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.method << " " << c.top << c.extra << c.optimizer << c.training;
}

std::string config_text(const Case& c) {
  std::string text =
      std::string(c.top) + "workers = 6\nseed = 3\nmax_steps = " + std::to_string(kSteps) +
      "\neval_every = 30\n[checkpoint]\nevery_steps = " + std::to_string(kEvery) +
      "\n[training]\nbatch = 8\n" + c.training + "[timing]\nmodel = \"exponential\"\ntau = 1.0\n" +
      "[optimizer]\nlr = 0.02\n" + c.optimizer + testing::kLeastSquaresTables;
  std::string extra = c.extra;
  // The case's [method] keys go in the [method] table; a table it opens follows.
  const size_t table = extra.find('[');
  text += "[method]\nname = \"" + std::string(c.method) + "\"\n" + extra.substr(0, table);
  if (table != std::string::npos) text += extra.substr(table);
  return text;
}

std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

// A run of `config` into `out`, killed at the `hit`-th pass through crash point `point`.
testing::CommandResult killed_run(const std::string& config, const std::string& out,
                                  const std::string& point, int hit) {
  return run_command("PACER_TEST_CRASH_AT=" + point + ":" + std::to_string(hit) + " " +
                     std::string(PACER_BINARY) + " run " + shell_quoted(config) + " --out " +
                     shell_quoted(out));
}

class ResumeEveryMethod : public ::testing::TestWithParam<Case> {};

TEST_P(ResumeEveryMethod, KilledAndResumedRunEqualsUninterruptedRun) {
  const Case& c = GetParam();
  TempDir dir;
  const std::string config = dir.file("run.toml");
  write_text(config, config_text(c));
  const std::string whole = dir.file("whole");
  testing::CommandResult r =
      run_pacer("run " + shell_quoted(config) + " --out " + shell_quoted(whole));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // Kill at a checkpoint-crossing moment drawn from a seeded stream: while the temporary file is
  // half written, once it is complete but not renamed, or right after the rename (the cases
  // between them meet all three), at one of the checkpoints.
  Rng rng(stable_hash(config_text(c)), "kill");
  const char* points[] = {"checkpoint.half_written", "checkpoint.written", "checkpoint.renamed"};
  const char* point = points[rng.uniform_int(3)];
  {
    const int hit = 2 + static_cast<int>(rng.uniform_int(kSteps / kEvery - 3));
    SCOPED_TRACE(std::string(point) + ":" + std::to_string(hit));
    const std::string out = dir.file(std::string("killed-") + point);
    r = killed_run(config, out, point, hit);
    ASSERT_NE(r.exit_code, 0) << "the crash point was not reached: " << r.output;
    ASSERT_TRUE(std::filesystem::exists(out + "/checkpoint.bin"));
    r = run_pacer("run --resume " + shell_quoted(out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(read_text(out + "/log.csv"), read_text(whole + "/log.csv"));
    EXPECT_EQ(read_text(out + "/jobs.csv"), read_text(whole + "/jobs.csv"));
    EXPECT_EQ(read_text(out + "/summary.json"), read_text(whole + "/summary.json"));
    for (const auto& entry : std::filesystem::directory_iterator(out)) {
      EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos)
          << "orphan temporary file " << entry.path();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, ResumeEveryMethod, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = std::to_string(info.index) + "_" + info.param.method;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// The timing models with state or with choices shared across workers: a trace replayed in order
// (each worker's position), by bootstrap (the workers' streams), by blocks and sequentially (pure
// functions of the seed and the step) from a trace with steps, persistent_stragglers (hosts'
// chains, cached) and common_shock (shock steps). A synchronous and an asynchronous method each
// (an asynchronous job's step is the update count). Killed at a checkpoint and resumed, the run
// equals the uninterrupted one byte for byte.
TEST(ResumeTimingModels, KilledAndResumedRunEqualsUninterruptedRun) {
  TempDir dir;
  std::string trace = "step,worker,duration\n";
  Rng rows(2, "rows");
  for (int k = 0; k < 40; ++k) {
    for (int i = 0; i < 6; ++i) {
      trace += std::to_string(k) + "," + std::to_string(i) + "," +
               std::to_string(0.5 + rows.uniform() + (i < 2 && (k / 8) % 2 ? 2.0 : 0.0)) + "\n";
    }
  }
  write_text(dir.file("trace.csv"), trace);
  const std::string file = "model = \"trace\"\nfile = \"" + dir.file("trace.csv") + "\"\n";
  const std::string tables[] = {
      file,
      file + "replay = \"bootstrap\"\n",
      file + "replay = \"sequential\"\n",
      file + "replay = \"block\"\n",
      "model = \"persistent_stragglers\"\njitter = 0.1\np_slow = 0.1\np_recover = 0.2\n"
      "host = [0, 0, 1, 2, 3, 3]\nq = 0.05\n",
      "model = \"common_shock\"\nq = 0.02\nshock_probability = 0.2\njitter = 0.05\n",
  };
  int index = 0;
  for (const std::string& timing : tables) {
    for (const std::string method : {"dgd", "asgd"}) {
      SCOPED_TRACE(method + ": " + timing);
      std::string text = config_text(Case{method.c_str(), ""});
      const size_t at = text.find("[timing]\n");
      const size_t end = text.find('[', at + 1);
      text = text.substr(0, at) + "[timing]\n" + timing + text.substr(end);
      const std::string config = dir.file("run" + std::to_string(++index) + ".toml");
      write_text(config, text);
      const std::string whole = dir.file("whole" + std::to_string(index));
      testing::CommandResult r =
          run_pacer("run " + shell_quoted(config) + " --out " + shell_quoted(whole));
      ASSERT_EQ(r.exit_code, 0) << r.output;
      const std::string out = dir.file("killed" + std::to_string(index));
      r = killed_run(config, out, "checkpoint.renamed", 5);
      ASSERT_NE(r.exit_code, 0) << "the crash point was not reached: " << r.output;
      r = run_pacer("run --resume " + shell_quoted(out));
      ASSERT_EQ(r.exit_code, 0) << r.output;
      EXPECT_EQ(read_text(out + "/log.csv"), read_text(whole + "/log.csv"));
      EXPECT_EQ(read_text(out + "/jobs.csv"), read_text(whole + "/jobs.csv"));
      EXPECT_EQ(read_text(out + "/summary.json"), read_text(whole + "/summary.json"));
    }
  }
}

// A fixture with one killed run, for the refusals below.
class ResumeRefusals : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.file("run.toml");
    write_text(config_, config_text(kCases[7]));  // pgc-cr
    out_ = dir_.file("out");
    testing::CommandResult r = killed_run(config_, out_, "checkpoint.renamed", 4);
    ASSERT_NE(r.exit_code, 0) << r.output;
    checkpoint_ = read_text(out_ + "/checkpoint.bin");
    ASSERT_GT(checkpoint_.size(), 100u);
  }
  testing::CommandResult resume(const std::string& args = "") {
    return run_pacer("run --resume " + shell_quoted(out_) + " " + args);
  }
  TempDir dir_;
  std::string config_, out_, checkpoint_;
};

TEST_F(ResumeRefusals, TruncatedCheckpointIsRefused) {
  Rng rng(5, "cut");
  for (int trial = 0; trial < 4; ++trial) {
    const size_t cut = rng.uniform_int(checkpoint_.size());
    write_text(out_ + "/checkpoint.bin", checkpoint_.substr(0, cut));
    testing::CommandResult r = resume();
    EXPECT_EQ(r.exit_code, 1) << "cut at " << cut << ": " << r.output;
    EXPECT_NE(r.output.find("checkpoint.bin"), std::string::npos) << r.output;
  }
}

TEST_F(ResumeRefusals, OneFlippedByteIsRefused) {
  Rng rng(6, "flip");
  for (int trial = 0; trial < 6; ++trial) {
    std::string damaged = checkpoint_;
    const size_t at = rng.uniform_int(damaged.size());
    damaged[at] = static_cast<char>(damaged[at] ^ (1 << rng.uniform_int(8)));
    write_text(out_ + "/checkpoint.bin", damaged);
    testing::CommandResult r = resume();
    EXPECT_EQ(r.exit_code, 1) << "byte " << at << ": " << r.output;
    EXPECT_NE(r.output.find("checkpoint.bin"), std::string::npos) << r.output;
  }
}

TEST_F(ResumeRefusals, ChangedConfigurationIsRefusedNamingTheKey) {
  testing::CommandResult r = resume("--set optimizer.lr=0.05");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("optimizer.lr"), std::string::npos) << r.output;
  // The folder still resumes unchanged afterwards.
  r = resume();
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A run stopped before its first checkpoint (here: the checkpoint removed) starts again from step
// 0 in its folder, with the uninterrupted run's outputs.
TEST_F(ResumeRefusals, MissingCheckpointStartsTheRunAgain) {
  std::filesystem::remove(out_ + "/checkpoint.bin");
  testing::CommandResult r = resume();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("starting it again from step 0"), std::string::npos) << r.output;
  const std::string whole = dir_.file("whole");
  r = run_pacer("run " + shell_quoted(config_) + " --out " + shell_quoted(whole));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(out_ + "/log.csv"), read_text(whole + "/log.csv"));
  EXPECT_EQ(read_text(out_ + "/summary.json"), read_text(whole + "/summary.json"));
  // Its changes are checked as a checkpoint's are.
  std::filesystem::remove(out_ + "/checkpoint.bin");
  r = resume("--set optimizer.lr=0.05");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("optimizer.lr"), std::string::npos) << r.output;
}

TEST_F(ResumeRefusals, ExtendingTheRunIsAllowedAndRecorded) {
  testing::CommandResult r = resume("--set max_steps=300");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("max_steps: 240 -> 300"), std::string::npos) << r.output;
  const std::string summary = read_text(out_ + "/summary.json");
  EXPECT_NE(summary.find("\"steps\": 300"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"resumed_with_changes\""), std::string::npos) << summary;
  // The same as a run that had max_steps = 300 from the start.
  const std::string whole = dir_.file("whole");
  r = run_pacer("run " + shell_quoted(config_) + " --set max_steps=300 --out " +
                shell_quoted(whole));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(out_ + "/log.csv"), read_text(whole + "/log.csv"));
  EXPECT_EQ(read_text(out_ + "/jobs.csv"), read_text(whole + "/jobs.csv"));
  EXPECT_NE(read_text(out_ + "/config.toml").find("max_steps = 300"), std::string::npos);
}

// A run stopped by max_time whose last checkpoint came after its last update (finish() has since
// given that update's row the final evaluation's columns), extended on resume: the same as a run
// with the longer limit from the start.
TEST(Checkpoints, ARunThatEndedIsExtendedOnResume) {
  TempDir dir;
  const std::string config = dir.file("run.toml");
  write_text(config, config_text(kCases[0]));  // dgd
  const std::string out = dir.file("out");
  const std::string every_update = " --set checkpoint.every_steps=1 --set max_time=60";
  testing::CommandResult r =
      run_pacer("run " + shell_quoted(config) + every_update + " --out " + shell_quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("max_time"), std::string::npos) << r.output;
  r = run_pacer("run --resume " + shell_quoted(out) + " --set max_time=120");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string whole = dir.file("whole");
  r = run_pacer("run " + shell_quoted(config) +
                " --set checkpoint.every_steps=1 --set max_time=120 --out " + shell_quoted(whole));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(out + "/log.csv"), read_text(whole + "/log.csv"));
  EXPECT_EQ(read_text(out + "/jobs.csv"), read_text(whole + "/jobs.csv"));
  // Lowering a limit is no extension.
  r = run_pacer("run --resume " + shell_quoted(out) + " --set max_time=30");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("max_time: 120 -> 30"), std::string::npos) << r.output;
}

TEST(Checkpoints, WritingThemDoesNotChangeTheRun) {
  TempDir dir;
  const std::string config = dir.file("run.toml");
  write_text(config, config_text(kCases[7]));
  testing::CommandResult r =
      run_pacer("run " + shell_quoted(config) + " --out " + shell_quoted(dir.file("a")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_pacer("run " + shell_quoted(config) +
                " --set checkpoint.every_steps=0 --set checkpoint.every_s=0 --out " +
                shell_quoted(dir.file("b")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(dir.file("a/log.csv")), read_text(dir.file("b/log.csv")));
  EXPECT_EQ(read_text(dir.file("a/summary.json")), read_text(dir.file("b/summary.json")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("a/checkpoint.bin")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("b/checkpoint.bin")));
}

// Ctrl-C (or a time limit's SIGTERM) between two checkpoints: the run stops at once, writes one
// more checkpoint where it stopped, and the resumed run is the uninterrupted one. Also with jobs
// computed ahead on two threads (engine.compute_ahead, engine/sim/simulator.h), whose checkpoints
// undo the computations ahead and whose resume starts them again.
TEST(Checkpoints, AnInterruptedRunLosesNothing) {
  struct Interrupt {
    const char* signal;
    const char* environment;
  };
  for (const Interrupt& c :
       {Interrupt{"INT", ""}, Interrupt{"TERM", ""},
        Interrupt{"INT", "PACER_ENGINE_THREADS=2 PACER_COMPUTE_AHEAD=always "}}) {
    const char* signal = c.signal;
    SCOPED_TRACE(std::string(signal) + " " + c.environment);
    TempDir dir;
    const std::string config = dir.file("run.toml");
    write_text(config, config_text(kCases[9]));  // asgd with momentum
    const std::string whole = dir.file("whole");
    testing::CommandResult r =
        run_pacer("run " + shell_quoted(config) + " --out " + shell_quoted(whole));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // The signal arrives while the third evaluation's files are written (every evaluation
    // rewrites three: evals.csv, trace.csv, summary.json), at update 90: between the checkpoints
    // of updates 80 and 100.
    const std::string out = dir.file("out");
    r = run_command(std::string(c.environment) +
                    "PACER_STREAM_INTERVAL_S=0 PACER_TEST_CRASH_AT=outputs.replaced:9 " +
                    "PACER_TEST_CRASH_SIGNAL=" + signal + " " + PACER_BINARY + " run " +
                    shell_quoted(config) + " --out " + shell_quoted(out));
    ASSERT_EQ(r.exit_code, std::string(signal) == "INT" ? 130 : 143) << r.output;
    const std::string summary = read_text(out + "/summary.json");
    ASSERT_NE(summary.find("\"status\": \"interrupted\""), std::string::npos) << summary;
    ASSERT_NE(summary.find("\"steps\": 90"), std::string::npos) << summary;
    r = run_command(std::string(c.environment) + PACER_BINARY + " run --resume " +
                    shell_quoted(out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(read_text(out + "/log.csv"), read_text(whole + "/log.csv"));
    EXPECT_EQ(read_text(out + "/jobs.csv"), read_text(whole + "/jobs.csv"));
    EXPECT_EQ(read_text(out + "/summary.json"), read_text(whole + "/summary.json"));
  }
}

}  // namespace
}  // namespace pacer

namespace pacer {
namespace {

// config_text without its [checkpoint] table: the defaults (checkpoint.h: every 60 s of wall time,
// and where a run is interrupted).
std::string default_checkpoints_text(const Case& c) {
  std::string text = config_text(c);
  const std::string table = "[checkpoint]\nevery_steps = " + std::to_string(kEvery) + "\n";
  text.erase(text.find(table), table.size());
  return text;
}

// The OOM killer or a node failure (SIGKILL) in the middle of a run that set no checkpoint keys,
// before its first checkpoint (the test's runs last far less than 60 s): `pacer run --resume`
// starts it again in its folder, past the rows the killed run had written, and ends with the
// uninterrupted run's outputs.
TEST(DefaultCheckpoints, ARunKilledWithNoCheckpointKeysResumesToTheSameLog) {
  for (const Case& c : {kCases[7], kCases[13]}) {  // pgc-cr, asgd with momentum
    SCOPED_TRACE(c.method);
    TempDir dir;
    const std::string config = dir.file("run.toml");
    write_text(config, default_checkpoints_text(c));
    const std::string whole = dir.file("whole");
    testing::CommandResult r =
        run_pacer("run " + shell_quoted(config) + " --out " + shell_quoted(whole));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // Killed while the third evaluation's files are written (update 90 of 240).
    const std::string out = dir.file("out");
    r = run_command("PACER_STREAM_INTERVAL_S=0 PACER_TEST_CRASH_AT=outputs.replaced:9 " +
                    std::string(PACER_BINARY) + " run " + shell_quoted(config) + " --out " +
                    shell_quoted(out));
    ASSERT_NE(r.exit_code, 0) << "the crash point was not reached: " << r.output;
    ASSERT_FALSE(std::filesystem::exists(out + "/checkpoint.bin"));
    ASSERT_NE(read_text(out + "/summary.json").find("\"status\": \"running\""), std::string::npos);
    // Rows past the point the run starts again from: at least those up to the second evaluation.
    const std::string killed_log = read_text(out + "/log.csv");
    ASSERT_GT(std::count(killed_log.begin(), killed_log.end(), '\n'), 60) << killed_log;
    r = run_pacer("run --resume " + shell_quoted(out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("starting it again from step 0"), std::string::npos) << r.output;
    EXPECT_EQ(read_text(out + "/log.csv"), read_text(whole + "/log.csv"));
    EXPECT_EQ(read_text(out + "/jobs.csv"), read_text(whole + "/jobs.csv"));
    EXPECT_EQ(read_text(out + "/summary.json"), read_text(whole + "/summary.json"));
  }
}

// Ctrl-C in a run that set no checkpoint keys: it checkpoints where it stopped, says how to go
// on, and that command resumes it from there to the uninterrupted run's outputs.
TEST(DefaultCheckpoints, AnInterruptedRunWithNoCheckpointKeysResumesWhereItStopped) {
  TempDir dir;
  const std::string config = dir.file("run.toml");
  write_text(config, default_checkpoints_text(kCases[7]));
  const std::string whole = dir.file("whole");
  testing::CommandResult r =
      run_pacer("run " + shell_quoted(config) + " --out " + shell_quoted(whole));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string out = dir.file("out");
  r = run_command(
      "PACER_STREAM_INTERVAL_S=0 PACER_TEST_CRASH_AT=outputs.replaced:9 "
      "PACER_TEST_CRASH_SIGNAL=INT " +
      std::string(PACER_BINARY) + " run " + shell_quoted(config) + " --out " + shell_quoted(out));
  ASSERT_EQ(r.exit_code, 130) << r.output;
  ASSERT_TRUE(std::filesystem::exists(out + "/checkpoint.bin"));
  const std::string continuation =
      "continue it with: " + std::string(PACER_BINARY) + " run --resume " + out;
  EXPECT_NE(r.output.find(continuation), std::string::npos) << r.output;
  r = run_pacer("run --resume " + shell_quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("resuming from step 90"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(out + "/log.csv"), read_text(whole + "/log.csv"));
  EXPECT_EQ(read_text(out + "/summary.json"), read_text(whole + "/summary.json"));
}

}  // namespace
}  // namespace pacer
