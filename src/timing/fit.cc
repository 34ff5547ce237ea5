// Maximum-likelihood fits of the timing models to a trace (fit.h states the estimators).
//
// Every fit is of "groups" that each have their own τ and share the shape: a single worker (one
// group), all workers with one τ (one group of all rows) or all workers with τ_i each (a group per
// worker). One estimator per family covers the three.

#include "pacer/timing/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/exponential.hpp>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/pareto.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

#include "fit_em.h"
#include "models.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kLogResolution = std::log(kResolution);
// A shifted_exponential fit with λ̂ above this has a shift under 1 % of its mean.
constexpr double kExponentialLimit = 99;

// ---- Per-group sufficient statistics. ----

struct GroupStats {
  double m = 0;    // rows
  double sum = 0;  // Σ x
  double min = kInf, max = 0;
  double sum_log = 0;        // Σ log x
  double sum_log_ratio = 0;  // Σ log(x / min)
  double mean() const { return sum / m; }
  bool ties() const { return max <= min * (1 + kResolution); }
};

GroupStats stats_of(const std::vector<const std::vector<double>*>& parts) {
  GroupStats s;
  for (const std::vector<double>* rows : parts) {
    for (double x : *rows) {
      s.m += 1;
      s.sum += x;
      s.min = std::min(s.min, x);
      s.max = std::max(s.max, x);
      s.sum_log += std::log(x);
    }
  }
  for (const std::vector<double>* rows : parts) {
    for (double x : *rows) {
      s.sum_log_ratio += std::log(x / s.min);
    }
  }
  return s;
}

double total_rows(const std::vector<GroupStats>& groups) {
  double n = 0;
  for (const GroupStats& g : groups) n += g.m;
  return n;
}

// The fit before its AIC and KS: family, τ per group, shape, log-likelihood or why it does not
// fit.
ModelFit not_fitting(ModelFit fit, std::string note) {
  fit.fits = false;
  fit.note = std::move(note);
  return fit;
}

ModelFit fit_fixed(const std::vector<GroupStats>& groups, ModelFit fit) {
  for (const GroupStats& g : groups) fit.tau.push_back(g.mean());
  for (size_t g = 0; g < groups.size(); ++g) {
    if (!groups[g].ties()) {
      return not_fitting(std::move(fit),
                         fmt::format("the rows{} are not all equal (from {:.6g} to {:.6g})",
                                     groups.size() > 1 ? fmt::format(" of worker {}", g) : "",
                                     groups[g].min, groups[g].max));
    }
  }
  fit.fits = true;
  for (const GroupStats& g : groups) fit.log_likelihood += -g.m * kLogResolution - g.sum_log;
  return fit;
}

ModelFit fit_exponential(const std::vector<GroupStats>& groups, ModelFit fit) {
  fit.fits = true;
  for (const GroupStats& g : groups) {
    fit.tau.push_back(g.mean());
    fit.log_likelihood += -g.m * std::log(g.mean()) - g.m;
  }
  return fit;
}

bool all_tie(const std::vector<GroupStats>& groups) {
  return std::all_of(groups.begin(), groups.end(), [](const GroupStats& g) { return g.ties(); });
}

// λ̂ of shifted_exponential: the root of h(λ) = Σ_g m_g·max(λ_g − λ, −1), λ_g = x̄_g / x_min,g − 1
// (the derivative of the profile log-likelihood times λ², nonincreasing in λ). Needs some λ_g > 0.
double shifted_lambda(const std::vector<GroupStats>& groups) {
  double high = 0;
  for (const GroupStats& g : groups) high = std::max(high, g.mean() / g.min);  // max λ_g + 1
  auto h = [&](double lambda) {
    double value = 0;
    for (const GroupStats& g : groups) value += g.m * std::max(g.mean() / g.min - 1 - lambda, -1.0);
    return value;
  };
  boost::uintmax_t iterations = 200;
  const auto [low_end, high_end] = boost::math::tools::toms748_solve(
      h, 0.0, high, boost::math::tools::eps_tolerance<double>(50), iterations);
  return (low_end + high_end) / 2;
}

