// Fitting the timing models (pacer fit): each family's parameters are recovered from a trace that
// pacer's own TimingModel draws, the generating family ranks first, and the trace reader rejects
// bad files with the file and line.
//
// Sample: n = 4 workers, m = 2000 one-unit jobs each (N = 8000), drawn as the engines draw them:
// worker i's job j is compute_time(i, 1, j, Rng(seed, "duration", i)). The tolerances are derived,
// not tuned:
//   * an asymptotically normal estimator is within kSe = 4 standard errors (two-sided normal tail
//     6.3e-5), its standard error written out beside each check;
//   * a sample minimum (τ̂ of the shifted families) exceeds τ by an amount whose law is
//     exponential with mean τλ/m (shifted_exponential) or, relatively, about Exp(mean 1/(αm))
//     (pareto): within kMinTail = 10 means (tail e^-10 = 4.5e-5, the same order);
//   * KS distances are below 1.95/√N, the 0.1 % critical value for a fully specified continuous
//     law; fitted parameters, atoms and the per-worker stratification all make the distance
//     smaller, so the bound is conservative.
// The seed is fixed (kSeed) and was chosen before any of these checks was run.
#include "pacer/timing/fit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/rng.h"
#include "pacer/timing/timing_model.h"
#include "test_util.h"

