// pacer validate as a user meets it, on the local engine (workers on threads, real time: no MPI
// needed): it runs the methods for real, predicts each from DGD's job log and from its own, and
// writes the table, validate.csv and the runs; the prediction of DGD from DGD's own log is the same
// replay by both routes (the same trace and seeds: the same numbers); a simulated engine and a
// method list without DGD are errors naming what was expected. (Measured against MPI:
// docs/studies.md; the numbers depend on the machine, so no test asserts their size.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

namespace pacer::testing {
namespace {

constexpr const char* kConfig = R"(seed = 1
workers = 4
max_steps = 30
eval_every = 0
[data]
source = "synthetic"
generator = "least_squares"
samples = 400
features = 10
[model]
name = "least_squares"
[training]
batch = 0
[optimizer]
lr = 0.05
[target]
loss = 0.5
stop = false
[timing]
model = "random_stragglers"
tau = 0.02
q = 0.2
delay_mean = 0.05
)";

// The fields of line `method` of validate.csv (empty when absent).
std::vector<std::string> row_of(const std::string& csv, const std::string& method) {
  size_t start = csv.find("\n" + method + ",");
  if (start == std::string::npos) return {};
  ++start;
  const std::string line = csv.substr(start, csv.find('\n', start) - start);
  std::vector<std::string> fields;
  size_t from = 0;
  for (size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1) {
    fields.push_back(line.substr(from, comma - from));
  }
  fields.push_back(line.substr(from));
  return fields;
}

TEST(ValidateCli, RunsForRealAndPredictsEachMethodFromDgdsLogAndItsOwn) {
  TempDir dir;
  write_text(dir.file("v.toml"), kConfig);
  const CommandResult r =
      run_pacer("-q validate " + dir.file("v.toml") +
                " --engine local --set engine.inject=pace --methods dgd,pgc-cr:s=1 --seeds 2 "
                "--out " +
                dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| pgc-cr:s=1 |"), std::string::npos) << r.output;
  for (const char* path :
       {"report.md", "validate.csv", "measured/compare.csv", "measured/dgd/seed1/jobs.csv",
        "predicted/trace.csv", "own/pgc-cr:s=1/trace.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(dir.file("out/") + path)) << path;
  }
  const std::string csv = read_text(dir.file("out/validate.csv"));
  const std::vector<std::string> dgd = row_of(csv, "dgd"), pgc = row_of(csv, "pgc-cr:s=1");
  ASSERT_EQ(dgd.size(), 17u) << csv;
  ASSERT_EQ(pgc.size(), 17u) << csv;
  // Columns: 1 measured s/step, 2-5 predicted from DGD's log, 12-15 from its own log.
  EXPECT_GT(std::stod(dgd[1]), 0);
  EXPECT_GT(std::stod(pgc[1]), 0);
  for (int k = 2; k <= 4; ++k) EXPECT_EQ(dgd[k], dgd[k + 10]) << csv;
  EXPECT_GT(std::stod(pgc[2]), 0);
}

TEST(ValidateCli, RefusesTheSimulatorAndAMethodListWithoutDgd) {
  TempDir dir;
  write_text(dir.file("v.toml"), kConfig);
  CommandResult r = run_pacer("-q validate " + dir.file("v.toml") + " --out " + dir.file("o"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("engine.name: expected a real engine (--engine local"), std::string::npos)
      << r.output;
  r = run_pacer("-q validate " + dir.file("v.toml") + " --engine local --methods pgc-cr --out " +
                dir.file("o"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--methods pgc-cr: expected a list with dgd"), std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("o/measured"))) << "nothing ran";
}

}  // namespace
}  // namespace pacer::testing
