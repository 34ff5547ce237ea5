// GC-FR, GC-CR, IS-GC, PGC-FR and PGC-CR against their definitions (DESIGN.md section 3.1).
//
// Full runs use FakeCluster (sync_test_harness.h), a minimal virtual-time engine.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "pacer/coding/decoder.h"
#include "pacer/coding/placement.h"
#include "pacer/core/error.h"
#include "pacer/data/partition.h"
#include "pacer/data/synthetic.h"
#include "pacer/method/coded_worker.h"
#include "pacer/method/method.h"
#include "pacer/model/eigen_models.h"
#include "sync_test_harness.h"

namespace pacer {
namespace {

using testing::expect_same_trajectory;
using testing::FakeCluster;
using testing::gradient_descent;
using testing::least_squares;
using testing::method_toml;
using testing::run_method;
using testing::RunResult;
using testing::timing;

// ---- exact schemes reproduce gradient descent ----

TEST(ExactCodedMethods, FollowGradientDescentWhateverTheStragglers) {
  const int n = 12;
  const int64_t steps = 30;
  const double lr = 0.05;
  auto objective = least_squares(n, 240, 6, /*batch=*/0);
  const std::vector<Vec> reference = gradient_descent(*objective, steps, lr);
  const std::string timings[] = {
      "[timing]\nmodel = \"exponential\"\n",
      "[timing]\nmodel = \"random_stragglers\"\nq = 0.3\ndelay_mean = 2.0\n",
  };
  for (const std::string& t : timings) {
    auto model = timing(t, n);
    expect_same_trajectory(
        run_method("[method]\nname = \"dgd\"\n", objective, *model, steps, lr).trajectory,
        reference, 1e-9, "dgd " + t);
    for (int s : {1, 2, 3}) {
      for (const char* name : {"gc-fr", "gc-cr", "is-gc-fr"}) {
        RunResult r = run_method(method_toml(name, s), objective, *model, steps, lr);
        expect_same_trajectory(r.trajectory, reference, 1e-9,
                               std::string(name) + " s=" + std::to_string(s) + " " + t);
        if (std::string(name) == "gc-cr") {
          // The stragglers varied: many responder sets, each decoded exactly.
          EXPECT_GT(r.summary["decode"]["responder_sets_decoded"].get<int64_t>(), 5);
        }
      }
    }
  }
}

TEST(ExactCodedMethods, CancelPolicyStillFollowsGradientDescent) {
  const int n = 6;
  auto objective = least_squares(n, 120, 4, 0);
  auto model = timing("[timing]\nmodel = \"exponential\"\n", n);
  const std::vector<Vec> reference = gradient_descent(*objective, 20, 0.05);
  for (const char* name : {"gc-fr", "gc-cr"}) {
    RunResult r = run_method(method_toml(name, 1, "straggler_policy = \"cancel\"\n"), objective,
                             *model, 20, 0.05);
    expect_same_trajectory(r.trajectory, reference, 1e-9, name);
  }
}

TEST(GcFr, ClosesOnOneMessagePerGroup) {
  const int n = 6;  // s = 1: groups {0,1}, {2,3}, {4,5}
  auto objective = least_squares(n, 60, 3, 0);
  // Worker 0 is the fastest, 1 the slowest of group 0; group 2's first is worker 4 (τ = 3).
  auto model = timing("[timing]\nmodel = \"fixed\"\ntau = [1.0, 9.0, 2.0, 2.5, 3.0, 8.0]\n", n);
  RunResult r = run_method(method_toml("gc-fr", 1), objective, *model, 5, 0.05);
  // c = 2 units of τ = 3 for worker 4: the first step closes at 6 s with 3 responders.
  EXPECT_DOUBLE_EQ(r.records[0].time, 6.0);
  for (const UpdateRecord& record : r.records) EXPECT_EQ(record.responders, 3);
  EXPECT_EQ(r.summary["decode"]["rule"], "first_per_group");
  EXPECT_EQ(r.summary["decode"]["groups"], 3);
  std::vector<int64_t> not_used = r.summary["steps_not_used_per_worker"];
  EXPECT_EQ(not_used, (std::vector<int64_t>{0, 5, 0, 5, 0, 5}));
}

TEST(GcCr, SummaryReportsTheEncodingAndTheDecode) {
  const int n = 12;
  auto objective = least_squares(n, 120, 3, 0);
  auto model = timing("[timing]\nmodel = \"exponential\"\n", n);
  RunResult r = run_method(method_toml("gc-cr", 3), objective, *model, 20, 0.05);
  const nlohmann::json& d = r.summary["decode"];
  EXPECT_EQ(d["decoder"], "exact");
  EXPECT_EQ(r.summary["s"], 3);
  EXPECT_EQ(r.summary["c"], 4);
  const nlohmann::json& e = d["encoding"];
  EXPECT_TRUE(e["exhaustive"].get<bool>());
  EXPECT_EQ(e["responder_sets_evaluated"], 220);
  EXPECT_EQ(e["trials"], 20);
  EXPECT_LE(e["worst_max_abs_a"].get<double>(), e["worst_max_abs_a_best_of_trials"].get<double>());
  EXPECT_LE(e["worst_max_abs_a_best_of_trials"].get<double>(),
            e["worst_max_abs_a_single_draw"].get<double>());
  EXPECT_LE(d["max_abs_a_observed"].get<double>(), e["worst_max_abs_a"].get<double>() * 1.000001);
  EXPECT_GT(d["max_abs_a_observed"].get<double>(), 0.0);
  EXPECT_LT(d["max_decode_residual_observed"].get<double>(), 1e-9);
  EXPECT_GE(d["responder_sets_decoded"].get<int64_t>(), 1);
  for (const UpdateRecord& record : r.records) EXPECT_EQ(record.responders, n - 3);
}

// ---- IS-GC ----

TEST(IsGc, CyclicStepIsTheMeanOfTheCoveredPartitions) {
  const int n = 7, s = 2;  // c = 3: at most 2 disjoint windows, covering 6 of the 7 partitions
  auto objective = least_squares(n, 70, 3, 0);
  auto model = timing("[timing]\nmodel = \"fixed\"\ntau = [1, 2, 3, 7, 4, 5, 6]\n", n);
  const double lr = 0.1;
  RunResult r = run_method(method_toml("is-gc-cr", s), objective, *model, 1, lr);
  // Fastest n − s = 5: workers 0, 1, 2, 4, 5.
  Placement cr(PlacementKind::kCyclic, n, s);
  const std::vector<int> arrivals = {0, 1, 2, 4, 5};
  const std::vector<int> chosen = select_disjoint(cr, arrivals);
  ASSERT_EQ(chosen.size(), 2u);
  auto scratch = objective->make_scratch();
  Vec x0 = Vec::Zero(objective->dim()), g, sum = Vec::Zero(objective->dim());
  for (int i : chosen) {
    for (int p : cr.partitions(i)) {
      objective->full_partition_gradient(p, x0, g, *scratch);
      sum += g;
    }
  }
  const Vec expected = x0 - lr * sum / 6.0;
  EXPECT_LE((r.trajectory[0] - expected).norm(), 1e-12 * std::max(1.0, expected.norm()));
  EXPECT_EQ(r.records[0].responders, 2);
  EXPECT_EQ(r.summary["decode"]["chosen_workers_histogram"]["2"], 1);
}

TEST(IsGc, FractionalChoosesOneWorkerPerGroup) {
  const int n = 12;
  auto objective = least_squares(n, 120, 3, 0);
  auto model = timing("[timing]\nmodel = \"exponential\"\n", n);
  for (int s : {1, 2, 3}) {
    RunResult r = run_method(method_toml("is-gc-fr", s), objective, *model, 15, 0.05);
    // s missing workers cannot silence a group of s + 1, so J always has one worker per group.
    for (const UpdateRecord& record : r.records) EXPECT_EQ(record.responders, n / (s + 1));
    EXPECT_DOUBLE_EQ(r.summary["decode"]["partitions_covered_mean"].get<double>(), n);
  }
}

// ---- PGC: the pipeline, driven step by step ----

// Drives every worker of `method_toml` through steps 0..steps−1 at random models and checks the
// pipeline's definition: c units at the warm-up and one afterwards, one fresh gradient per step,
// ages 0..s, and payload = Σ_k B_ik g_{S_i[k]}(x_{version k}). Returns, per step, how many times
// each partition was evaluated across the cluster.
std::vector<std::vector<int>> drive_pipeline(const std::string& method_toml, int n, int s,
                                             int steps) {
  auto objective = least_squares(n, 10 * n, 3, 0);
  MethodSetup setup{objective, nullptr, n, 1};
  std::unique_ptr<Method> method = make_method(Config::parse(method_toml, "m.toml"), setup);
  Rng rng(9, "test-models");
  std::vector<Vec> models;
  for (int t = 0; t < steps; ++t) {
    Vec x(objective->dim());
    for (Eigen::Index j = 0; j < x.size(); ++j) x[j] = rng.normal();
    models.push_back(x);
  }
  auto scratch = objective->make_scratch();
  std::vector<std::vector<int>> evaluations(steps, std::vector<int>(n, 0));
  const int c = s + 1;
  for (int i = 0; i < n; ++i) {
    std::unique_ptr<Worker> worker = method->make_worker(i);
    auto* pipeline = dynamic_cast<PipelineWorker*>(worker.get());
    EXPECT_NE(pipeline, nullptr);
    if (!pipeline) return evaluations;
    std::vector<int64_t> previous;
    WorkerOutput out;
    for (int t = 0; t < steps; ++t) {
      const Job job{t};
      EXPECT_EQ(worker->units(job), t == 0 ? c : 1) << "worker " << i << " step " << t;
      worker->compute(job, models[t], out);
      EXPECT_EQ(static_cast<int>(out.versions.size()), c);
      if (static_cast<int>(out.versions.size()) != c) return evaluations;
      int fresh = 0;
      Vec expected = Vec::Zero(objective->dim()), g;
      for (int k = 0; k < c; ++k) {
        const int64_t age = t - out.versions[k];
        EXPECT_GE(age, 0);
        EXPECT_LE(age, s) << "worker " << i << " step " << t;
        if (out.versions[k] == t) {
          ++fresh;
          ++evaluations[t][pipeline->cache().partition(k)];
        } else {
          EXPECT_EQ(out.versions[k], previous[k]);  // untouched slots keep their version
        }
        objective->full_partition_gradient(pipeline->cache().partition(k), models[out.versions[k]],
                                           g, *scratch);
        expected += g;
      }
      EXPECT_EQ(fresh, t == 0 ? c : 1);
      if (method_toml.find("exact") == std::string::npos) {
        EXPECT_LE((out.payload - expected).norm(), 1e-12 * std::max(1.0, expected.norm()));
      }
      previous = out.versions;
    }
  }
  return evaluations;
}

TEST(Pgc, CyclicEvaluatesEveryPartitionOncePerStepAfterWarmUp) {
  for (int s : {1, 2, 3}) {
    std::vector<std::vector<int>> evaluations = drive_pipeline(method_toml("pgc-cr", s), 12, s, 9);
    for (size_t t = 1; t < evaluations.size(); ++t) {
      for (int p = 0; p < 12; ++p) EXPECT_EQ(evaluations[t][p], 1) << "s=" << s << " t=" << t;
    }
    for (int p = 0; p < 12; ++p) EXPECT_EQ(evaluations[0][p], s + 1);  // the warm-up
  }
}

TEST(Pgc, StaggeredFractionalGroupsEvaluateEachPartitionOncePerStep) {
  for (int s : {1, 2, 3}) {
    std::vector<std::vector<int>> evaluations =
        drive_pipeline(method_toml("pgc-fr", s, "stagger = true\n"), 12, s, 9);
    for (size_t t = 1; t < evaluations.size(); ++t) {
      for (int p = 0; p < 12; ++p) EXPECT_EQ(evaluations[t][p], 1);
    }
  }
}

// Lockstep is the default (the PGC authors' code), and stagger = false says so explicitly.
TEST(Pgc, LockstepFractionalGroupsRefreshTheSamePartition) {
  for (const std::string& extra : {std::string(), std::string("stagger = false\n")}) {
    std::vector<std::vector<int>> evaluations =
        drive_pipeline(method_toml("pgc-fr", 2, extra), 12, 2, 6);
    for (int t = 1; t < static_cast<int>(evaluations.size()); ++t) {
      for (int p = 0; p < 12; ++p) {
        EXPECT_EQ(evaluations[t][p], p % 3 == t % 3 ? 3 : 0) << extra << " t=" << t;
      }
    }
  }
}

TEST(Pgc, ExactDecoderWorkersStillRefreshOnePartitionPerStep) {
  std::vector<std::vector<int>> evaluations =
      drive_pipeline(method_toml("pgc-cr", 2, "decoder = \"exact\"\ncode_trials = 2\n"), 12, 2, 6);
  ASSERT_EQ(evaluations.size(), 6u);
  for (size_t t = 1; t < evaluations.size(); ++t) {
    for (int p = 0; p < 12; ++p) EXPECT_EQ(evaluations[t][p], 1) << "t=" << t;
  }
}

// ---- PGC: full runs ----

TEST(Pgc, FirstStepIsExactOrRelaxedGradient) {
  const int n = 12, s = 2;
  const double lr = 0.1;
  auto objective = least_squares(n, 120, 3, 0);
  // Distinct speeds: the fastest n − s responders are workers 0..9.
  std::string taus = "[";
  for (int i = 0; i < n; ++i) taus += std::to_string(1.0 + i) + (i + 1 < n ? ", " : "]");
  auto model = timing("[timing]\nmodel = \"fixed\"\ntau = " + taus + "\n", n);
  const std::vector<Vec> gd = gradient_descent(*objective, 1, lr);
  // After the warm-up every cache is fresh at x_0: exact decoders give the exact gradient.
  for (const std::string& toml :
       {method_toml("pgc-fr", s), method_toml("pgc-fr", s, "group_average = true\n"),
        method_toml("pgc-cr", s, "decoder = \"exact\"\n")}) {
    RunResult r = run_method(toml, objective, *model, 1, lr);
    expect_same_trajectory(r.trajectory, gd, 1e-9, toml);
  }
  // Relaxed: ĝ_0 = (1/n) Σ_p μ h_p(F) g_p(x_0) with F = {0..9}.
  RunResult r = run_method(method_toml("pgc-cr", s), objective, *model, 1, lr);
  Placement cr(PlacementKind::kCyclic, n, s);
  std::vector<bool> f(n, true);
  f[10] = f[11] = false;
  const std::vector<double> coefficient = relaxed_partition_coefficients(cr, f);
  auto scratch = objective->make_scratch();
  Vec x0 = Vec::Zero(objective->dim()), g, direction = Vec::Zero(objective->dim());
  for (int p = 0; p < n; ++p) {
    objective->full_partition_gradient(p, x0, g, *scratch);
    direction += coefficient[p] * g / n;
  }
  const Vec expected = x0 - lr * direction;
  EXPECT_LE((r.trajectory[0] - expected).norm(), 1e-12 * std::max(1.0, expected.norm()));
  EXPECT_DOUBLE_EQ(r.summary["decode"]["mu"].get<double>(), relaxed_mu(n, s));
  EXPECT_DOUBLE_EQ(r.summary["decode"]["partition_coefficient_max_observed"].get<double>(),
                   12.0 / 10.0);
}

// ---- PGC-CR: adaptive (frequency-aware) relaxed decoding ----

// Lawson–Hanson's answer satisfies the Kuhn–Tucker conditions of min_{x>=0} ‖Ax − b‖²: x >= 0,
// and the gradient Aᵀ(Ax − b) is 0 on x's support and >= 0 off it (to rounding: a multiple of the
// unit roundoff times the sizes involved, 1e3·ε·‖A‖·(‖A‖‖x‖ + ‖b‖)).
TEST(NonnegativeLeastSquares, MeetsTheOptimalityConditions) {
  Rng rng(11, "nnls");
  for (int trial = 0; trial < 50; ++trial) {
    const int cols = 2 + trial % 5, rows = cols + trial % 7;  // full column rank (a.s.)
    Eigen::MatrixXd a(rows, cols);
    Eigen::VectorXd b(rows);
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) a(i, j) = rng.normal();
      b[i] = rng.normal();
    }
    const Eigen::VectorXd x = nonnegative_least_squares(a, b);
    const Eigen::VectorXd gradient = a.transpose() * (a * x - b);
    const double tolerance =
        1e3 * std::numeric_limits<double>::epsilon() * a.norm() * (a.norm() * x.norm() + b.norm());
    for (int j = 0; j < cols; ++j) {
      EXPECT_GE(x[j], 0) << trial;
      if (x[j] > 0) {
        EXPECT_LE(std::abs(gradient[j]), tolerance) << trial << " x" << j;
      } else {
        EXPECT_GE(gradient[j], -tolerance) << trial << " x" << j;
      }
    }
  }
  // A = I: the projection of b onto the orthant.
  const Eigen::VectorXd b = (Eigen::VectorXd(3) << 2.0, -1.0, 0.5).finished();
  const Eigen::VectorXd x = nonnegative_least_squares(Eigen::MatrixXd::Identity(3, 3), b);
  EXPECT_DOUBLE_EQ(x[0], 2.0);
  EXPECT_EQ(x[1], 0.0);
  EXPECT_DOUBLE_EQ(x[2], 0.5);
}

