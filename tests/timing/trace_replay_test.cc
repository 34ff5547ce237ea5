// The trace model's replay keys: timing.replay, timing.straggler_slowdown,
// timing.straggler_frequency and timing.straggler_threshold.
//
// Statistical checks use tolerances derived from the sample size, never tuned: a count of N
// independent draws that each hit with probability p is Binomial(N, p), standard error
// sqrt(N·p·(1 − p)), and an empirical mean of N draws of variance V has standard error
// sqrt(V / N). Every check allows kSigmas = 5 standard errors, so a correct model fails one
// check with probability below 6e-7; the draws are seeded, so a run is reproducible anyway.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/state.h"
#include "pacer/timing/timing_model.h"
#include "test_util.h"

namespace pacer {
namespace {

constexpr double kSigmas = 5;

// Passes when `text` contains `part`, printing `text` otherwise.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// Passes when `count` of `n` draws is within kSigmas binomial standard errors of n·p.
::testing::AssertionResult BinomialClose(int64_t count, int64_t n, double p) {
  const double expected = static_cast<double>(n) * p;
  const double tolerance = kSigmas * std::sqrt(static_cast<double>(n) * p * (1 - p));
  if (std::abs(static_cast<double>(count) - expected) <= tolerance) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << count << " of " << n << " draws, expected " << expected
                                       << " ± " << tolerance << " (p = " << p << ")";
}

class TraceReplayTest : public ::testing::Test {
 protected:
  // The config selecting the trace `content` (written to a temp file), plus `keys` ([timing]).
  Config config(const std::string& content, const std::string& keys) {
    testing::write_text(path_, content);
    return Config::parse("[timing]\nmodel = \"trace\"\nfile = \"" + path_ + "\"\n" + keys,
                         "t.toml");
  }
  std::unique_ptr<TimingModel> model(const std::string& content, const std::string& keys,
                                     int workers) {
    return make_timing_model(config(content, keys), workers, 1);
  }
  // The message of the Error that building the model throws; a test failure if none.
  std::string error(const std::string& content, const std::string& keys, int workers) {
    try {
      model(content, keys, workers);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected an Error for " << keys;
    return "";
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("durations.csv");
};

// Per-unit durations of `n` one-unit jobs of `worker`, drawn from `rng`.
std::vector<double> draws(const TimingModel& model, int worker, int n, Rng& rng) {
  std::vector<double> out;
  for (int j = 0; j < n; ++j) out.push_back(model.compute_time(worker, 1, j, rng).total());
  return out;
}

// How often each value occurs in `values`.
std::map<double, int64_t> histogram(const std::vector<double>& values) {
  std::map<double, int64_t> counts;
  for (const double v : values) ++counts[v];
  return counts;
}

const char* const kTwoWorkers = "worker,duration\n0,1\n1,10\n0,2\n1,20\n0,3\n";

TEST_F(TraceReplayTest, BootstrapDrawsOnlyTheWorkersOwnRows) {
  auto m = model(kTwoWorkers, "replay = \"bootstrap\"\n", 2);
  const std::vector<std::vector<double>> own = {{1, 2, 3}, {10, 20}};
  for (int worker = 0; worker < 2; ++worker) {
    Rng rng(1, "duration", worker);
    const std::map<double, int64_t> counts = histogram(draws(*m, worker, 1000, rng));
    std::vector<double> seen;
    for (const auto& [value, count] : counts) seen.push_back(value);
    // Every row drawn is the worker's own, and with 1000 draws every own row appears.
    EXPECT_EQ(seen, own[worker]) << "worker " << worker;
  }
  Rng rng(3, "duration", 1);
  const Duration d = m->compute_time(1, 2.5, 0, rng);
  EXPECT_EQ(d.base, 0.0);
  EXPECT_TRUE(d.extra == 25.0 || d.extra == 50.0) << d.extra;
}

TEST_F(TraceReplayTest, BootstrapDrawsFollowTheSeed) {
  auto m = model(kTwoWorkers, "replay = \"bootstrap\"\n", 2);
  Rng first(7, "duration", 0);
  Rng again(7, "duration", 0);
  Rng other(8, "duration", 0);
  const std::vector<double> a = draws(*m, 0, 200, first);
  EXPECT_EQ(draws(*m, 0, 200, again), a);
  // Equal by chance with probability 3^-200 at most.
  EXPECT_NE(draws(*m, 0, 200, other), a);
  // The model holds no draw state: a second model with the same seed gives the same draws.
  auto twin = model(kTwoWorkers, "replay = \"bootstrap\"\n", 2);
  Rng twin_rng(7, "duration", 0);
  EXPECT_EQ(draws(*twin, 0, 200, twin_rng), a);
}

TEST_F(TraceReplayTest, BootstrapRowFrequenciesAreUniform) {
  // Five distinct rows: each draw hits a given row with p = 1/5 (binomial check per row).
  auto m = model("worker,duration\n0,1\n0,2\n0,3\n0,4\n0,5\n", "replay = \"bootstrap\"\n", 1);
  constexpr int kDraws = 50000;
  Rng rng(11, "duration", 0);
  const std::map<double, int64_t> counts = histogram(draws(*m, 0, kDraws, rng));
  ASSERT_EQ(counts.size(), 5u);
  for (const auto& [value, count] : counts) {
    EXPECT_TRUE(BinomialClose(count, kDraws, 0.2)) << "row " << value;
  }
}

TEST_F(TraceReplayTest, OrderModeReplaysInOrderCyclingAndDrawsNothing) {
  for (const std::string keys : {"", "replay = \"order\"\nstraggler_slowdown = 1\n"}) {
    auto m = model(kTwoWorkers, keys, 2);
    Rng rng(1, "duration", 0);
    const std::vector<std::pair<int, double>> calls = {{0, 1},  {1, 10}, {0, 2},  {0, 3},
                                                       {1, 20}, {0, 1},  {1, 10}, {0, 2}};
    for (const auto& [worker, expected] : calls) {
      EXPECT_EQ(m->compute_time(worker, 1, 0, rng).total(), expected) << keys;
    }
    Rng untouched(1, "duration", 0);
    EXPECT_EQ(rng.next_u64(), untouched.next_u64()) << "order replay drew from the Rng";
    EXPECT_EQ(m->mean_unit_time(0), 2.0);
    EXPECT_EQ(m->mean_unit_time(1), 15.0);
  }
}

// Pooled rows {1, 2, 3, 4, 6, 10}: an even count, so M is the midpoint of the two middle rows,
// (3 + 4) / 2 = 3.5 (the lower median 3 would make 4 -> 5, the upper median 4 would keep 4).
// Slowdown 2: 1, 2, 3 stay; 4 -> 3.5 + 2·0.5 = 4.5; 6 -> 3.5 + 2·2.5 = 8.5;
// 10 -> 3.5 + 2·6.5 = 16.5.
const char* const kSlowdownTrace = "worker,duration\n0,1\n0,2\n0,6\n1,3\n1,4\n1,10\n";

TEST_F(TraceReplayTest, SlowdownTransformIsExact) {
  auto m = model(kSlowdownTrace, "straggler_slowdown = 2\n", 2);
  Rng rng(1, "duration", 0);
  EXPECT_EQ(draws(*m, 0, 4, rng), (std::vector<double>{1, 2, 8.5, 1}));
  EXPECT_EQ(draws(*m, 1, 4, rng), (std::vector<double>{3, 4.5, 16.5, 3}));
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(0), 11.5 / 3);
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(1), 8.0);
}

TEST_F(TraceReplayTest, SlowdownAppliesToBootstrapDraws) {
  auto m = model(kSlowdownTrace, "replay = \"bootstrap\"\nstraggler_slowdown = 2\n", 2);
  Rng rng(5, "duration", 1);
  std::vector<double> seen;
  for (const auto& [value, count] : histogram(draws(*m, 1, 1000, rng))) seen.push_back(value);
  EXPECT_EQ(seen, (std::vector<double>{3, 4.5, 16.5}));
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(1), 8.0);
}

// Pooled median M = 1 (13 of the 24 rows are 1); threshold 1.5 makes rows > 1.5 stragglers.
//   worker 0: eight 1s, {4, 5}: p = 0.2, a mixed worker;
//   worker 1: four 1s, {6, 7, 8, 9, 10, 11}: p = 0.6, so frequency 2 gives min(1, 1.2) = 1;
//   worker 2: {2, 3}: p = 1, unchanged;  worker 3: {1, 1.25}: p = 0, unchanged.
const char* const kStragglerTrace =
    "worker,duration\n"
    "0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,4\n0,5\n"
    "1,1\n1,1\n1,1\n1,1\n1,6\n1,7\n1,8\n1,9\n1,10\n1,11\n"
    "2,2\n2,3\n"
    "3,1\n3,1.25\n";

// Checks that each value of worker `worker`'s draws occurs with the probability in `expected`
// (and that no other value occurs).
void ExpectFrequencies(const TimingModel& m, int worker, const std::map<double, double>& expected,
                       uint64_t seed) {
  constexpr int kDraws = 40000;
  Rng rng(seed, "duration", worker);
  const std::map<double, int64_t> counts = histogram(draws(m, worker, kDraws, rng));
  for (const auto& [value, count] : counts) {
    EXPECT_TRUE(expected.contains(value)) << "worker " << worker << " drew " << value;
  }
  for (const auto& [value, p] : expected) {
    const int64_t count = counts.contains(value) ? counts.at(value) : 0;
    EXPECT_TRUE(BinomialClose(count, kDraws, p)) << "worker " << worker << ", row " << value;
  }
}

TEST_F(TraceReplayTest, FrequencyScalesHowOftenAWorkerStraggles) {
  for (const double frequency : {2.0, 0.5}) {
    SCOPED_TRACE(frequency);
    auto m = model(
        kStragglerTrace,
        "replay = \"bootstrap\"\nstraggler_frequency = " + std::to_string(frequency) + "\n", 4);
    // Worker 0: q = min(1, frequency·0.2), split evenly over {4, 5}; the 1s share 1 − q.
    const double q = std::min(1.0, frequency * 0.2);
    ExpectFrequencies(*m, 0, {{1, 1 - q}, {4, q / 2}, {5, q / 2}}, 21);
    // Worker 1: q = min(1, frequency·0.6), 1 at frequency 2: only straggler rows.
    const double q1 = std::min(1.0, frequency * 0.6);
    std::map<double, double> expected1 = {{1, 1 - q1}};
    for (const double row : {6, 7, 8, 9, 10, 11}) expected1[row] = q1 / 6;
    if (q1 == 1) expected1.erase(1);
    ExpectFrequencies(*m, 1, expected1, 22);
    // Workers with p = 0 or 1 are not reweighted.
    ExpectFrequencies(*m, 2, {{2, 0.5}, {3, 0.5}}, 23);
    ExpectFrequencies(*m, 3, {{1, 0.5}, {1.25, 0.5}}, 24);
  }
}

TEST_F(TraceReplayTest, ThresholdSetsWhichRowsAreStragglers) {
  // Threshold 4.5 leaves only 5 a straggler row of worker 0: p = 0.1, q = 0.2 at frequency 2.
  auto m = model(kStragglerTrace,
                 "replay = \"bootstrap\"\nstraggler_frequency = 2\nstraggler_threshold = 4.5\n", 4);
  ExpectFrequencies(*m, 0, {{1, 0.8 * 8 / 9}, {4, 0.8 / 9}, {5, 0.2}}, 31);
}

TEST_F(TraceReplayTest, MeanUnitTimeIsTheExpectationOfTheDraws) {
  // Worker 0 with slowdown 2 and frequency 2: q = 0.4, the stragglers {4, 5} become
  // {1 + 2·3, 1 + 2·4} = {7, 9}, the 1s stay. Mean 0.6·1 + 0.4·8 = 3.8;
  // E[X²] = 0.6·1 + 0.4·(49 + 81)/2 = 26.6, variance 26.6 − 3.8² = 12.16.
  auto m = model(kStragglerTrace,
                 "replay = \"bootstrap\"\nstraggler_slowdown = 2\nstraggler_frequency = 2\n", 4);
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(0), 3.8);
  // Worker 1 draws only its stragglers, {1 + 2·5, ..., 1 + 2·10}: mean 1 + 2·7.5 = 16.
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(1), 16.0);
  // Workers 2 and 3: the plain mean of the transformed rows, (3 + 5)/2 and (1 + 1.5)/2.
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(2), 4.0);
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(3), 1.25);

  constexpr int kDraws = 40000;
  Rng rng(41, "duration", 0);
  double sum = 0;
  for (const double d : draws(*m, 0, kDraws, rng)) sum += d;
  const double tolerance = kSigmas * std::sqrt(12.16 / kDraws);
  EXPECT_NEAR(sum / kDraws, 3.8, tolerance);
}

