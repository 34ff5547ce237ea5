// Estimates over seeds (report/statistics.h): intervals that stay within the quantity's range,
// paired ratios, and the seeds a tie would need.
#include "pacer/report/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "pacer/core/rng.h"

namespace pacer::testing {
namespace {

// The case the issue met: two seeds of very different step times. A Student-t interval of the
// values themselves reaches below zero ("1.441 [−0.7686, 3.65]"); on the log scale it cannot.
TEST(Statistics, PositiveQuantitiesGetAGeometricMeanAndAPositiveInterval) {
  const Estimate e = estimate({0.2, 2.7}, Scale::kPositive);
  EXPECT_TRUE(e.geometric);
  EXPECT_NEAR(e.mean, std::sqrt(0.2 * 2.7), 1e-15);
  ASSERT_TRUE(e.has_interval());
  EXPECT_GT(e.low, 0);
  EXPECT_LT(e.low, e.mean);
  EXPECT_GT(e.high, e.mean);
  // The interval is the t interval of the logs, exponentiated: log(high/mean) = t(1) · sd / √2.
  const double sd = std::abs(std::log(2.7) - std::log(0.2)) / std::sqrt(2.0);
  EXPECT_NEAR(std::log(e.high / e.mean), t_quantile(1) * sd / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(std::log(e.mean / e.low), std::log(e.high / e.mean), 1e-12);
}

// Property: over many random samples of positive values, proportions and values containing a
// zero, no interval of a positive quantity has a negative end and no proportion leaves [0, 1].
TEST(Statistics, NoIntervalOfAPositiveQuantityReachesBelowZero) {
  Rng rng(7, "statistics-test");
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 2 + static_cast<int>(rng.uniform_int(6));
    std::vector<double> positive, with_zero, proportion;
    for (int k = 0; k < n; ++k) {
      positive.push_back(std::exp(4 * rng.normal()));  // spans many decades
      with_zero.push_back(k == 0 ? 0.0 : rng.exponential(1.0));
      proportion.push_back(rng.uniform() < 0.5 ? rng.uniform() : 1.0 - 1e-3 * rng.uniform());
    }
    const Estimate p = estimate(positive, Scale::kPositive);
    EXPECT_GT(p.low, 0) << trial;
    EXPECT_LE(p.low, p.mean);
    EXPECT_GE(p.high, p.mean);
    const Estimate z = estimate(with_zero, Scale::kPositive);
    EXPECT_FALSE(z.geometric);  // a zero has no logarithm: the arithmetic mean instead
    EXPECT_GE(z.low, 0) << trial;
    const Estimate q = estimate(proportion, Scale::kProportion);
    EXPECT_GE(q.low, 0) << trial;
    EXPECT_LE(q.high, 1) << trial;
    const Estimate r = paired_ratio(positive, with_zero);
    if (!r.empty() && r.has_interval()) {
      EXPECT_GT(r.low, 0) << trial;
    }
  }
}

TEST(Statistics, OneValueHasNoIntervalAndNaNsAreSkipped) {
  const Estimate one = estimate({3.0, kNotAvailable}, Scale::kPositive);
  EXPECT_EQ(one.n, 1);
  EXPECT_DOUBLE_EQ(one.mean, 3.0);
  EXPECT_FALSE(one.has_interval());
  EXPECT_TRUE(one.includes(1));  // no interval: nothing is excluded
  EXPECT_EQ(format_estimate(one, "{:.1f}"), "3.0");
  EXPECT_TRUE(estimate({}, Scale::kReal).empty());
  EXPECT_EQ(format_estimate(Estimate{}, "{:.1f}"), "—");
}

TEST(Statistics, PairedRatiosAreGeometricMeansOfThePerSeedRatios) {
  const std::vector<double> a = {2, 9, 4}, b = {1, 3, 4};
  const Estimate r = paired_ratio(a, b, 1);
  EXPECT_EQ(r.n, 3);
  EXPECT_EQ(r.censored, 1);
  EXPECT_NEAR(r.mean, std::cbrt(2.0 * 3.0 * 1.0), 1e-12);
  // Identical values on every seed: the ratio is exactly 1, the interval [1, 1] includes the tie.
  const Estimate same = paired_ratio(a, a);
  EXPECT_EQ(same.mean, 1.0);
  EXPECT_TRUE(same.includes(1));
  EXPECT_EQ(seeds_to_exclude_tie(log_ratios(a, a)), -1);
}

TEST(Statistics, APrintedRatioIntervalShowsOnWhichSideOfOneEachBoundLies) {
  // Three significant digits, more where a bound other than 1 would print as "1": an interval
  // that excludes a tie never reads like one that touches it.
  EXPECT_EQ(format_ratio_number(1.33), "1.33");
  EXPECT_EQ(format_ratio_number(1.0012), "1.001");
  EXPECT_EQ(format_ratio_number(0.99963), "0.9996");
  EXPECT_EQ(format_ratio_number(1.0000004), "1.0000004");
  EXPECT_EQ(format_ratio_number(1), "1");
  const Estimate e{.n = 5, .mean = 1.16, .low = 1.0012, .high = 1.33};
  EXPECT_EQ(format_ratio_estimate(e, "×"), "1.16× [1.001, 1.33]");
  EXPECT_EQ(format_ratio_estimate(Estimate{}), "—");
  // Two decimals (advise's speedups, sweep's ratios): "1.00" only for 1 itself.
  EXPECT_EQ(format_ratio_number(11.853, RatioDigits::kTwoDecimals), "11.85");
  EXPECT_EQ(format_ratio_number(0.996, RatioDigits::kTwoDecimals), "0.996");
  EXPECT_EQ(format_ratio_number(1.004, RatioDigits::kTwoDecimals), "1.004");
  EXPECT_EQ(format_ratio_number(1, RatioDigits::kTwoDecimals), "1.00");
}

// The seeds a tie needs: the smallest n with t(n − 1) · sd / √n < |mean log ratio|, checked
// against the interval that many seeds with the same mean and spread would give.
TEST(Statistics, SeedsToExcludeATieFollowFromTheObservedSpread) {
  const std::vector<double> logs = {0.02, -0.01, 0.05, 0.00, 0.03};  // mean 0.018
  const int n = seeds_to_exclude_tie(logs);
  ASSERT_GT(n, 5);
  const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / logs.size();
  double squares = 0;
  for (double l : logs) squares += (l - mean) * (l - mean);
  const double sd = std::sqrt(squares / (logs.size() - 1));
  EXPECT_LT(t_quantile(n - 1) * sd / std::sqrt(n), mean);
  EXPECT_GE(t_quantile(n - 2) * sd / std::sqrt(n - 1), mean);
  // Already decisive: no more seeds needed.
  EXPECT_EQ(seeds_to_exclude_tie({0.5, 0.52, 0.49}), 0);
}

}  // namespace
}  // namespace pacer::testing
