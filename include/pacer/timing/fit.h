// Fitting the timing models of DESIGN.md section 4 to measured durations (`pacer fit`).
//
// Input: a trace (timing/trace.h), the CSV that timing.model = "trace" replays. The fit treats
// every row as the duration of a ONE-unit job: the straggler models' delay is per job, not per
// unit, so a trace of u-unit jobs divides it by u and its fitted delay_mean is delay_mean / u.
// The rows of each worker are taken in step order (a classic trace: in file order), which is what
// persistent_stragglers and common_shock need.
//
// Families and their maximum-likelihood estimators (x = one row's duration; for one worker, m its
// rows, x̄ their mean, x_min their minimum):
//   fixed               x = τ. τ̂ = x̄; it fits only when every row equals τ̂ up to the resolution
//                       kResolution (relative), and is reported as not fitting otherwise.
//   exponential         x ~ Exp(mean τ). τ̂ = x̄.
//   shifted_exponential x = τ + Exp(mean τλ). τ̂ = x_min, λ̂ = (x̄ − x_min) / x_min.
//   pareto              x = τ·P, P ~ Pareto(α) with scale 1. τ̂ = x_min, α̂ = m / Σ log(x / τ̂).
//   random_stragglers   x = τ·(1 + σZ), plus with probability q an Exp(mean delay_mean) delay: the
//                       mixture (1 − q)·N(τ, (στ)²) + q·(N(τ, (στ)²) ∗ Exp(delay_mean)), the second
//                       an exponentially modified normal. The EM algorithm with the delay D of a
//                       delayed row as a latent variable (its law given x a normal truncated to
//                       D >= 0) gives every M-step in closed form; τ and σ are maximised in turn
//                       (ECM). σ has the floor kResolution: rows equal up to the resolution are an
//                       atom (the jitter is then reported as 0, as the model has it). A trace of
//                       the k-stragglers-per-step variant (timing.k) is fitted as q ≈ k/n.
//   common_shock        random_stragglers whose delays come together: each step is a shock step
//                       with probability shock_probability; in a shock step a job is delayed with
//                       probability shock_share, otherwise with probability q. The steps are
//                       latent states of one EM (each step's rows are independent given its
//                       state). Needs two or more workers with rows at common steps.
//   persistent_stragglers  per worker a two-state Markov chain over its rows in step order, normal
//                       or slow: x = τ·(1 + σZ) when normal, s·τ·(1 + σZ) when slow; the chain
//                       turns slow with probability p_slow per step and recovers with probability
//                       p_recover, starting from its stationary law. Baum–Welch (EM) with the
//                       normal-state τ, the slow-state means and σ in closed form; the transition
//                       step counts the transitions and leaves out the first step's stationary
//                       term (one of m terms). A worker gets a slow state only when two or more of
//                       its rows exceed kSlowFactor × its 10th percentile and the two-state chain
//                       gains more than 3 nats over one state (AIC: three more parameters, s,
//                       p_slow, p_recover); the others have p_slow = 0.
//   noisy_linear        has no free parameter (u·(i + 1 + |N(0, i + 1)|) on worker i): not fitted.
// Log-likelihoods are in nats per unit of duration (densities). A row on an atom (fixed) has a
// probability, not a density: it counts as that probability divided by the resolution
// kResolution·x of a measured duration, which puts atoms and densities on one scale (the normal
// jitter at its floor σ = kResolution does the same for the straggler families). CDFs and normal
// densities come from Boost.Math's distributions.
//
// Scopes. Each family is fitted to every worker alone ("worker i": its own τ and shape), and to
// all rows together ("pooled") in two variants that are what a [timing] table can say:
//   TauScope::kPerWorker  τ_i per worker, the shape (λ, α, q, delay_mean, σ, shocks) shared: the
//                         table's `tau = [τ_0, ..., τ_{n-1}]`. τ̂_i as above per worker; the
//                         shared shape maximises the joint likelihood: α̂ = N / Σ_i Σ_j log(x_ij /
//                         τ̂_i); for shifted_exponential τ̂_i(λ) = min(x_min,i, x̄_i / λ) and λ̂ is
//                         the root of the nonincreasing Σ_i m_i·max(λ̂_i − λ, −1) (λ̂_i the
//                         worker's own estimate), so the profile likelihood is unimodal and λ̂
//                         exact. persistent_stragglers' slowdown and switching probabilities are
//                         per worker in both scopes (a chain per worker).
//   TauScope::kShared     one τ for every worker: the table's `tau = τ`. The single-worker
//                         estimators on all rows.
//
// Which τ scope. A per-worker τ list is needed when some workers are persistently slower, i.e.
// their mean durations differ by more than the transient delays explain. The test is a one-way
// analysis of variance of log durations across workers: under every τ-scaled family log x =
// log τ_i + log Z with one law of Z for all workers, the equal-variance location model the
// F-test assumes; F = (between-worker mean square) / (within-worker mean square), p from
// F(n − 1, N − n). p < kPersistenceLevel says "persistent slowness: a per-worker tau list is
// needed", otherwise "transient stragglers only: one tau". The test chooses the scope, not the
// AIC, because τ_i sits on the support's boundary (x_min) for the shifted families, where the
// AIC's penalty of 2 per parameter undercounts the likelihood a spurious τ_i gains.
//
// Ranking. Within the chosen scope, the families that fit are ranked by AIC = 2k − 2 log L (lower
// is better); those that do not fit (fixed with spread, or a family degenerate on rows without
// spread) come last. AIC rather than the Kolmogorov–Smirnov distance: it uses the whole
// likelihood, tails included, which is where stragglers live and where KS (most sensitive near
// the median) hardly looks; it charges for parameters (a τ list costs n − 1); and it compares
// non-nested families. The KS distance sup_x |F_N(x) − F̂(x)| of the pooled empirical CDF to the
// fitted one (for kPerWorker the mixture Σ_i (m_i / N)·F̂_i) is reported beside it; its usual null
// distribution does not hold for fitted parameters, so no p-value is given. A caveat:
// shifted_exponential contains exponential as λ → ∞ (τ → 0), so on exponential data it gains
// about Exp(1) nats of likelihood by moving its shift to x_min, and ranks first by AIC with
// probability about 1/e (112 of 300 seeds at n = 4, m = 2000), with a ΔAIC that is small (below
// 2·ln(1/p) − 2 with probability 1 − p) and a shift under 1 % of the mean, which its note says.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "pacer/timing/trace.h"

