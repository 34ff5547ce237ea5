// Fair comparisons (DESIGN.md section 6, issue "comparisons a researcher can trust"): targets on
// the evaluated F where the reported loss cannot speak for it, evaluation on a time schedule and
// at the end, equal budgets, censored seeds, tuning on disjoint seeds, deterministic reports.
#include "pacer/study/compare.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/run/experiment.h"
#include "pacer/run/recorder.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::kLeastSquaresTables;
using testing::read_text;
using testing::TempDir;

// Four workers with fixed compute times, one class each of a four-class blob problem: each
// worker's minibatch loss falls fast (its partition holds one class) while F does not.
constexpr const char* kByClass = R"(
seed = 3
workers = 4
max_steps = 400
eval_every = 50
[data]
source = "synthetic"
generator = "blobs"
samples = 400
features = 6
classes = 4
noise = 2.0
[partition]
scheme = "by_class"
[model]
name = "softmax"
[training]
batch = 8
[optimizer]
lr = 0.5
[method]
name = "asgd"
[timing]
model = "fixed"
tau = [1.0, 1.0, 2.0, 4.0]
)";

// Least squares with full-batch gradients on 4 workers, random stragglers.
const std::string kLeastSquares = std::string(R"(
seed = 1
workers = 4
max_steps = 200
eval_every = 10
)") + kLeastSquaresTables + R"([training]
batch = 0
[optimizer]
lr = 0.5
[method]
name = "dgd"
[timing]
model = "random_stragglers"
tau = 0.1
q = 0.25
delay_mean = 1.0
)";

// A fixture config with `settings` applied ("key=value", as --set applies them).
Config with_settings(const std::string& toml, const char* name,
                     std::initializer_list<const char*> settings) {
  Config config = Config::parse(toml, name);
  for (const char* setting : settings) config.set(setting);
  return config;
}

Config least_squares(std::initializer_list<const char*> settings = {}) {
  return with_settings(kLeastSquares, "ls.toml", settings);
}

Config by_class(std::initializer_list<const char*> settings = {}) {
  return with_settings(kByClass, "by_class.toml", settings);
}

// A comparison of `methods` over `seeds` seeds, written to `out_dir`.
CompareOptions comparing(std::vector<std::string> methods, int seeds, const std::string& out_dir) {
  CompareOptions options;
  options.methods = std::move(methods);
  options.seeds = seeds;
  options.out_dir = out_dir;
  return options;
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_text(path)); }

TEST(Targets, AsynchronousRunsJudgeTheTargetOnTheEvaluatedFullLoss) {
  TempDir dir;
  Config config = by_class({"target.loss=0.05"});
  RunOptions options;
  options.out_dir = dir.file("run");
  const RunOutcome outcome = run_experiment(config, options);
  const nlohmann::json& target = outcome.summary["targets"][0];
  EXPECT_EQ(target["on"], "full");
  // The reported (one-class minibatch) loss did fall below the target: judged on it, as before,
  // the run would have claimed the target.
  double lowest_reported = 1e300;
  for (const auto& row : testing::read_csv_rows(dir.file("run/log.csv"))) {
    lowest_reported = std::min(lowest_reported, std::stod(row[3]));
  }
  ASSERT_LT(lowest_reported, 0.05);
  // F never did, so the target is not reached.
  const auto evals = testing::read_csv_rows(dir.file("run/evals.csv"));
  ASSERT_FALSE(evals.empty());
  double lowest_full = 1e300;
  for (const auto& row : evals) lowest_full = std::min(lowest_full, std::stod(row[3]));
  ASSERT_GT(lowest_full, 0.05);
  EXPECT_FALSE(target["reached"].get<bool>());
  EXPECT_NE(outcome.status, "target_reached");
}