ModelFit fit_shifted_exponential(const std::vector<GroupStats>& groups, ModelFit fit) {
  if (all_tie(groups)) {
    for (const GroupStats& g : groups) fit.tau.push_back(g.min);
    return not_fitting(std::move(fit), "no spread in the rows (λ̂ = 0): the fixed model");
  }
  fit.fits = true;
  fit.lambda = shifted_lambda(groups);
  for (const GroupStats& g : groups) {
    const double tau = std::min(g.min, g.mean() / fit.lambda);
    const double theta = tau * fit.lambda;
    fit.tau.push_back(tau);
    fit.log_likelihood += -g.m * std::log(theta) - (g.sum - g.m * tau) / theta;
  }
  if (fit.lambda > kExponentialLimit) {
    fit.note = fmt::format(
        "the shift is under {:.2g} % of the mean: the exponential model's limit (λ → ∞)",
        100 / (1 + kExponentialLimit));
  }
  return fit;
}

ModelFit fit_pareto(const std::vector<GroupStats>& groups, ModelFit fit) {
  if (all_tie(groups)) {
    for (const GroupStats& g : groups) fit.tau.push_back(g.min);
    return not_fitting(std::move(fit), "no spread in the rows (α̂ = ∞): the fixed model");
  }
  double ratios = 0, sum_log = 0;
  for (const GroupStats& g : groups) {
    fit.tau.push_back(g.min);
    ratios += g.sum_log_ratio;
    sum_log += g.sum_log;
  }
  const double n = total_rows(groups);
  fit.fits = true;
  fit.alpha = n / ratios;
  // Σ [log α − log x − α log(x / τ)] with α·Σ log(x / τ) = n.
  fit.log_likelihood = n * std::log(fit.alpha) - sum_log - n;
  return fit;
}

int shape_parameters(TimingFamily family) {
  switch (family) {
    case TimingFamily::kFixed:
    case TimingFamily::kExponential:
      return 0;
    case TimingFamily::kShiftedExponential:
    case TimingFamily::kPareto:
      return 1;
    default:
      return 0;  // the EM families count their own (fit_em.h)
  }
}

// The fit of `family` with a τ per group and the shape shared, before AIC and KS.
ModelFit fit_groups(TimingFamily family, TauScope scope, const std::vector<GroupStats>& groups) {
  ModelFit fit;
  fit.family = family;
  fit.scope = scope;
  fit.parameters = static_cast<int>(groups.size()) + shape_parameters(family);
  switch (family) {
    case TimingFamily::kFixed:
      return fit_fixed(groups, std::move(fit));
    case TimingFamily::kExponential:
      return fit_exponential(groups, std::move(fit));
    case TimingFamily::kShiftedExponential:
      return fit_shifted_exponential(groups, std::move(fit));
    case TimingFamily::kPareto:
      return fit_pareto(groups, std::move(fit));
    default:
      PACER_CHECK(!"an EM family (fit_em.h)");
  }
  return fit;
}

bool fitted_by_em(TimingFamily family) {
  return family == TimingFamily::kRandomStragglers || family == TimingFamily::kCommonShock ||
         family == TimingFamily::kPersistentStragglers;
}

// The fit of an EM family to `covered`.
ModelFit fit_em_family(TimingFamily family, TauScope scope, const fit_em::Covered& covered) {
  ModelFit fit;
  fit.family = family;
  fit.scope = scope;
  switch (family) {
    case TimingFamily::kRandomStragglers:
      return fit_em::fit_random_stragglers(covered, std::move(fit));
    case TimingFamily::kCommonShock:
      return fit_em::fit_common_shock(covered, std::move(fit));
    default:
      return fit_em::fit_persistent_stragglers(covered, std::move(fit));
  }
}

// ---- Goodness of fit. ----

// Row x of covered worker w, snapped onto the nearest of the worker's atoms when within its
// resolution.
double snapped(const ModelFit& fit, size_t w, double x) {
  for (double atom : fit.atoms(w)) {
    if (std::abs(x - atom) <= kResolution * atom) return atom;
  }
  return x;
}