namespace pacer {

// Durations that agree to this relative precision (six significant digits) are equal: the
// resolution of a measured duration, which ties atoms (fixed; the straggler families' jitter
// floor) to rows.
inline constexpr double kResolution = 1e-6;
// A row more than this many times its worker's 10th percentile may be a slow-state row
// (persistent_stragglers' candidates for a slow state); the same factor of the pooled median
// marks a slow row in the straggler analysis (timing/stragglers.h) and the trace model's
// straggler_threshold default.
inline constexpr double kSlowFactor = 1.5;
// The fewest rows a worker may have: the per-worker fits have up to four parameters.
inline constexpr size_t kMinRowsPerWorker = 10;
// The largest worker index a trace may name (a bound on what one bad row can allocate).
inline constexpr int kMaxTraceWorkers = 100000;
// The level of the persistence test below which worker means are said to differ.
inline constexpr double kPersistenceLevel = 0.01;
// √N times the KS distance above which the best model is said not to describe the rows: 1.95 is
// the asymptotic 0.1 % critical value for a fully specified continuous law. With fitted
// parameters the distance's law is smaller (Lilliefors), so a distance above it is strong
// evidence of misfit, and one below it is no proof of fit.
inline constexpr double kKsCritical = 1.95;

// Checks that every worker of `trace` has at least kMinRowsPerWorker rows (Error naming the
// source otherwise).
void check_fit_rows(const DurationTrace& trace);
// Reads a trace file (timing/trace.h: read_trace_file). The workers are 0..n−1 with n − 1 the
// largest index in the file, and each needs at least kMinRowsPerWorker rows. A missing file, a bad
// header, a bad row, and too few rows for a worker are Errors naming the file (and the line, for a
// bad row).
DurationTrace read_duration_trace(const std::string& path);

enum class TimingFamily {
  kFixed,
  kExponential,
  kShiftedExponential,
  kPareto,
  kRandomStragglers,
  kCommonShock,
  kPersistentStragglers
};
inline constexpr TimingFamily kTimingFamilies[] = {TimingFamily::kFixed,
                                                   TimingFamily::kExponential,
                                                   TimingFamily::kShiftedExponential,
                                                   TimingFamily::kPareto,
                                                   TimingFamily::kRandomStragglers,
                                                   TimingFamily::kCommonShock,
                                                   TimingFamily::kPersistentStragglers};
// The family's timing.model value ("shifted_exponential").
std::string_view family_name(TimingFamily family);

enum class TauScope { kShared, kPerWorker };
std::string_view scope_name(TauScope scope);  // "shared", "per_worker"

// One family fitted to the rows of some workers. tau has one entry per worker covered (all equal
// for kShared, one entry for a single-worker fit). Only the family's own shape parameters are
// set: lambda (shifted_exponential), alpha (pareto), q, delay_mean and jitter (random_stragglers,
// common_shock), shock_probability and shock_share (common_shock), jitter and per covered worker
// slowdown, p_slow and p_recover (persistent_stragglers; a worker without a slow state has
// slowdown 1, p_slow 0, p_recover 1).
struct ModelFit {
  TimingFamily family = TimingFamily::kFixed;
  TauScope scope = TauScope::kShared;
  std::vector<double> tau;
  double lambda = 0, alpha = 0, q = 0, delay_mean = 0;
  double jitter = 0;  // σ; 0 when at the floor kResolution (the rows are atoms)
  double shock_probability = 0, shock_share = 0;
  std::vector<double> slowdown, p_slow, p_recover;
  // persistent_stragglers, per covered worker: the share of its rows in the slow state (the
  // posterior mean), which cdf() weighs the two states with. With spells of many steps a trace
  // holds few spells and their stationary share p_slow / (p_slow + p_recover) is known only
  // roughly; the KS distance should judge the two levels, not that.
  std::vector<double> slow_share;
  // False when the family cannot describe the rows; `note` then says why, and the numbers below
  // are log_likelihood = −inf, aic = +inf, ks = 1.
  bool fits = false;
  std::string note;
  int parameters = 0;  // k of the AIC: the τ entries plus the shape parameters
  double log_likelihood = 0;
  double aic = 0;
  double ks = 1;  // KS distance of the fitted (mixture) CDF to the empirical CDF of its rows