// A target on F is reached at the first step at which F meets it, as evaluating F at every step
// finds it, though the watch evaluates F at far fewer steps (target_watch.h).
TEST(Targets, AFullLossTargetIsReachedAtTheFirstStepFMeetsIt) {
  TempDir dir;
  Config probe = least_squares({"optimizer.lr=0.05", "eval_every=1", "max_steps=150"});
  RunOptions quiet;
  quiet.out_dir = dir.file("probe");
  run_experiment(probe, quiet);
  const auto evals = testing::read_csv_rows(dir.file("probe/evals.csv"));
  ASSERT_EQ(evals.size(), 150u);
  // A target between F at steps 100 and 101: F falls there, so step 101 is the first to meet it.
  const double f100 = std::stod(evals[99][3]), f101 = std::stod(evals[100][3]);
  ASSERT_LT(f101, f100);
  for (size_t k = 0; k < 99; ++k) ASSERT_GT(std::stod(evals[k][3]), f100) << k;

  Config config = least_squares({"optimizer.lr=0.05", "eval_every=0", "max_steps=150"});
  config.set_double("target.loss", 0.5 * (f100 + f101));
  RunOptions options;
  options.out_dir = dir.file("run");
  const RunOutcome outcome = run_experiment(config, options);
  const nlohmann::json& target = outcome.summary["targets"][0];
  EXPECT_EQ(target["on"], "full");
  EXPECT_TRUE(target["reached"].get<bool>());
  EXPECT_EQ(target["steps"].get<int64_t>(), 101);
  // This small set is evaluated exactly, summed chunk by chunk without the gradient (the evals'
  // F sums partitions with it): equal to rounding, far below 1e-12 relative for 200 rows.
  EXPECT_NEAR(target["full_loss"].get<double>(), f101, 1e-12 * f101);
  EXPECT_EQ(target["full_loss_se"].get<double>(), 0.0);
  const int64_t evaluations = outcome.summary["target_estimate"]["evaluations"].get<int64_t>();
  EXPECT_LT(evaluations, 40) << "the watch evaluated F at most steps";
  EXPECT_EQ(testing::read_csv_rows(dir.file("run/target.csv")).size(),
            static_cast<size_t>(evaluations));
}

TEST(Targets, EvaluationFollowsASimulatedTimeSchedule) {
  TempDir dir;
  Config config = least_squares({"eval_every=0", "eval_every_s=2.5"});
  RunOptions options;
  options.out_dir = dir.file("run");
  run_experiment(config, options);
  const auto evals = testing::read_csv_rows(dir.file("run/evals.csv"));
  const auto log = testing::read_csv_rows(dir.file("run/log.csv"));
  ASSERT_GE(evals.size(), 3u);
  // Each evaluation (but the final one) is at the first update at or after a multiple of 2.5 s.
  size_t next = 0;
  double boundary = 2.5;
  std::vector<double> expected;
  for (const auto& row : log) {
    const double t = std::stod(row[0]);
    if (t >= boundary) {
      expected.push_back(t);
      while (boundary <= t) boundary += 2.5;
    }
  }
  for (; next + 1 < evals.size(); ++next) {
    ASSERT_LT(next, expected.size());
    EXPECT_EQ(std::stod(evals[next][0]), expected[next]);
  }
}

TEST(LossTraceTest, KeepsBlockMeansWithinItsBound) {
  LossTrace trace;
  const int64_t updates = 100000;
  for (int64_t step = 1; step <= updates; ++step) {
    UpdateRecord r;
    r.step = step;
    r.time = 0.5 * step;
    r.work_units = step;
    r.loss = static_cast<double>(step);
    trace.add(r);
  }
  std::istringstream in(trace.csv());
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "time,step,work_units,loss");
  int rows = 0;
  int64_t previous = 0;
  while (std::getline(in, line)) {
    ++rows;
    std::istringstream cells(line);
    std::string time, step, work, loss;
    std::getline(cells, time, ',');
    std::getline(cells, step, ',');
    std::getline(cells, work, ',');
    std::getline(cells, loss, ',');
    const int64_t last = std::stoll(step);
    // The mean of the steps previous+1 .. last is their midpoint.
    EXPECT_DOUBLE_EQ(std::stod(loss), 0.5 * static_cast<double>(previous + 1 + last));
    EXPECT_DOUBLE_EQ(std::stod(time), 0.5 * static_cast<double>(last));
    previous = last;
  }
  EXPECT_EQ(previous, updates);
  EXPECT_LE(rows, static_cast<int>(2 * LossTrace::kTraceBlocks) + 1);
  EXPECT_GE(rows, static_cast<int>(LossTrace::kTraceBlocks) / 2);
}

TEST(Compare, AsynchronousMethodsGetEqualSimulatedTimeByDefault) {
  TempDir dir;
  const CompareResult result = run_comparison(
      by_class({"max_steps=100"}), comparing({"asgd", "rescaled-asgd", "malenia"}, 1, dir.path()));
  const Comparison& c = result.comparison;
  // T = max_steps / Σ 1/τ_i = 100 / (1 + 1 + 0.5 + 0.25).
  ASSERT_EQ(c.budget.kind, Budget::Kind::kTime);
  EXPECT_DOUBLE_EQ(c.budget.value, 100 / 2.75);
  for (const MethodResult& m : c.methods) {
    ASSERT_EQ(m.runs.size(), 1u);
    const nlohmann::json s = read_json(dir.file(m.runs[0].folder + "/summary.json"));
    // Every method ran until the budget (not until 100 updates), within one job of it.
    EXPECT_EQ(s["status"], "max_time") << m.spec;
    EXPECT_LE(m.runs[0].end_time, c.budget.value) << m.spec;
    EXPECT_GT(m.runs[0].end_time, c.budget.value - 4.0) << m.spec;
  }
  EXPECT_NE(result.markdown.find("Budget: 36.3636 s of simulated time"), std::string::npos)
      << result.markdown;
  EXPECT_NE(result.markdown.find("final F̃"), std::string::npos);
}