// KS distance of the rows of the covered workers (rows[w] for worker w) to the mixture
// Σ_w (m_w / N)·F_w of the fit's CDFs. Between two distinct values the empirical CDF is constant
// and the fitted one nondecreasing, so the supremum is at a value or just below it.
double mixture_ks(const ModelFit& fit, const std::vector<const std::vector<double>*>& rows) {
  std::vector<double> values;
  for (size_t w = 0; w < rows.size(); ++w) {
    for (double x : *rows[w]) values.push_back(snapped(fit, w, x));
  }
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  // Shared τ and shape: one CDF for all workers (persistent_stragglers has chains of its own).
  const bool one_cdf =
      fit.family != TimingFamily::kPersistentStragglers &&
      std::all_of(fit.tau.begin(), fit.tau.end(), [&](double t) { return t == fit.tau.front(); });
  auto mixture = [&](double x, bool below) {
    if (one_cdf) return below ? fit.cdf_below(0, x) : fit.cdf(0, x);
    double f = 0;
    for (size_t w = 0; w < rows.size(); ++w) {
      const double weight = static_cast<double>(rows[w]->size()) / n;
      f += weight * (below ? fit.cdf_below(w, x) : fit.cdf(w, x));
    }
    return f;
  };
  double distance = 0;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    distance = std::max(distance, std::abs(mixture(values[i], true) - static_cast<double>(i) / n));
    distance = std::max(distance, std::abs(mixture(values[i], false) - static_cast<double>(j) / n));
    i = j;
  }
  return distance;
}

// Sets aic and ks (and the conventions of a fit that does not fit).
void finish(ModelFit& fit, const std::vector<const std::vector<double>*>& rows) {
  if (!fit.fits) {
    fit.log_likelihood = -kInf;
    fit.aic = kInf;
    fit.ks = 1;
    return;
  }
  fit.aic = 2.0 * fit.parameters - 2.0 * fit.log_likelihood;
  fit.ks = mixture_ks(fit, rows);
}

std::vector<const std::vector<double>*> all_rows(const DurationTrace& trace) {
  std::vector<const std::vector<double>*> rows;
  for (const std::vector<double>& r : trace.rows) rows.push_back(&r);
  return rows;
}

// The rows of every worker, τ grouped by `scope`, with the trace's steps (fit_em.h).
fit_em::Covered cover_all(const DurationTrace& trace, TauScope scope) {
  fit_em::Covered c;
  const StepGrid grid = step_grid(trace);
  c.steps.resize(grid.size());
  for (int i = 0; i < trace.workers(); ++i) {
    c.rows.push_back(&trace.rows[i]);
    c.group.push_back(scope == TauScope::kShared ? 0 : i);
    size_t k = 0;
    for (size_t j = 0; j < trace.rows[i].size(); ++j) {
      while (grid.steps[k] < trace.step(i, j)) ++k;
      c.steps[k].emplace_back(i, j);
    }
  }
  c.groups = scope == TauScope::kShared ? 1 : trace.workers();
  c.sigma_floor = fit_em::jitter_floor(c.rows);
  return c;
}

// The fit of `family` to every worker, in `scope`.
ModelFit fit_pooled(TimingFamily family, TauScope scope, const DurationTrace& trace) {
  const std::vector<const std::vector<double>*> rows = all_rows(trace);
  ModelFit fit;
  if (fitted_by_em(family)) {
    fit = fit_em_family(family, scope, cover_all(trace, scope));
  } else {
    std::vector<GroupStats> groups;
    if (scope == TauScope::kShared) {
      groups.push_back(stats_of(rows));
    } else {
      for (const std::vector<double>* r : rows) groups.push_back(stats_of({r}));
    }
    fit = fit_groups(family, scope, groups);
    if (scope == TauScope::kShared) fit.tau.assign(rows.size(), fit.tau.front());
  }
  finish(fit, rows);
  return fit;
}

ModelFit fit_worker(TimingFamily family, const std::vector<double>& rows) {
  ModelFit fit;
  if (fitted_by_em(family)) {
    fit_em::Covered c;
    c.rows = {&rows};
    c.group = {0};
    c.sigma_floor = fit_em::jitter_floor(c.rows);
    fit = fit_em_family(family, TauScope::kShared, c);
  } else {
    fit = fit_groups(family, TauScope::kShared, {stats_of({&rows})});
  }
  finish(fit, {&rows});
  return fit;
}

