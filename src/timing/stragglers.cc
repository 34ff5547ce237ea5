// The straggler analysis of a trace (timing/stragglers.h states the definitions).

#include "pacer/timing/stragglers.h"

#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <numeric>

#include "pacer/core/error.h"
#include "pacer/core/stats.h"
#include "pacer/timing/fit.h"

namespace pacer {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// log C(n, k) through Boost.Math's log-gamma.
double log_choose(double n, double k) {
  return boost::math::lgamma(n + 1) - boost::math::lgamma(k + 1) - boost::math::lgamma(n - k + 1);
}

// P(R <= r) for the number R of runs of k ones among m places in a uniformly random order:
// P(R = j) = C(k−1, j−1)·C(m−k+1, j) / C(m, k), summed in logs.
double runs_at_most(int64_t r, int64_t k, int64_t m) {
  const double total = log_choose(static_cast<double>(m), static_cast<double>(k));
  double log_sum = -std::numeric_limits<double>::infinity();
  for (int64_t j = 1; j <= r; ++j) {
    if (j > m - k + 1) break;
    const double term = log_choose(static_cast<double>(k - 1), static_cast<double>(j - 1)) +
                        log_choose(static_cast<double>(m - k + 1), static_cast<double>(j)) - total;
    const double high = std::max(log_sum, term);
    log_sum = high + std::log(std::exp(log_sum - high) + std::exp(term - high));
  }
  return std::min(1.0, std::exp(log_sum));
}

// The ⌈p·m⌉-th smallest of `values` (nearest rank).
double nearest_rank(std::vector<double> values, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  const size_t k = std::clamp<size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return values[k];
}

// Lag-1 autocorrelation of a 0/1 series; NaN when it is constant.
double lag1_autocorrelation(const std::vector<bool>& slow) {
  const double n = static_cast<double>(slow.size());
  const double mean = static_cast<double>(std::count(slow.begin(), slow.end(), true)) / n;
  double num = 0, den = 0;
  for (size_t t = 0; t < slow.size(); ++t) {
    const double d = (slow[t] ? 1.0 : 0.0) - mean;
    den += d * d;
    if (t + 1 < slow.size()) num += d * ((slow[t + 1] ? 1.0 : 0.0) - mean);
  }
  return den > 0 ? num / den : kNaN;
}

// The slow rows and spells of worker i (everything but `decided` and `kind`'s test level).
WorkerStragglers describe_worker(const DurationTrace& trace, int i, double median_all) {
  WorkerStragglers w;
  w.worker = i;
  const std::vector<double>& rows = trace.rows[i];
  w.rows = rows.size();
  std::vector<double> seconds, slow_rows;
  std::vector<bool> slow;
  int64_t run = 0;
  for (size_t j = 0; j < rows.size(); ++j) {
    seconds.push_back(trace.job_seconds(i, j));
    slow.push_back(rows[j] > kSlowFactor * median_all);
    if (slow.back()) slow_rows.push_back(rows[j]);
    if (slow.back() && (j == 0 || !slow[j - 1])) ++w.slow_spells;
    run = slow.back() ? run + 1 : 0;
    w.longest_spell = std::max(w.longest_spell, run);
  }
  const auto [low, high] = std::minmax_element(seconds.begin(), seconds.end());
  w.min = *low;
  w.max = *high;
  w.median = median(seconds);
  w.p95 = nearest_rank(seconds, 0.95);
  w.mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(w.rows);
  w.relative_median = median(rows) / median_all;
  w.slow_share = static_cast<double>(slow_rows.size()) / static_cast<double>(w.rows);
  w.slowdown = slow_rows.empty() ? 0.0 : median(slow_rows) / median_all;
  w.mean_spell = w.slow_spells > 0
                     ? static_cast<double>(slow_rows.size()) / static_cast<double>(w.slow_spells)
                     : 0.0;
  w.autocorrelation = lag1_autocorrelation(slow);
  const int64_t k = static_cast<int64_t>(slow_rows.size()), m = static_cast<int64_t>(w.rows);
  if (k > 0 && k < m) w.spell_p_value = runs_at_most(w.slow_spells, k, m);
  return w;
}

// Per worker, the steps whose largest job time was its (steps with rows of two or more workers).
std::vector<int64_t> decided_by_largest(const DurationTrace& trace, const StepGrid& grid,
                                        int64_t& steps) {
  std::vector<int64_t> decided(trace.workers(), 0);
  steps = 0;
  for (size_t k = 0; k < grid.size(); ++k) {
    int best = -1, present = 0;
    double longest = -1;
    for (int i = 0; i < trace.workers(); ++i) {
      if (!grid.own[i][k]) continue;
      ++present;
      const double s = trace.job_seconds(i, grid.at[i][k]);
      if (s > longest) {
        longest = s;
        best = i;
      }
    }
    if (present < 2) continue;
    ++decided[best];
    ++steps;
  }
  return decided;
}

// The co-occurrence of slow rows over the steps with rows of two or more workers, observed and
// under independence (Poisson-binomial: P(two or more) = 1 − P(none) − P(exactly one)).
void co_occurrence(const DurationTrace& trace, const StepGrid& grid, StragglerAnalysis& a) {
  double both = 0, independent = 0;
  for (size_t k = 0; k < grid.size(); ++k) {
    int present = 0, slow = 0;
    double none = 1, one = 0;
    for (int i = 0; i < trace.workers(); ++i) {
      if (!grid.own[i][k]) continue;
      ++present;
      slow += trace.rows[i][grid.at[i][k]] > kSlowFactor * a.median;
      const double p = a.workers[i].slow_share;
      one = one * (1 - p) + none * p;
      none *= 1 - p;
    }
    if (present < 2) continue;
    ++a.shared_steps;
    both += slow >= 2;
    independent += std::max(0.0, 1 - none - one);
  }
  if (a.shared_steps == 0) return;
  a.co_occurrence = both / static_cast<double>(a.shared_steps);
  a.co_occurrence_independent = independent / static_cast<double>(a.shared_steps);
}

}  // namespace

