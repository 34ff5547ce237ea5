// Verdicts as a user meets them on the command line (issue #24): pacer compare names a best method
// only where the runs decide it, says "undecided" between two methods that run identically and
// "no method reached the target" when the budget is too short; no interval of a positive quantity
// it prints or writes reaches below zero.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace pacer::testing {
namespace {

// 6 workers, least squares with minibatches and random stragglers: seeds differ.
std::string config() {
  return std::string(
             "workers = 6\nseed = 1\nmax_steps = 300\n[target]\nloss = 0.3\n[optimizer]\n"
             "lr = 0.05\n[training]\nbatch = 8\n[method]\nname = \"dgd\"\n[timing]\n"
             "model = \"random_stragglers\"\nq = 0.3\ndelay_mean = 2.0\n") +
         kLeastSquaresTables;
}

TEST(VerdictCli, TwoIdenticalMethodsAreUndecided) {
  TempDir dir;
  write_text(dir.file("c.toml"), config());
  // The second spec sets the configuration's own stepsize: the same runs, seed by seed.
  const CommandResult r =
      run_pacer("-q compare " + dir.file("c.toml") +
                " --methods dgd,dgd:optimizer.lr=0.05 --seeds 3 --out " + dir.file("cmp"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Verdict: undecided between dgd and dgd:optimizer.lr=0.05"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("best: "), std::string::npos) << r.output;
  const std::string report = read_text(dir.file("cmp/report.md"));
  EXPECT_NE(report.find("undecided between dgd and dgd:optimizer.lr=0.05"), std::string::npos);
  const auto rows = read_csv_rows(dir.file("cmp/compare.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][5], "leader");
  EXPECT_EQ(rows[1][5], "tie");
}

TEST(VerdictCli, ATooShortBudgetReachesNoTargetAndNamesNoBest) {
  TempDir dir;
  write_text(dir.file("c.toml"), config());
  const CommandResult r =
      run_pacer("-q compare " + dir.file("c.toml") + " --methods dgd,is-sgd:k=1 --seeds 2 " +
                "--budget steps=3 --out " + dir.file("cmp"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Verdict: no method reached the target on every seed within 3 steps"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("best: "), std::string::npos) << r.output;
  for (const auto& row : read_csv_rows(dir.file("cmp/compare.csv")))
    EXPECT_EQ(row[5], "") << row[0];
}

// Every interval compare.csv writes for a positive quantity (times, steps, F, ratios, units) has a
// low end >= 0, here with seeds whose step times differ by a lot, and the printed table has no
// negative number in an interval.
TEST(VerdictCli, NoIntervalOfAPositiveQuantityReachesBelowZero) {
  TempDir dir;
  write_text(dir.file("c.toml"), config());
  const CommandResult r = run_pacer(
      "-q compare " + dir.file("c.toml") +
      " --methods dgd,is-sgd:k=1,gc-cr:s=1,pgc-cr:s=1 --seeds 2 --set timing.delay_mean=20 --out " +
      dir.file("cmp"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("[-"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(", -"), std::string::npos) << r.output;
  const auto rows = read_csv_rows(dir.file("cmp/compare.csv"));
  const std::vector<std::string> header = read_csv_header(dir.file("cmp/compare.csv"));
  int checked = 0;
  for (size_t column = 0; column < header.size(); ++column) {
    if (!header[column].ends_with("_low")) continue;
    for (const auto& row : rows) {
      if (row[column].empty()) continue;
      EXPECT_GE(std::stod(row[column]), 0.0) << header[column] << " of " << row[0];
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace pacer::testing
