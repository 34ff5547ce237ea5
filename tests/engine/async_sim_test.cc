// The asynchronous methods on the simulator (DESIGN.md sections 3.2 and 4), on the closed-form
// problem F_i(x) = ½‖x − b_i‖² of method/async_test_util.h, where argmin F (the mean of the b_i)
// and argmin F̃ (their 1/τ_i-weighted mean) are known.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "method/async_test_util.h"
#include "pacer/engine/sim/simulator.h"
#include "pacer/method/method.h"
#include "pacer/timing/timing_model.h"

namespace pacer {
namespace {

using testing::Quadratic;
using testing::RecordingMonitor;

constexpr const char* kHarmonicFixed =
    "[timing]\nmodel = \"fixed\"\nprofile = \"harmonic\"\ntau = 1.0\n";
constexpr const char* kHarmonicExponential =
    "[timing]\nmodel = \"exponential\"\nprofile = \"harmonic\"\ntau = 1.0\n";

struct AsyncRun {
  Vec x;
  nlohmann::json summary;
  std::vector<UpdateRecord> records;
  std::vector<Vec> models;
  std::vector<double> tau;  // the timing model's means
};

// Runs `method_toml` on q for max_steps updates from x0 with stepsize lr.
AsyncRun simulate(const Quadratic& q, const std::string& method_toml,
                  const std::string& timing_toml, double lr, int64_t max_steps, const Vec& x0,
                  uint64_t seed = 1) {
  const int n = static_cast<int>(q.centers.size());
  std::unique_ptr<TimingModel> timing =
      make_timing_model(Config::parse(timing_toml, "timing.toml"), n, seed);
  std::unique_ptr<Method> method = make_method(Config::parse(method_toml, "method.toml"),
                                               MethodSetup{q.objective, timing.get(), n, seed});
  RecordingMonitor monitor(max_steps);
  OptimizerOptions options;
  options.lr = lr;
  Trainer trainer(x0, Optimizer(options), monitor);
  std::unique_ptr<TrainingMaster> master = method->make_master(trainer);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < n; ++i) workers.push_back(method->make_worker(i));
  Simulator simulator(*timing, CommModel{}, seed);
  simulator.run(*master, workers);