  // P(X <= x) and P(X < x) for one unit's duration on covered worker w (an index into tau); for
  // persistent_stragglers the stationary mixture of the two states. An atom counts from its
  // location on exactly; rows are snapped onto it before KS (see ks_distance).
  double cdf(size_t w, double x) const;
  double cdf_below(size_t w, double x) const;
  // The mean duration of a unit on covered worker w (+inf for pareto with α <= 1).
  double mean(size_t w) const;
  // The probability that a job of covered worker w is delayed (random_stragglers: q;
  // common_shock: q + (1 − q)·shock_probability·shock_share), or that its chain is slow
  // (persistent_stragglers: p_slow / (p_slow + p_recover)); 0 for the other families.
  double straggle_probability(size_t w) const;
  // The atoms of covered worker w's law: τ (fixed, and the straggler families with jitter 0 and
  // some undelayed mass), and s·τ for a slow state with jitter 0.
  std::vector<double> atoms(size_t w) const;
  // "tau = [1, 1.5] lambda = 0.98": the parameters in the [timing] table's words.
  std::string describe() const;
};

// The persistence test (one-way ANOVA of log durations across workers). With one worker, or when
// no worker's log durations vary, it is not applicable: p_value = 1 (0 when the workers' constant
// values differ), persistent as p < kPersistenceLevel.
struct PersistenceTest {
  double f_statistic = 0;
  int df_between = 0, df_within = 0;
  double p_value = 1;
  std::vector<double> worker_means;  // arithmetic mean duration per worker
  double slowest_to_fastest = 1;     // max / min of worker_means
  bool persistent = false;
};

struct TraceFit {
  PersistenceTest persistence;
  TauScope scope = TauScope::kShared;  // kPerWorker iff persistence.persistent
  // Every family in both scopes, in kTimingFamilies order, kShared first.
  std::vector<ModelFit> pooled;
  // per_worker[i]: every family fitted to worker i alone, in kTimingFamilies order.
  std::vector<std::vector<ModelFit>> per_worker;
  // Indices into pooled of the chosen scope's fits: fitting ones by AIC ascending, then the
  // others in family order. ranking.front() is the recommendation.
  std::vector<size_t> ranking;
  // kKsCritical / √N: the best fit's KS distance above it means that none of the families
  // describes the rows well (adequate() is false).
  double ks_limit = 0;
  const ModelFit& best() const { return pooled[ranking.front()]; }
  bool adequate() const { return best().fits && best().ks <= ks_limit; }
};

// Fits every family in every scope, runs the persistence test and ranks. Requires every worker to
// have at least two rows (read_duration_trace guarantees kMinRowsPerWorker). Pure.
TraceFit fit_trace(const DurationTrace& trace);

// KS distance of `rows` (any order) to the CDF of covered worker w of `fit`: rows within the
// resolution of the worker's atom (fixed, random_stragglers) are first snapped onto it.
double ks_distance(const ModelFit& fit, size_t w, const std::vector<double>& rows);

// The [timing] table that makes pacer simulate `fit`, ready to paste into a config:
//   [timing]
//   model = "shifted_exponential"
//   tau = [0.10012, 0.20031]   (or tau = 0.1 for kShared)
//   lambda = 0.5
// Numbers have six significant digits and always read back as TOML floats.
std::string timing_table(const ModelFit& fit);

}  // namespace pacer