const char* straggler_kind_name(StragglerKind kind) {
  switch (kind) {
    case StragglerKind::kNone:
      return "-";
    case StragglerKind::kOneOff:
      return "one-off";
    case StragglerKind::kChronic:
      return "chronic";
  }
  return "-";
}

std::vector<int> StragglerAnalysis::slowest(size_t k) const {
  std::vector<int> order(workers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return workers[a].mean > workers[b].mean; });
  order.resize(std::min(k, order.size()));
  return order;
}

std::vector<int> StragglerAnalysis::chronic() const {
  std::vector<int> out;
  for (const WorkerStragglers& w : workers) {
    if (w.kind == StragglerKind::kChronic) out.push_back(w.worker);
  }
  return out;
}

StragglerAnalysis analyze_stragglers(const DurationTrace& trace) {
  PACER_CHECK(trace.workers() > 0);
  StragglerAnalysis a;
  a.source = trace.source;
  std::vector<double> all;
  for (const std::vector<double>& r : trace.rows) all.insert(all.end(), r.begin(), r.end());
  a.median = median(all);
  const double level = kChronicLevel / trace.workers();
  for (int i = 0; i < trace.workers(); ++i) {
    WorkerStragglers w = describe_worker(trace, i, a.median);
    if (w.slow_share >= 0.5 || w.spell_p_value < level) {
      w.kind = StragglerKind::kChronic;
    } else if (w.slow_share > 0) {
      w.kind = StragglerKind::kOneOff;
    }
    a.workers.push_back(w);
  }
  const StepGrid grid = step_grid(trace);
  co_occurrence(trace, grid, a);
  set_decided(a, decided_by_largest(trace, grid, a.decided_steps),
              "the worker with the largest job time of each step (a trace does not say which "
              "job a step waited for; DGD waits for every worker)");
  a.block = automatic_block_length(trace);
  return a;
}

void set_decided(StragglerAnalysis& analysis, const std::vector<int64_t>& decided,
                 std::string rule) {
  PACER_CHECK(decided.size() == analysis.workers.size());
  analysis.decided_steps = 0;
  for (size_t i = 0; i < decided.size(); ++i) {
    analysis.workers[i].decided = decided[i];
    analysis.decided_steps += decided[i];
  }
  analysis.decided_rule = std::move(rule);
}

}  // namespace pacer