// Classify, then transform: with M = 1 and slowdown 4, the row 1.25 becomes 2 > 1.5·M, but it
// was no straggler as read. Rows {1, 1, 1, 1.25, 3}: p = 0.2, q = 0.4 at frequency 2, so the
// mean is 0.4·9 + 0.6·(1 + 1 + 1 + 2)/4 = 4.35 (classifying after the transform would give
// p = 0.4, q = 0.8 and 0.8·5.5 + 0.2·1 = 4.6).
TEST_F(TraceReplayTest, RowsAreClassifiedBeforeTheSlowdown) {
  auto m = model("worker,duration\n0,1\n0,1\n0,1\n0,1.25\n0,3\n",
                 "replay = \"bootstrap\"\nstraggler_slowdown = 4\nstraggler_frequency = 2\n", 1);
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(0), 4.35);
  ExpectFrequencies(*m, 0, {{1, 0.6 * 3 / 4}, {2, 0.6 / 4}, {9, 0.4}}, 51);
}

TEST_F(TraceReplayTest, CheckpointRestoresBothModes) {
  for (const std::string replay : {"order", "bootstrap"}) {
    SCOPED_TRACE(replay);
    const std::string keys = "replay = \"" + replay + "\"\n";
    auto original = model(kTwoWorkers, keys, 2);
    Rng rng(3, "duration", 0);
    draws(*original, 0, 2, rng);
    StateArchive saved = StateArchive::for_saving();
    original->checkpoint(saved);
    rng.checkpoint(saved);
    const std::vector<double> expected = draws(*original, 0, 10, rng);

    auto restored = model(kTwoWorkers, keys, 2);
    Rng restored_rng(99, "duration", 0);
    StateArchive loading = StateArchive::for_loading(saved.bytes(), "checkpoint");
    restored->checkpoint(loading);
    restored_rng.checkpoint(loading);
    loading.expect_end();
    EXPECT_EQ(draws(*restored, 0, 10, restored_rng), expected);
  }
}

