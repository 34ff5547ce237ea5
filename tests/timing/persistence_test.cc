// Persistent and correlated stragglers end to end at the timing layer (issue #28's acceptance):
// on a trace where 2 of 16 workers, sharing one host, are 3× slower in spells of about 50 steps,
// pacer fit ranks persistent_stragglers first and recovers its parameters, DGD's step times
// replayed by blocks of steps match the trace's own while per-worker bootstrap does not, and the
// straggler analysis names the two workers chronic; on i.i.d. hiccups it names none chronic.
//
// Tolerances are derived, never tuned (each check's derivation is beside it). kSe = 4 standard
// errors for asymptotically normal estimators (two-sided tail 6.3e-5). The seed was fixed before
// any check was run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/rng.h"
#include "pacer/timing/fit.h"
#include "pacer/timing/stragglers.h"
#include "pacer/timing/timing_model.h"
#include "pacer/timing/trace.h"
#include "test_util.h"

namespace pacer {
namespace {

constexpr uint64_t kSeed = 17;
constexpr int kWorkers = 16;
constexpr int kSteps = 2000;
constexpr double kSe = 4;
constexpr double kTau = 0.1, kSlowdown = 3, kJitter = 0.05, kPSlow = 0.01, kPRecover = 0.02;
constexpr int kSlowA = 3, kSlowB = 11;

// The cluster: workers 3 and 11 on one host whose chain turns slow with probability 0.01 per step
// and recovers with probability 0.02 (spells of 50 steps, slow a third of the time); 5 % jitter.
std::string spells_table() {
  std::vector<std::string> host, slowdown, p_slow;
  for (int i = 0; i < kWorkers; ++i) {
    const bool slow = i == kSlowA || i == kSlowB;
    host.push_back(std::to_string(i == kSlowB ? kSlowA : i));
    slowdown.push_back(slow ? "3.0" : "1.0");
    p_slow.push_back(slow ? "0.01" : "0.0");
  }
  return fmt::format(
      "[timing]\nmodel = \"persistent_stragglers\"\ntau = {}\njitter = {}\nhost = [{}]\n"
      "slowdown = [{}]\np_slow = [{}]\np_recover = {}\n",
      kTau, kJitter, fmt::join(host, ", "), fmt::join(slowdown, ", "), fmt::join(p_slow, ", "),
      kPRecover);
}

// kSteps one-unit jobs per worker drawn as the engines draw them, with their steps.
DurationTrace draw(const std::string& table) {
  const std::unique_ptr<TimingModel> model =
      make_timing_model(Config::parse(table, "t.toml"), kWorkers, kSeed);
  DurationTrace trace;
  trace.source = "synthetic";
  trace.has_steps = true;
  trace.rows.resize(kWorkers);
  trace.steps.resize(kWorkers);
  for (int i = 0; i < kWorkers; ++i) {
    Rng rng(kSeed, "duration", i);
    for (int t = 0; t < kSteps; ++t) {
      trace.rows[i].push_back(model->compute_time(i, 1.0, t, rng).total());
      trace.steps[i].push_back(t);
    }
  }
  return trace;
}

std::string trace_csv(const DurationTrace& trace) {
  std::string text = "step,worker,duration\n";
  for (int t = 0; t < kSteps; ++t) {
    for (int i = 0; i < kWorkers; ++i)
      text += fmt::format("{},{},{:.17g}\n", t, i, trace.rows[i][t]);
  }
  return text;
}

// The realised chain of a slow worker: a row above 2τ is slow (a normal row exceeds 2τ only when
// its jitter exceeds 20σ, a slow one falls below only below −6.7σ: never, in practice).
struct Chain {
  double slow = 0, normal = 0, from_slow = 0, from_normal = 0, recovered = 0, turned = 0;
};
Chain realised(const std::vector<double>& rows) {
  Chain c;
  for (size_t t = 0; t < rows.size(); ++t) {
    const bool s = rows[t] > 2 * kTau;
    (s ? c.slow : c.normal) += 1;
    if (t + 1 == rows.size()) break;
    const bool next = rows[t + 1] > 2 * kTau;
    (s ? c.from_slow : c.from_normal) += 1;
    c.recovered += s && !next;
    c.turned += !s && next;
  }
  return c;
}

const ModelFit& best_of(const TraceFit& fit) { return fit.best(); }

std::string ranking_text(const TraceFit& fit) {
  std::string text;
  for (size_t i : fit.ranking) {
    const ModelFit& m = fit.pooled[i];
    text += fmt::format("{} AIC {} KS {} {} {}\n", family_name(m.family), m.aic, m.ks, m.describe(),
                        m.note);
  }
  return text;
}

TEST(PersistentTrace, FitRanksPersistentStragglersFirstAndRecoversItsParameters) {
  const DurationTrace trace = draw(spells_table());
  const TraceFit fit = fit_trace(trace);
  ASSERT_EQ(best_of(fit).family, TimingFamily::kPersistentStragglers) << ranking_text(fit);
  const ModelFit& p = best_of(fit);
  EXPECT_EQ(p.scope, TauScope::kPerWorker);  // the slow workers' means differ (ANOVA)
  double normal_rows = 0;
  for (int i = 0; i < kWorkers; ++i) {
    const bool slow = i == kSlowA || i == kSlowB;
    EXPECT_EQ(p.p_slow[i] > 0, slow) << "worker " << i << ": " << p.describe();
    const Chain c = realised(trace.rows[i]);
    normal_rows += c.normal;
    // τ̂_i: the mean of the worker's normal rows in effect, SE τσ/√(normal rows).
    EXPECT_NEAR(p.tau[i], kTau, kSe * kTau * kJitter / std::sqrt(c.normal)) << i;
    if (!slow) continue;
    // The states are observed in effect, so the EM's estimates are the observed chain's: a
    // binomial proportion of the transitions out of each state, SE √(p(1 − p)/transitions).
    EXPECT_NEAR(p.p_recover[i], kPRecover,
                kSe * std::sqrt(kPRecover * (1 - kPRecover) / c.from_slow))
        << i;
    EXPECT_NEAR(p.p_slow[i], kPSlow, kSe * std::sqrt(kPSlow * (1 - kPSlow) / c.from_normal)) << i;
    // ŝ = (mean of slow rows) / τ̂: relative SE σ·√(1/slow + 1/normal).
    EXPECT_NEAR(p.slowdown[i], kSlowdown,
                kSe * kSlowdown * kJitter * std::sqrt(1 / c.slow + 1 / c.normal))
        << i;
  }
  // σ̂ from N normal-equivalent rows: SE σ/√(2N).
  EXPECT_NEAR(p.jitter, kJitter, kSe * kJitter / std::sqrt(2.0 * kWorkers * kSteps));
  EXPECT_EQ(p.parameters, kWorkers + 1 + 3 * 2);
}

// The trace's DGD step times (the slowest of the 16 workers at each step).
std::vector<double> trace_step_times(const DurationTrace& trace) {
  std::vector<double> out;
  for (int t = 0; t < kSteps; ++t) {
    double longest = 0;
    for (int i = 0; i < kWorkers; ++i) longest = std::max(longest, trace.rows[i][t]);
    out.push_back(longest);
  }
  return out;
}

// DGD's step times over `steps` steps of a replay: every worker's job of a step, the slowest.
std::vector<double> replayed_step_times(const TimingModel& model, int steps) {
  std::vector<Rng> rngs;
  for (int i = 0; i < kWorkers; ++i) rngs.emplace_back(kSeed, "duration", i);
  std::vector<double> out;
  for (int t = 0; t < steps; ++t) {
    double longest = 0;
    for (int i = 0; i < kWorkers; ++i) {
      longest = std::max(longest, model.compute_time(i, 1.0, t, rngs[i]).total());
    }
    out.push_back(longest);
  }
  return out;
}

// The two-sample Kolmogorov–Smirnov distance sup |F_a − F_b|.
double ks_two_sample(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d,
                 std::abs(static_cast<double>(i) / a.size() - static_cast<double>(j) / b.size()));
  }
  return d;
}