// One-way ANOVA of log durations across workers (fit.h: PersistenceTest).
PersistenceTest persistence_test(const DurationTrace& trace) {
  PersistenceTest test;
  const int n = trace.workers();
  double total = 0, count = 0;
  std::vector<double> log_means(n);
  for (int i = 0; i < n; ++i) {
    const std::vector<double>& rows = trace.rows[i];
    double sum_log = 0;
    for (double x : rows) sum_log += std::log(x);
    log_means[i] = sum_log / static_cast<double>(rows.size());
    test.worker_means.push_back(std::accumulate(rows.begin(), rows.end(), 0.0) /
                                static_cast<double>(rows.size()));
    total += sum_log;
    count += static_cast<double>(rows.size());
  }
  const auto [low, high] = std::minmax_element(test.worker_means.begin(), test.worker_means.end());
  test.slowest_to_fastest = *high / *low;
  if (n < 2) return test;
  const double grand = total / count;
  double between = 0, within = 0;
  for (int i = 0; i < n; ++i) {
    const double d = log_means[i] - grand;
    between += static_cast<double>(trace.rows[i].size()) * d * d;
    for (double x : trace.rows[i]) within += std::pow(std::log(x) - log_means[i], 2);
  }
  test.df_between = n - 1;
  test.df_within = static_cast<int>(count) - n;
  if (within == 0) {
    test.f_statistic = between > 0 ? kInf : 0;
    test.p_value = between > 0 ? 0 : 1;
  } else {
    test.f_statistic = (between / test.df_between) / (within / test.df_within);
    const boost::math::fisher_f_distribution<double> f(test.df_between, test.df_within);
    test.p_value = boost::math::cdf(boost::math::complement(f, test.f_statistic));
  }
  test.persistent = test.p_value < kPersistenceLevel;
  return test;
}

std::vector<size_t> rank(const std::vector<ModelFit>& pooled, TauScope scope) {
  std::vector<size_t> order;
  for (size_t i = 0; i < pooled.size(); ++i) {
    if (pooled[i].scope == scope) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (pooled[a].fits != pooled[b].fits) return pooled[a].fits;
    return pooled[a].fits && pooled[a].aic < pooled[b].aic;
  });
  return order;
}

// A TOML float with six significant digits: "1.0", "0.25", "1e-05".
std::string toml_number(double v) {
  std::string text = fmt::format("{:.6g}", v);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

// "1.0" or "[1.0, 2.0]".
std::string toml_tau(const ModelFit& fit) {
  if (fit.scope == TauScope::kShared || fit.tau.size() == 1) return toml_number(fit.tau.front());
  std::vector<std::string> entries;
  for (double t : fit.tau) entries.push_back(toml_number(t));
  return fmt::format("[{}]", fmt::join(entries, ", "));
}

// `pairs`, then jitter when it is not 0.
std::vector<std::pair<std::string, double>> with_jitter(
    const ModelFit& fit, std::vector<std::pair<std::string, double>> pairs) {
  if (fit.jitter > 0) pairs.emplace_back("jitter", fit.jitter);
  return pairs;
}

// "1.0" or "[1.0, 2.0]": a per-worker list, or one number when every entry is equal.
std::string toml_list(const std::vector<double>& values) {
  if (std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); })) {
    return toml_number(values.front());
  }
  std::vector<std::string> entries;
  for (double v : values) entries.push_back(toml_number(v));
  return fmt::format("[{}]", fmt::join(entries, ", "));
}

// persistent_stragglers' chains as key = value pairs of lists.
std::vector<std::pair<std::string, std::string>> chains(const ModelFit& fit) {
  if (fit.family != TimingFamily::kPersistentStragglers) return {};
  return {{"slowdown", toml_list(fit.slowdown)},
          {"p_slow", toml_list(fit.p_slow)},
          {"p_recover", toml_list(fit.p_recover)}};
}

