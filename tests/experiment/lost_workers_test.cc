// Lost workers on the simulator (issue "dead workers do not stop training"): methods that can go
// on without a worker reach their target with one killed mid-run; those that cannot stop with
// status too_many_lost, an error naming the lost workers, and their outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/engine/registry.h"
#include "pacer/run/experiment.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::kLeastSquaresTables;
using testing::read_text;
using testing::TempDir;

// Least squares on 4 workers with full-batch gradients and fixed compute times of 1 s per unit,
// to F below 0.05, judged at every update (DGD takes 19 steps, Rescaled ASGD 70 updates).
const std::string kConfig = std::string(R"(
seed = 2
workers = 4
max_steps = 2000
eval_every = 1
)") + kLeastSquaresTables + R"([training]
batch = 0
[optimizer]
lr = 0.1
[target]
loss = 0.05
on = "full"
[timing]
model = "fixed"
tau = 1.0
)";

RunOutcome run(const std::string& method_lines, std::initializer_list<std::string> settings,
               const std::string& out_dir = "") {
  Config config = Config::parse(std::string(kConfig) + "[method]\n" + method_lines, "lost.toml");
  for (const std::string& s : settings) config.set(s);
  RunOptions options;
  options.out_dir = out_dir;
  return run_experiment(config, options);
}

const nlohmann::json& first_target(const RunOutcome& r) { return r.summary["targets"][0]; }

// Runs `method` without faults, then with worker 1 killed at half its time to target: it must
// still reach the target, and summary.json must name the loss.
void expect_survives_a_loss(const std::string& method) {
  SCOPED_TRACE(method);
  const RunOutcome clean = run(method, {});
  ASSERT_EQ(clean.status, "target_reached");
  const double time_to_target = first_target(clean)["time"].get<double>();
  const int64_t steps_to_target = first_target(clean)["steps"].get<int64_t>();
  ASSERT_GE(steps_to_target, 10);  // so that half-way is mid-run

  const RunOutcome faulty = run(
      method,
      {"faults.kill_workers=[1]", "faults.kill_at=[" + std::to_string(time_to_target / 2) + "]"});
  EXPECT_EQ(faulty.status, "target_reached") << faulty.summary.dump(2);
  const nlohmann::json& lost = faulty.summary["lost_workers"];
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0]["worker"], 1);
  EXPECT_NEAR(lost[0]["time"].get<double>(), time_to_target / 2, 1e-9);
  EXPECT_GT(lost[0]["step"].get<int64_t>(), 0);
  EXPECT_LT(lost[0]["step"].get<int64_t>(), steps_to_target);
  EXPECT_EQ(faulty.summary["engine_stats"]["workers_lost"], 1);
  EXPECT_EQ(faulty.summary["engine_stats"]["lost_per_worker"][1], true);
  EXPECT_EQ(faulty.summary["engine_stats"]["lost_time_per_worker"][1], lost[0]["time"]);
}

TEST(LostWorkers, PgcCrReachesItsTargetWithOneWorkerKilled) {
  expect_survives_a_loss("name = \"pgc-cr\"\ns = 1\n");
}

TEST(LostWorkers, PgcCrWithExactDecodingReachesItsTargetWithOneWorkerKilled) {
  expect_survives_a_loss("name = \"pgc-cr\"\ns = 1\ndecoder = \"exact\"\n");
}

TEST(LostWorkers, GcCrReachesItsTargetWithOneWorkerKilled) {
  expect_survives_a_loss("name = \"gc-cr\"\ns = 1\n");
}

TEST(LostWorkers, IsGcReachesItsTargetWithOneWorkerKilled) {
  expect_survives_a_loss("name = \"is-gc-cr\"\ns = 1\n");
}

TEST(LostWorkers, RescaledAsgdReachesItsTargetWithOneWorkerKilled) {
  expect_survives_a_loss("name = \"rescaled-asgd\"\n");
}

TEST(LostWorkers, GcFrStopsWhenAWholeGroupIsLostAndKeepsItsOutputs) {
  TempDir dir;
  // s = 1: groups {0, 1} and {2, 3}. Losing 0 and 2 (one per group) is survivable; 0 and 1 not.
  const RunOutcome survivable =
      run("name = \"gc-fr\"\ns = 1\n", {"faults.kill_workers=[0, 2]", "faults.kill_at=[3.0]"});
  EXPECT_EQ(survivable.status, "target_reached");

  const RunOutcome lost =
      run("name = \"gc-fr\"\ns = 1\n", {"faults.kill_workers=[0, 1]", "faults.kill_at=[3.0, 5.0]"},
          dir.path());
  EXPECT_EQ(lost.status, "too_many_lost");
  const std::string error = lost.summary["error"].get<std::string>();
  EXPECT_NE(error.find("workers 0, 1 are lost at t = 5"), std::string::npos) << error;
  EXPECT_NE(error.find("a surviving worker in every group of s + 1 = 2 workers"), std::string::npos)
      << error;
  EXPECT_EQ(lost.summary["lost_workers"].size(), 2u);
  // The outputs up to the stop are written; the last step closed before t = 5.
  const nlohmann::json written = nlohmann::json::parse(read_text(dir.file("summary.json")));
  EXPECT_EQ(written["status"], "too_many_lost");
  EXPECT_LE(written["time"].get<double>(), 5.0);
  EXPECT_GT(written["steps"].get<int64_t>(), 0);
  EXPECT_TRUE(std::filesystem::exists(dir.file("log.csv")));
  EXPECT_TRUE(written["final"].contains("full_loss"));  // evaluated at the stop
}