// Uniform rates (n − s)/n: μ1 makes the objective 0, so the weights are μ (to rounding) and the
// bias vanishes.
TEST(AdaptiveDecoder, UniformRatesGiveRelaxedMu) {
  for (auto [n, s] : {std::pair{12, 1}, {12, 2}, {12, 3}, {7, 2}, {10, 4}, {120, 2}}) {
    const Placement cr(PlacementKind::kCyclic, n, s);
    const std::vector<double> rates(n, static_cast<double>(n - s) / n);
    const AdaptiveRelaxedWeights w = adaptive_relaxed_weights(cr, rates);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(w.weights[i], relaxed_mu(n, s), 1e-12) << n << " " << s;
    EXPECT_LE(w.bias, 1e-12) << n << " " << s;
  }
}

// The same F every step (ρ ∈ {0, 1}): for every pair of absent workers at n = 12, s = 2 a
// non-negative exact solution exists (one of the s + 1 disjoint window covers misses both), so
// the remaining bias is the ε term's, O(ε) — bounded here by 100·ε — and the coefficient of every
// partition under that F is the expected one.
TEST(AdaptiveDecoder, PersistentRespondersGetUnitCoefficients) {
  const int n = 12, s = 2;
  const Placement cr(PlacementKind::kCyclic, n, s);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      std::vector<double> rates(n, 1.0);
      rates[a] = rates[b] = 0.0;
      const AdaptiveRelaxedWeights w = adaptive_relaxed_weights(cr, rates);
      EXPECT_LE(w.bias, 100 * kAdaptiveRegularization) << a << "," << b;
      for (int p = 0; p < n; ++p) {
        double coefficient = 0;
        for (int i : cr.holders(p)) coefficient += rates[i] * w.weights[i];
        EXPECT_NEAR(coefficient, 1.0, 100 * kAdaptiveRegularization) << a << "," << b << " p" << p;
      }
      for (double wi : w.weights) EXPECT_GE(wi, 0.0);
    }
  }
}