// The shape parameters as key = value pairs.
std::vector<std::pair<std::string, double>> shape(const ModelFit& fit) {
  switch (fit.family) {
    case TimingFamily::kShiftedExponential:
      return {{"lambda", fit.lambda}};
    case TimingFamily::kPareto:
      return {{"alpha", fit.alpha}};
    case TimingFamily::kRandomStragglers:
      return with_jitter(fit, {{"q", fit.q}, {"delay_mean", fit.delay_mean}});
    case TimingFamily::kCommonShock:
      return with_jitter(fit, {{"q", fit.q},
                               {"delay_mean", fit.delay_mean},
                               {"shock_probability", fit.shock_probability},
                               {"shock_share", fit.shock_share}});
    case TimingFamily::kPersistentStragglers:
      return with_jitter(fit, {});
    default:
      return {};
  }
}

}  // namespace

void check_fit_rows(const DurationTrace& trace) {
  if (trace.rows.empty()) fail("{}: the trace has a header but no rows", trace.source);
  for (int i = 0; i < trace.workers(); ++i) {
    if (trace.rows[i].size() < kMinRowsPerWorker) {
      fail("{}: worker {} has {} rows; pacer fit needs at least {} rows for every worker 0..{}",
           trace.source, i, trace.rows[i].size(), kMinRowsPerWorker, trace.workers() - 1);
    }
  }
}

DurationTrace read_duration_trace(const std::string& path) {
  DurationTrace trace = read_trace_file(path, kMaxTraceWorkers, "trace");
  check_fit_rows(trace);
  return trace;
}

std::string_view family_name(TimingFamily family) {
  switch (family) {
    case TimingFamily::kFixed:
      return "fixed";
    case TimingFamily::kExponential:
      return "exponential";
    case TimingFamily::kShiftedExponential:
      return "shifted_exponential";
    case TimingFamily::kPareto:
      return "pareto";
    case TimingFamily::kRandomStragglers:
      return "random_stragglers";
    case TimingFamily::kCommonShock:
      return "common_shock";
    case TimingFamily::kPersistentStragglers:
      return "persistent_stragglers";
  }
  return "";
}

std::string_view scope_name(TauScope scope) {
  return scope == TauScope::kShared ? "shared" : "per_worker";
}

double ModelFit::cdf(size_t w, double x) const {
  PACER_CHECK(fits && w < tau.size());
  const double t = tau[w];
  switch (family) {
    case TimingFamily::kFixed:
      return x >= t ? 1.0 : 0.0;
    case TimingFamily::kExponential:
      return x <= 0 ? 0.0 : boost::math::cdf(boost::math::exponential_distribution<>(1 / t), x);
    case TimingFamily::kShiftedExponential:
      return x <= t ? 0.0
                    : boost::math::cdf(boost::math::exponential_distribution<>(1 / (t * lambda)),
                                       x - t);
    case TimingFamily::kPareto:
      return x <= t ? 0.0 : boost::math::cdf(boost::math::pareto_distribution<>(t, alpha), x);
    case TimingFamily::kRandomStragglers:
    case TimingFamily::kCommonShock: {
      const double p = straggle_probability(w);
      if (jitter == 0) {
        if (x < t) return 0.0;
        return (1 - p) +
               p * boost::math::cdf(boost::math::exponential_distribution<>(1 / delay_mean), x - t);
      }
      const double s = jitter * t;
      return (1 - p) * fit_em::normal_cdf(x, t, s) +
             (p > 0 ? p * fit_em::emg_cdf(x, t, s, delay_mean) : 0.0);
    }
    case TimingFamily::kPersistentStragglers: {
      const double share = slow_share[w], slow = slowdown[w] * t;
      if (jitter == 0) return (1 - share) * (x >= t ? 1.0 : 0.0) + share * (x >= slow ? 1.0 : 0.0);
      return (1 - share) * fit_em::normal_cdf(x, t, jitter * t) +
             share * fit_em::normal_cdf(x, slow, jitter * slow);
    }
  }
  return 0;
}

double ModelFit::cdf_below(size_t w, double x) const {
  PACER_CHECK(fits && w < tau.size());
  // Only the atoms make P(X < x) differ from P(X <= x): below each atom the CDF is its left
  // limit, which the CDF just below the atom's location gives (no other atom is that close).
  for (double atom : atoms(w)) {
    if (x == atom) return cdf(w, std::nextafter(x, 0.0));
  }
  return cdf(w, x);
}