TEST(LostWorkers, IsSgdGoesOnWhileAtMostKAreLost) {
  const RunOutcome one =
      run("name = \"is-sgd\"\nk = 1\n", {"faults.kill_workers=[3]", "faults.kill_at=[2.0]"});
  EXPECT_EQ(one.status, "target_reached");
  const RunOutcome two = run("name = \"is-sgd\"\nk = 1\n",
                             {"faults.kill_workers=[3, 0]", "faults.kill_at=[2.0, 4.0]"});
  EXPECT_EQ(two.status, "too_many_lost");
  EXPECT_NE(two.summary["error"].get<std::string>().find("at most k = 1 workers lost"),
            std::string::npos);
}

TEST(LostWorkers, AWorkerBackWithinTheStepItAnsweredIsNotCountedTwice) {
  // IS-SGD(1) on 4 workers closes with 3 distinct messages. Worker 0 (0.2 s jobs) answers step 1 at
  // t = 0.2, is lost at 0.5 and back at 1.0; the others answer at t = 3. The step must wait for
  // them (t = 3), not count worker 0's message twice.
  const RunOutcome r =
      run("name = \"is-sgd\"\nk = 1\n",
          {"timing.tau=[0.2, 3.0, 3.0, 3.0]", "faults.kill_workers=[0]", "faults.kill_at=[0.5]",
           "faults.rejoin_after=0.5", "max_steps=1", "target.loss=0"});
  EXPECT_EQ(r.status, "max_steps");
  EXPECT_DOUBLE_EQ(r.summary["time"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(r.summary["responders_per_step"].get<double>(), 3.0);
}

TEST(LostWorkers, DgdFailsByDefaultAndContinuesWhenToldToDrop) {
  const RunOutcome fails =
      run("name = \"dgd\"\n", {"faults.kill_workers=[1]", "faults.kill_at=[2.5]"});
  EXPECT_EQ(fails.status, "too_many_lost");
  const std::string error = fails.summary["error"].get<std::string>();
  EXPECT_NE(error.find("worker 1 is lost at t = 2.5 (step 2)"), std::string::npos) << error;
  EXPECT_NE(error.find("method.on_lost = \"drop\""), std::string::npos) << error;
  EXPECT_EQ(fails.summary["steps"], 2);

  const RunOutcome drops =
      run("name = \"dgd\"\non_lost = \"drop\"\n",
          {"faults.kill_workers=[1]", "faults.kill_at=[2.5]", "target.loss=0"});
  EXPECT_EQ(drops.status, "max_steps");
  const nlohmann::json& stats = drops.summary["method_stats"];
  EXPECT_EQ(stats["on_lost"], "drop");
  EXPECT_EQ(stats["dropped_partitions"], nlohmann::json::array({1}));
  EXPECT_NE(stats["objective"].get<std::string>().find("biased"), std::string::npos);
  // From the loss on, every step used the three survivors only.
  EXPECT_EQ(stats["steps_late_per_worker"][1], 2000 - 2);
}

TEST(LostWorkers, SameFaultsAndSeedGiveTheSameRunBitForBit) {
  TempDir dir;
  for (const char* out : {"a", "b"}) {
    run("name = \"pgc-cr\"\ns = 1\n",
        {"faults.rate=0.02", "faults.rejoin_after=10", "target.loss=0", "max_steps=300"},
        dir.file(out));
  }
  EXPECT_EQ(read_text(dir.file("a/log.csv")), read_text(dir.file("b/log.csv")));
  EXPECT_EQ(read_text(dir.file("a/summary.json")), read_text(dir.file("b/summary.json")));
  const nlohmann::json s = nlohmann::json::parse(read_text(dir.file("a/summary.json")));
  EXPECT_GT(s["lost_workers"].size(), 0u);
}

TEST(LostWorkers, FaultInjectionIsRefusedOnTheMpiEngine) {
  const EngineInfo* mpi = find_engine("mpi");
  if (mpi == nullptr || !mpi->built) {
    GTEST_SKIP() << "this build has no MPI engine";
  }
  const Config config = Config::parse(
      "[engine]\nname = \"mpi\"\n[faults]\nkill_workers = [1]\nkill_at = [1.0]\n", "mpi.toml");
  try {
    make_engine(config, 4);
    ADD_FAILURE() << "[faults] was accepted on MPI";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("key 'faults'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pacer