// Final F of a run's last iterate.
double final_loss(const Objective& objective, const Vec& x) {
  auto scratch = objective.make_scratch();
  Vec g;
  return objective.full_gradient(x, g, *scratch);
}

// The case: least squares, n = 12, s = 2, fixed distinct τ (workers 10 and 11 never
// answer in time), full-batch gradients. Relaxed decoding converges to a reweighted objective's
// minimiser, adaptive decoding to F's: relative gap of final F to gradient descent's <= 1e-6
// (after 3000 steps both have converged to their fixed points, so the gap is the bias's).
TEST(AdaptiveDecoder, PersistentStragglersConvergeToGradientDescentsMinimum) {
  const int n = 12, s = 2;
  const int64_t steps = 3000;
  const double lr = 0.1;
  auto objective = least_squares(n, 240, 6, 0);
  std::string taus = "[";
  for (int i = 0; i < n; ++i) taus += std::to_string(1.0 + 0.1 * i) + (i + 1 < n ? ", " : "]");
  auto model = timing("[timing]\nmodel = \"fixed\"\ntau = " + taus + "\n", n);
  const double reference = final_loss(*objective, gradient_descent(*objective, steps, lr).back());
  auto gap = [&](const std::string& decoder) {
    RunResult r = run_method(method_toml("pgc-cr", s, "decoder = \"" + decoder + "\"\n"), objective,
                             *model, steps, lr);
    return std::abs(final_loss(*objective, r.trajectory.back()) - reference) / reference;
  };
  EXPECT_GE(gap("relaxed"), 1e-4);
  EXPECT_LE(gap("adaptive"), 1e-6);
  RunResult r =
      run_method(method_toml("pgc-cr", s, "decoder = \"adaptive\"\n"), objective, *model, 20, lr);
  const nlohmann::json& d = r.summary["decode"];
  EXPECT_EQ(d["decoder"], "adaptive");
  EXPECT_EQ(d["response_rates"][10].get<double>(), 0.0);
  EXPECT_EQ(d["response_rates"][0].get<double>(), 1.0);
  EXPECT_LE(d["remaining_bias"].get<double>(), 100 * kAdaptiveRegularization);
  // ρ is the same from step 2 on: solved before step 1 (uniform prior) and before step 2.
  EXPECT_EQ(d["solves"].get<int64_t>(), 2);
}