namespace pacer {
namespace {

constexpr uint64_t kSeed = 7;
constexpr int kWorkers = 4;
constexpr int kRows = 2000;  // m, per worker
constexpr double kN = kWorkers * kRows;
constexpr double kSe = 4;
constexpr double kMinTail = 10;
const std::vector<double> kTau = {1.0, 1.5, 2.0, 3.0};
constexpr const char* kTauList = "tau = [1.0, 1.5, 2.0, 3.0]\n";

// A trace drawn from the [timing] table `toml` as the engines draw durations.
DurationTrace draw(const std::string& toml, uint64_t seed = kSeed) {
  const std::unique_ptr<TimingModel> model =
      make_timing_model(Config::parse(toml, "t.toml"), kWorkers, seed);
  DurationTrace trace;
  trace.source = "synthetic";
  trace.rows.resize(kWorkers);
  for (int i = 0; i < kWorkers; ++i) {
    Rng rng(seed, "duration", i);
    for (int j = 0; j < kRows; ++j) {
      trace.rows[i].push_back(model->compute_time(i, 1.0, j, rng).total());
    }
  }
  return trace;
}

// The pooled fit of `family` in `scope`.
const ModelFit& pooled(const TraceFit& fit, TimingFamily family, TauScope scope) {
  for (const ModelFit& m : fit.pooled) {
    if (m.family == family && m.scope == scope) return m;
  }
  ADD_FAILURE() << "no pooled fit of " << family_name(family);
  return fit.pooled.front();
}

// The rank of `family` in the chosen scope (0 = first).
size_t rank_of(const TraceFit& fit, TimingFamily family) {
  for (size_t r = 0; r < fit.ranking.size(); ++r) {
    if (fit.pooled[fit.ranking[r]].family == family) return r;
  }
  return fit.ranking.size();
}

std::string ranking_text(const TraceFit& fit) {
  std::string text;
  for (size_t i : fit.ranking) {
    const ModelFit& m = fit.pooled[i];
    text += fmt::format("{} AIC {} KS {} {} {}\n", family_name(m.family), m.aic, m.ks, m.describe(),
                        m.note);
  }
  return text;
}

// The generating family is first, τ varies by worker and the persistence test says so.
void expect_first_with_tau_list(const TraceFit& fit, TimingFamily family) {
  EXPECT_TRUE(fit.persistence.persistent) << fit.persistence.p_value;
  EXPECT_EQ(fit.scope, TauScope::kPerWorker);
  EXPECT_EQ(fit.best().family, family) << ranking_text(fit);
  EXPECT_LE(fit.best().ks, 1.95 / std::sqrt(kN)) << ranking_text(fit);
  EXPECT_TRUE(fit.adequate());
}

TEST(FitTimingModels, FixedIsRecoveredExactlyAndRanksFirst) {
  const TraceFit fit = fit_trace(draw(std::string("[timing]\nmodel = \"fixed\"\n") + kTauList));
  expect_first_with_tau_list(fit, TimingFamily::kFixed);
  for (int i = 0; i < kWorkers; ++i) EXPECT_NEAR(fit.best().tau[i], kTau[i], 1e-12);
  EXPECT_EQ(fit.best().ks, 0);
  // The shape families have nothing to fit on rows without spread.
  EXPECT_FALSE(pooled(fit, TimingFamily::kShiftedExponential, TauScope::kPerWorker).fits);
  EXPECT_FALSE(pooled(fit, TimingFamily::kPareto, TauScope::kPerWorker).fits);
  EXPECT_FALSE(pooled(fit, TimingFamily::kRandomStragglers, TauScope::kPerWorker).fits);
}

TEST(FitTimingModels, ExponentialIsRecovered) {
  const TraceFit fit =
      fit_trace(draw(std::string("[timing]\nmodel = \"exponential\"\n") + kTauList));
  const ModelFit& e = pooled(fit, TimingFamily::kExponential, TauScope::kPerWorker);
  for (int i = 0; i < kWorkers; ++i) {
    EXPECT_NEAR(e.tau[i], kTau[i], kSe * kTau[i] / std::sqrt(kRows));  // SE of a mean: τ/√m
  }
  EXPECT_TRUE(fit.persistence.persistent);
  EXPECT_LE(e.ks, 1.95 / std::sqrt(kN));
  // shifted_exponential contains the exponential (λ → ∞) and gains about Exp(1) nats by moving
  // its shift to the minimum, so it may rank first (probability about 1/e, fit.h), but then only
  // by ΔAIC = 2·gain − 2 <= 2·ln(1e4) − 2 (probability 1 − 1e-4) and with a negligible shift:
  // 1/(1 + λ̂) <= kMinTail/m, as every worker's minimum is about Exp(mean τ_i/m).
  const size_t r = rank_of(fit, TimingFamily::kExponential);
  ASSERT_LE(r, 1u) << ranking_text(fit);
  if (r == 1) {
    const ModelFit& s = fit.best();
    EXPECT_EQ(s.family, TimingFamily::kShiftedExponential) << ranking_text(fit);
    EXPECT_LE(e.aic - s.aic, 2 * std::log(1e4) - 2) << ranking_text(fit);
    EXPECT_LE(1 / (1 + s.lambda), kMinTail / kRows) << ranking_text(fit);
  }
}

TEST(FitTimingModels, ShiftedExponentialIsRecoveredAndRanksFirst) {
  constexpr double kLambda = 0.5;
  const TraceFit fit = fit_trace(
      draw(std::string("[timing]\nmodel = \"shifted_exponential\"\nlambda = 0.5\n") + kTauList));
  expect_first_with_tau_list(fit, TimingFamily::kShiftedExponential);
  const ModelFit& s = fit.best();
  for (int i = 0; i < kWorkers; ++i) {
    // τ̂_i = min: τ_i + Exp(mean τ_iλ/m).
    EXPECT_GE(s.tau[i], kTau[i]);
    EXPECT_LE(s.tau[i], kTau[i] + kMinTail * kTau[i] * kLambda / kRows);
  }
  // λ̂ = mean of the N excesses (x − τ_i)/τ_i ~ Exp(mean λ): SE λ/√N; the minimum's error biases
  // it by at most kMinTail·λ(1 + λ)/m.
  const double bias = kMinTail * kLambda * (1 + kLambda) / kRows;
  EXPECT_NEAR(s.lambda, kLambda, kSe * kLambda / std::sqrt(kN) + bias);
  // Each worker alone: SE λ/√m.
  for (int i = 0; i < kWorkers; ++i) {
    const ModelFit& w = fit.per_worker[i][static_cast<int>(TimingFamily::kShiftedExponential)];
    EXPECT_EQ(w.family, TimingFamily::kShiftedExponential);
    EXPECT_NEAR(w.lambda, kLambda, kSe * kLambda / std::sqrt(kRows) + bias) << "worker " << i;
  }
}

TEST(FitTimingModels, ParetoIsRecoveredAndRanksFirst) {
  constexpr double kAlpha = 3.0;
  const TraceFit fit =
      fit_trace(draw(std::string("[timing]\nmodel = \"pareto\"\nalpha = 3.0\n") + kTauList));
  expect_first_with_tau_list(fit, TimingFamily::kPareto);
  const ModelFit& p = fit.best();
  for (int i = 0; i < kWorkers; ++i) {
    // P(min > τ·e^s) = e^(-αms) = e^(-kMinTail) for s = kMinTail/(αm).
    EXPECT_GE(p.tau[i], kTau[i]);
    EXPECT_LE(p.tau[i], kTau[i] * std::exp(kMinTail / (kAlpha * kRows)));
  }
  // α̂: Fisher information 1/α² per row, SE α/√N; τ̂ = min moves Σ log(x/τ̂) by at most a relative
  // kMinTail/m, hence α̂ by kMinTail·α/m.
  EXPECT_NEAR(p.alpha, kAlpha, kSe * kAlpha / std::sqrt(kN) + kMinTail * kAlpha / kRows);
}

TEST(FitTimingModels, RandomStragglersAreRecoveredAndRankFirst) {
  constexpr double kQ = 0.25, kDelay = 1.0;
  const TraceFit fit = fit_trace(
      draw(std::string("[timing]\nmodel = \"random_stragglers\"\nq = 0.25\ndelay_mean = 1.0\n") +
           kTauList));
  expect_first_with_tau_list(fit, TimingFamily::kRandomStragglers);
  const ModelFit& r = fit.best();
  // A job that does not straggle takes exactly τ_i: the atom gives τ_i without error.
  for (int i = 0; i < kWorkers; ++i) EXPECT_DOUBLE_EQ(r.tau[i], kTau[i]);
  // q̂ a binomial proportion: SE √(q(1 − q)/N).
  EXPECT_NEAR(r.q, kQ, kSe * std::sqrt(kQ * (1 - kQ) / kN));
  // delay_mean̂ the mean of the q̂N delays: SE m/√(q̂N).
  EXPECT_NEAR(r.delay_mean, kDelay, kSe * kDelay / std::sqrt(r.q * kN));
}

TEST(FitTimingModels, TransientStragglersShareOneTau) {
  // Equal τ: the persistence test's p is uniform, so p >= kPersistenceLevel with probability 0.99.
  const TraceFit fit =
      fit_trace(draw("[timing]\nmodel = \"shifted_exponential\"\nlambda = 0.5\ntau = 0.2\n"));
  EXPECT_FALSE(fit.persistence.persistent) << fit.persistence.p_value;
  EXPECT_EQ(fit.scope, TauScope::kShared);
  EXPECT_EQ(fit.best().family, TimingFamily::kShiftedExponential) << ranking_text(fit);
  EXPECT_EQ(fit.best().scope, TauScope::kShared);
  // τ̂ = the minimum of all N rows: 0.2 + Exp(mean 0.2·λ/N).
  EXPECT_GE(fit.best().tau[0], 0.2);
  EXPECT_LE(fit.best().tau[0], 0.2 + kMinTail * 0.2 * 0.5 / kN);
  const std::string table = timing_table(fit.best());
  EXPECT_NE(table.find("\ntau = 0.2"), std::string::npos) << table;
  EXPECT_EQ(table.find('['), 0u) << table;  // only the "[timing]" header has a bracket
  EXPECT_EQ(table.find('[', 1), std::string::npos) << table;
}

// The printed table builds the fitted model: same name, same mean per worker (six digits).
void expect_table_round_trips(const ModelFit& fit) {
  const std::string table = timing_table(fit);
  const Config config = Config::parse(table, "table.toml");
  const std::unique_ptr<TimingModel> model = make_timing_model(config, kWorkers, kSeed);
  EXPECT_NO_THROW(config.reject_unread_keys()) << table;
  EXPECT_EQ(model->name(), family_name(fit.family));
  for (int i = 0; i < kWorkers; ++i) {
    ASSERT_TRUE(model->mean_unit_time(i).has_value());
    EXPECT_NEAR(*model->mean_unit_time(i), fit.mean(i), 1e-5 * fit.mean(i)) << table;
  }
}

TEST(FitTimingModels, TimingTableRoundTripsThroughTheConfig) {
  expect_table_round_trips(
      fit_trace(
          draw(std::string("[timing]\nmodel = \"shifted_exponential\"\nlambda = 0.5\n") + kTauList))
          .best());
  expect_table_round_trips(
      fit_trace(draw(std::string("[timing]\nmodel = \"random_stragglers\"\nq = 0.25\n") + kTauList))
          .best());
  expect_table_round_trips(
      fit_trace(draw(std::string("[timing]\nmodel = \"pareto\"\nalpha = 3.0\n") + kTauList))
          .best());
}

TEST(FitTimingModels, FixedDoesNotFitRowsWithSpread) {
  const TraceFit fit =
      fit_trace(draw(std::string("[timing]\nmodel = \"exponential\"\n") + kTauList));
  const ModelFit& f = pooled(fit, TimingFamily::kFixed, TauScope::kPerWorker);
  EXPECT_FALSE(f.fits);
  EXPECT_NE(f.note.find("not all equal"), std::string::npos) << f.note;
  EXPECT_EQ(fit.pooled[fit.ranking.back()].family, TimingFamily::kFixed);
}

TEST(FitTimingModels, CoarseTimerTiesAreNoAtom) {
  // shifted_exponential (τ = 10 ms, λ = 0.5) timed in whole milliseconds: the minimum's tick holds
  // P(excess < 0.5 ms) ≈ 9.5 % of the rows, the next tick P(0.5 ms .. 1.5 ms) ≈ 16 %. Ties at
  // every tick are the timer's, not an atom: the straggler families' jitter cannot shrink below
  // the tick's rounding, tick/√12 = 0.29 ms, a relative tick/(√12·median) of about 2 % (fit.h:
  // jitter_floor), so random_stragglers keeps a jitter and shifted_exponential still ranks first.
  // (This test pinned random_stragglers' q = 1 while its fit needed an exact atom; the fit is now
  // the mixture the model defines, and the ties at one tick must not become that atom.)
  DurationTrace trace =
      draw("[timing]\nmodel = \"shifted_exponential\"\nlambda = 0.5\ntau = 0.01\n");
  std::vector<double> all;
  for (std::vector<double>& rows : trace.rows) {
    for (double& x : rows) x = std::round(x * 1000) / 1000;
    all.insert(all.end(), rows.begin(), rows.end());
  }
  std::nth_element(all.begin(), all.begin() + all.size() / 2, all.end());
  const double floor = 0.001 / (std::sqrt(12.0) * all[all.size() / 2]);
  const TraceFit fit = fit_trace(trace);
  EXPECT_EQ(fit.best().family, TimingFamily::kShiftedExponential) << ranking_text(fit);
  for (TauScope scope : {TauScope::kShared, TauScope::kPerWorker}) {
    EXPECT_GE(pooled(fit, TimingFamily::kRandomStragglers, scope).jitter, floor * (1 - 1e-12))
        << ranking_text(fit);
  }
}

TEST(FitTimingModels, TrimodalRowsFitNoModel) {
  // Every worker cycles through three speeds, 1 s, 2 s and 3 s, each with a small exponential
  // jitter. (This test had two speeds; persistent_stragglers describes a worker that alternates
  // between two speeds, p_slow = p_recover = 1, so it needs three.) No family has three modes: a
  // law with two modes of jitter σ leaves one of the three jumps of 1/3 in the empirical CDF to be
  // crossed by a smooth ramp or missed, so the best one's KS distance is at least about 1/6, far
  // above kKsCritical/√N = 0.022; 0.1 leaves room for the jitter's smoothing.
  DurationTrace trace;
  trace.rows.resize(kWorkers);
  for (int i = 0; i < kWorkers; ++i) {
    Rng rng(kSeed, "duration", i);
    for (int j = 0; j < kRows; ++j) trace.rows[i].push_back(1.0 + j % 3 + rng.exponential(0.01));
  }
  const TraceFit fit = fit_trace(trace);
  EXPECT_FALSE(fit.adequate()) << ranking_text(fit);
  EXPECT_GT(fit.best().ks, 0.1) << ranking_text(fit);
  EXPECT_FALSE(fit.persistence.persistent);  // the workers are alike
}

TEST(FitTimingModels, KsDistanceOfOneWorker) {
  // A fitted exponential with τ = 1 against rows at its quartiles 0.25, 0.5, 0.75: the empirical
  // CDF jumps by 1/3 where F = 1/4, 1/2, 3/4; the distance is at the first and last jumps,
  // |1/4 − 0| = |3/4 − 1| = 1/4.
  ModelFit e;
  e.family = TimingFamily::kExponential;
  e.fits = true;
  e.tau = {1.0};
  std::vector<double> rows;
  for (double p : {0.25, 0.5, 0.75}) rows.push_back(-std::log(1 - p));
  EXPECT_NEAR(ks_distance(e, 0, rows), 0.25, 1e-12);
}

// ---- The trace reader. ----

// The message of the Error that reading `content` throws ("" if none).
std::string read_error(const std::string& content) {
  testing::TempDir dir;
  testing::write_text(dir.file("t.csv"), content);
  try {
    read_duration_trace(dir.file("t.csv"));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// `rows` rows for each of `workers` workers, with the header.
std::string trace_text(int workers, int rows) {
  std::string text = "worker,duration\n";
  for (int j = 0; j < rows; ++j) {
    for (int i = 0; i < workers; ++i) text += fmt::format("{},{}\n", i, 1.0 + 0.1 * j + i);
  }
  return text;
}

TEST(ReadDurationTrace, ReadsWorkersInFileOrder) {
  testing::TempDir dir;
  testing::write_text(dir.file("t.csv"), " worker , duration\r\n\n" + trace_text(2, 10).substr(16));
  const DurationTrace t = read_duration_trace(dir.file("t.csv"));
  ASSERT_EQ(t.workers(), 2);
  EXPECT_EQ(t.size(), 20u);
  EXPECT_DOUBLE_EQ(t.rows[1][0], 2.0);
  EXPECT_DOUBLE_EQ(t.rows[1][9], 2.9);
}

TEST(ReadDurationTrace, BadFilesAreErrorsNamingFileAndLine) {
  EXPECT_NE(read_error("worker,time\n0,1\n").find("t.csv:1: expected the header"),
            std::string::npos);
  EXPECT_NE(read_error("").find("expected the header"), std::string::npos);
  EXPECT_NE(read_error(trace_text(1, 10) + "0,-1\n").find("t.csv:12: expected a duration"),
            std::string::npos);
  EXPECT_NE(read_error(trace_text(1, 10) + "0,0\n").find("t.csv:12: expected a duration"),
            std::string::npos);
  EXPECT_NE(read_error(trace_text(1, 10) + "x,1\n").find("t.csv:12: expected a worker index"),
            std::string::npos);
  EXPECT_NE(read_error(trace_text(2, 9)).find("worker 0 has 9 rows; pacer fit needs at least 10"),
            std::string::npos);
  // Worker 1 has no rows when the file names workers 0 and 2.
  std::string gap = "worker,duration\n";
  for (int j = 0; j < 10; ++j) gap += fmt::format("0,1.{}\n2,2.{}\n", j, j);
  EXPECT_NE(read_error(gap).find("worker 1 has 0 rows"), std::string::npos) << read_error(gap);
  EXPECT_EQ(read_error(trace_text(2, 10)), "");
  try {
    read_duration_trace("/nonexistent/t.csv");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/t.csv: cannot open"), std::string::npos);
  }
}

}  // namespace
}  // namespace pacer