  AsyncRun run;
  run.x = trainer.x();
  master->summarize(run.summary);
  nlohmann::json engine;
  simulator.stats().to_json(engine);
  run.summary["engine"] = engine;
  run.records = std::move(monitor.records);
  run.models = std::move(monitor.models);
  for (int i = 0; i < n; ++i) run.tau.push_back(*timing->mean_unit_time(i));
  return run;
}

std::string method(const std::string& name, const std::string& keys = "") {
  return "[method]\nname = \"" + name + "\"\n" + keys;
}

Vec vec2(double a, double b) { return (Vec(2) << a, b).finished(); }

int64_t count_at_least(const nlohmann::json& summary, int64_t threshold) {
  int64_t total = 0;
  for (const auto& [delay, count] : summary["delay_histogram"].items()) {
    if (std::stoll(delay) >= threshold) total += count.get<int64_t>();
  }
  return total;
}

int64_t sum_of(const nlohmann::json& values) {
  int64_t total = 0;
  for (int64_t v : values.get<std::vector<int64_t>>()) total += v;
  return total;
}

// Four workers with τ = {1, 1, 2, 2}: the fast pair is centred at (−3, 1), the slow pair at
// (3, −1). argmin F = (0, 0); argmin F̃ = (2/3)(−3, 1) + (1/3)(3, −1) = (−1, 1/3).
class HarmonicQuadratic : public ::testing::Test {
 protected:
  Quadratic q = testing::two_group_quadratic(4, vec2(-3, 1), vec2(3, -1), /*batch=*/0);
  Vec argmin_f = q.mean_center();
  Vec argmin_tilde = q.weighted_center({1.0, 1.0, 0.5, 0.5});
};

TEST_F(HarmonicQuadratic, MinimisersAreFarApart) {
  EXPECT_LE(argmin_f.norm(), 1e-15);
  EXPECT_LE((argmin_tilde - vec2(-1, 1.0 / 3.0)).norm(), 1e-15);
  EXPECT_GT((argmin_f - argmin_tilde).norm(), 1.0);
}

TEST_F(HarmonicQuadratic, VanillaAsgdSettlesAtArgminOfFTilde) {
  AsyncRun run = simulate(q, method("asgd"), kHarmonicFixed, 0.01, 6000, vec2(4, 4));
  EXPECT_LT((run.x - argmin_tilde).norm(), 0.01) << run.x.transpose();  // measured 3e-4
  EXPECT_GT((run.x - argmin_f).norm(), 1.0);
}

TEST_F(HarmonicQuadratic, RescaledAsgdSettlesAtArgminOfF) {
  for (const char* tau : {"model", "estimate"}) {
    AsyncRun run = simulate(q, method("rescaled-asgd", "tau = \"" + std::string(tau) + "\"\n"),
                            kHarmonicFixed, 0.06, 6000, vec2(4, 4));
    EXPECT_LT((run.x - argmin_f).norm(), 0.02) << tau << ": " << run.x.transpose();  // 7.5e-3
    EXPECT_GT((run.x - argmin_tilde).norm(), 1.0) << tau;
  }
}

TEST_F(HarmonicQuadratic, MaleniaAndRingleaderSettleAtArgminOfF) {
  for (const char* name : {"malenia", "ringleader"}) {
    AsyncRun run = simulate(q, method(name), kHarmonicFixed, 0.1, 3000, vec2(4, 4));
    EXPECT_LT((run.x - argmin_f).norm(), 1e-6) << name << ": " << run.x.transpose();
  }
}

// With S = n and full-batch gradients every Malenia round averages one exact ∇f_i per worker at
// x_k (a fast worker's repeats are the same vector), so each update is a gradient-descent step on
// F.
TEST_F(HarmonicQuadratic, MaleniaWithSEqualNAndFullGradientsIsGradientDescent) {
  const double lr = 0.3;
  AsyncRun run = simulate(q, method("malenia", "S = 4\n"), kHarmonicFixed, lr, 200, vec2(4, -7));
  ASSERT_EQ(run.models.size(), 200u);
  auto scratch = q.objective->make_scratch();
  Vec x = vec2(4, -7), gradient;
  for (size_t k = 0; k < run.models.size(); ++k) {
    q.objective->full_gradient(x, gradient, *scratch);
    x -= lr * gradient;
    ASSERT_LE((run.models[k] - x).lpNorm<Eigen::Infinity>(), 1e-12) << "update " << k;
  }
  // One round per τ_max = 2 seconds: the slow workers close every round.
  EXPECT_NEAR(run.records.back().time, 2.0 * 200, 1e-9);
}

// The online τ estimate (running mean of observed job durations) converges to the model means.
TEST(RescaledAsgdSim, OnlineTauEstimateConvergesToTheModelMeans) {
  const int n = 6;
  Quadratic q = testing::two_group_quadratic(n, vec2(-1, 1), vec2(1, 0), /*batch=*/1);
  AsyncRun run = simulate(q, method("rescaled-asgd", "tau = \"estimate\"\n"), kHarmonicExponential,
                          0.05, 40000, vec2(0, 0), 11);
  const std::vector<double> estimate = run.summary["tau"].get<std::vector<double>>();
  ASSERT_EQ(estimate.size(), static_cast<size_t>(n));
  const std::vector<int64_t> arrivals =
      run.summary["arrivals_per_worker"].get<std::vector<int64_t>>();
  for (int i = 0; i < n; ++i) {
    // Relative standard error of a mean of exponentials: 1/sqrt(count); allow 4 of them.
    const double tolerance = 4.0 / std::sqrt(static_cast<double>(arrivals[i]));
    EXPECT_LT(tolerance, 0.1);
    EXPECT_NEAR(estimate[i] / run.tau[i], 1.0, tolerance) << "worker " << i;
  }
  // Before every worker has reported, every step is γ/n.
  EXPECT_DOUBLE_EQ(run.records.front().stepsize, 0.05 / n);
  // At the end the scales are close to those the model's means give.
  const std::vector<double> scale = run.summary["lr_scale_per_worker"].get<std::vector<double>>();
  double inverse_sum = 0;
  for (double t : run.tau) inverse_sum += 1.0 / t;
  const double tau_max = *std::max_element(run.tau.begin(), run.tau.end());
  for (int i = 0; i < n; ++i) {
    const double model_scale = run.tau[i] * (n / inverse_sum) / (n * tau_max);
    EXPECT_NEAR(scale[i] / model_scale, 1.0, 0.15) << "worker " << i;
  }
}

TEST(RingmasterSim, DiscardDropsStaleGradientsAndStopCancelsThem) {
  const int n = 6;
  const int64_t threshold = 3;
  Quadratic q = testing::two_group_quadratic(n, vec2(-1, 1), vec2(1, 0), /*batch=*/1);
  const std::string keys = "R = " + std::to_string(threshold) + "\n";

  AsyncRun discard =
      simulate(q, method("ringmaster", keys), kHarmonicExponential, 0.05, 3000, vec2(3, 3));
  const int64_t stale = count_at_least(discard.summary, threshold);
  EXPECT_GT(stale, 0);
  EXPECT_EQ(sum_of(discard.summary["gradients_discarded_per_worker"]), stale);
  for (const UpdateRecord& r : discard.records) EXPECT_LT(r.staleness, threshold);
  EXPECT_EQ(discard.summary["cancelled_jobs"], 0);

  AsyncRun stop = simulate(q, method("ringmaster", keys + "variant = \"stop\"\n"),
                           kHarmonicExponential, 0.05, 3000, vec2(3, 3));
  EXPECT_EQ(count_at_least(stop.summary, threshold), 0);
  EXPECT_EQ(sum_of(stop.summary["gradients_discarded_per_worker"]), 0);
  EXPECT_GT(stop.summary["cancelled_jobs"].get<int64_t>(), 0);
  EXPECT_EQ(sum_of(stop.summary["engine"]["jobs_cancelled_per_worker"]),
            stop.summary["cancelled_jobs"].get<int64_t>());
}

// Rennala on an engine that cancels restarts the busy workers at every round close.
TEST(RennalaSim, RoundsCloseAtSAndRestartBusyWorkers) {
  const int n = 6;
  Quadratic q = testing::two_group_quadratic(n, vec2(-1, 1), vec2(1, 0), /*batch=*/1);
  AsyncRun run = simulate(q, method("rennala", "S = 9\n"), kHarmonicFixed, 0.05, 500, vec2(3, 3));
  for (const UpdateRecord& r : run.records) {
    EXPECT_EQ(r.responders, 9);
    EXPECT_EQ(r.staleness, 0);
  }
  EXPECT_EQ(sum_of(run.summary["gradients_used_per_worker"]), 9 * 500);
  EXPECT_GT(run.summary["cancelled_jobs"].get<int64_t>(), 0);
  EXPECT_EQ(sum_of(run.summary["gradients_discarded_per_worker"]), 0);
}

// Every asynchronous method trains (stochastic gradients, random times) and a run is a pure
// function of its inputs: the same seed reproduces it bit for bit.
TEST(AsyncSim, EveryMethodConvergesAndIsDeterministic) {
  const int n = 6;
  Quadratic q = testing::two_group_quadratic(n, vec2(-1, 1), vec2(1, 0), /*batch=*/1);
  const Vec start = vec2(5, 5);
  const Vec target = q.mean_center();
  for (const std::string name : {"asgd", "rescaled-asgd", "delay-adaptive-asgd", "ringmaster",
                                 "rennala", "malenia", "ringleader"}) {
    const double lr = name == "rescaled-asgd" ? 0.1 : 0.02;
    AsyncRun a = simulate(q, method(name), kHarmonicExponential, lr, 4000, start, 5);
    AsyncRun b = simulate(q, method(name), kHarmonicExponential, lr, 4000, start, 5);
    EXPECT_TRUE(a.x.allFinite()) << name;
    EXPECT_EQ(a.x, b.x) << name;
    EXPECT_EQ(a.records.back().time, b.records.back().time) << name;
    EXPECT_EQ(a.summary, b.summary) << name;
    EXPECT_LT((a.x - target).norm(), 0.5 * (start - target).norm())
        << name << ": " << a.x.transpose();
    AsyncRun other_seed = simulate(q, method(name), kHarmonicExponential, lr, 4000, start, 6);
    EXPECT_NE(a.x, other_seed.x) << name;
  }
}

}  // namespace
}  // namespace pacer
