#include "pacer/timing/timing_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "pacer/core/error.h"

namespace pacer {
namespace {

constexpr uint64_t kSeed = 7;
constexpr int kDraws = 100000;

std::unique_ptr<TimingModel> build(const std::string& toml, int workers, uint64_t seed = kSeed) {
  return make_timing_model(Config::parse(toml, "t.toml"), workers, seed);
}

// Sample moments of `draws` jobs of `units` on `worker`, drawn from its own duration stream.
struct Sample {
  double mean_total = 0;
  double sd_total = 0;
  double mean_extra = 0;
  double mean_extra_squared = 0;
  double straggling = 0;  // fraction of jobs with extra > 0
  double min_base = INFINITY;
  double max_base = -INFINITY;
  // Standard error of mean_total.
  double standard_error() const { return sd_total / std::sqrt(kDraws); }
};

Sample sample(const TimingModel& model, int worker, double units) {
  Rng rng(kSeed, "duration", worker);
  Sample s;
  double sum_squared = 0;
  for (int j = 0; j < kDraws; ++j) {
    const Duration d = model.compute_time(worker, units, j, rng);
    s.mean_total += d.total();
    sum_squared += d.total() * d.total();
    s.mean_extra += d.extra;
    s.mean_extra_squared += d.extra * d.extra;
    s.straggling += d.extra > 0;
    s.min_base = std::min(s.min_base, d.base);
    s.max_base = std::max(s.max_base, d.base);
  }
  s.mean_total /= kDraws;
  s.mean_extra /= kDraws;
  s.mean_extra_squared /= kDraws;
  s.straggling /= kDraws;
  s.sd_total = std::sqrt(sum_squared / kDraws - s.mean_total * s.mean_total);
  return s;
}

// The sample mean lies within 5 standard errors of `expected`.
void expect_mean(const Sample& s, double expected) {
  EXPECT_NEAR(s.mean_total, expected, 5 * s.standard_error() + 1e-12);
}

TEST(TimingModel, FixedIsUnitsTimesTauWithNoExtra) {
  auto model = build("[timing]\ntau = [1, 2.5, 4]\n", 3);
  EXPECT_EQ(model->name(), "fixed");
  EXPECT_EQ(model->num_workers(), 3);
  Rng rng(kSeed, "duration", 1);
  const Duration d = model->compute_time(1, 3, 0, rng);
  EXPECT_DOUBLE_EQ(d.base, 7.5);
  EXPECT_EQ(d.extra, 0.0);
  EXPECT_EQ(model->mean_unit_time(1), 2.5);
}

TEST(TimingModel, DefaultIsFixedWithUnitTau) {
  auto model = build("", 2);
  EXPECT_EQ(model->name(), "fixed");
  EXPECT_EQ(model->mean_unit_time(0), 1.0);
  EXPECT_EQ(model->mean_unit_time(1), 1.0);
}

TEST(TimingModel, ExponentialHasMeanUnitsTimesTauAllInExtra) {
  auto model = build("[timing]\nmodel = \"exponential\"\ntau = [1, 3]\n", 2);
  const Sample s = sample(*model, 1, 2);
  EXPECT_EQ(s.max_base, 0.0);
  expect_mean(s, 6.0);
  EXPECT_NEAR(s.sd_total, 6.0, 0.03 * 6.0);  // an exponential's sd equals its mean
  EXPECT_EQ(model->mean_unit_time(1), 3.0);
}

TEST(TimingModel, ShiftedExponentialAddsExpOfLambdaTimesBase) {
  auto model = build("[timing]\nmodel = \"shifted_exponential\"\ntau = 2\nlambda = 0.5\n", 2);
  const Sample s = sample(*model, 0, 3);
  EXPECT_EQ(s.min_base, 6.0);
  EXPECT_EQ(s.max_base, 6.0);
  EXPECT_NEAR(s.mean_extra, 3.0, 5 * s.standard_error());
  expect_mean(s, 9.0);
  EXPECT_DOUBLE_EQ(*model->mean_unit_time(0), 3.0);
  expect_mean(s, 3 * *model->mean_unit_time(0));
}

TEST(TimingModel, ParetoScalesBaseByParetoFactor) {
  auto model = build("[timing]\nmodel = \"pareto\"\ntau = 2\nalpha = 4\n", 1);
  const Sample s = sample(*model, 0, 1.5);
  EXPECT_EQ(s.min_base, 3.0);
  EXPECT_EQ(s.max_base, 3.0);
  EXPECT_GE(s.mean_extra, 0.0);
  EXPECT_DOUBLE_EQ(*model->mean_unit_time(0), 2.0 * 4.0 / 3.0);
  expect_mean(s, 1.5 * *model->mean_unit_time(0));
}

TEST(TimingModel, ParetoMeanIsUndefinedForHeavyTails) {
  EXPECT_EQ(build("[timing]\nmodel = \"pareto\"\nalpha = 1\n", 1)->mean_unit_time(0), std::nullopt);
  EXPECT_EQ(build("[timing]\nmodel = \"pareto\"\n", 1)->mean_unit_time(0), 2.0);  // alpha = 2
}

TEST(TimingModel, NoisyLinearUsesIPlusOneAsBaseAndAsVariance) {
  auto model = build("[timing]\nmodel = \"noisy_linear\"\n", 5);
  const int worker = 3;
  const double units = 2;
  const Sample s = sample(*model, worker, units);
  EXPECT_EQ(s.min_base, units * 4);
  EXPECT_EQ(s.max_base, units * 4);
  // extra/u = |N(0, 4)|, so E[(extra/u)^2] = 4 (a std of 4 would give 16).
  EXPECT_NEAR(s.mean_extra_squared / (units * units), 4.0, 0.05 * 4.0);
  const double mean = 4 + std::sqrt(2 * 4 / std::numbers::pi);
  EXPECT_DOUBLE_EQ(*model->mean_unit_time(worker), mean);
  expect_mean(s, units * mean);
  EXPECT_DOUBLE_EQ(*model->mean_unit_time(0), 1 + std::sqrt(2 / std::numbers::pi));
}

TEST(TimingModel, RandomStragglersAddPerJobDelayWithProbabilityQ) {
  auto model =
      build("[timing]\nmodel = \"random_stragglers\"\ntau = 0.5\nq = 0.3\ndelay_mean = 2\n", 4);
  const double units = 3;
  const Sample s = sample(*model, 2, units);
  EXPECT_EQ(s.min_base, 1.5);
  EXPECT_EQ(s.max_base, 1.5);
  EXPECT_NEAR(s.straggling, 0.3, 0.01);
  // The delay is per job: mean u·τ + q·m, not u·(τ + q·m).
  expect_mean(s, 1.5 + 0.3 * 2);
  EXPECT_DOUBLE_EQ(*model->mean_unit_time(2), 0.5 + 0.3 * 2);
}

TEST(TimingModel, RandomStragglersDefaults) {
  auto model = build("[timing]\nmodel = \"random_stragglers\"\n", 2);
  const Sample s = sample(*model, 0, 1);
  EXPECT_NEAR(s.straggling, 0.25, 0.01);
  EXPECT_DOUBLE_EQ(*model->mean_unit_time(0), 1 + 0.25 * 1.0);
  expect_mean(s, 1.25);
}

// The workers that straggle at `step`, each queried with a fresh rng of the given purpose.
std::set<int> stragglers_at(const TimingModel& model, int64_t step, std::string_view purpose) {
  std::set<int> out;
  for (int w = 0; w < model.num_workers(); ++w) {
    Rng rng(kSeed, purpose, w);
    if (model.compute_time(w, 1, step, rng).extra > 0) out.insert(w);
  }
  return out;
}

TEST(TimingModel, KStragglersPickExactlyKWorkersPerStepFromSeedAndStep) {
  const int n = 8;
  const int k = 3;
  const std::string toml = "[timing]\nmodel = \"random_stragglers\"\nk = 3\n";
  auto model = build(toml, n);
  auto same_seed = build(toml, n);
  auto other_seed = build(toml, n, kSeed + 1);
  std::vector<int> times_chosen(n, 0);
  std::set<std::set<int>> distinct_sets;
  int differs_from_other_seed = 0;
  const int steps = 2000;
  for (int64_t step = 0; step < steps; ++step) {
    const std::set<int> chosen = stragglers_at(*model, step, "duration");
    ASSERT_EQ(chosen.size(), static_cast<size_t>(k)) << "step " << step;
    EXPECT_EQ(stragglers_at(*model, step, "another stream"), chosen);
    EXPECT_EQ(stragglers_at(*same_seed, step, "duration"), chosen);
    differs_from_other_seed += stragglers_at(*other_seed, step, "duration") != chosen;
    for (int w : chosen) ++times_chosen[w];
    distinct_sets.insert(chosen);
  }
  EXPECT_EQ(distinct_sets.size(), 56u);  // all C(8, 3) subsets occur
  EXPECT_GT(differs_from_other_seed, steps / 2);
  for (int w = 0; w < n; ++w) EXPECT_NEAR(times_chosen[w], steps * k / n, 0.15 * steps * k / n);
  EXPECT_DOUBLE_EQ(*model->mean_unit_time(0), 1 + 3.0 / 8 * 1.0);
}

TEST(TimingModel, KStragglersEqualToNOrZeroDelay) {
  auto all = build("[timing]\nmodel = \"random_stragglers\"\nk = 4\n", 4);
  EXPECT_EQ(stragglers_at(*all, 9, "duration").size(), 4u);
  auto silent = build("[timing]\nmodel = \"random_stragglers\"\nk = 2\ndelay_mean = 0\n", 4);
  EXPECT_TRUE(stragglers_at(*silent, 9, "duration").empty());
}

TEST(TimingModel, HarmonicProfileDoublesEveryTwoWorkers) {
  auto model = build("[timing]\nprofile = \"harmonic\"\ntau = 0.5\n", 9);
  const std::vector<double> expected = {0.5, 0.5, 1, 1, 2, 2, 4, 4, 8};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(model->mean_unit_time(i), expected[i]) << i;
  auto unit = build("[timing]\nmodel = \"exponential\"\nprofile = \"harmonic\"\n", 6);
  EXPECT_EQ(unit->mean_unit_time(5), 4.0);
}

const std::vector<std::string> kRandomModels = {
    "[timing]\nmodel = \"exponential\"\n",
    "[timing]\nmodel = \"shifted_exponential\"\n",
    "[timing]\nmodel = \"pareto\"\n",
    "[timing]\nmodel = \"noisy_linear\"\n",
    "[timing]\nmodel = \"random_stragglers\"\n",
    "[timing]\nmodel = \"random_stragglers\"\nk = 1\n",
};

TEST(TimingModel, SameSeedGivesSameSequence) {
  for (const std::string& toml : kRandomModels) {
    auto model = build(toml, 3);
    Rng a(kSeed, "duration", 2);
    Rng b(kSeed, "duration", 2);
    Rng other(kSeed + 1, "duration", 2);
    int differ = 0;
    for (int j = 0; j < 100; ++j) {
      const double x = model->compute_time(2, 1, j, a).total();
      EXPECT_EQ(x, model->compute_time(2, 1, j, b).total()) << toml;
      differ += x != model->compute_time(2, 1, j, other).total();
    }
    EXPECT_GT(differ, 0) << toml;
  }
}

TEST(TimingModel, WorkerStreamsDoNotDependOnCallInterleaving) {
  for (const std::string& toml : kRandomModels) {
    auto model = build(toml, 2);
    std::vector<double> alone[2];
    for (int w = 0; w < 2; ++w) {
      Rng rng(kSeed, "duration", w);
      for (int j = 0; j < 50; ++j) alone[w].push_back(model->compute_time(w, 1, j, rng).total());
    }
    Rng rng[2] = {Rng(kSeed, "duration", 0), Rng(kSeed, "duration", 1)};
    size_t next[2] = {0, 0};
    for (int call = 0; call < 100; ++call) {
      const int w = (call * 7 / 3) % 2;  // an irregular interleaving
      if (next[w] == alone[w].size()) continue;
      EXPECT_EQ(model->compute_time(w, 1, next[w], rng[w]).total(), alone[w][next[w]]) << toml;
      ++next[w];
    }
  }
}

TEST(CommModel, DefaultsAreFreeAndValuesAddLatencyAndTransfer) {
  const CommModel free = make_comm_model(Config());
  EXPECT_EQ(free.time(1e9), 0.0);
  const CommModel comm =
      make_comm_model(Config::parse("[timing]\nlatency = 0.1\nbandwidth = 1e6\n", "t.toml"));
  EXPECT_DOUBLE_EQ(comm.time(2e6), 2.1);
}

}  // namespace
}  // namespace pacer