TEST(PersistentTrace, BlockReplayKeepsDgdStepTimesWhereBootstrapDoesNot) {
  const DurationTrace trace = draw(spells_table());
  testing::TempDir dir;
  testing::write_text(dir.file("t.csv"), trace_csv(trace));
  auto model = [&](const std::string& replay) {
    return make_timing_model(
        Config::parse("[timing]\nmodel = \"trace\"\nfile = \"" + dir.file("t.csv") +
                          "\"\nreplay = \"" + replay + "\"\n",
                      "t.toml"),
        kWorkers, kSeed);
  };
  const BlockLength block = automatic_block_length(trace);
  // The replay must be long enough for the blocks' own noise to stay below the test's critical
  // value ε. The replayed ECDF at x is the mean of B = R/L block ECDFs, i.i.d. in [0, 1] with the
  // trace's ECDF as their mean (circular blocks replay every step equally often), so by Hoeffding
  // and a union bound over the K + 1 values where the ECDFs change,
  // P(sup |F_R − F_K| > ε) <= 2(K + 1)·exp(−2Bε²); B >= ln(2(K + 1)/1e-6) / (2ε²) makes it 1e-6.
  // Two-sample KS at level α = 1 %: ε = √(−ln(α/2)/2)·√((K + R)/(K·R)) (the asymptotic critical
  // value; Boost 1.74 has no Kolmogorov distribution), at least the value at R = ∞.
  const double c_alpha = std::sqrt(-std::log(0.01 / 2) / 2);
  const double epsilon = c_alpha * std::sqrt(1.0 / kSteps);
  const double blocks = std::log(2 * (kSteps + 1) / 1e-6) / (2 * epsilon * epsilon);
  const int replay_steps = static_cast<int>(std::ceil(blocks)) * static_cast<int>(block.length);
  SCOPED_TRACE(fmt::format("block length {}, {} replayed steps", block.length, replay_steps));

  const std::vector<double> measured = trace_step_times(trace);
  const double critical =
      c_alpha * std::sqrt((kSteps + replay_steps) / (static_cast<double>(kSteps) * replay_steps));
  const std::vector<double> by_block = replayed_step_times(*model("block"), replay_steps);
  EXPECT_LT(ks_two_sample(measured, by_block), critical);
  // Bootstrap draws workers 3 and 11 independently: a step is slow when either is, about
  // 1 − (2/3)² = 5/9 of the steps instead of 1/3, a distance of about 0.2, far above ε.
  const std::vector<double> by_worker = replayed_step_times(*model("bootstrap"), replay_steps);
  EXPECT_GT(ks_two_sample(measured, by_worker), critical);
}