// I.i.d. exponential times: F is uniformly random, ρ_i → (n − s)/n and the weights → μ. With
// ρ_i = ρ(1 + δ_i), w_i = μ(1 + η_i), the linearised condition Σ_{i holds p}(δ_i + η_i) = 0 and
// the least-change choice make η minus the projection of δ onto the range of Mᵀ: |η|_∞ <= ‖δ‖_2
// <= √n·max|δ_i|. The rates' standard error after T steps is √(ρ(1−ρ)/T), so 5 standard errors
// bound max|δ_i| for all 12 workers but with probability ~1e-5; the tolerance is √n times that.
TEST(AdaptiveDecoder, RandomRespondersGiveWeightsNearMu) {
  const int n = 12, s = 2;
  const int64_t steps = 4000;
  auto objective = least_squares(n, 120, 3, 0);
  auto model = timing("[timing]\nmodel = \"exponential\"\n", n);
  RunResult r = run_method(method_toml("pgc-cr", s, "decoder = \"adaptive\"\n"), objective, *model,
                           steps, 0.05);
  const nlohmann::json& d = r.summary["decode"];
  const double rho = static_cast<double>(n - s) / n, mu = relaxed_mu(n, s);
  const double delta = 5 * std::sqrt(rho * (1 - rho) / steps) / rho;
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(d["response_rates"][i].get<double>(), rho, rho * delta) << i;
    EXPECT_NEAR(d["weights"][i].get<double>(), mu, mu * std::sqrt(n) * delta) << i;
  }
  EXPECT_LE(d["remaining_bias"].get<double>(), 1e-6);
}

