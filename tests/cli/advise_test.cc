// pacer profile and pacer advise as a user meets them: profile writes a trace of K jobs per worker
// that the trace model accepts; advise on a trace whose slow worker is known recommends a method
// that does not wait for it, prints the ranking, the "recommended:" line and the what-ifs, and
// writes report.md with its figures; bad input is one error line naming the file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "test_util.h"

namespace pacer::testing {
namespace {

// 4 workers, full-batch least squares, a target on the training loss every method reaches.
const std::string kConfig = std::string(R"(workers = 4
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
)";

// Worker 3 takes 10 s per unit, the others 1 s with one job in five at 3 s: persistently slow.
std::string slow_worker_trace() {
  std::string text = "worker,duration\n";
  for (int j = 0; j < 40; ++j) {
    for (int w = 0; w < 4; ++w) {
      text += fmt::format("{},{}\n", w, w == 3 ? 10.0 : (j % 5 == 0 ? 3.0 : 1.0));
    }
  }
  return text;
}

std::string error_line(const CommandResult& r) {
  const size_t at = r.output.find("pacer: error: ");
  return at == std::string::npos ? "" : r.output.substr(at, r.output.find('\n', at) - at);
}

TEST(Profile, WritesKJobsPerWorkerAsATraceTheTraceModelReplays) {
  TempDir dir;
  write_text(dir.file("run.toml"), kConfig);
  const CommandResult r =
      run_pacer("profile " + dir.file("run.toml") + " --jobs 7 --out " + dir.file("profile"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream trace(read_text(dir.file("profile/trace.csv")));
  std::string line;
  std::getline(trace, line);
  EXPECT_EQ(line, "worker,duration");
  std::map<int, int> rows;
  while (std::getline(trace, line)) {
    const size_t comma = line.find(',');
    ASSERT_NE(comma, std::string::npos) << line;
    EXPECT_GT(std::stod(line.substr(comma + 1)), 0.0) << line;
    ++rows[std::stoi(line.substr(0, comma))];
  }
  EXPECT_EQ(rows, (std::map<int, int>{{0, 7}, {1, 7}, {2, 7}, {3, 7}}));
  // The trace is one a run replays as it is.
  const CommandResult replay =
      run_pacer("run " + dir.file("run.toml") + " --set timing.model=trace --set timing.file=" +
                dir.file("profile/trace.csv") + " --set max_steps=5 --out " + dir.file("replay"));
  EXPECT_EQ(replay.exit_code, 0) << replay.output;
}

TEST(Advise, RecommendsAMethodThatDoesNotWaitForTheSlowWorker) {
  TempDir dir;
  write_text(dir.file("run.toml"), kConfig);
  write_text(dir.file("trace.csv"), slow_worker_trace());
  const CommandResult r = run_pacer(
      "-q advise " + dir.file("run.toml") + " --trace " + dir.file("trace.csv") +
      " --methods dgd,is-sgd:k=1,gc-fr:s=2,pgc-fr:s=1 --seeds 3 --out " + dir.file("advice"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // DGD waits 10 s per step for worker 3; IS-SGD (k = 1) and PGC-FR (s = 1) need not: one of
  // them is recommended, or, where 3 seeds cannot tell them apart, both are (as a group ahead of
  // DGD), or the answer is undecided between them; DGD is never it.
  const size_t rec = r.output.find("\nrecommended: ");
  const size_t group = r.output.find("\nrecommended: one of ");
  const size_t undecided = r.output.find("\nno recommendation: undecided between ");
  ASSERT_TRUE(rec != std::string::npos || undecided != std::string::npos) << r.output;
  if (group != std::string::npos) {
    const std::string line = r.output.substr(group, r.output.find('\n', group + 1) - group);
    EXPECT_NE(line.find("is-sgd:k=1"), std::string::npos) << line;
    EXPECT_NE(line.find("pgc-fr:s=1"), std::string::npos) << line;
    EXPECT_EQ(line.find("dgd"), std::string::npos) << line;
  } else if (rec != std::string::npos) {
    const std::string chosen = r.output.substr(rec + 14, r.output.find(": ", rec + 14) - rec - 14);
    EXPECT_TRUE(chosen.rfind("is-sgd:k=1", 0) == 0 || chosen.rfind("pgc-fr:s=1", 0) == 0)
        << r.output;
  } else {
    const std::string line =
        r.output.substr(undecided, r.output.find('\n', undecided + 1) - undecided);
    EXPECT_NE(line.find("is-sgd:k=1"), std::string::npos) << line;
    EXPECT_NE(line.find("pgc-fr:s=1"), std::string::npos) << line;
    EXPECT_EQ(line.find("between dgd"), std::string::npos) << line;
  }
  EXPECT_NE(r.output.find("optimizer.lr tuned on seeds 4..5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("budget: "), std::string::npos) << r.output;

  // gc-fr with s = 2 needs s + 1 = 3 to divide n = 4: left out, and the report says why.
  const std::string report = read_text(dir.file("advice/report.md"));
  EXPECT_NE(report.find("gc-fr:s=2"), std::string::npos);
  EXPECT_NE(report.find("Not applicable"), std::string::npos);
  EXPECT_NE(r.output.find("if stragglers twice as slow:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("if stragglers twice as frequent:"), std::string::npos) << r.output;
  for (const char* scenario : {"measured", "slower", "frequent"}) {
    EXPECT_NE(report.find(fmt::format("![loss]({}/loss.png)", scenario)), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(dir.file(fmt::format("advice/{}/loss.gp", scenario))));
    EXPECT_TRUE(std::filesystem::exists(dir.file(fmt::format("advice/{}/compare.csv", scenario))));
  }
  // The speedup over DGD is large: 10 s steps against at most 3 s. The ranking's first row is
  // the leader; its last cell the speedup over DGD with its interval.
  const size_t first_row = r.output.find("\n| 1 | ");
  ASSERT_NE(first_row, std::string::npos) << r.output;
  const std::string row =
      r.output.substr(first_row + 1, r.output.find('\n', first_row + 1) - first_row);
  const std::string speedup = row.substr(row.rfind("| ", row.size() - 3) + 2);
  EXPECT_GT(std::stod(speedup), 3.0) << row;
  // DGD's own row is the baseline of the speedups, not a ratio of its runs to themselves.
  const size_t dgd_row = r.output.find("| dgd");
  ASSERT_NE(dgd_row, std::string::npos) << r.output;
  EXPECT_NE(
      r.output.substr(dgd_row, r.output.find('\n', dgd_row) - dgd_row).find("| 1 (the baseline) |"),
      std::string::npos)
      << r.output;
}

TEST(Advise, AJobsCsvIsATraceAndABadTraceIsOneErrorNamingTheFile) {
  TempDir dir;
  write_text(dir.file("run.toml"), kConfig);
  ASSERT_EQ(
      run_pacer("-q run " + dir.file("run.toml") + " --set max_steps=20 --out " + dir.file("run"))
          .exit_code,
      0);
  const CommandResult ok =
      run_pacer("-q advise " + dir.file("run.toml") + " --trace " + dir.file("run/jobs.csv") +
                " --methods dgd,is-sgd:k=1 --seeds 2 --out " + dir.file("advice"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("ranking on the measured trace"), std::string::npos) << ok.output;

  write_text(dir.file("bad.csv"), "worker,duration\n0,1\n9,1\n");
  const CommandResult bad = run_pacer("advise " + dir.file("run.toml") + " --trace " +
                                      dir.file("bad.csv") + " --out " + dir.file("bad"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(error_line(bad).find(dir.file("bad.csv")), std::string::npos) << bad.output;
}

// A misspelt method is the user's mistake: an error naming it, before anything is written, and
// not a candidate quietly left out as "not applicable".
TEST(Advise, AMisspeltMethodIsAnErrorNamingIt) {
  TempDir dir;
  write_text(dir.file("run.toml"), kConfig);
  write_text(dir.file("trace.csv"), slow_worker_trace());
  const CommandResult r =
      run_pacer("advise " + dir.file("run.toml") + " --trace " + dir.file("trace.csv") +
                " --methods dgd,asgdd --seeds 2 --out " + dir.file("advice"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(error_line(r).find("--methods asgdd: key 'method.name': expected one of "),
            std::string::npos)
      << r.output;
  EXPECT_NE(error_line(r).find("did you mean \"asgd\""), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("advice"))) << r.output;
}

// The one rule of the verdict, as advise applies it: two methods that run identically are never
// told apart, however many seeds; a budget no method reaches the target in gives no recommendation.
TEST(Advise, IdenticalMethodsAreUndecidedAndATooShortBudgetRecommendsNothing) {
  TempDir dir;
  write_text(dir.file("run.toml"), kConfig);
  write_text(dir.file("trace.csv"), slow_worker_trace());
  const std::string advise = "-q advise " + dir.file("run.toml") + " --trace " +
                             dir.file("trace.csv") + " --seeds 3 --tune none ";
  const CommandResult same = run_pacer(
      advise + "--methods is-sgd:k=1,is-sgd:k=1:optimizer.lr=0.05 --out " + dir.file("same"));
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(same.output.find("\nrecommended: "), std::string::npos) << same.output;
  EXPECT_NE(same.output.find("no recommendation: undecided between is-sgd:k=1 and "
                             "is-sgd:k=1:optimizer.lr=0.05"),
            std::string::npos)
      << same.output;
  EXPECT_NE(same.output.find("no number of seeds"), std::string::npos) << same.output;

  const CommandResult short_budget =
      run_pacer(advise + "--methods dgd,is-sgd:k=1 --budget time=3 --out " + dir.file("short"));
  ASSERT_EQ(short_budget.exit_code, 0) << short_budget.output;
  EXPECT_EQ(short_budget.output.find("\nrecommended: "), std::string::npos) << short_budget.output;
  EXPECT_NE(short_budget.output.find(
                "no recommendation: no method reached the target on every seed within 3 s"),
            std::string::npos)
      << short_budget.output;
}

}  // namespace
}  // namespace pacer::testing
