// EM fits of random_stragglers, common_shock and persistent_stragglers (fit.h states the models).
//
// Notation: a row x of a worker whose normal level is τ has the jitter N(τ, s²) with s = στ (σ
// shared by every worker). A delayed row adds D ~ Exp(mean m): its density is the exponentially
// modified normal, log f1(x) = −log m + s²/(2m²) − (x − τ)/m + log Φ((x − τ)/s − s/m), and given x
// the delay is N(μ_D, s²) truncated to D >= 0, μ_D = x − τ − s²/m. With y = x − D the jitter part
// of the complete-data log-likelihood of a group of W rows is −W·log(στ) − (A − 2Bτ + Wτ²)/(2σ²τ²)
// with B = Σ E[y], A = Σ E[y²], maximised over τ (σ fixed) by τ = 1/u, u the positive root of
// A·u² − B·u − W·σ² = 0, and over σ (τ fixed) by σ² = Σ_groups (A − 2Bτ + Wτ²)/τ² / Σ W. These
// two conditional maximisations (ECM) and the closed-form steps of the other parameters never
// decrease the likelihood.

#include "fit_em.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <tuple>

#include "pacer/core/error.h"

namespace pacer::fit_em {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kLogSqrt2Pi = 0.5 * std::log(2 * std::numbers::pi);
constexpr int kMaxIterations = 200;
// EM stops when an iteration raises the log-likelihood by less than this, relative.
constexpr double kTolerance = 1e-9;
// The smallest share of undelayed rows that is a base (random_stragglers, common_shock): with
// less, the normal jitter would collapse onto a few rows (its likelihood grows without bound as σ
// shrinks), so the fit takes every row as delayed (q = 1) instead.
constexpr double kMinBaseShare = 0.01;
// A gap within this fraction of a multiple of the smallest gap is a multiple of it (jitter_floor).
constexpr double kTickSlack = 0.01;
// The gain in log-likelihood a worker's slow state must bring (three more parameters: AIC).
constexpr double kSlowStateGain = 3;

// Double precision throughout: Boost.Math's default promotes double to long double inside erf,
// several times slower, for accuracy the likelihood does not need.
using DoublePolicy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
const boost::math::normal_distribution<double, DoublePolicy> kStandardNormal;

double log_or_minus_inf(double p) { return p > 0 ? std::log(p) : -kInf; }

double log_sum_exp(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double high = std::max(a, b);
  return high + std::log1p(std::exp(std::min(a, b) - high));
}

double log_normal_pdf(double x, double mu, double s) {
  const double z = (x - mu) / s;
  return -0.5 * z * z - std::log(s) - kLogSqrt2Pi;
}

// log Φ(z), with the asymptotic series below z = −30 where Φ underflows.
double log_standard_cdf(double z) {
  if (z > -30) return std::log(boost::math::cdf(kStandardNormal, z));
  const double z2 = z * z;
  return -0.5 * z2 - kLogSqrt2Pi - std::log(-z) + std::log1p(-1 / z2 + 3 / (z2 * z2));
}

double log_emg_pdf(double x, double mu, double s, double m) {
  return -std::log(m) + s * s / (2 * m * m) - (x - mu) / m + log_standard_cdf((x - mu) / s - s / m);
}

// E[D] and E[D²] of the delay of a delayed row x (the truncated normal above).
std::pair<double, double> delay_moments(double x, double mu, double s, double m) {
  const double mean = x - mu - s * s / m;
  const double alpha = -mean / s;
  double mills = 0, variance_factor = 0;  // λ(α) = φ(α)/(1 − Φ(α)), 1 + αλ − λ²
  if (alpha < 30) {
    mills = boost::math::pdf(kStandardNormal, alpha) /
            boost::math::cdf(boost::math::complement(kStandardNormal, alpha));
    variance_factor = std::max(1 + alpha * mills - mills * mills, 0.0);
  } else {  // the asymptotic series of λ; 1 + αλ − λ² → 1/α²
    mills = alpha + 1 / alpha - 2 / (alpha * alpha * alpha);
    variance_factor = 1 / (alpha * alpha);
  }
  const double ed = std::max(mean + s * mills, 0.0);
  return {ed, s * s * variance_factor + ed * ed};
}

// The jitter sums of one τ group: W rows, B = Σ E[y], A = Σ E[y²].
struct Moments {
  double w = 0, b = 0, a = 0;
  void add(double weight, double y, double y2) {
    w += weight;
    b += weight * y;
    a += weight * y2;
  }
};

// τ maximising the group's jitter term at σ (the positive root above).
double level_given_sigma(const Moments& g, double sigma) {
  const double u = (g.b + std::sqrt(g.b * g.b + 4 * g.a * g.w * sigma * sigma)) / (2 * g.a);
  return 1 / u;
}

double residual_sum(const Moments& g, double tau) {
  return std::max(g.a - 2 * g.b * tau + g.w * tau * tau, 0.0) / (tau * tau);
}

double percentile(std::vector<double> values, double p) {
  PACER_CHECK(!values.empty());
  const size_t k = static_cast<size_t>(p * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return values[k];
}

// Runs EM: `step(update)` does an E-step at the current parameters, returning their
// log-likelihood, and with `update` the M-step after it. Stops when an iteration gains less than
// kTolerance (relative), when `stop` says so after an M-step, or after kMaxIterations; then
// returns the log-likelihood of the parameters left, and sets `converged` (when given) to whether
// the gain fell below the tolerance.
template <typename Step, typename Stop>
double run_em(Step step, Stop stop, bool* converged = nullptr) {
  double previous = -kInf;
  bool done = false;
  for (int it = 0; it < kMaxIterations && !done; ++it) {
    const double ll = step(/*update=*/true);
    done = ll - previous <= kTolerance * std::abs(ll);
    previous = ll;
    if (!done && stop()) break;
  }
  if (converged) *converged = done;
  return step(/*update=*/false);
}
template <typename Step>
double run_em(Step step, bool* converged = nullptr) {
  return run_em(
      step, [] { return false; }, converged);
}

// ---- random_stragglers and common_shock: the jitter-and-delay mixture. ----

struct MixtureParams {
  std::vector<double> tau;  // per group
  double sigma = kResolution, m = 1, q = 0.5;
  double floor = kResolution;  // Covered::sigma_floor
};

// One row's two log-densities and its delay moments.
struct RowTerms {
  double base = 0, delayed = -kInf, ed = 0, ed2 = 0;
};

// `moments`: also E[D] and E[D²] (an M-step needs them; a likelihood does not).
RowTerms row_terms(double x, double tau, double sigma, double m, bool moments) {
  RowTerms t;
  const double s = sigma * tau;
  t.base = log_normal_pdf(x, tau, s);
  if (m > 0) {
    t.delayed = log_emg_pdf(x, tau, s, m);
    if (moments) std::tie(t.ed, t.ed2) = delay_moments(x, tau, s, m);
  }
  return t;
}

// The sums of an M-step of the jitter and the delay.
struct MixtureSums {
  std::vector<Moments> groups;
  double delayed = 0, delay = 0;  // Σ r, Σ r·E[D]
  explicit MixtureSums(int groups) : groups(groups) {}
  void add(int group, double x, double r, const RowTerms& t) {
    groups[group].add(1, x - r * t.ed, (1 - r) * x * x + r * (x * x - 2 * x * t.ed + t.ed2));
    delayed += r;
    delay += r * t.ed;
  }
};

// The M-step of τ, σ and m (q and the shock parameters are the caller's).
void update_shape(const MixtureSums& sums, MixtureParams& p) {
  double residual = 0, rows = 0;
  for (size_t g = 0; g < sums.groups.size(); ++g) {
    p.tau[g] = level_given_sigma(sums.groups[g], p.sigma);
    residual += residual_sum(sums.groups[g], p.tau[g]);
    rows += sums.groups[g].w;
  }
  p.sigma = std::max(std::sqrt(residual / rows), p.floor);
  if (sums.delayed > 0) p.m = std::max(sums.delay / sums.delayed, kResolution * p.tau[0]);
}

// Starting values: τ_g the group's 25th percentile; σ the relative spread (1.4826 × the median
// absolute deviation) of its rows within ±50 % of that; delayed the rows above τ_g·(1 + 3σ).
// Returns the delayed indicator of each row too (per covered worker).
MixtureParams start_mixture(const Covered& c, std::vector<std::vector<double>>& delayed) {
  MixtureParams p;
  p.floor = p.sigma = c.sigma_floor;
  std::vector<std::vector<double>> by_group(c.groups);
  for (size_t w = 0; w < c.rows.size(); ++w) {
    by_group[c.group[w]].insert(by_group[c.group[w]].end(), c.rows[w]->begin(), c.rows[w]->end());
  }
  std::vector<double> deviations;
  for (const std::vector<double>& rows : by_group) {
    const double tau = percentile(rows, 0.25);
    p.tau.push_back(tau);
    for (double x : rows) {
      if (std::abs(x / tau - 1) < 0.5) deviations.push_back(x / tau - 1);
    }
  }
  if (!deviations.empty()) {
    const double center = percentile(deviations, 0.5);
    for (double& d : deviations) d = std::abs(d - center);
    p.sigma = std::max(1.4826 * percentile(deviations, 0.5), p.floor);
  }
  double count = 0, excess = 0;
  delayed.assign(c.rows.size(), {});
  for (size_t w = 0; w < c.rows.size(); ++w) {
    const double tau = p.tau[c.group[w]];
    for (double x : *c.rows[w]) {
      const bool late = x > tau * (1 + 3 * p.sigma);
      delayed[w].push_back(late ? 1 : 0);
      count += late;
      excess += late ? x - tau : 0;
    }
  }
  const double n = static_cast<double>(c.size());
  p.q = std::clamp(count / n, 0.5 / n, 1 - 0.5 / n);
  p.m = count > 0 ? excess / count : p.tau[0];
  return p;
}

bool rows_vary(const Covered& c) {
  for (const std::vector<double>* rows : c.rows) {
    const auto [low, high] = std::minmax_element(rows->begin(), rows->end());
    if (*high > *low * (1 + kResolution)) return true;
  }
  return false;
}

// Writes the mixture's τ (per covered worker), σ (0 at the floor: atoms), m into `fit`.
void set_mixture(const Covered& c, const MixtureParams& p, ModelFit& fit) {
  fit.tau.clear();
  for (size_t w = 0; w < c.rows.size(); ++w) fit.tau.push_back(p.tau[c.group[w]]);
  fit.jitter = p.sigma <= kResolution * (1 + 1e-9) ? 0.0 : p.sigma;
  fit.delay_mean = p.m;
  fit.q = p.q;
}

ModelFit not_fitting(ModelFit fit, std::string note) {
  fit.fits = false;
  fit.note = std::move(note);
  return fit;
}

// EM of random_stragglers from `p`; returns the log-likelihood. `all_delayed`: q stays 1 (every
// row delayed, no base). Otherwise EM stops when the undelayed rows fall below kMinBaseShare and
// sets `collapsed`.
// `iterate` false: only the log-likelihood of `p`.
double mixture_em(const Covered& c, MixtureParams& p, bool all_delayed, bool* collapsed,
                  bool* converged, bool iterate = true) {
  if (all_delayed) p.q = 1;
  auto step = [&](bool update) {
    MixtureSums sums(c.groups);
    double ll = 0;
    const double log_q = log_or_minus_inf(p.q), log_1q = log_or_minus_inf(1 - p.q);
    for (size_t w = 0; w < c.rows.size(); ++w) {
      const int g = c.group[w];
      for (double x : *c.rows[w]) {
        const RowTerms t = row_terms(x, p.tau[g], p.sigma, p.m, update);
        const double total = log_sum_exp(log_1q + t.base, log_q + t.delayed);
        ll += total;
        if (update) sums.add(g, x, std::exp(log_q + t.delayed - total), t);
      }
    }
    if (update) {
      if (!all_delayed) p.q = sums.delayed / static_cast<double>(c.size());
      update_shape(sums, p);
    }
    return ll;
  };
  if (!iterate) return step(false);
  return run_em(
      step,
      [&] {
        const bool collapse = !all_delayed && 1 - p.q < kMinBaseShare;
        if (collapsed) *collapsed = collapse;
        return collapse;
      },
      converged);
}

// With the jitter at its floor kResolution the undelayed rows are an atom: each τ_g becomes the
// median of the group's rows within the resolution of τ_g (the atom's value itself, which EM
// approaches only to within σ²/m).
void snap_to_atoms(const Covered& c, MixtureParams& p) {
  for (int g = 0; g < c.groups; ++g) {
    std::vector<double> atom;
    for (size_t w = 0; w < c.rows.size(); ++w) {
      if (c.group[w] != g) continue;
      for (double x : *c.rows[w]) {
        if (std::abs(x - p.tau[g]) <= kResolution * p.tau[g]) atom.push_back(x);
      }
    }
    if (!atom.empty()) p.tau[g] = percentile(atom, 0.5);
  }
}

// The note of a fit whose EM stopped at kMaxIterations.
void note_unconverged(bool converged, ModelFit& fit) {
  if (converged) return;
  const std::string note = fmt::format(
      "EM stopped at its limit of {} iterations with the likelihood still rising (a lower "
      "bound: the family fits these rows only slowly, if at all)",
      kMaxIterations);
  fit.note = fit.note.empty() ? note : fit.note + "; " + note;
}

// ---- common_shock. ----

struct ShockParams {
  MixtureParams mixture;  // mixture.q is the background probability
  double p = 0.1, rho = 0.5;
};

// One E-step (and, when `update`, the M-step) of common_shock; returns the log-likelihood.
double shock_step(const Covered& c, ShockParams& s, bool update) {
  MixtureParams& mp = s.mixture;
  MixtureSums sums(c.groups);
  double ll = 0, shock_steps = 0, steps = 0, hit = 0, hit_rows = 0, calm = 0, calm_rows = 0;
  const double lp = log_or_minus_inf(s.p), l1p = log_or_minus_inf(1 - s.p);
  const double lr = log_or_minus_inf(s.rho), l1r = log_or_minus_inf(1 - s.rho);
  const double lq = log_or_minus_inf(mp.q), l1q = log_or_minus_inf(1 - mp.q);
  std::vector<RowTerms> terms;
  for (const std::vector<std::pair<int, size_t>>& rows : c.steps) {
    if (rows.empty()) continue;
    terms.clear();
    double shock = lp, no_shock = l1p;
    for (const auto& [w, j] : rows) {
      const int g = c.group[w];
      terms.push_back(row_terms((*c.rows[w])[j], mp.tau[g], mp.sigma, mp.m, update));
      shock += log_sum_exp(l1r + terms.back().base, lr + terms.back().delayed);
      no_shock += log_sum_exp(l1q + terms.back().base, lq + terms.back().delayed);
    }
    const double total = log_sum_exp(shock, no_shock);
    ll += total;
    if (!update) continue;
    const double post = std::exp(shock - total);  // P(shock step | its rows)
    const double n = static_cast<double>(rows.size());
    steps += 1;
    shock_steps += post;
    hit_rows += post * n;
    calm_rows += (1 - post) * n;
    for (size_t r = 0; r < rows.size(); ++r) {
      const RowTerms& t = terms[r];
      const double r1 = std::exp(lr + t.delayed - log_sum_exp(l1r + t.base, lr + t.delayed));
      const double r0 = std::exp(lq + t.delayed - log_sum_exp(l1q + t.base, lq + t.delayed));
      hit += post * r1;
      calm += (1 - post) * r0;
      const auto [w, j] = rows[r];
      sums.add(c.group[w], (*c.rows[w])[j], post * r1 + (1 - post) * r0, t);
    }
  }
  if (update) {
    s.p = shock_steps / steps;
    s.rho = hit_rows > 0 ? hit / hit_rows : s.rho;
    mp.q = calm_rows > 0 ? calm / calm_rows : mp.q;
    update_shape(sums, mp);
  }
  return ll;
}

// Starting values from random_stragglers' fit: a step whose rows hold two or more delays (by
// their responsibilities) and more than 3q̂ of its rows is a shock step.
ShockParams start_shocks(const Covered& c, const MixtureParams& fitted) {
  ShockParams s;
  s.mixture = fitted;
  double shock_steps = 0, steps = 0, hit = 0, calm = 0;
  const double lq = log_or_minus_inf(fitted.q), l1q = log_or_minus_inf(1 - fitted.q);
  for (const std::vector<std::pair<int, size_t>>& rows : c.steps) {
    if (rows.empty()) continue;
    double delayed = 0;
    for (const auto& [w, j] : rows) {
      const RowTerms t =
          row_terms((*c.rows[w])[j], fitted.tau[c.group[w]], fitted.sigma, fitted.m, false);
      delayed += std::exp(lq + t.delayed - log_sum_exp(l1q + t.base, lq + t.delayed));
    }
    const double share = delayed / static_cast<double>(rows.size());
    steps += 1;
    if (delayed >= 2 && share > 3 * fitted.q) {
      shock_steps += 1;
      hit += share;
    } else {
      calm += share;
    }
  }
  s.p = std::clamp(shock_steps / steps, 1 / steps, 0.5);
  s.rho = shock_steps > 0 ? std::min(hit / shock_steps, 0.99) : std::min(0.99, 5 * fitted.q);
  s.mixture.q = std::clamp(calm / std::max(steps - shock_steps, 1.0), 1e-6, 0.99);
  return s;
}

// ---- persistent_stragglers: a two-state hidden Markov chain per worker. ----

struct ChainParams {
  std::vector<double> tau;               // per group: the normal level
  double sigma = kResolution;            // shared
  double floor = kResolution;            // Covered::sigma_floor
  std::vector<bool> two_state;           // per covered worker
  std::vector<double> slow_level, a, b;  // per covered worker: s·τ, p_slow, p_recover
};

// One worker's E-step: its log-likelihood, and when `sums` is given the posterior state weights
// γ_t(1) (into `slow`) and the expected transition counts n[k][l].
struct ChainStats {
  std::vector<double> slow;  // γ_t(1) per row
  double n[2][2] = {{0, 0}, {0, 0}};
};

double chain_e_step(const std::vector<double>& x, double tau, double slow_level, double sigma,
                    double a, double b, ChainStats* stats) {
  const size_t m = x.size();
  const double stationary = a + b > 0 ? a / (a + b) : 0.0;
  const double A[2][2] = {{1 - a, a}, {b, 1 - b}};
  std::vector<double> emit(2 * m), scale(m);  // exp(e_t(k) − c_t), c_t
  for (size_t t = 0; t < m; ++t) {
    const double e0 = log_normal_pdf(x[t], tau, sigma * tau);
    const double e1 = log_normal_pdf(x[t], slow_level, sigma * slow_level);
    scale[t] = std::max(e0, e1);
    emit[2 * t] = std::exp(e0 - scale[t]);
    emit[2 * t + 1] = std::exp(e1 - scale[t]);
  }
  std::vector<double> alpha(2 * m), norm(m);
  double ll = 0;
  for (size_t t = 0; t < m; ++t) {
    for (int l = 0; l < 2; ++l) {
      const double prior = t == 0 ? (l == 1 ? stationary : 1 - stationary)
                                  : alpha[2 * (t - 1)] * A[0][l] + alpha[2 * (t - 1) + 1] * A[1][l];
      alpha[2 * t + l] = prior * emit[2 * t + l];
    }
    norm[t] = alpha[2 * t] + alpha[2 * t + 1];
    alpha[2 * t] /= norm[t];
    alpha[2 * t + 1] /= norm[t];
    ll += std::log(norm[t]) + scale[t];
  }
  if (!stats) return ll;
  stats->slow.assign(m, 0);
  double beta[2] = {1, 1};
  for (size_t t = m; t-- > 0;) {
    const double g0 = alpha[2 * t] * beta[0], g1 = alpha[2 * t + 1] * beta[1];
    stats->slow[t] = g1 / (g0 + g1);
    if (t == 0) break;
    double next[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      for (int l = 0; l < 2; ++l) {
        const double f = A[k][l] * emit[2 * t + l] * beta[l] / norm[t];
        stats->n[k][l] += alpha[2 * (t - 1) + k] * f;
        next[k] += f;
      }
    }
    beta[0] = next[0];
    beta[1] = next[1];
  }
  return ll;
}

// One worker without a slow state: Σ log N(x; τ, (στ)²).
double one_state_ll(const std::vector<double>& x, double tau, double sigma) {
  double ll = 0;
  for (double v : x) ll += log_normal_pdf(v, tau, sigma * tau);
  return ll;
}

// One EM iteration over every worker (E-step, and when `update` the M-step); returns the
// log-likelihood, and each worker's own share of it in `own` when given.
double chain_step(const Covered& c, ChainParams& p, bool update,
                  std::vector<double>* own = nullptr) {
  std::vector<Moments> normal(c.groups);
  std::vector<Moments> slow(c.rows.size());
  ChainStats stats;
  double ll = 0;
  for (size_t w = 0; w < c.rows.size(); ++w) {
    const std::vector<double>& x = *c.rows[w];
    const double tau = p.tau[c.group[w]];
    double mine = 0;
    stats = ChainStats{};
    if (p.two_state[w]) {
      mine =
          chain_e_step(x, tau, p.slow_level[w], p.sigma, p.a[w], p.b[w], update ? &stats : nullptr);
    } else {
      mine = one_state_ll(x, tau, p.sigma);
    }
    ll += mine;
    if (own) own->push_back(mine);
    if (!update) continue;
    for (size_t t = 0; t < x.size(); ++t) {
      const double g1 = p.two_state[w] ? stats.slow[t] : 0.0;
      normal[c.group[w]].add(1 - g1, x[t], x[t] * x[t]);
      slow[w].add(g1, x[t], x[t] * x[t]);
    }
    if (p.two_state[w]) {
      const double from_normal = stats.n[0][0] + stats.n[0][1];
      const double from_slow = stats.n[1][0] + stats.n[1][1];
      p.a[w] = from_normal > 0 ? stats.n[0][1] / from_normal : 0.0;
      p.b[w] = from_slow > 0 ? std::max(stats.n[1][0] / from_slow, 1e-12) : 1.0;
    }
  }
  if (!update) return ll;
  double residual = 0, rows = 0;
  for (int g = 0; g < c.groups; ++g) {
    p.tau[g] = level_given_sigma(normal[g], p.sigma);
    residual += residual_sum(normal[g], p.tau[g]);
    rows += normal[g].w;
  }
  for (size_t w = 0; w < c.rows.size(); ++w) {
    if (!p.two_state[w] || !(slow[w].w > 0)) continue;
    p.slow_level[w] = std::max(level_given_sigma(slow[w], p.sigma), p.tau[c.group[w]]);
    residual += residual_sum(slow[w], p.slow_level[w]);
    rows += slow[w].w;
  }
  p.sigma = std::max(std::sqrt(residual / rows), p.floor);
  return ll;
}

// Starting values: a worker's candidate slow rows exceed kSlowFactor × its 10th percentile; with
// two or more it starts with a slow state at their mean and switching probabilities from the
// candidates' sequence (one pseudo-count each way); τ_g the mean of the other rows, σ their
// relative spread.
ChainParams start_chains(const Covered& c) {
  ChainParams p;
  const size_t n = c.rows.size();
  p.two_state.assign(n, false);
  p.slow_level.assign(n, 0);
  p.a.assign(n, 0);
  p.b.assign(n, 1);
  std::vector<double> sum(c.groups, 0), count(c.groups, 0);
  std::vector<std::vector<bool>> candidate(n);
  for (size_t w = 0; w < n; ++w) {
    const std::vector<double>& x = *c.rows[w];
    const double floor = percentile(x, 0.1) * kSlowFactor;
    double slow_sum = 0, slow_count = 0, t[2][2] = {{1, 1}, {1, 1}};
    for (size_t j = 0; j < x.size(); ++j) {
      candidate[w].push_back(x[j] > floor);
      if (x[j] > floor) {
        slow_sum += x[j];
        slow_count += 1;
      } else {
        sum[c.group[w]] += x[j];
        count[c.group[w]] += 1;
      }
      if (j > 0) t[candidate[w][j - 1]][candidate[w][j]] += 1;
    }
    if (slow_count >= 2) {
      p.two_state[w] = true;
      p.slow_level[w] = slow_sum / slow_count;
      p.a[w] = t[0][1] / (t[0][0] + t[0][1]);
      p.b[w] = t[1][0] / (t[1][0] + t[1][1]);
    }
  }
  for (int g = 0; g < c.groups; ++g) p.tau.push_back(sum[g] / std::max(count[g], 1.0));
  double squares = 0, rows = 0;
  for (size_t w = 0; w < n; ++w) {
    const double tau = p.tau[c.group[w]];
    for (size_t j = 0; j < c.rows[w]->size(); ++j) {
      if (candidate[w][j]) continue;
      squares += std::pow((*c.rows[w])[j] / tau - 1, 2);
      rows += 1;
    }
  }
  p.floor = c.sigma_floor;
  p.sigma = std::max(std::sqrt(squares / std::max(rows, 1.0)), p.floor);
  for (size_t w = 0; w < n; ++w) {
    if (p.two_state[w]) p.slow_level[w] = std::max(p.slow_level[w], p.tau[c.group[w]]);
  }
  return p;
}

// Keeps a worker's slow state only when it gains more than kSlowStateGain over one state at the
// same σ (its own τ refitted when it has a τ of its own). Returns whether any was dropped.
bool drop_weak_slow_states(const Covered& c, ChainParams& p) {
  std::vector<double> own;
  chain_step(c, p, /*update=*/false, &own);
  bool dropped = false;
  for (size_t w = 0; w < c.rows.size(); ++w) {
    if (!p.two_state[w]) continue;
    double tau = p.tau[c.group[w]];
    if (c.groups == static_cast<int>(c.rows.size())) {
      Moments m;
      for (double x : *c.rows[w]) m.add(1, x, x * x);
      tau = level_given_sigma(m, p.sigma);
    }
    if (own[w] - one_state_ll(*c.rows[w], tau, p.sigma) > kSlowStateGain) continue;
    p.two_state[w] = false;
    p.a[w] = 0;
    p.b[w] = 1;
    dropped = true;
  }
  return dropped;
}

}  // namespace

double jitter_floor(const std::vector<const std::vector<double>*>& rows) {
  std::vector<double> all;
  for (const std::vector<double>* r : rows) all.insert(all.end(), r->begin(), r->end());
  if (all.empty()) return kResolution;
  std::sort(all.begin(), all.end());
  std::vector<double> gaps;  // between consecutive distinct rows
  for (size_t j = 1; j < all.size(); ++j) {
    if (all[j] > all[j - 1] * (1 + kResolution)) gaps.push_back(all[j] - all[j - 1]);
  }
  if (gaps.empty()) return kResolution;
  const double tick = *std::min_element(gaps.begin(), gaps.end());
  size_t multiples = 0;
  for (double g : gaps) multiples += std::abs(g / tick - std::round(g / tick)) <= kTickSlack;
  if (2 * multiples < gaps.size()) return kResolution;  // continuous rows: no tick
  return std::max(kResolution, tick / (std::sqrt(12.0) * all[all.size() / 2]));
}

size_t Covered::size() const {
  size_t n = 0;
  for (const std::vector<double>* r : rows) n += r->size();
  return n;
}

double normal_cdf(double x, double mu, double s) {
  return boost::math::cdf(kStandardNormal, (x - mu) / s);
}

// F(x) = Φ(z) − exp(s²/(2m²) − (x − μ)/m)·Φ(z − s/m), z = (x − μ)/s, the second term in logs.
double emg_cdf(double x, double mu, double s, double m) {
  const double z = (x - mu) / s;
  if (z < -38) return 0;
  const double second = std::exp(s * s / (2 * m * m) - (x - mu) / m + log_standard_cdf(z - s / m));
  return std::clamp(boost::math::cdf(kStandardNormal, z) - second, 0.0, 1.0);
}

ModelFit fit_random_stragglers(const Covered& covered, ModelFit fit) {
  fit.parameters = covered.groups + 3;
  if (!rows_vary(covered)) {
    std::vector<std::vector<double>> unused;
    set_mixture(covered, start_mixture(covered, unused), fit);
    return not_fitting(std::move(fit),
                       "no delays: every row is at its worker's minimum (the fixed model)");
  }
  std::vector<std::vector<double>> unused;
  MixtureParams p = start_mixture(covered, unused);
  bool collapsed = false, converged = true;
  fit.log_likelihood = mixture_em(covered, p, false, &collapsed, &converged);
  if (collapsed) {
    p = start_mixture(covered, unused);
    fit.log_likelihood = mixture_em(covered, p, true, nullptr, &converged);
    fit.note = "no base of undelayed rows: every job is delayed (q = 1)";
  }
  if (p.sigma <= kResolution * (1 + 1e-9)) {  // an atom: τ is its value itself
    snap_to_atoms(covered, p);
    fit.log_likelihood = mixture_em(covered, p, collapsed, nullptr, nullptr, /*iterate=*/false);
  }
  fit.fits = true;
  set_mixture(covered, p, fit);
  if (fit.jitter == 0 && !collapsed) fit.note = "the undelayed rows are an atom at τ (no jitter)";
  note_unconverged(converged, fit);
  return fit;
}

ModelFit fit_common_shock(const Covered& covered, ModelFit fit) {
  fit.parameters = covered.groups + 5;
  size_t shared_steps = 0;
  for (const auto& rows : covered.steps) shared_steps += rows.size() >= 2;
  if (covered.rows.size() < 2 || shared_steps == 0 || !rows_vary(covered)) {
    std::vector<std::vector<double>> unused;
    set_mixture(covered, start_mixture(covered, unused), fit);
    return not_fitting(std::move(fit), covered.rows.size() < 2 || shared_steps == 0
                                           ? "needs two or more workers with rows at one step"
                                           : "no delays: every row is at its worker's minimum");
  }
  std::vector<std::vector<double>> unused;
  MixtureParams start = start_mixture(covered, unused);
  bool collapsed = false, converged = true;
  mixture_em(covered, start, false, &collapsed, nullptr);
  if (collapsed) {
    set_mixture(covered, start, fit);
    return not_fitting(std::move(fit), "no base of undelayed rows for shocks to stand out from");
  }
  ShockParams s = start_shocks(covered, start);
  fit.log_likelihood =
      run_em([&](bool update) { return shock_step(covered, s, update); }, &converged);
  if (s.rho < s.mixture.q) {  // the "shock" state is the one with more delays
    std::swap(s.rho, s.mixture.q);
    s.p = 1 - s.p;
  }
  fit.fits = true;
  set_mixture(covered, s.mixture, fit);
  fit.shock_probability = s.p;
  fit.shock_share = s.rho;
  note_unconverged(converged, fit);
  return fit;
}

ModelFit fit_persistent_stragglers(const Covered& covered, ModelFit fit) {
  ChainParams p = start_chains(covered);
  if (!rows_vary(covered)) {
    for (size_t w = 0; w < covered.rows.size(); ++w) fit.tau.push_back(p.tau[covered.group[w]]);
    fit.parameters = covered.groups + 1;
    return not_fitting(std::move(fit), "no spread in the rows: the fixed model");
  }
  bool converged = true;
  auto em = [&] {
    return run_em([&](bool update) { return chain_step(covered, p, update); }, &converged);
  };
  fit.log_likelihood = em();
  if (drop_weak_slow_states(covered, p)) fit.log_likelihood = em();
  fit.fits = true;
  fit.jitter = p.sigma <= kResolution * (1 + 1e-9) ? 0.0 : p.sigma;
  int slow_workers = 0;
  for (size_t w = 0; w < covered.rows.size(); ++w) {
    const double tau = p.tau[covered.group[w]];
    fit.tau.push_back(tau);
    slow_workers += p.two_state[w];
    fit.slowdown.push_back(p.two_state[w] ? p.slow_level[w] / tau : 1.0);
    fit.p_slow.push_back(p.two_state[w] ? p.a[w] : 0.0);
    fit.p_recover.push_back(p.two_state[w] ? p.b[w] : 1.0);
    ChainStats stats;
    double share = 0;
    if (p.two_state[w]) {
      chain_e_step(*covered.rows[w], tau, p.slow_level[w], p.sigma, p.a[w], p.b[w], &stats);
      for (double g : stats.slow) share += g;
      share /= static_cast<double>(stats.slow.size());
    }
    fit.slow_share.push_back(share);
  }
  fit.parameters = covered.groups + 1 + 3 * slow_workers;
  if (slow_workers == 0) fit.note = "no worker has slow spells: jitter only";
  note_unconverged(converged, fit);
  return fit;
}

}  // namespace pacer::fit_em