TEST(Compare, SeedsThatMissTheTargetAreCensoredNotDropped) {
  TempDir dir;
  // Plain DGD reaches the target; with a stepsize 10^5 times smaller it cannot.
  const CompareResult result =
      run_comparison(least_squares({"target.loss=0.3", "target.hold=2"}),
                     comparing({"dgd", "dgd:optimizer.lr=0.000005"}, 2, dir.path()));
  const Comparison& c = result.comparison;
  ASSERT_EQ(c.methods.size(), 2u);
  const MethodResult& good = c.methods[0];
  const MethodResult& slow = c.methods[1];
  EXPECT_EQ(good.reached, 2);
  EXPECT_EQ(good.time_to_target.censored, 0);
  EXPECT_EQ(slow.reached, 0);
  EXPECT_EQ(slow.time_to_target.censored, 2);
  // Its time to target is the geometric mean of its end times (a lower bound), not the other's.
  EXPECT_NEAR(slow.time_to_target.mean, std::sqrt(slow.runs[0].end_time * slow.runs[1].end_time),
              1e-12 * slow.runs[0].end_time);
  EXPECT_EQ(slow.runs[0].end_steps, 200);
  const std::string row = result.markdown.substr(result.markdown.find("| dgd:optimizer"));
  EXPECT_NE(row.find("| 0/2 |"), std::string::npos) << row;
  EXPECT_NE(row.find("≥ "), std::string::npos) << row;
  const std::string report = read_text(dir.file("report.md"));
  EXPECT_NE(report.find("target reached on 0/2 seeds"), std::string::npos) << report;
  // The slow one's lower bounds vary too much over 2 seeds to exclude a tie: the verdict says so
  // and asks for a budget at which it reaches the target.
  EXPECT_NE(report.find("undecided between dgd and dgd:optimizer.lr=0.000005"), std::string::npos)
      << report;
  EXPECT_NE(report.find("a budget at which dgd:optimizer.lr=0.000005 reaches the target"),
            std::string::npos)
      << report;
}

TEST(Compare, AgainstTheBaselinePairsEachSeedWithTheBaselinesSameSeed) {
  TempDir dir;
  CompareOptions options =
      comparing({"dgd", "is-sgd:k=1", "dgd:optimizer.lr=0.000005"}, 3, dir.path());
  options.baseline = "dgd";
  const Comparison c =
      run_comparison(least_squares({"target.loss=0.3", "target.hold=2"}), options).comparison;
  const std::vector<std::vector<std::string>> rows =
      testing::read_csv_rows(dir.file("against.csv"));
  auto row = [&](const std::string& method, const std::string& metric) {
    for (const auto& r : rows) {
      if (r[0] == method && r[1] == metric) return r;
    }
    ADD_FAILURE() << "no row " << method << "," << metric;
    return std::vector<std::string>(10);
  };
  // The baseline against itself: every ratio 1, every difference 0, no spread.
  for (const char* metric : {"steps_to_target", "time_to_target", "step_time", "final_loss"}) {
    const auto self = row("dgd", metric);
    EXPECT_EQ(self[2], "3") << metric;
    EXPECT_EQ(std::stod(self[4]), 1.0) << metric;
    EXPECT_EQ(std::stod(self[7]), 0.0) << metric;
    EXPECT_EQ(std::stod(self[5]), 1.0) << metric;
  }
  // IS-SGD's time ratio is the geometric mean of its per-seed ratios, recomputed here from the
  // seed runs.
  const MethodResult& dgd = c.methods[0];
  const MethodResult& is_sgd = c.methods[1];
  double log_sum = 0, difference = 0;
  for (size_t k = 0; k < 3; ++k) {
    ASSERT_TRUE(is_sgd.runs[k].reached && dgd.runs[k].reached);
    log_sum += std::log(is_sgd.runs[k].time_to_target / dgd.runs[k].time_to_target);
    difference += is_sgd.runs[k].time_to_target - dgd.runs[k].time_to_target;
  }
  const auto time = row("is-sgd:k=1", "time_to_target");
  EXPECT_EQ(time[3], "0");
  EXPECT_NEAR(std::stod(time[4]), std::exp(log_sum / 3), 1e-12);
  EXPECT_NEAR(std::stod(time[7]), difference / 3, 1e-9 * std::abs(difference) + 1e-12);
  EXPECT_LT(std::stod(time[5]), std::stod(time[4]));
  EXPECT_GT(std::stod(time[6]), std::stod(time[4]));
  // The tiny stepsize never reaches the target: its three pairs are counted as censored.
  EXPECT_EQ(row("dgd:optimizer.lr=0.000005", "steps_to_target")[3], "3");
  const std::string report = read_text(dir.file("report.md"));
  EXPECT_NE(report.find("## Against dgd (paired over seeds)"), std::string::npos);
  // In the report's table its ratio is a lower bound: it missed, the baseline did not.
  const size_t tiny = report.find("| dgd:optimizer.lr=0.000005 |", report.find("## Against"));
  ASSERT_NE(tiny, std::string::npos) << report;
  EXPECT_NE(report.substr(tiny, report.find('\n', tiny) - tiny).find("(3 censored) ≥ "),
            std::string::npos)
      << report.substr(tiny, 200);
  // The same folder compared again without a baseline keeps no against.csv of the first.
  options.baseline.clear();
  options.seeds = 1;
  run_comparison(least_squares({"target.loss=0.3", "target.hold=2"}), options);
  EXPECT_FALSE(std::filesystem::exists(dir.file("against.csv")));
}

