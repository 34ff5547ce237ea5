// pacer sweep (experiment/sweep.h): a comparison in every cell of a grid, run in parallel
// processes; the outputs do not depend on how many run at once, and each cell is the comparison
// pacer compare gives for the cell's keys.
#include "pacer/experiment/sweep.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "pacer/core/error.h"
#include "test_util.h"

namespace pacer::testing {
namespace {

// A fast comparison: least squares on 6 workers, a target every method reaches.
std::string sweep_config() {
  return std::string(
             "workers = 6\nseed = 1\nmax_steps = 300\n[target]\nloss = 0.3\n[optimizer]\n"
             "lr = 0.05\n[method]\nname = \"dgd\"\n[timing]\nmodel = \"random_stragglers\"\n"
             "q = 0.2\ndelay_mean = 1.0\n") +
         kLeastSquaresTables;
}

// The compare.csv columns read_cell_result needs (a real compare.csv has more), for hand-written
// cells.
constexpr const char* kCompareCsvColumns =
    "method,tuned,runs,reached,diverged,steps_to_target_mean,steps_to_target_low,"
    "steps_to_target_high,steps_to_target_censored,time_to_target_mean,time_to_target_low,"
    "time_to_target_high,time_to_target_censored,step_time_mean,step_time_low,step_time_high,"
    "step_time_censored,final_loss_mean,final_loss_low,final_loss_high,final_loss_censored\n";

constexpr const char* kSweepArgs =
    " --methods dgd,pgc-cr:s=1,gc-cr:s=1 --grid timing.q=0.05,0.5 --grid timing.delay_mean=0.2,3"
    " --seeds 2";

TEST(Sweep, SameOutputsWithOneAndTwoParallelProcesses) {
  TempDir dir;
  write_text(dir.file("c.toml"), sweep_config());
  const CommandResult one =
      run_pacer("sweep " + dir.file("c.toml") + kSweepArgs + " --jobs 1 --out " + dir.file("one"));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const CommandResult two =
      run_pacer("sweep " + dir.file("c.toml") + kSweepArgs + " --jobs 2 --out " + dir.file("two"));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(one.output.find("1 at a time"), std::string::npos) << one.output;
  EXPECT_NE(two.output.find("2 at a time"), std::string::npos) << two.output;
  const std::string csv = read_text(dir.file("one/sweep.csv"));
  EXPECT_EQ(csv, read_text(dir.file("two/sweep.csv")));
  EXPECT_EQ(read_text(dir.file("one/report.md")), read_text(dir.file("two/report.md")));
  // A header and 4 cells × 3 methods; the first columns are the cell, its keys and the rank.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 * 3);
  EXPECT_EQ(csv.rfind("cell,timing.q,timing.delay_mean,rank,speedup_over_dgd,method,", 0), 0u);
  EXPECT_NE(csv.find("\n3,0.5,3,"), std::string::npos) << csv;
  EXPECT_TRUE(std::filesystem::exists(dir.file("one/regime_map.gp")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("one/figures/regime_map.dat")));
}

// Cell 2 (q = 0.5, delay_mean = 0.2) is pacer compare with those two keys set: the same table.
TEST(Sweep, EachCellIsTheComparisonOfItsKeys) {
  TempDir dir;
  write_text(dir.file("c.toml"), sweep_config());
  ASSERT_EQ(
      run_pacer("sweep " + dir.file("c.toml") + kSweepArgs + " --out " + dir.file("s")).exit_code,
      0);
  const CommandResult direct = run_pacer(
      "-q compare " + dir.file("c.toml") +
      " --methods dgd,pgc-cr:s=1,gc-cr:s=1 --seeds 2 --set timing.q=0.5 --set timing.delay_mean=0.2"
      " --out " +
      dir.file("direct"));
  ASSERT_EQ(direct.exit_code, 0) << direct.output;
  EXPECT_EQ(read_text(dir.file("s/cells/2/compare.csv")),
            read_text(dir.file("direct/compare.csv")));
}

TEST(Sweep, RanksByTheComparisonsCriterion) {
  const std::string header = kCompareCsvColumns;
  // b is fastest but missed a seed: it ranks below every method that reached the target on all.
  const SweepCellResult r = read_cell_result(header +
                                                 "dgd,,2,2,0,10,,,0,20,,,0,2,,,0,1,,,0\n"
                                                 "a,,2,2,0,10,,,0,8,,,0,1,,,0,1,,,0\n"
                                                 "b,,2,1,0,5,,,1,4,,,1,1,,,0,1,,,0\n",
                                             "compare.csv");
  ASSERT_TRUE(r.has_target);
  EXPECT_EQ(r.rank, (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(r.winner, 1);
  EXPECT_EQ(r.runner_up, 0);
  EXPECT_DOUBLE_EQ(r.speedup_over_dgd[1], 2.5);
  EXPECT_DOUBLE_EQ(r.winner_over_runner_up, 2.5);
  EXPECT_TRUE(std::isnan(r.speedup_over_dgd[2]));  // a lower bound: no ratio
}

TEST(Sweep, RefusesBadGridsAndNamesAFailedCell) {
  TempDir dir;
  write_text(dir.file("c.toml"), sweep_config());
  const std::string base = "sweep " + dir.file("c.toml") + " --methods dgd --out " + dir.file("s");
  for (const char* grid : {"timing.q", "=1,2", "timing.q=1,,2", "timing.q=1,1"}) {
    const CommandResult r = run_pacer(base + " --grid '" + grid + "'");
    EXPECT_EQ(r.exit_code, 1) << grid;
    EXPECT_NE(r.output.find("pacer: error: --grid"), std::string::npos) << r.output;
  }
  const CommandResult twice = run_pacer(base + " --grid timing.q=0.1 --grid timing.q=0.2");
  EXPECT_NE(twice.output.find("the key timing.q twice"), std::string::npos) << twice.output;
  // A value the key refuses: the cell's comparison fails; the sweep names the cell, its keys,
  // the cell's own error and its log.
  const CommandResult bad = run_pacer(base + " --grid timing.q=0.1,7");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("sweep cell 1 (timing.q=7) failed (exit status 1): pacer: error:"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("logs/cell-1.log"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("s/sweep.csv")));
  const CommandResult mpi = run_pacer(base + " --grid timing.q=0.1 --engine mpi");
  EXPECT_EQ(mpi.exit_code, 1);
  EXPECT_NE(mpi.output.find("pacer: error: pacer sweep: engine.name: expected \"sim\""),
            std::string::npos)
      << mpi.output;
}

// Without a target the criterion is the final F; the ratio is DGD's F over the method's.
TEST(Sweep, RanksByFinalLossWithoutATarget) {
  const std::string header = kCompareCsvColumns;
  const SweepCellResult r = read_cell_result(header +
                                                 "dgd,,2,0,0,,,,0,,,,0,2,,,0,0.6,,,0\n"
                                                 "a,,2,0,1,,,,0,,,,0,1,,,0,0.1,,,0\n"
                                                 "b,,2,0,0,,,,0,,,,0,1,,,0,0.3,,,0\n",
                                             "compare.csv");
  ASSERT_FALSE(r.has_target);
  EXPECT_EQ(r.rank, (std::vector<int>{2, 3, 1}));  // a diverged on a seed: ranked last
  EXPECT_DOUBLE_EQ(r.speedup_over_dgd[2], 2.0);
  EXPECT_TRUE(std::isnan(r.speedup_over_dgd[1]));
  // A count that is not one: an error naming the file and the column.
  try {
    read_cell_result(header + "dgd,,2.5,0,0,,,,0,,,,0,2,,,0,0.6,,,0\n", "cells/0/compare.csv");
    FAIL() << "accepted runs = 2.5";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cells/0/compare.csv: column runs: expected a "
                                         "non-negative integer, found '2.5'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pacer::testing
