// The straggler timing models: persistent_stragglers' Markov chains (their stationary share,
// their spell lengths, hosts shared by workers) and common_shock's shock steps, drawn as the
// engines draw durations.
//
// Tolerances are derived, never tuned. A two-state chain that turns slow with probability a and
// recovers with probability b has the stationary slow share π = a/(a + b) and a lag-1
// autocorrelation 1 − a − b; the share of slow steps among T has variance about
// π(1 − π)/T · (1 + ρ)/(1 − ρ), ρ = 1 − a − b (the variance of the mean of an AR(1)-correlated
// 0/1 series), and a spell's length is geometric with mean 1/b. Every check allows kSigmas = 5
// standard errors.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/rng.h"
#include "pacer/timing/timing_model.h"

namespace pacer {
namespace {

constexpr double kSigmas = 5;
constexpr uint64_t kSeed = 5;

std::unique_ptr<TimingModel> model(const std::string& keys, int workers) {
  return make_timing_model(Config::parse("[timing]\n" + keys, "t.toml"), workers, kSeed);
}

// Worker `w`'s one-unit job durations at steps 0..steps−1, drawn from its own stream.
std::vector<double> durations(const TimingModel& m, int w, int steps) {
  Rng rng(kSeed, "duration", w);
  std::vector<double> out;
  for (int t = 0; t < steps; ++t) out.push_back(m.compute_time(w, 1, t, rng).total());
  return out;
}

TEST(PersistentStragglers, SlowSpellsHaveTheirStationaryShareAndLength) {
  constexpr double a = 0.01, b = 0.02;  // π = 1/3, spells of 50 steps
  constexpr int kSteps = 200000;
  auto m = model(
      "model = \"persistent_stragglers\"\ntau = 1.0\nslowdown = 3.0\np_slow = 0.01\n"
      "p_recover = 0.02\n",
      1);
  const std::vector<double> d = durations(*m, 0, kSteps);
  double slow = 0, spells = 0;
  for (int t = 0; t < kSteps; ++t) {
    ASSERT_TRUE(d[t] == 1.0 || d[t] == 3.0) << d[t];  // no jitter, no delays
    slow += d[t] == 3.0;
    spells += d[t] == 3.0 && (t == 0 || d[t - 1] == 1.0);
  }
  const double pi = a / (a + b), rho = 1 - a - b;
  const double se = std::sqrt(pi * (1 - pi) / kSteps * (1 + rho) / (1 - rho));
  EXPECT_NEAR(slow / kSteps, pi, kSigmas * se);
  // Mean spell length: slow steps / spells ≈ 1/b; about πT·b spells, each geometric (variance
  // (1 − b)/b²), so the mean's standard error is about √((1 − b)/b²/(πTb)).
  const double spell_se = std::sqrt((1 - b) / (b * b) / (pi * kSteps * b));
  EXPECT_NEAR(slow / spells, 1 / b, kSigmas * spell_se);
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(0), 1.0 + pi * 2.0);
}

TEST(PersistentStragglers, WorkersOfOneHostAreSlowTogether) {
  auto m = model(
      "model = \"persistent_stragglers\"\ntau = [1.0, 1.0, 2.0]\n"
      "slowdown = [3.0, 2.0, 1.5]\np_slow = 0.05\np_recover = 0.1\nhost = [0, 2, 0]\n",
      3);
  const std::vector<double> w0 = durations(*m, 0, 5000), w1 = durations(*m, 1, 5000),
                            w2 = durations(*m, 2, 5000);
  int together = 0, slow1 = 0;
  for (size_t t = 0; t < w0.size(); ++t) {
    // Workers 0 and 2 share host 0: each is slow exactly when the other is (own slowdowns).
    EXPECT_EQ(w0[t] == 3.0, w2[t] == 3.0) << t;
    together += w0[t] == 3.0;
    slow1 += w1[t] == 2.0;
  }
  EXPECT_GT(together, 0);
  EXPECT_GT(slow1, 0);
  // Worker 1 has a chain of its own (host 2): not the same steps as host 0's.
  int same = 0;
  for (size_t t = 0; t < w0.size(); ++t) same += (w0[t] == 3.0) == (w1[t] == 2.0);
  EXPECT_LT(same, static_cast<int>(w0.size()));
}

TEST(PersistentStragglers, ChainsArePureFunctionsOfSeedAndStep) {
  const std::string keys =
      "model = \"persistent_stragglers\"\ntau = 1.0\np_slow = 0.1\np_recover = 0.2\n";
  auto forward = model(keys, 2);
  auto backward = model(keys, 2);
  Rng rng(1, "unused");
  std::vector<double> ahead, behind(300);
  for (int t = 0; t < 300; ++t) ahead.push_back(forward->compute_time(1, 1, t, rng).total());
  for (int t = 299; t >= 0; --t) behind[t] = backward->compute_time(1, 1, t, rng).total();
  EXPECT_EQ(ahead, behind);
}

TEST(PersistentStragglers, JitterAndBadKeys) {
  auto m = model("model = \"persistent_stragglers\"\ntau = 2.0\np_slow = 0.0\njitter = 0.1\n", 1);
  const std::vector<double> d = durations(*m, 0, 20000);
  double sum = 0;
  for (double x : d) sum += x;
  // Mean 2 (the truncation at 1 + σZ <= 0 moves it by 2·σ·φ(10)/Φ(10), nothing), SE 2·0.1/√N.
  EXPECT_NEAR(sum / d.size(), 2.0, kSigmas * 0.2 / std::sqrt(20000.0));
  for (const std::string bad : {"slowdown = 0.5", "p_slow = 1.5", "p_recover = 0.0", "jitter = 0.3",
                                "host = [0, 5]", "host = [0, 0.5]", "slowdown = [1.0, 2.0, 3.0]"}) {
    try {
      model("model = \"persistent_stragglers\"\n" + bad + "\n", 2);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("timing." + bad.substr(0, bad.find(' '))),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(CommonShock, ShockStepsDelayManyWorkersAtOnce) {
  // τ = 1, no background delays: a job is delayed only in a shock step (probability 0.1), then
  // with probability 0.8. Shock steps are shared: in a step where any worker is delayed, the
  // others are delayed with probability 0.8, far above the 0.08 of a step drawn at random.
  constexpr int kWorkers = 8, kSteps = 20000;
  auto m = model(
      "model = \"common_shock\"\ntau = 1.0\nshock_probability = 0.1\n"
      "shock_share = 0.8\ndelay_mean = 1.0\n",
      kWorkers);
  std::vector<std::vector<double>> d;
  for (int w = 0; w < kWorkers; ++w) d.push_back(durations(*m, w, kSteps));
  double with_other = 0, pairs = 0, delayed = 0;
  for (int t = 0; t < kSteps; ++t) {
    for (int w = 1; w < kWorkers; ++w) {
      delayed += d[w][t] > 1;
      if (d[0][t] > 1) {
        pairs += 1;
        with_other += d[w][t] > 1;
      }
    }
  }
  // Rows of one step share its shock, so their delays are correlated: the variance of a share
  // over steps of m rows is at most m times the binomial one (the design effect 1 + (m − 1)ρ,
  // ρ <= 1); kWorkers bounds m.
  const double p = 0.1 * 0.8;
  const double n = (kWorkers - 1.0) * kSteps;
  EXPECT_NEAR(delayed / n, p, kSigmas * std::sqrt(p * (1 - p) / n * kWorkers));
  ASSERT_GT(pairs, 0);
  // Given worker 0 delayed, the step is a shock step: each other worker is delayed w.p. 0.8.
  EXPECT_NEAR(with_other / pairs, 0.8, kSigmas * std::sqrt(0.8 * 0.2 / pairs * kWorkers));
  EXPECT_DOUBLE_EQ(*m->mean_unit_time(0), 1.0 + p * 1.0);
}

TEST(RandomStragglers, JitterOffKeepsTheDrawsOfBefore) {
  // With jitter 0 (the default) a job draws a uniform and an exponential, as it always did: the
  // total is u·τ + the delay when the uniform is below q.
  auto m = model("model = \"random_stragglers\"\ntau = 2.0\nq = 0.3\ndelay_mean = 1.5\n", 1);
  Rng rng(9, "duration", 0), same(9, "duration", 0);
  for (int t = 0; t < 100; ++t) {
    const bool late = same.uniform() < 0.3;
    const double delay = same.exponential(1.5);
    const Duration d = m->compute_time(0, 2, t, rng);
    EXPECT_EQ(d.base, 4.0);
    EXPECT_EQ(d.extra, late ? delay : 0.0);
  }
}

}  // namespace
}  // namespace pacer