double ModelFit::mean(size_t w) const {
  PACER_CHECK(w < tau.size());
  const double t = tau[w];
  switch (family) {
    case TimingFamily::kFixed:
    case TimingFamily::kExponential:
      return t;
    case TimingFamily::kShiftedExponential:
      return t * (1 + lambda);
    case TimingFamily::kPareto:
      return alpha > 1 ? t * alpha / (alpha - 1) : kInf;
    case TimingFamily::kRandomStragglers:
    case TimingFamily::kCommonShock:
      return t + straggle_probability(w) * delay_mean;
    case TimingFamily::kPersistentStragglers:
      return t * (1 + straggle_probability(w) * (slowdown[w] - 1));
  }
  return 0;
}

double ModelFit::straggle_probability(size_t w) const {
  switch (family) {
    case TimingFamily::kRandomStragglers:
      return q;
    case TimingFamily::kCommonShock:
      return q + (1 - q) * shock_probability * shock_share;
    case TimingFamily::kPersistentStragglers:
      return p_slow[w] + p_recover[w] > 0 ? p_slow[w] / (p_slow[w] + p_recover[w]) : 0.0;
    default:
      return 0;
  }
}

std::vector<double> ModelFit::atoms(size_t w) const {
  if (family == TimingFamily::kFixed) return {tau[w]};
  if (jitter > 0) return {};
  if (family == TimingFamily::kRandomStragglers || family == TimingFamily::kCommonShock) {
    return straggle_probability(w) < 1 ? std::vector<double>{tau[w]} : std::vector<double>{};
  }
  if (family == TimingFamily::kPersistentStragglers) {
    std::vector<double> at = {tau[w]};
    if (slow_share[w] > 0) at.push_back(slowdown[w] * tau[w]);
    return at;
  }
  return {};
}

std::string ModelFit::describe() const {
  std::string text = "tau = " + toml_tau(*this);
  for (const auto& [key, value] : chains(*this)) text += fmt::format(" {} = {}", key, value);
  for (const auto& [key, value] : shape(*this))
    text += fmt::format(" {} = {}", key, toml_number(value));
  return text;
}

double ks_distance(const ModelFit& fit, size_t w, const std::vector<double>& rows) {
  PACER_CHECK(fit.fits && w < fit.tau.size());
  ModelFit one = fit;
  one.tau = {fit.tau[w]};
  if (fit.family == TimingFamily::kPersistentStragglers) {
    one.slowdown = {fit.slowdown[w]};
    one.p_slow = {fit.p_slow[w]};
    one.p_recover = {fit.p_recover[w]};
    one.slow_share = {fit.slow_share[w]};
  }
  return mixture_ks(one, {&rows});
}

TraceFit fit_trace(const DurationTrace& trace) {
  PACER_CHECK(trace.workers() > 0);
  for (const std::vector<double>& r : trace.rows) PACER_CHECK(r.size() >= 2);
  TraceFit result;
  result.persistence = persistence_test(trace);
  result.scope = result.persistence.persistent ? TauScope::kPerWorker : TauScope::kShared;
  for (TauScope scope : {TauScope::kShared, TauScope::kPerWorker}) {
    for (TimingFamily family : kTimingFamilies) {
      result.pooled.push_back(fit_pooled(family, scope, trace));
    }
  }
  for (const std::vector<double>& rows : trace.rows) {
    std::vector<ModelFit> fits;
    for (TimingFamily family : kTimingFamilies) fits.push_back(fit_worker(family, rows));
    result.per_worker.push_back(std::move(fits));
  }
  result.ranking = rank(result.pooled, result.scope);
  result.ks_limit = kKsCritical / std::sqrt(static_cast<double>(trace.size()));
  return result;
}

std::string timing_table(const ModelFit& fit) {
  PACER_CHECK(!fit.tau.empty());
  std::string text =
      fmt::format("[timing]\nmodel = \"{}\"\ntau = {}\n", family_name(fit.family), toml_tau(fit));
  for (const auto& [key, value] : chains(fit)) text += fmt::format("{} = {}\n", key, value);
  for (const auto& [key, value] : shape(fit))
    text += fmt::format("{} = {}\n", key, toml_number(value));
  return text;
}

}  // namespace pacer
