// Traces with time (timing/trace.h): the step and units columns, the sequential and block replays,
// the per-job delays u·c_i + d, and the automatic block length. The classic "worker,duration"
// trace is covered by trace_replay_test.cc and timing_config_test.cc.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/rng.h"
#include "pacer/core/state.h"
#include "pacer/timing/timing_model.h"
#include "pacer/timing/trace.h"
#include "test_util.h"

namespace pacer {
namespace {

class TraceTimeTest : public ::testing::Test {
 protected:
  std::unique_ptr<TimingModel> model(const std::string& content, const std::string& keys,
                                     int workers, uint64_t seed = 1) {
    testing::write_text(path_, content);
    return make_timing_model(
        Config::parse("[timing]\nmodel = \"trace\"\nfile = \"" + path_ + "\"\n" + keys, "t.toml"),
        workers, seed);
  }
  std::string error(const std::string& content, const std::string& keys, int workers) {
    try {
      model(content, keys, workers);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected an Error";
    return "";
  }
  testing::TempDir dir_;
  std::string path_ = dir_.file("trace.csv");
};

// Two workers, steps 0..3, out of order in the file; worker 1 misses step 2.
const char* const kSteps =
    "duration, step ,worker\n"
    "3,2,0\n1,0,0\n10,0,1\n2,1,0\n20,1,1\n4,3,0\n40,3,1\n";

TEST_F(TraceTimeTest, ColumnsComeInAnyOrderAndRowsInStepOrder) {
  testing::write_text(path_, kSteps);
  const DurationTrace t = read_trace_file(path_, 4, "trace");
  ASSERT_EQ(t.workers(), 2);
  EXPECT_TRUE(t.has_steps);
  EXPECT_FALSE(t.has_units);
  EXPECT_EQ(t.rows[0], (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(t.steps[1], (std::vector<int64_t>{0, 1, 3}));
  const StepGrid grid = step_grid(t);
  EXPECT_EQ(grid.steps, (std::vector<int64_t>{0, 1, 2, 3}));
  // Worker 1 has no row at step 2: its next job (step 3's row) stands there.
  EXPECT_EQ(grid.at[1], (std::vector<uint32_t>{0, 1, 2, 2}));
  EXPECT_EQ(grid.own[1], (std::vector<bool>{true, true, false, true}));
  // Order replay: each worker's rows in step order.
  auto m = model(kSteps, "", 2);
  Rng rng(1, "unused");
  EXPECT_EQ(m->compute_time(0, 1, 0, rng).total(), 1.0);
  EXPECT_EQ(m->compute_time(0, 1, 0, rng).total(), 2.0);
}

TEST_F(TraceTimeTest, BadHeadersAndStepsNameFileAndLine) {
  EXPECT_NE(error("worker,duration,start\n0,1,0\n", "", 1).find(":1: expected the header"),
            std::string::npos);
  EXPECT_NE(error("worker,duration,worker\n0,1,0\n", "", 1).find(":1: expected the header"),
            std::string::npos);
  EXPECT_NE(error("step,duration\n0,1\n", "", 1).find(":1: expected the header"),
            std::string::npos);
  EXPECT_NE(error("worker,duration,step\n0,1,x\n", "", 1).find(":2: expected a step"),
            std::string::npos);
  EXPECT_NE(
      error("worker,duration,units\n0,1,0\n", "", 1).find(":2: expected the job's work units"),
      std::string::npos);
  EXPECT_NE(error("worker,step,duration\n0,1\n", "", 1).find(":2: expected a duration"),
            std::string::npos);
}

TEST_F(TraceTimeTest, SequentialReplaysTheRecordedStepsForEveryWorkerAndWraps) {
  auto m = model(kSteps, "replay = \"sequential\"\n", 2);
  Rng rng(1, "duration", 0), untouched(1, "duration", 0);
  const double expected0[] = {1, 2, 3, 4, 1, 2};
  const double expected1[] = {10, 20, 40, 40, 10, 20};
  for (int t = 0; t < 6; ++t) {
    // The same step replays the same recorded step, however often and in whatever order.
    EXPECT_EQ(m->compute_time(1, 1, t, rng).total(), expected1[t]) << t;
    EXPECT_EQ(m->compute_time(0, 1, t, rng).total(), expected0[t]) << t;
    EXPECT_EQ(m->compute_time(0, 1, t, rng).total(), expected0[t]) << t;
  }
  EXPECT_EQ(m->compute_time(0, 1, -1, rng).total(), 4.0);  // step −1 is step K − 1
  EXPECT_EQ(rng.next_u64(), untouched.next_u64()) << "sequential replay drew from the Rng";
  // The long-run mean of a one-unit job: over the recorded steps.
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(1), (10 + 20 + 40 + 40) / 4.0);
}

// An asynchronous log: worker 0 has a job at every step 0..15, worker 1 a job of 8 s at step 0
// (it was busy until step 8) and then one of 1 s at every step 8..15. The long job stands only
// for its own step: repeating it at each step it spanned would replay it at 8 of the 16 steps
// (mean 4.5 s). (Each row now stands for the steps since the worker's previous row, so its weight
// is the previous job's span: unbiased when consecutive durations are independent, not exactly
// the per-job mean, here 1.78 s, in a log this short.)
TEST_F(TraceTimeTest, ABusyWorkersStepsReplayItsNextJobNotTheLongOne) {
  std::string text = "step,worker,duration\n";
  for (int k = 0; k < 16; ++k) text += fmt::format("{},0,1\n", k);
  text += "0,1,8\n";
  for (int k = 8; k < 16; ++k) text += fmt::format("{},1,1\n", k);
  testing::write_text(path_, text);
  const StepGrid grid = step_grid(read_trace_file(path_, 2, "trace"));
  ASSERT_EQ(grid.size(), 16u);
  for (size_t k = 1; k <= 8; ++k) EXPECT_EQ(grid.at[1][k], 1u) << k;  // the step-8 job
  EXPECT_DOUBLE_EQ(*model(text, "replay = \"sequential\"\n", 2)->mean_unit_time(1),
                   (8 + 15 * 1) / 16.0);
}

// 12 steps, worker i's row at step k is 100·i + k: a replayed value names its recorded step.
std::string numbered_trace(int steps) {
  std::string text = "step,worker,duration\n";
  for (int k = 0; k < steps; ++k) {
    for (int i = 0; i < 3; ++i) text += fmt::format("{},{},{}\n", k, i, 100 * i + k + 1);
  }
  return text;
}

TEST_F(TraceTimeTest, BlockReplayKeepsStepsTogetherAndFollowsTheSeed) {
  auto m = model(numbered_trace(12), "replay = \"block\"\nblock_length = 4\n", 3, 7);
  EXPECT_NE(m->describe().find("blocks of 4 steps (timing.block_length)"), std::string::npos)
      << m->describe();
  Rng rng(1, "duration", 0), untouched(1, "duration", 0);
  std::vector<int> recorded;
  for (int t = 0; t < 400; ++t) {
    const int k0 = static_cast<int>(m->compute_time(0, 1, t, rng).total()) - 1;
    // Every worker replays the same recorded step at a step.
    EXPECT_EQ(m->compute_time(2, 1, t, rng).total(), 200 + k0 + 1);
    EXPECT_EQ(m->compute_time(1, 1, t, rng).total(), 100 + k0 + 1);
    recorded.push_back(k0);
  }
  EXPECT_EQ(rng.next_u64(), untouched.next_u64()) << "block replay drew from the Rng";
  std::vector<int> starts(12, 0);
  for (int t = 0; t < 400; ++t) {
    if (t % 4 == 0) {
      ++starts[recorded[t]];
      continue;
    }
    // Within a block, consecutive recorded steps, wrapping around the end (circular blocks).
    EXPECT_EQ(recorded[t], (recorded[t - 1] + 1) % 12) << t;
  }
  // 100 blocks start anywhere in [0, 12), the end included (no end effect): each start is hit
  // Binomial(100, 1/12) times, so all 12 are hit with probability 1 − 12·(11/12)^100 > 0.998.
  for (int s = 0; s < 12; ++s) EXPECT_GT(starts[s], 0) << s;
  // Another seed, other block starts; the same seed, the same.
  auto again = model(numbered_trace(12), "replay = \"block\"\nblock_length = 4\n", 3, 7);
  auto other = model(numbered_trace(12), "replay = \"block\"\nblock_length = 4\n", 3, 8);
  int same = 0, differ = 0;
  for (int t = 0; t < 400; ++t) {
    same += again->compute_time(0, 1, t, rng).total() == recorded[t] + 1;
    differ += other->compute_time(0, 1, t, rng).total() != recorded[t] + 1;
  }
  EXPECT_EQ(same, 400);
  EXPECT_GT(differ, 0);
}

TEST_F(TraceTimeTest, AutomaticBlockLengthFollowsPersistence) {
  // Independent rows ask for short blocks; rows that stay high for 40 steps, long ones.
  std::string iid = "step,worker,duration\n", spells = "step,worker,duration\n";
  Rng rng(3, "rows");
  for (int k = 0; k < 1200; ++k) {
    iid += fmt::format("{},0,{}\n", k, 1 + rng.uniform());
    spells += fmt::format("{},0,{}\n", k, 1 + rng.uniform() + ((k / 40) % 2) * 3);
  }
  testing::write_text(path_, iid);
  const BlockLength short_blocks = automatic_block_length(read_trace_file(path_, 1, "trace"));
  testing::write_text(path_, spells);
  const BlockLength long_blocks = automatic_block_length(read_trace_file(path_, 1, "trace"));
  // Politis–White for i.i.d. rows: when no autocorrelation is significant (m̂ = 0, M = 2) the
  // flat-top kernel keeps lag 1 alone, G = 2γ̂(1), g ≈ γ̂(0), and the length is (6·N·ρ̂(1)²)^{1/3}
  // = (6χ²₁)^{1/3}, above 5 with probability P(χ²₁ > 20.8) = 5e-6.
  EXPECT_LE(short_blocks.length, 5);
  // For the spells (a square wave of period 80 carrying 96 % of the variance: ρ(k) = 0.964·(1 −
  // k/20) up to the half period, M = m_max = 40) the formula's population value is 35 steps; the
  // check asks only that the estimate is of the spells' order, at least half their length.
  EXPECT_GE(long_blocks.length, 20);
  EXPECT_LE(long_blocks.length, 400);  // at most K/3
  EXPECT_EQ(long_blocks.worker, 0);
  auto m = model(spells, "replay = \"block\"\n", 1);
  EXPECT_NE(m->describe().find("Politis–White"), std::string::npos) << m->describe();
  testing::write_text(path_, "worker,duration\n0,1\n0,1\n0,1\n0,1\n0,1\n");
  const BlockLength constant = automatic_block_length(read_trace_file(path_, 1, "trace"));
  EXPECT_EQ(constant.length, 1);
  EXPECT_EQ(constant.worker, -1);
}

TEST_F(TraceTimeTest, JobsOfATraceWithTimeAreComputeTimesUnitsPlusADelay) {
  // Worker 0's one-unit jobs: 1, 1, 1, 5 (a 4 s delay). c_0 = the median, 1. A job of 3 units
  // replaying the delayed row takes 3·1 + 4 = 7, not 3·5 = 15; a classic trace would scale it.
  const char* trace = "step,worker,duration\n0,0,1\n1,0,1\n2,0,1\n3,0,5\n";
  auto m = model(trace, "replay = \"sequential\"\n", 1);
  Rng rng(1, "unused");
  EXPECT_EQ(m->compute_time(0, 3, 0, rng).total(), 3.0);
  EXPECT_EQ(m->compute_time(0, 3, 3, rng).total(), 7.0);
  EXPECT_EQ(m->compute_time(0, 1, 3, rng).total(), 5.0);  // a one-unit job: the row itself
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(0), 2.0);
  // A job of fewer units than its row's never takes less than its units times the smaller of c
  // and the worker's fastest time per unit: a 2-unit row of 0.5 s per unit (1 s, below 2·c = 2:
  // delay −1) replayed for 1 unit takes max(1 − 1, 1·min(1, 0.5)) = 0.5.
  auto two = model("worker,duration,units,step\n0,1,1,0\n0,1,1,1\n0,0.5,2,2\n",
                   "replay = \"sequential\"\n", 1);
  EXPECT_EQ(two->compute_time(0, 1, 2, rng).total(), 0.5);
}

TEST_F(TraceTimeTest, JobsOfTwoSizesSeparateTheComputeFromTheDelay) {
  // Worker 0 ran one-unit jobs (medians 1.5 s) and three-unit jobs (median 3.5 s), each with the
  // same delays: c_0 = (3.5 − 1.5) / (3 − 1) = 1 s per unit, and the one-unit jobs' median delay
  // is 0.5 s, which a job of any size keeps: 5 units replaying a 1.5 s one-unit row take 5.5 s.
  const char* trace =
      "worker,duration,units,step\n"
      "0,1.5,1,0\n0,1.5,1,1\n0,2.5,1,2\n"
      "0,1.1666666666666667,3,3\n0,1.1666666666666667,3,4\n0,1.5,3,5\n";
  testing::write_text(path_, trace);
  const std::vector<double> c = unit_costs(read_trace_file(path_, 1, "trace"));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0], 1.0, 1e-12);
  auto m = model(trace, "replay = \"sequential\"\n", 1);
  Rng rng(1, "unused");
  EXPECT_NEAR(m->compute_time(0, 5, 0, rng).total(), 5.5, 1e-12);
  EXPECT_NEAR(m->compute_time(0, 5, 2, rng).total(), 6.5, 1e-12);
}

TEST_F(TraceTimeTest, CheckpointRestoresEveryMode) {
  for (const std::string replay : {"order", "bootstrap", "sequential", "block"}) {
    SCOPED_TRACE(replay);
    const std::string keys = "replay = \"" + replay + "\"\n";
    auto original = model(numbered_trace(12), keys, 3, 5);
    Rng rng(3, "duration", 0);
    for (int t = 0; t < 5; ++t) original->compute_time(0, 1, t, rng);
    StateArchive saved = StateArchive::for_saving();
    original->checkpoint(saved);
    rng.checkpoint(saved);
    std::vector<double> expected;
    for (int t = 5; t < 30; ++t) expected.push_back(original->compute_time(0, 1, t, rng).total());

    auto restored = model(numbered_trace(12), keys, 3, 5);
    Rng restored_rng(99, "duration", 0);
    StateArchive loading = StateArchive::for_loading(saved.bytes(), "checkpoint");
    restored->checkpoint(loading);
    restored_rng.checkpoint(loading);
    loading.expect_end();
    std::vector<double> resumed;
    for (int t = 5; t < 30; ++t)
      resumed.push_back(restored->compute_time(0, 1, t, restored_rng).total());
    EXPECT_EQ(resumed, expected);
  }
}

TEST_F(TraceTimeTest, BadReplayKeysNameTheKey) {
  for (const std::string keys :
       {"replay = \"block\"\nblock_length = 0\n",
        "replay = \"sequential\"\nstraggler_frequency = 2\n", "replay = \"blocks\"\n"}) {
    const std::string message = error(numbered_trace(4), keys, 3);
    EXPECT_NE(message.find("'timing."), std::string::npos) << keys << message;
  }
  // block_length is read only with replay = "block".
  testing::write_text(path_, numbered_trace(4));
  const Config config = Config::parse(
      "[timing]\nmodel = \"trace\"\nfile = \"" + path_ + "\"\nblock_length = 3\n", "t.toml");
  make_timing_model(config, 3, 1);
  EXPECT_EQ(config.unread_keys(), (std::vector<std::string>{"timing.block_length"}));
}

}  // namespace
}  // namespace pacer
