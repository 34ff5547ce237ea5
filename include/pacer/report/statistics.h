// Estimates over seeds, and their intervals, for comparisons (DESIGN.md section 9).
//
// Every interval respects the quantity it is of:
//   * Positive quantities (times, steps, work, F, ‖∇F‖², ratios, units): the geometric mean and a
//     two-sided 95 % Student-t interval of the logarithms, exponentiated. It never leaves (0, ∞),
//     it treats a 2× slower and a 2× faster seed alike, and it is what the paired ratios of a
//     verdict (verdict.h) compare. Times to target are skewed to the right, which the log scale
//     also suits. A bootstrap over seeds was not chosen: with 2 to 5 seeds its percentile interval
//     cannot be wider than the values' range and undercovers badly.
//     A value of 0 (a loss that reached 0 exactly) has no logarithm: the estimate then falls back
//     to the arithmetic mean and the t interval, intersected with [0, ∞) (the quantity cannot be
//     negative, so the intersection keeps the interval's coverage).
//   * Proportions (test accuracy): the mean and the t interval intersected with [0, 1].
//   * Real numbers (differences): the mean and the t interval.
// An estimate of one value has no interval (low = high = NaN).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace pacer {

inline constexpr double kNotAvailable = std::numeric_limits<double>::quiet_NaN();

enum class Scale { kPositive, kProportion, kReal };

// A central value and its two-sided 95 % interval over seeds. With censored seeds (that did not
// reach the target) the values are lower bounds: each such seed contributes its end value.
struct Estimate {
  int n = 0;                    // values (seeds) behind it; 0 = no value
  double mean = kNotAvailable;  // geometric mean for Scale::kPositive (see the file comment)
  double low = kNotAvailable, high = kNotAvailable;  // n >= 2
  int censored = 0;                                  // seeds that contributed a lower bound
  bool geometric = false;                            // mean is a geometric mean
  bool empty() const { return n == 0; }
  bool has_interval() const { return !std::isnan(low); }
  // The interval includes `value` (a ratio's tie is 1, a difference's 0); true without one.
  bool includes(double value) const { return !has_interval() || (low <= value && value <= high); }
};

// The estimate of `values` (NaN entries skipped) on `scale`; `censored` is copied through.
Estimate estimate(const std::vector<double>& values, Scale scale, int censored = 0);

// The two-sided 0.975 quantile of Student's t with `df` (>= 1) degrees of freedom.
double t_quantile(int df);

// Paired over seeds: the ratios a_k / b_k (pairs with a NaN or a non-positive value skipped) as a
// Scale::kPositive estimate: the geometric mean ratio and its interval. `censored` counts the
// pairs in which either value is a lower bound (the caller says which).
Estimate paired_ratio(const std::vector<double>& a, const std::vector<double>& b, int censored = 0);

// The seeds a paired ratio estimate would need for its 95 % interval to exclude 1, at the spread
// and mean log ratio it shows (solving t(n − 1) · sd / √n < |mean log| for the smallest n). 0 when
// it already does; -1 when no number would (the mean log ratio is 0, or there is no spread
// estimate: fewer than two pairs). `log_ratios` are the pairs' log ratios.
int seeds_to_exclude_tie(const std::vector<double>& log_ratios);

// The pairs' log ratios log(a_k / b_k), as paired_ratio() uses them.
std::vector<double> log_ratios(const std::vector<double>& a, const std::vector<double>& b);

// "12.3 [11.0, 13.6]" (mean [95 % interval]), "12.3" (one value), "≥ 12.3" (censored: a lower
// bound), "—" (no value). `spec` formats each number ("{:.2f}").
std::string format_estimate(const Estimate& e, const char* spec);
// How a ratio is printed: 3 significant digits ("1.35", "11.8") or 2 decimals ("1.35", "11.85").
enum class RatioDigits { kThreeSignificant, kTwoDecimals };
// A ratio for tables and verdicts, with `digits`, and more where a value other than 1 would print
// as 1 ("1" or "1.00"; at most 17 digits), so that a printed interval shows on which side of 1
// each bound lies: "1.001", not "1", for a lower bound of 1.0012. Exactly 1 prints as "1" (or
// "1.00").
std::string format_ratio_number(double v, RatioDigits digits = RatioDigits::kThreeSignificant);
// "1.35<unit> [1.22, 1.48]" of a ratio estimate with format_ratio_number's numbers ("×" as `unit`
// gives "1.35× [1.22, 1.48]"); the mean alone without an interval; "—" without a value. A caller
// says what a censored or tied estimate means, in its own words.
std::string format_ratio_estimate(const Estimate& e, std::string_view unit = "",
                                  RatioDigits digits = RatioDigits::kThreeSignificant);
// Four CSV fields "mean,low,high,censored" (an absent number is blank, every number at full
// precision).
std::string csv_estimate(const Estimate& e);

}  // namespace pacer