TEST(PersistentTrace, StragglerAnalysisNamesTheSlowWorkersChronic) {
  const DurationTrace trace = draw(spells_table());
  const StragglerAnalysis a = analyze_stragglers(trace);
  EXPECT_EQ(a.chronic(), (std::vector<int>{kSlowA, kSlowB}));
  for (int i : {kSlowA, kSlowB}) {
    // Their slow rows are 3τ(1 + σZ) against M ≈ τ: the median ratio is 3 within the jitter's
    // spread of the median (σ, a generous bound on the error of a median of hundreds of rows).
    EXPECT_NEAR(a.workers[i].slowdown, kSlowdown, kSlowdown * kJitter) << i;
    // Without hiccups the slow rows (above 1.5 M) are exactly the slow-state rows (above 2τ), so
    // the spells are the chain's own.
    double slow = 0, spells = 0;
    for (int t = 0; t < kSteps; ++t) {
      const bool s = trace.rows[i][t] > 2 * kTau;
      slow += s;
      spells += s && (t == 0 || trace.rows[i][t - 1] <= 2 * kTau);
    }
    EXPECT_EQ(a.workers[i].slow_spells, spells) << i;
    EXPECT_DOUBLE_EQ(a.workers[i].mean_spell, slow / spells) << i;
  }
  // The two share a host: every slow step has both, so co-occurrence is their slow share (about
  // 1/3), far above the (1/3)² of independent workers.
  EXPECT_GT(a.co_occurrence, 2 * a.co_occurrence_independent);
  // The top two by mean job time are the two.
  std::vector<int> top = a.slowest(2);
  std::sort(top.begin(), top.end());
  EXPECT_EQ(top, (std::vector<int>{kSlowA, kSlowB}));
}

TEST(PersistentTrace, IidHiccupsAreNamedNoneChronic) {
  // 4 % of jobs hiccup by 1–2 s (an Exp(1.5 s) delay) on τ = 0.1 s: every worker has slow rows,
  // none in spells. Under no persistence the spell test names a worker chronic with probability
  // below kChronicLevel / n each, kChronicLevel = 1 % for all 16 together.
  const StragglerAnalysis a = analyze_stragglers(
      draw("[timing]\nmodel = \"random_stragglers\"\ntau = 0.1\nq = 0.04\ndelay_mean = 1.5\n"));
  EXPECT_TRUE(a.chronic().empty());
  for (const WorkerStragglers& w : a.workers) {
    EXPECT_EQ(w.kind, StragglerKind::kOneOff) << w.worker;
    // Independent slow rows (p ≈ 0.04) come in spells of mean 1/(1 − p) ≈ 1.04 rows; 1.5 is
    // more than ten standard errors of a mean over about 80 spells away.
    EXPECT_LT(w.mean_spell, 1.5) << w.worker;
  }
}

TEST(PersistentTrace, FitOfIidHiccupsIsAMixtureNotQOne) {
  // The case: random hiccups on 4 % of jobs, with a 5 % jitter on every job (no atom).
  // random_stragglers' fit is the mixture it defines: q̂ a proportion of N = 32000 rows, SE
  // √(q(1 − q)/N), plus the rows a 5 % jitter cannot tell from a delay (a delay below a few σ·τ
  // = a few ms, probability about 3·0.005/1.5 = 1 % of the delays), within kSe SE.
  const DurationTrace trace = draw(
      "[timing]\nmodel = \"random_stragglers\"\ntau = 0.1\nq = 0.04\ndelay_mean = 1.5\n"
      "jitter = 0.05\n");
  const TraceFit fit = fit_trace(trace);
  EXPECT_EQ(best_of(fit).family, TimingFamily::kRandomStragglers) << ranking_text(fit);
  const ModelFit* rs = nullptr;
  for (const ModelFit& m : fit.pooled) {
    if (m.family == TimingFamily::kRandomStragglers && m.scope == fit.scope) rs = &m;
  }
  ASSERT_NE(rs, nullptr);
  const double n = kWorkers * kSteps;
  EXPECT_NEAR(rs->q, 0.04, kSe * std::sqrt(0.04 * 0.96 / n) + 0.01 * 0.04);
  // delay_mean̂: the mean of about qN delays, SE m/√(qN).
  EXPECT_NEAR(rs->delay_mean, 1.5, kSe * 1.5 / std::sqrt(0.04 * n));
  EXPECT_NEAR(rs->jitter, kJitter, kSe * kJitter / std::sqrt(2 * 0.96 * n));
}

}  // namespace
}  // namespace pacer
