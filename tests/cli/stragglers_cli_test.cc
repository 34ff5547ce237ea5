// pacer stragglers as a user meets it: on a run folder it names the workers that were slow in
// spells and how often each decided a step (log.csv), writes the report, the figure, JSON, CSV and
// the trace it read, which pacer fit and a block replay accept as they are; on the bundled example
// trace it names the two workers of the slow host; bad input is one error line naming the file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace pacer::testing {
namespace {

// 8 workers, 300 DGD steps: workers 2 and 5 share a host that turns slow with probability 0.02
// per step and recovers with probability 0.05 (4× in spells of 20 steps, slow 2/7 of the time);
// 3 % jitter. The seed was fixed before the test was run.
constexpr const char* kConfig = R"(workers = 8
seed = 4
max_steps = 300
eval_every = 0
eval_final = false
[record]
jobs = true
[optimizer]
lr = 0.05
[method]
name = "dgd"
[timing]
model = "persistent_stragglers"
tau = 0.1
jitter = 0.03
host = [0, 1, 2, 3, 4, 2, 6, 7]
slowdown = [1.0, 1.0, 4.0, 1.0, 1.0, 4.0, 1.0, 1.0]
p_slow = [0.0, 0.0, 0.02, 0.0, 0.0, 0.02, 0.0, 0.0]
p_recover = 0.05
)";

std::string error_line(const CommandResult& r) {
  const size_t at = r.output.find("pacer: error: ");
  return at == std::string::npos ? "" : r.output.substr(at, r.output.find('\n', at) - at);
}

TEST(CliStragglers, ARunFolderNamesTheChronicWorkersAndWritesTheReport) {
  TempDir dir;
  write_text(dir.file("run.toml"), std::string(kConfig) + kLeastSquaresTables);
  ASSERT_EQ(run_pacer("-q run " + dir.file("run.toml") + " --out " + dir.file("run")).exit_code, 0);
  const CommandResult r =
      run_pacer("stragglers " + dir.file("run") + " --top 2 --out " + dir.file("report"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(run folder): 8 workers, 2400 jobs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("chronic: workers 2 (slow on "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("; 5 (slow on "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("decided: the decisive worker of each synchronous step (log.csv) (300 "
                          "steps)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("pacer advise CONFIG --trace " + dir.file("report/trace.csv")),
            std::string::npos)
      << r.output;

  const nlohmann::json j = nlohmann::json::parse(read_text(dir.file("report/stragglers.json")));
  EXPECT_EQ(j["chronic"], nlohmann::json({2, 5}));
  EXPECT_EQ(j["workers"].size(), 8u);
  int64_t decided = 0;
  for (const nlohmann::json& w : j["workers"]) decided += w["decided"].get<int64_t>();
  EXPECT_EQ(decided, 300);  // every DGD step has one decisive worker
  // The top two by mean job time are the two slow workers (4× a third of the time against 1×).
  std::vector<int> top = j["slowest"].get<std::vector<int>>();
  std::sort(top.begin(), top.end());
  EXPECT_EQ(top, (std::vector<int>{2, 5}));
  EXPECT_NE(read_text(dir.file("report/stragglers.md")).find("| 2 | 300 |"), std::string::npos);
  EXPECT_EQ(read_text(dir.file("report/stragglers.csv")).substr(0, 14), "worker,jobs,mi");
  EXPECT_TRUE(std::filesystem::exists(dir.file("report/stragglers.gp")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("report/figures/stragglers-map.dat")));
  if (run_command("command -v gnuplot").exit_code == 0) {
    EXPECT_EQ(read_text(dir.file("report/stragglers.png")).substr(0, 4), "\x89PNG");
  }

  // The trace it wrote: fit reads it, and a run replays it by blocks, stating the block length.
  const std::string trace = dir.file("report/trace.csv");
  EXPECT_EQ(read_text(trace).substr(0, 27), "worker,duration,step,units\n");
  const CommandResult fit = run_pacer("fit " + trace + " --out " + dir.file("fit"));
  EXPECT_EQ(fit.exit_code, 0) << fit.output;
  EXPECT_NE(fit.output.find("chronic: 2 (slow on"), std::string::npos) << fit.output;
  const CommandResult replay = run_pacer(
      "-q run " + dir.file("run.toml") + " --set timing.model=trace --set timing.file=" + trace +
      " --set timing.replay=block --set max_steps=50 --out " + dir.file("replay"));
  ASSERT_EQ(replay.exit_code, 0) << replay.output;
  const nlohmann::json summary = nlohmann::json::parse(read_text(dir.file("replay/summary.json")));
  EXPECT_NE(summary.value("timing_note", "").find("steps: circular moving blocks of "),
            std::string::npos)
      << summary.dump();
}

TEST(CliStragglers, TheBundledExampleTraceNamesTheSlowHost) {
  TempDir dir;
  const CommandResult r =
      run_pacer(fmt::format("stragglers {}/configs/data/stragglers-example.csv --out {}",
                            PACER_SOURCE_DIR, dir.file("report")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(trace): 16 workers, 8000 jobs"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(read_text(dir.file("report/stragglers.json")));
  EXPECT_EQ(j["chronic"], nlohmann::json({3, 11}));
  EXPECT_NE(j["decided"]["rule"].get<std::string>().find("largest job time"), std::string::npos);
}

TEST(CliStragglers, BadInputIsOneErrorLineNamingTheFile) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("empty"));
  write_text(dir.file("gap.csv"), "worker,duration\n0,1\n2,1\n");
  write_text(dir.file("bad.csv"), "worker,duration,step\n0,1,x\n");
  const std::pair<std::string, std::string> cases[] = {
      {dir.file("none.csv"), "none.csv: cannot open the trace"},
      {dir.file("empty"), "empty: no jobs.csv in this folder"},
      {dir.file("gap.csv"), "gap.csv: no rows for worker 1"},
      {dir.file("bad.csv"), "bad.csv:2: expected a step"},
  };
  for (const auto& [input, expected] : cases) {
    const CommandResult r = run_pacer("stragglers " + input + " --out " + dir.file("o"));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(error_line(r).find(expected), std::string::npos) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("o/stragglers.md")));
}

}  // namespace
}  // namespace pacer::testing
