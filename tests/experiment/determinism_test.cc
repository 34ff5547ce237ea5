// Same config and seed => byte-identical outputs (DESIGN.md section 7).
#include <gtest/gtest.h>

#include "pacer/core/config.h"
#include "pacer/engine/worker_statistics.h"
#include "pacer/run/experiment.h"
#include "test_util.h"

namespace pacer {
namespace {

constexpr const char* kConfig = R"(
seed = 7
workers = 6
max_steps = 60
eval_every = 10
[data]
source = "synthetic"
generator = "blobs"
samples = 600
features = 8
classes = 3
test_samples = 120
[model]
name = "softmax"
[training]
batch = 16
[optimizer]
lr = 0.3
[method]
name = "is-sgd"
k = 2
[timing]
model = "random_stragglers"
tau = 0.1
q = 0.3
delay_mean = 1.0
[target]
loss = 0.3
hold = 2
)";

// The config above with its [method] table replaced.
std::string with_method(const std::string& method_table) {
  std::string text = kConfig;
  const std::string is_sgd = "name = \"is-sgd\"\nk = 2";
  text.replace(text.find(is_sgd), is_sgd.size(), method_table);
  return text;
}

class DeterminismByMethod : public ::testing::TestWithParam<const char*> {};

TEST_P(DeterminismByMethod, SameConfigAndSeedGiveIdenticalFiles) {
  testing::TempDir dir;
  const std::string text = with_method(GetParam());
  RunOptions a, b;
  a.out_dir = dir.file("a");
  b.out_dir = dir.file("b");
  run_experiment(Config::parse(text, "det.toml"), a);
  run_experiment(Config::parse(text, "det.toml"), b);
  for (const char* name :
       {"log.csv", "jobs.csv", "summary.json", "config.toml", "evals.csv", "trace.csv", "loss.gp",
        "figures/loss-evals.dat", "figures/loss-reported.dat"}) {
    std::string first = testing::read_text(dir.file(std::string("a/") + name));
    std::string second = testing::read_text(dir.file(std::string("b/") + name));
    EXPECT_FALSE(first.empty()) << name;
    EXPECT_EQ(first, second) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, DeterminismByMethod,
                         ::testing::Values("name = \"is-sgd\"\nk = 2", "name = \"gc-cr\"\ns = 2",
                                           "name = \"pgc-cr\"\ns = 2", "name = \"pgc-fr\"\ns = 1",
                                           "name = \"rescaled-asgd\"", "name = \"ringleader\""));

TEST(Determinism, AnotherSeedGivesAnotherRun) {
  testing::TempDir dir;
  Config a = Config::parse(kConfig, "det.toml");
  Config b = Config::parse(kConfig, "det.toml");
  b.set("seed=8");
  RunOptions oa, ob;
  oa.out_dir = dir.file("a");
  ob.out_dir = dir.file("b");
  run_experiment(a, oa);
  run_experiment(b, ob);
  EXPECT_NE(testing::read_text(dir.file("a/log.csv")), testing::read_text(dir.file("b/log.csv")));
}

TEST(Experiment, SummaryHasTheDocumentedFields) {
  Config config = Config::parse(kConfig, "det.toml");
  RunOutcome outcome = run_experiment(config, RunOptions{});
  const nlohmann::json& s = outcome.summary;
  for (const char* key : {"status", "steps", "time", "work_units", "work_units_per_step",
                          "mean_step_time", "median_step_time", "targets", "final", "method_stats",
                          "engine_stats", "pacer_version", "pacer_build", "seed"}) {
    EXPECT_TRUE(s.contains(key)) << key;
  }
  // IS-SGD(2) uses 4 fresh units per step; the two stragglers' late jobs add up to 2 more.
  EXPECT_GE(s["work_units_per_step"].get<double>(), 4.0);
  EXPECT_LE(s["work_units_per_step"].get<double>(), 6.0);
  EXPECT_TRUE(s["final"].contains("test_accuracy"));
  // Every per-worker key every engine writes (engine/worker_statistics.h), one entry per worker.
  EXPECT_EQ(missing_worker_statistics(s["engine_stats"], 6), "");
  // The simulator's times are simulated seconds (on MPI: "wall"; tests/mpi dgd_matches_sim).
  EXPECT_EQ(s["clock"], "simulated");
}

TEST(Experiment, DgdCostsOneWorkUnitPerWorkerPerStep) {
  RunOutcome outcome =
      run_experiment(Config::parse(with_method("name = \"dgd\""), "dgd.toml"), RunOptions{});
  EXPECT_DOUBLE_EQ(outcome.summary["work_units_per_step"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(outcome.summary["responders_per_step"].get<double>(), 6.0);
}

}  // namespace
}  // namespace pacer