TEST_F(TraceReplayTest, BadValuesNameTheKey) {
  struct BadValue {
    std::string keys;
    std::string key;
  };
  const std::vector<BadValue> cases = {
      {"replay = \"x\"", "timing.replay"},
      {"replay = 1", "timing.replay"},
      {"straggler_slowdown = 0", "timing.straggler_slowdown"},
      {"straggler_slowdown = -2", "timing.straggler_slowdown"},
      {"straggler_slowdown = nan", "timing.straggler_slowdown"},
      {"straggler_frequency = 2", "timing.straggler_frequency"},
      {"replay = \"order\"\nstraggler_frequency = 0.5", "timing.straggler_frequency"},
      {"replay = \"bootstrap\"\nstraggler_frequency = 0", "timing.straggler_frequency"},
      {"replay = \"bootstrap\"\nstraggler_frequency = -1", "timing.straggler_frequency"},
      {"replay = \"bootstrap\"\nstraggler_frequency = 2\nstraggler_threshold = 1",
       "timing.straggler_threshold"},
      {"replay = \"bootstrap\"\nstraggler_frequency = 2\nstraggler_threshold = 0.5",
       "timing.straggler_threshold"},
  };
  for (const BadValue& c : cases) {
    const std::string message = error(kTwoWorkers, c.keys + "\n", 2);
    EXPECT_TRUE(Contains(message, "'" + c.key + "'")) << c.keys;
    EXPECT_TRUE(Contains(message, "expected")) << c.keys;
  }
  EXPECT_TRUE(Contains(error(kTwoWorkers, "straggler_frequency = 2\n", 2), "bootstrap"));
}

TEST_F(TraceReplayTest, ThresholdIsReadOnlyWhenTheFrequencyIsSet) {
  const Config plain = config(kTwoWorkers, "replay = \"bootstrap\"\nstraggler_threshold = 2\n");
  make_timing_model(plain, 2, 1);
  EXPECT_EQ(plain.unread_keys(), (std::vector<std::string>{"timing.straggler_threshold"}));
  const Config reweighted = config(
      kTwoWorkers, "replay = \"bootstrap\"\nstraggler_frequency = 2\nstraggler_threshold = 2\n");
  make_timing_model(reweighted, 2, 1);
  EXPECT_TRUE(reweighted.unread_keys().empty());
}

}  // namespace
}  // namespace pacer