TEST(Compare, ABaselineThatIsNotComparedIsRefusedBeforeAnyRun) {
  TempDir dir;
  CompareOptions options = comparing({"dgd", "is-sgd:k=1"}, 1, dir.path());
  options.baseline = "gc-fr";
  try {
    run_comparison(least_squares(), options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--baseline gc-fr"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("dgd")));
}

TEST(Compare, TuningUsesSeedsDisjointFromTheReportedOnes) {
  TempDir dir;
  CompareOptions options = comparing({"dgd", "is-sgd:k=1"}, 2, dir.path());
  options.tune = "optimizer.lr=0.000005,0.5";
  options.tuning_seeds = 2;
  const Comparison c = run_comparison(least_squares({"target.loss=0.3"}), options).comparison;
  EXPECT_EQ(c.seeds, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(c.tuning_seeds, (std::vector<uint64_t>{3, 4}));
  for (const MethodResult& m : c.methods) {
    EXPECT_EQ(m.tuned_value, "0.5") << m.spec;  // the tiny stepsize never reaches the target
    EXPECT_EQ(m.tuning_log.size(), 2u);
    for (uint64_t seed : {3, 4}) {
      for (const char* value : {"0.000005", "0.5"}) {
        EXPECT_TRUE(std::filesystem::exists(dir.file("tuning/" + m.folder + "/" + value + "/seed" +
                                                     std::to_string(seed) + "/summary.json")));
      }
    }
    for (const SeedRun& r : m.runs) {
      const std::string resolved = read_text(dir.file(r.folder + "/config.toml"));
      EXPECT_NE(resolved.find("lr = 0.5"), std::string::npos) << r.folder;
      EXPECT_TRUE(r.seed == 1 || r.seed == 2);
    }
  }
}

TEST(Compare, BudgetsAreAppliedToEveryMethod) {
  TempDir dir;
  const Config config = least_squares();
  CompareOptions options = comparing({"dgd", "gc-fr:s=1"}, 1, dir.path());
  options.budget = "work=120";
  const Comparison c = run_comparison(config, options).comparison;
  for (const MethodResult& m : c.methods) {
    EXPECT_EQ(m.runs[0].status, "max_work") << m.spec;
    EXPECT_GE(m.runs[0].end_work, 120) << m.spec;
  }
  EXPECT_THROW(
      {
        options.budget = "time=-1";
        run_comparison(config, options);
      },
      Error);
  EXPECT_THROW(
      {
        options.budget = "minutes=3";
        run_comparison(config, options);
      },
      Error);
}

TEST(Compare, SameConfigAndSeedsGiveIdenticalTablesAndReports) {
  TempDir dir;
  const Config config = least_squares({"target.loss=0.3"});
  CompareOptions options = comparing({"dgd", "is-sgd:k=2"}, 2, "");
  for (const char* out : {"a", "b"}) {
    options.out_dir = dir.file(out);
    run_comparison(config, options);
  }
  for (const char* name : {"compare.md", "compare.csv", "report.md"}) {
    EXPECT_EQ(read_text(dir.file(std::string("a/") + name)),
              read_text(dir.file(std::string("b/") + name)))
        << name;
  }
}

}  // namespace
}  // namespace pacer
