// pacer sweep (study/sweep.h): a comparison in every cell of a grid, run in parallel
// processes; the outputs do not depend on how many run at once, and each cell is the comparison
// pacer compare gives for the cell's keys.
#include "pacer/study/sweep.h"

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

// A cell's runs.csv and compare.csv from per-seed times to target (NaN: missed, censored at
// `budget`) or, with `has_target` false, final F values (NaN: diverged).
struct HandCell {
  std::string runs, compare;
};
HandCell hand_cell(const std::vector<std::pair<std::string, std::vector<double>>>& methods,
                   bool has_target, double budget = 100) {
  Comparison c;
  if (has_target) c.targets = {0.5};
  c.budget = Budget{Budget::Kind::kTime, budget, true};
  HandCell cell{"", "method\n"};
  for (const auto& [spec, values] : methods) {
    MethodResult& m = c.methods.emplace_back();
    m.spec = spec;
    for (size_t k = 0; k < values.size(); ++k) {
      SeedRun& r = m.runs.emplace_back();
      r.seed = k + 1;
      r.end_time = budget;
      if (has_target) {
        r.reached = !std::isnan(values[k]);
        r.time_to_target = values[k];
      } else {
        r.diverged = std::isnan(values[k]);
        r.final_loss = values[k];
      }
    }
    cell.compare += spec + "\n";
  }
  cell.runs = seed_runs_csv(c);
  return cell;
}

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
  EXPECT_EQ(csv.rfind("cell,timing.q,timing.delay_mean,rank,speedup_over_dgd_mean,"
                      "speedup_over_dgd_low,speedup_over_dgd_high,method,",
                      0),
            0u);
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

TEST(Sweep, RanksByTheComparisonsCriterionAndDecidesByTheVerdictsRule) {
  const double missed = kNotAvailable;
  // b is fastest but missed a seed: it ranks below every method that reached the target on all.
  const HandCell cell =
      hand_cell({{"dgd", {20, 22, 19}}, {"a", {8, 9, 7.5}}, {"b", {4, missed, 5}}}, true);
  const SweepCellResult r = read_cell_result(cell.runs, cell.compare, "cells/0");
  ASSERT_TRUE(r.has_target());
  EXPECT_EQ(r.rank, (std::vector<int>{2, 1, 3}));
  // a leads; b's missed seed is censored at the budget (100 s), far above a's time there, and its
  // other seeds are faster than a's: the interval of b/a includes 1, so nothing is decided.
  EXPECT_EQ(r.verdict.leader, 1);
  EXPECT_EQ(r.verdict.outcome, Verdict::Outcome::kUndecided);
  EXPECT_EQ(r.verdict.tied, (std::vector<int>{2}));
  // The speedup over DGD is paired: the geometric mean of 20/8, 22/9, 19/7.5.
  EXPECT_NEAR(r.speedup_over_dgd[1].mean, std::cbrt(20.0 / 8 * 22.0 / 9 * 19.0 / 7.5), 1e-12);
  EXPECT_GT(r.speedup_over_dgd[1].low, 1);
  EXPECT_EQ(r.speedup_over_dgd[2].censored, 1);
}

TEST(Sweep, TwoIdenticalMethodsAreUndecidedAndAClearWinnerIsBest) {
  const HandCell same = hand_cell({{"a", {8, 9, 7.5}}, {"a2", {8, 9, 7.5}}}, true);
  const SweepCellResult tie = read_cell_result(same.runs, same.compare, "cells/0");
  EXPECT_EQ(tie.verdict.outcome, Verdict::Outcome::kUndecided);
  EXPECT_NE(tie.verdict.what_would_decide.find("no number of seeds"), std::string::npos)
      << tie.verdict.what_would_decide;
  const HandCell clear = hand_cell({{"a", {8, 9, 7.5}}, {"b", {16, 19, 15}}}, true);
  const SweepCellResult win = read_cell_result(clear.runs, clear.compare, "cells/1");
  EXPECT_EQ(win.verdict.outcome, Verdict::Outcome::kBest);
  EXPECT_EQ(win.verdict.leader, 0);
  const HandCell none = hand_cell({{"a", {kNotAvailable, 9}}, {"b", {kNotAvailable, 12}}}, true);
  const SweepCellResult nobody = read_cell_result(none.runs, none.compare, "cells/2");
  EXPECT_EQ(nobody.verdict.outcome, Verdict::Outcome::kNoneReached);
  EXPECT_EQ(nobody.verdict.leader, -1);
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
  const HandCell cell =
      hand_cell({{"dgd", {0.6, 0.62}}, {"a", {0.1, kNotAvailable}}, {"b", {0.3, 0.31}}}, false);
  const SweepCellResult r = read_cell_result(cell.runs, cell.compare, "cells/0");
  ASSERT_FALSE(r.has_target());
  EXPECT_EQ(r.rank, (std::vector<int>{2, 3, 1}));  // a diverged on a seed: ranked last
  EXPECT_NEAR(r.speedup_over_dgd[2].mean, std::sqrt(0.6 / 0.3 * 0.62 / 0.31), 1e-12);
  EXPECT_EQ(r.speedup_over_dgd[1].n, 1);  // only the seed on which a has a final F
  EXPECT_EQ(r.verdict.leader, 2);         // a diverged: not a contender, and not a tie
  // runs.csv that is not one, and compare.csv rows that do not match it: errors naming the file.
  try {
    read_cell_result("method,seed\n", cell.compare, "cells/0");
    FAIL() << "accepted a runs.csv with another header";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cells/0/runs.csv: line 1: not a runs.csv"),
              std::string::npos)
        << e.what();
  }
  try {
    read_cell_result(cell.runs, "method\ndgd\n", "cells/0");
    FAIL() << "accepted a compare.csv with one row for three methods";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cells/0/compare.csv: 1 rows, its runs.csv has 3"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pacer::testing
