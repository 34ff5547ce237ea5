// pacer fit TRACE as a user meets it: it prints the ranking and a [timing] table that a config
// accepts as it is, writes fit.md, fit.csv and the figure, and answers bad input with one error
// line naming the file (and line) and exit status 1.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "pacer/core/config.h"
#include "pacer/core/rng.h"
#include "pacer/timing/timing_model.h"
#include "test_util.h"

namespace pacer::testing {
namespace {

// 2 workers, 300 one-unit jobs each, drawn as the engines draw them from random_stragglers with
// τ = [0.1, 0.2]: three jobs in four take exactly τ_i, so the fit finds τ_i exactly.
std::string straggler_trace() {
  const Config config = Config::parse(
      "[timing]\nmodel = \"random_stragglers\"\ntau = [0.1, 0.2]\nq = 0.25\ndelay_mean = 0.05\n",
      "t.toml");
  const std::unique_ptr<TimingModel> model = make_timing_model(config, 2, 3);
  std::string text = "worker,duration\n";
  Rng rngs[] = {Rng(3, "duration", 0), Rng(3, "duration", 1)};
  for (int j = 0; j < 300; ++j) {
    for (int w = 0; w < 2; ++w) {
      text += fmt::format("{},{:.17g}\n", w, model->compute_time(w, 1.0, j, rngs[w]).total());
    }
  }
  return text;
}

// The printed [timing] table: from "[timing]" to the first blank line.
std::string printed_table(const std::string& output) {
  const size_t begin = output.find("[timing]\n");
  if (begin == std::string::npos) return "";
  return output.substr(begin, output.find("\n\n", begin) - begin + 1);
}

std::string error_line(const CommandResult& r) {
  const size_t at = r.output.find("pacer: error: ");
  return at == std::string::npos ? "" : r.output.substr(at, r.output.find('\n', at) - at);
}

constexpr const char* kRunConfig = R"(workers = 2
max_steps = 5
eval_every = 0
[data]
source = "synthetic"
generator = "least_squares"
samples = 100
features = 4
[model]
name = "least_squares"
[optimizer]
lr = 0.05
[method]
name = "dgd"
)";

TEST(CliFit, PrintsTheRankingAndAPasteableTimingTable) {
  TempDir dir;
  write_text(dir.file("t.csv"), straggler_trace());
  const CommandResult r = run_pacer("fit " + dir.file("t.csv") + " --out " + dir.file("fit"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 workers, 600 rows (300 per worker)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("persistent slowness"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("   1. random_stragglers"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("random_stragglers describes the rows: KS"), std::string::npos)
      << r.output;
  const std::string table = printed_table(r.output);
  EXPECT_EQ(table.substr(0, table.find("\nq = ")),
            "[timing]\nmodel = \"random_stragglers\"\ntau = [0.1, 0.2]")
      << r.output;
  EXPECT_NE(table.find("\ndelay_mean = "), std::string::npos) << table;

  // The table, pasted into a config, runs.
  write_text(dir.file("run.toml"), std::string(kRunConfig) + table);
  const CommandResult run =
      run_pacer("run " + dir.file("run.toml") + " --out " + dir.file("run") + " -q");
  EXPECT_EQ(run.exit_code, 0) << run.output;

  // The files: report, table, figure script and data, and the PNG where gnuplot is installed.
  EXPECT_NE(read_text(dir.file("fit/fit.md")).find("```toml\n" + table), std::string::npos);
  EXPECT_NE(read_text(dir.file("fit/fit.csv")).find("\npooled,,random_stragglers,per_worker,yes,"),
            std::string::npos);
  EXPECT_NE(read_text(dir.file("fit/fit.gp")).find("'figures/fit-models.dat'"), std::string::npos);
  EXPECT_FALSE(read_text(dir.file("fit/figures/fit-measured.dat")).empty());
  if (run_command("command -v gnuplot").exit_code == 0) {
    EXPECT_EQ(read_text(dir.file("fit/fit.png")).substr(0, 4), "\x89PNG");
    // Re-run by hand, the script draws without a message.
    const CommandResult again = run_command(
        fmt::format("cd '{}' && gnuplot -e \"png='/dev/null'\" fit.gp", dir.file("fit")));
    EXPECT_EQ(again.exit_code, 0);
    EXPECT_EQ(again.output, "");
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("fit"))) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

TEST(CliFit, WritesToRunsFitTraceNameByDefault) {
  TempDir dir;
  write_text(dir.file("cluster-a.csv"), straggler_trace());
  const CommandResult r =
      run_command(fmt::format("cd '{}' && {} fit cluster-a.csv", dir.path(), PACER_BINARY));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir.file("runs/fit-cluster-a/fit.md")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("runs/fit-cluster-a/fit.csv")));
}

TEST(CliFit, BadInputIsOneErrorLineNamingTheFile) {
  TempDir dir;
  const std::string good = straggler_trace();
  struct Case {
    std::string content, expected;
  };
  const Case cases[] = {
      {"worker,seconds\n0,1\n", "t.csv:1: expected the header \"worker,duration\""},
      {"worker,duration\n0,1\n1,-0.5\n", "t.csv:3: expected a duration"},
      {good + "1,0\n", "t.csv:602: expected a duration"},
      {"worker,duration\n0,1\n0,2\n", "worker 0 has 2 rows; pacer fit needs at least 10"},
  };
  for (const Case& c : cases) {
    write_text(dir.file("t.csv"), c.content);
    const CommandResult r = run_pacer("fit " + dir.file("t.csv") + " --out " + dir.file("o"));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(error_line(r).find(c.expected), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("o/fit.md"))) << c.expected;
  }
  const CommandResult missing = run_pacer("fit " + dir.file("none.csv"));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(error_line(missing).find("none.csv: cannot open the trace"), std::string::npos)
      << missing.output;
}

}  // namespace
}  // namespace pacer::testing
