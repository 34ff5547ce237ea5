#include "pacer/report/statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

namespace pacer {
namespace {

struct Moments {
  int n = 0;
  double mean = 0, sd = 0;
};

Moments moments(const std::vector<double>& values) {
  Moments m;
  double sum = 0;
  for (double v : values) {
    sum += v;
    ++m.n;
  }
  if (m.n == 0) return m;
  m.mean = sum / m.n;
  if (m.n < 2) return m;
  double squares = 0;
  for (double v : values) squares += (v - m.mean) * (v - m.mean);
  m.sd = std::sqrt(squares / (m.n - 1));
  return m;
}

// Mean and t interval of `values` (all finite).
Estimate linear(const std::vector<double>& values) {
  const Moments m = moments(values);
  Estimate e;
  e.n = m.n;
  if (m.n == 0) return e;
  e.mean = m.mean;
  if (m.n < 2) return e;
  const double half = t_quantile(m.n - 1) * m.sd / std::sqrt(static_cast<double>(m.n));
  e.low = m.mean - half;
  e.high = m.mean + half;
  return e;
}

// Geometric mean and the t interval of the logarithms (all values > 0).
Estimate logarithmic(const std::vector<double>& values) {
  std::vector<double> logs;
  for (double v : values) logs.push_back(std::log(v));
  Estimate e = linear(logs);
  e.mean = std::exp(e.mean);
  if (e.has_interval()) {
    e.low = std::exp(e.low);
    e.high = std::exp(e.high);
  }
  e.geometric = true;
  return e;
}

Estimate clipped(Estimate e, double low, double high) {
  if (e.has_interval()) {
    e.low = std::clamp(e.low, low, high);
    e.high = std::clamp(e.high, low, high);
  }
  return e;
}

}  // namespace

double t_quantile(int df) {
  const boost::math::students_t t(df);
  return boost::math::quantile(t, 0.975);
}

Estimate estimate(const std::vector<double>& values, Scale scale, int censored) {
  std::vector<double> finite;
  for (double v : values) {
    if (!std::isnan(v)) finite.push_back(v);
  }
  Estimate e;
  switch (scale) {
    case Scale::kPositive:
      e = std::all_of(finite.begin(), finite.end(), [](double v) { return v > 0; })
              ? logarithmic(finite)
              : clipped(linear(finite), 0, std::numeric_limits<double>::infinity());
      break;
    case Scale::kProportion:
      e = clipped(linear(finite), 0, 1);
      break;
    case Scale::kReal:
      e = linear(finite);
      break;
  }
  e.censored = censored;
  return e;
}

std::vector<double> log_ratios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> logs;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (a[k] > 0 && b[k] > 0 && std::isfinite(a[k]) && std::isfinite(b[k])) {
      logs.push_back(std::log(a[k] / b[k]));
    }
  }
  return logs;
}

Estimate paired_ratio(const std::vector<double>& a, const std::vector<double>& b, int censored) {
  std::vector<double> ratios;
  for (double l : log_ratios(a, b)) ratios.push_back(std::exp(l));
  Estimate e = ratios.empty() ? Estimate{} : logarithmic(ratios);
  e.censored = censored;
  return e;
}

int seeds_to_exclude_tie(const std::vector<double>& logs) {
  const Moments m = moments(logs);
  if (m.n < 2 || m.mean == 0) return -1;
  if (m.sd == 0) return 0;
  for (int n = 2; n <= 100000; ++n) {
    if (t_quantile(n - 1) * m.sd / std::sqrt(static_cast<double>(n)) < std::abs(m.mean)) {
      return n <= m.n ? 0 : n;
    }
  }
  return -1;
}

std::string format_estimate(const Estimate& e, const char* spec) {
  if (e.empty()) return "—";
  const std::string mean = fmt::format(fmt::runtime(spec), e.mean);
  if (e.censored > 0) return "≥ " + mean;
  if (!e.has_interval()) return mean;
  return fmt::format("{} [{}, {}]", mean, fmt::format(fmt::runtime(spec), e.low),
                     fmt::format(fmt::runtime(spec), e.high));
}

std::string format_ratio_number(double v, RatioDigits digits) {
  const bool fixed = digits == RatioDigits::kTwoDecimals;
  const std::string one = fixed ? "1.00" : "1";
  for (int n = fixed ? 2 : 3; n < 17; ++n) {
    std::string text = fixed ? fmt::format("{:.{}f}", v, n) : fmt::format("{:.{}g}", v, n);
    // A value other than 1 that rounds to one of "1", "1.0...0": one more digit.
    const bool looks_like_one = text == one || (fixed && std::stod(text) == 1);
    if (v == 1 || !std::isfinite(v) || !looks_like_one) return text;
  }
  return fmt::format("{}", v);
}

std::string format_ratio_estimate(const Estimate& e, std::string_view unit, RatioDigits digits) {
  if (e.empty()) return "—";
  const std::string mean = format_ratio_number(e.mean, digits) + std::string(unit);
  if (!e.has_interval()) return mean;
  return fmt::format("{} [{}, {}]", mean, format_ratio_number(e.low, digits),
                     format_ratio_number(e.high, digits));
}

std::string csv_estimate(const Estimate& e) {
  auto num = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); };
  return fmt::format("{},{},{},{}", num(e.mean), num(e.low), num(e.high), e.censored);
}

}  // namespace pacer
