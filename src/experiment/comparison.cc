#include "pacer/experiment/comparison.h"

#include <fmt/format.h>

#include <boost/math/distributions/students_t.hpp>
#include <limits>

namespace pacer {

std::string Budget::describe() const {
  switch (kind) {
    case Kind::kSteps:
      return fmt::format("{:.0f} steps", value);
    case Kind::kTime:
      return fmt::format("{:g} s of simulated time", value);
    case Kind::kWork:
      return fmt::format("{:g} work units", value);
  }
  return "";
}

Estimate estimate(const std::vector<double>& values, int censored) {
  Estimate e;
  e.censored = censored;
  double sum = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    sum += v;
    ++e.n;
  }
  if (e.n == 0) return e;
  e.mean = sum / e.n;
  if (e.n < 2) return e;
  double squares = 0;
  for (double v : values) {
    if (!std::isnan(v)) squares += (v - e.mean) * (v - e.mean);
  }
  const double sd = std::sqrt(squares / (e.n - 1));
  // Two-sided 95 %: the 0.975 quantile of Student's t with n - 1 degrees of freedom.
  const boost::math::students_t t(e.n - 1);
  const double half = boost::math::quantile(t, 0.975) * sd / std::sqrt(static_cast<double>(e.n));
  e.low = e.mean - half;
  e.high = e.mean + half;
  return e;
}

// The criterion, smaller is better (see CompareOptions::tune): (seeds that missed the target,
// mean time to target with censored seeds at their end time), or without a target (0, mean final
// F), with +∞ when a seed diverged.
std::pair<int, double> criterion_score(const MethodResult& m, bool has_target) {
  const double inf = std::numeric_limits<double>::infinity();
  if (has_target) {
    const int missed = static_cast<int>(m.runs.size()) - m.reached;
    return {missed, std::isnan(m.time_to_target.mean) ? inf : m.time_to_target.mean};
  }
  if (m.diverged > 0 || std::isnan(m.final_loss.mean)) return {0, inf};
  return {0, m.final_loss.mean};
}

// "value" of an estimate: "12.3 [11.0, 13.6]", "12.3" (one seed), "≥ 12.3" (censored), "—".
std::string format_estimate(const Estimate& e, const char* spec) {
  if (e.empty()) return "—";
  const std::string mean = fmt::format(fmt::runtime(spec), e.mean);
  if (e.censored > 0) return "≥ " + mean;
  if (e.n < 2) return mean;
  return fmt::format("{} [{}, {}]", mean, fmt::format(fmt::runtime(spec), e.low),
                     fmt::format(fmt::runtime(spec), e.high));
}

std::string csv_estimate(const Estimate& e) {
  auto num = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); };
  return fmt::format("{},{},{},{}", num(e.mean), num(e.low), num(e.high), e.censored);
}

}  // namespace pacer