TEST(Pgc, StalenessStaysWithinSWhenEveryWorkerAnswersEveryStep) {
  const int n = 12;
  auto objective = least_squares(n, 120, 3, 0);
  auto model = timing("[timing]\nmodel = \"fixed\"\n", n);
  for (int s : {1, 2, 3}) {
    for (const char* name : {"pgc-cr", "pgc-fr"}) {
      RunResult r = run_method(method_toml(name, s), objective, *model, 20, 0.05);
      int64_t counted = 0;
      for (const auto& [age, count] : r.summary["staleness_histogram"].items()) {
        EXPECT_LE(std::stoi(age), s) << name << " s=" << s;
        counted += count.get<int64_t>();
      }
      EXPECT_GT(counted, 0);
      // Every histogram age 0..s occurs once the pipeline runs.
      EXPECT_EQ(r.summary["staleness_histogram"].size(), static_cast<size_t>(s + 1));
    }
  }
}

TEST(Pgc, CostsOneUnitPerWorkerPerStepAfterWarmUp) {
  const int n = 12, s = 3;
  auto objective = least_squares(n, 120, 3, 0);
  auto model = timing("[timing]\nmodel = \"fixed\"\n", n);
  const int64_t steps = 10;
  // Equal speeds, so every worker finishes every job: n·c warm-up units, then n per step (the
  // last step's stragglers included). GC costs c per worker per step.
  RunResult pgc = run_method(method_toml("pgc-cr", s), objective, *model, steps, 0.05);
  EXPECT_DOUBLE_EQ(pgc.records.back().work_units, n * (s + 1) + n * (steps - 1) - s);
  RunResult gc = run_method(method_toml("gc-cr", s), objective, *model, steps, 0.05);
  EXPECT_DOUBLE_EQ(gc.records.back().work_units, (n * steps - s) * (s + 1.0));
}

