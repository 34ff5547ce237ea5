// Studies that survive interruption (run/earlier_run.h): pacer compare, sweep and advise
// given the same command and --out again reuse the runs that finished and resume the one that was
// interrupted, and end with the outputs of an uninterrupted command; a changed command starts its
// runs afresh; an interrupted command prints the command that continues it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

namespace pacer::testing {
namespace {

// 240 updates per run, an evaluation every 30: each run of the comparison below lasts a fraction
// of a second, far less than the default checkpoint interval (60 s).
const std::string kConfig = std::string(R"(workers = 6
seed = 3
max_steps = 240
eval_every = 30
[training]
batch = 8
[timing]
model = "exponential"
tau = 1.0
[optimizer]
lr = 0.02
[method]
name = "dgd"
)") + kLeastSquaresTables;

// Two methods, two seeds: four runs, in the order dgd seed 3, pgc-cr seed 3, dgd seed 4, pgc-cr
// seed 4 (seed-major, compare.cc).
const std::string kCompareArgs = " --methods dgd,pgc-cr:s=2 --seeds 2";
const std::vector<std::string> kRuns = {"dgd/seed3", "pgc-cr:s=2/seed3", "dgd/seed4",
                                        "pgc-cr:s=2/seed4"};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string status_of(const std::string& run_dir) {
  if (!std::filesystem::exists(run_dir + "/summary.json")) return "(none)";
  const std::string summary = read_text(run_dir + "/summary.json");
  const size_t at = summary.find("\"status\": \"");
  return summary.substr(at + 11, summary.find('"', at + 11) - at - 11);
}

class CompareAgain : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.file("run.toml");
    write_text(config_, kConfig);
    whole_ = dir_.file("whole");
    const CommandResult r = run_pacer(compare_args(whole_));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  std::string compare_args(const std::string& out, const std::string& extra = "") const {
    return "compare " + quoted(config_) + extra + kCompareArgs + " --out " + quoted(out);
  }
  // The comparison in `out` ends as the uninterrupted one: tables and every run's log.
  void expect_same_as_whole(const std::string& out) const {
    EXPECT_EQ(read_text(out + "/compare.csv"), read_text(whole_ + "/compare.csv"));
    EXPECT_EQ(read_text(out + "/runs.csv"), read_text(whole_ + "/runs.csv"));
    for (const std::string& run : kRuns) {
      EXPECT_EQ(read_text(out + "/" + run + "/log.csv"), read_text(whole_ + "/" + run + "/log.csv"))
          << run;
    }
  }
  TempDir dir_;
  std::string config_, whole_;
};

// SIGKILL in the third run, at its checkpoint of update 160 (checkpoint.every_steps = 20: each
// run writes 11, at updates 20..220, so the 30th is the third run's 8th): the two runs before it
// finished, the fourth never started.
TEST_F(CompareAgain, KilledMidwayReusesTheFinishedRunsAndResumesTheInterruptedOne) {
  const std::string out = dir_.file("killed");
  const std::string every = " --set checkpoint.every_steps=20";
  CommandResult r = run_command("PACER_TEST_CRASH_AT=checkpoint.renamed:30 " +
                                std::string(PACER_BINARY) + " " + compare_args(out, every));
  ASSERT_NE(r.exit_code, 0) << "the crash point was not reached: " << r.output;
  ASSERT_EQ(status_of(out + "/" + kRuns[0]), "max_steps");
  ASSERT_EQ(status_of(out + "/" + kRuns[1]), "max_steps");
  ASSERT_EQ(status_of(out + "/" + kRuns[2]), "running");
  ASSERT_EQ(status_of(out + "/" + kRuns[3]), "(none)");
  ASSERT_FALSE(std::filesystem::exists(out + "/compare.csv"));

  r = run_pacer(compare_args(out, every));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dgd seed 3: finished earlier, reused"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pgc-cr:s=2 seed 3: finished earlier, reused"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("dgd seed 4: resumed from step 160"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2 runs reused, 1 resumed, 0 started afresh"), std::string::npos)
      << r.output;
  expect_same_as_whole(out);
}

// The same with no checkpoint keys, killed before the run's first (default) checkpoint: that run
// starts again from step 0, past the rows it had written. Each run writes a snapshot of its files
// (crash point "outputs.snapshot", PACER_STREAM_INTERVAL_S = 0) at its evaluations of updates
// 30..210 (the one at 240 ends the run, which writes its final files instead): 7 per run, so the
// 17th is the third run's at update 90.
TEST_F(CompareAgain, KilledBeforeAnyCheckpointStartsTheInterruptedRunAgain) {
  const std::string out = dir_.file("killed");
  CommandResult r =
      run_command("PACER_STREAM_INTERVAL_S=0 PACER_TEST_CRASH_AT=outputs.snapshot:17 " +
                  std::string(PACER_BINARY) + " " + compare_args(out));
  ASSERT_NE(r.exit_code, 0) << "the crash point was not reached: " << r.output;
  ASSERT_EQ(status_of(out + "/" + kRuns[1]), "max_steps");
  ASSERT_EQ(status_of(out + "/" + kRuns[2]), "running");
  ASSERT_FALSE(std::filesystem::exists(out + "/" + kRuns[2] + "/checkpoint.bin"));
  const std::string killed_log = read_text(out + "/" + kRuns[2] + "/log.csv");
  ASSERT_GT(count(killed_log, "\n"), 90u) << killed_log;  // the header and updates 1..90

  r = run_pacer(compare_args(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dgd seed 4: stopped before its first checkpoint: started again"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("2 runs reused, 0 resumed, 1 started afresh"), std::string::npos)
      << r.output;
  expect_same_as_whole(out);
}

TEST_F(CompareAgain, TheSameCommandReusesEveryRunAndAChangedOneStartsAfresh) {
  CommandResult r = run_pacer(compare_args(whole_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "finished earlier, reused"), kRuns.size()) << r.output;
  EXPECT_NE(r.output.find("4 runs reused, 0 resumed, 0 started afresh"), std::string::npos)
      << r.output;
  // A changed stepsize: every run's stored configuration differs, so every run starts afresh and
  // the comparison is that of the new command.
  const std::string before = read_text(whole_ + "/compare.csv");
  r = run_pacer(compare_args(whole_, " --set optimizer.lr=0.03"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "another configuration (optimizer.lr: 0.02 -> "), kRuns.size())
      << r.output;
  const std::string fresh = dir_.file("fresh");
  r = run_pacer(compare_args(fresh, " --set optimizer.lr=0.03"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(whole_ + "/compare.csv"), read_text(fresh + "/compare.csv"));
  EXPECT_NE(read_text(whole_ + "/compare.csv"), before);
}

// A run that another build of pacer wrote (summary.json's pacer_build) is not passed off as this
// build's: it runs again.
TEST_F(CompareAgain, ARunOfAnotherBuildRunsAgain) {
  const std::string summary_path = whole_ + "/" + kRuns[0] + "/summary.json";
  std::string summary = read_text(summary_path);
  const size_t at = summary.find("\"pacer_build\": \"");
  ASSERT_NE(at, std::string::npos) << summary;
  summary.replace(at + 16, 16, "0123456789abcdef");  // the value's 16 hex digits
  ASSERT_NE(summary.find("\"pacer_build\": \"0123456789abcdef\","), std::string::npos) << summary;
  write_text(summary_path, summary);
  const CommandResult r = run_pacer(compare_args(whole_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dgd seed 3: its folder holds a run of another build of pacer"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("3 runs reused, 0 resumed, 1 started afresh"), std::string::npos)
      << r.output;
  EXPECT_EQ(read_text(summary_path).find("0123456789abcdef"), std::string::npos);
}

// Ctrl-C in the third run: the command says which command continues it, and that command (run as
// printed) ends with the uninterrupted comparison.
TEST_F(CompareAgain, AnInterruptedComparePrintsTheCommandThatContinuesIt) {
  const std::string out = dir_.file("interrupted");
  const std::string args = compare_args(out, " --set checkpoint.every_steps=20");
  CommandResult r = run_command(
      "PACER_TEST_CRASH_AT=checkpoint.renamed:30 "
      "PACER_TEST_CRASH_SIGNAL=INT " +
      std::string(PACER_BINARY) + " " + args);
  ASSERT_EQ(r.exit_code, 130) << r.output;
  const std::string prefix = "continue it with the same command: ";
  const size_t at = r.output.find(prefix);
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string command =
      r.output.substr(at + prefix.size(), r.output.find('\n', at) - at - prefix.size());
  EXPECT_EQ(command.rfind(std::string(PACER_BINARY) + " compare ", 0), 0u) << command;
  r = run_command(command);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dgd seed 4: resumed from step 160"), std::string::npos) << r.output;
  expect_same_as_whole(out);
}

// pacer sweep runs a comparison per cell (sweep.h): the same sweep again reuses every cell's runs,
// says so per cell, and writes the same sweep.csv.
TEST(SweepAgain, ReusesEveryCellsRuns) {
  TempDir dir;
  write_text(dir.file("run.toml"), kConfig);
  const std::string args = "sweep " + dir.file("run.toml") +
                           " --methods dgd,pgc-cr:s=2 --grid optimizer.lr=0.01,0.02 --jobs 1 "
                           "--out " +
                           dir.file("sweep");
  CommandResult r = run_pacer(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string first = read_text(dir.file("sweep/sweep.csv"));
  r = run_pacer(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cell 0 (optimizer.lr=0.01): continued the earlier comparison in"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(count(r.output, "2 runs reused, 0 resumed, 0 started afresh"), 2u) << r.output;
  EXPECT_EQ(read_text(dir.file("sweep/sweep.csv")), first);
}

// pacer advise runs comparisons in its folder (advise.h): the same advise again reuses every one
// of its runs and gives the same answer.
TEST(AdviseAgain, ReusesEveryRun) {
  TempDir dir;
  write_text(dir.file("run.toml"), std::string(R"(workers = 4
max_steps = 400
eval_every = 0
)") + kLeastSquaresTables + R"([training]
batch = 0
[optimizer]
lr = 0.05
[target]
loss = 0.3
[method]
name = "dgd"
)");
  std::string trace = "worker,duration\n";
  for (int j = 0; j < 40; ++j) {
    for (int w = 0; w < 4; ++w) trace += std::to_string(w) + (w == 3 ? ",10\n" : ",1\n");
  }
  write_text(dir.file("trace.csv"), trace);
  const std::string args = "advise " + dir.file("run.toml") + " --trace " + dir.file("trace.csv") +
                           " --methods dgd,pgc-fr:s=1 --seeds 2 --out " + dir.file("advice");
  CommandResult r = run_pacer(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string report = read_text(dir.file("advice/report.md"));
  size_t runs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.file("advice"))) {
    runs += entry.path().filename() == "summary.json" ? 1 : 0;
  }
  ASSERT_GT(runs, 4u);
  r = run_pacer(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "finished earlier, reused"), runs) << r.output;
  EXPECT_EQ(count(r.output, "started afresh"), 0u) << r.output;
  EXPECT_EQ(read_text(dir.file("advice/report.md")), report);
}

}  // namespace
}  // namespace pacer::testing