TEST(Pgc, RunsAreDeterministicWithMinibatches) {
  const int n = 6;
  auto objective = least_squares(n, 120, 3, /*batch=*/4);
  auto model = timing("[timing]\nmodel = \"random_stragglers\"\nk = 1\n", n);
  for (const char* name : {"pgc-cr", "pgc-fr", "gc-cr", "is-gc-cr"}) {
    RunResult a = run_method(method_toml(name, 1), objective, *model, 25, 0.05, 4);
    RunResult b = run_method(method_toml(name, 1), objective, *model, 25, 0.05, 4);
    ASSERT_EQ(a.trajectory.size(), b.trajectory.size());
    for (size_t t = 0; t < a.trajectory.size(); ++t) {
      ASSERT_EQ(a.trajectory[t], b.trajectory[t]) << name << " step " << t;
    }
  }
}

// ---- configuration errors ----

std::string error_of(const std::string& toml, int workers) {
  auto objective = least_squares(workers, 10 * workers, 2, 0);
  MethodSetup setup{objective, nullptr, workers, 1};
  try {
    make_method(Config::parse(toml, "bad.toml"), setup);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CodedMethods, RefuseImpossibleParametersNamingTheKey) {
  std::string e = error_of(method_toml("gc-fr", 2), 10);
  EXPECT_NE(e.find("method.s"), std::string::npos) << e;
  EXPECT_NE(e.find("0, 1, 4, 9"), std::string::npos) << e;
  e = error_of("[method]\nname = \"pgc-fr\"\n", 9);  // default s = 1
  EXPECT_NE(e.find("0, 2, 8"), std::string::npos) << e;
  EXPECT_NE(e.find("defaults to 1"), std::string::npos) << e;
  for (const char* name : {"gc-cr", "is-gc-cr", "pgc-cr", "gc-fr", "is-gc-fr", "pgc-fr"}) {
    e = error_of(method_toml(name, 6), 6);  // s >= n, i.e. c > n
    EXPECT_NE(e.find("method.s"), std::string::npos) << name << ": " << e;
    EXPECT_NE(e.find("s < workers"), std::string::npos) << e;
    e = error_of(method_toml(name, -1), 6);
    EXPECT_NE(e.find("method.s"), std::string::npos) << name << ": " << e;
  }
  e = error_of(method_toml("pgc-cr", 1, "decoder = \"magic\"\n"), 6);
  EXPECT_NE(e.find("method.decoder"), std::string::npos) << e;
  e = error_of(method_toml("gc-cr", 1, "code_trials = 0\n"), 6);
  EXPECT_NE(e.find("method.code_trials"), std::string::npos) << e;
  e = error_of(method_toml("gc-cr", 1, "code_refine = -1\n"), 6);
  EXPECT_NE(e.find("method.code_refine"), std::string::npos) << e;
  e = error_of(method_toml("pgc-fr", 1, "stagger = 3\n"), 6);
  EXPECT_NE(e.find("method.stagger"), std::string::npos) << e;
  EXPECT_EQ(error_of(method_toml("gc-fr", 4), 10), "");
}

TEST(CodedMethods, AreRegistered) {
  std::vector<std::string> names = method_names();
  for (const char* name : {"gc-fr", "gc-cr", "is-gc-fr", "is-gc-cr", "pgc-fr", "pgc-cr"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

}  // namespace
}  // namespace pacer
