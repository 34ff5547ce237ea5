// The asynchronous methods' rules (DESIGN.md section 3.2), driven arrival by arrival through a
// scripted Cluster: every test decides which worker answers next and what it sends, so each
// rule is checked against its definition without an engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "method/async_test_util.h"
#include "pacer/core/error.h"
#include "pacer/core/rng.h"
#include "pacer/method/async_master.h"
#include "pacer/method/method.h"
#include "pacer/timing/timing_model.h"

namespace pacer {
namespace {

using testing::Quadratic;
using testing::RecordingMonitor;

constexpr double kLr = 0.1;

// A Cluster whose replies the test delivers by hand.
class ScriptedCluster : public Cluster {
 public:
  ScriptedCluster(int workers, bool can_cancel)
      : jobs_(workers), models_(workers), busy_(workers, false), can_cancel_(can_cancel) {}

  int num_workers() const override { return static_cast<int>(busy_.size()); }
  double now() const override { return now_; }
  void assign(int worker, const Job& job, const Vec& x) override {
    ASSERT_FALSE(busy_[worker]) << "worker " << worker << " assigned while busy";
    busy_[worker] = true;
    jobs_[worker] = job;
    models_[worker] = x;
    ++assignments;
  }
  bool busy(int worker) const override { return busy_[worker]; }
  bool can_cancel() const override { return can_cancel_; }
  void cancel(int worker) override {
    ASSERT_TRUE(can_cancel_);
    ASSERT_TRUE(busy_[worker]);
    busy_[worker] = false;
    ++cancellations;
  }
  bool alive(int worker) const override { return !lost_.contains(worker); }
  void set_timer(double /*time*/) override { ADD_FAILURE() << "no asynchronous master sets one"; }

  // Worker `worker` is lost: its job is dropped and the master told.
  void lose(Master& master, int worker) {
    lost_.insert(worker);
    busy_[worker] = false;
    master.on_lost(worker, *this);
  }
  // A lost worker comes back, idle.
  void rejoin(Master& master, int worker) {
    lost_.erase(worker);
    master.on_rejoined(worker, *this);
  }

  // Worker `worker` answers its current job with `payload` after `compute_time` seconds.
  void answer(Master& master, int worker, const Vec& payload, double compute_time = 1.0,
              double loss = 0.5) {
    ASSERT_TRUE(busy_[worker]) << "worker " << worker << " has no job";
    now_ += 0.01;
    busy_[worker] = false;
    const int64_t version = jobs_[worker].tag;
    Reply reply{.worker = worker,
                .tag = jobs_[worker].tag,
                .payload = &payload,
                .loss = loss,
                .units = 1.0,
                .compute_time = compute_time,
                .versions = std::span<const int64_t>(&version, 1)};
    master.on_reply(reply, *this);
  }

  int64_t tag(int worker) const { return jobs_[worker].tag; }
  const Vec& model(int worker) const { return models_[worker]; }

  int assignments = 0;
  int cancellations = 0;

 private:
  std::vector<Job> jobs_;
  std::vector<Vec> models_;
  std::vector<bool> busy_;
  bool can_cancel_;
  std::set<int> lost_;
  double now_ = 0;
};

// One method's master on a dim-dimensional model starting at 0, with a recording monitor.
struct Harness {
  Harness(const std::string& toml, int workers, int64_t dim = 2,
          const std::string& timing_toml = "")
      : config(Config::parse(toml, "test.toml")),
        quadratic(testing::make_quadratic(std::vector<Vec>(workers, Vec::Zero(dim)), 0)),
        timing(make_timing_model(Config::parse(timing_toml, "timing.toml"), workers, 1)) {
    method = make_method(config, MethodSetup{quadratic.objective, timing.get(), workers, 1});
    OptimizerOptions options;
    options.lr = kLr;
    trainer = std::make_unique<Trainer>(Vec::Zero(dim), Optimizer(options), monitor);
    master = method->make_master(*trainer);
  }
  nlohmann::json summary() const {
    nlohmann::json out;
    master->summarize(out);
    return out;
  }

  Config config;
  Quadratic quadratic;
  std::unique_ptr<TimingModel> timing;
  std::unique_ptr<Method> method;
  RecordingMonitor monitor;
  std::unique_ptr<Trainer> trainer;
  std::unique_ptr<TrainingMaster> master;
};

Vec vec2(double a, double b) { return (Vec(2) << a, b).finished(); }

// Entry-wise |a − b| ≤ tol.
void expect_near(const Vec& a, const Vec& b, double tol = 1e-14) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_LE((a - b).lpNorm<Eigen::Infinity>(), tol)
      << "got " << a.transpose() << ", expected " << b.transpose();
}

// The message of make_method's Error for this config, or "" if it built.
std::string build_error(const std::string& toml, int workers, const std::string& timing_toml = "",
                        bool with_timing = true) {
  Quadratic q = testing::make_quadratic(std::vector<Vec>(std::max(workers, 1), Vec::Zero(1)), 0);
  auto timing =
      make_timing_model(Config::parse(timing_toml, "timing.toml"), std::max(workers, 1), 1);
  try {
    make_method(Config::parse(toml, "bad.toml"),
                MethodSetup{q.objective, with_timing ? timing.get() : nullptr, workers, 1});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const std::vector<std::string> kAsyncMethods = {
    "asgd",    "rescaled-asgd", "delay-adaptive-asgd", "ringmaster",
    "rennala", "malenia",       "ringleader"};

TEST(AsyncMethods, AreRegisteredAndAsynchronous) {
  const std::vector<std::string> names = method_names();
  for (const std::string& name : kAsyncMethods) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    Harness h("[method]\nname = \"" + name + "\"\n", 3);
    EXPECT_EQ(h.method->name(), name);
    EXPECT_FALSE(h.method->synchronous()) << name;
  }
}

TEST(AsyncMethods, RefuseBadInputNamingTheKey) {
  for (const std::string& name : kAsyncMethods) {
    const std::string error = build_error("[method]\nname = \"" + name + "\"\n", 1);
    EXPECT_NE(error.find("'workers'"), std::string::npos) << name << ": " << error;
    EXPECT_NE(error.find("at least 2"), std::string::npos) << error;
  }
  for (const char* r : {"0", "-3"}) {
    const std::string error =
        build_error("[method]\nname = \"ringmaster\"\nR = " + std::string(r) + "\n", 4);
    EXPECT_NE(error.find("'method.R'"), std::string::npos) << error;
    EXPECT_NE(error.find("positive integer"), std::string::npos) << error;
  }
  EXPECT_NE(build_error("[method]\nname = \"ringmaster\"\nR = 2.5\n", 4).find("'method.R'"),
            std::string::npos);
  for (const char* name : {"rennala", "malenia"}) {
    for (const char* s : {"0", "-1.5"}) {
      const std::string error = build_error(
          "[method]\nname = \"" + std::string(name) + "\"\nS = " + std::string(s) + "\n", 4);
      EXPECT_NE(error.find("'method.S'"), std::string::npos) << error;
      EXPECT_NE(error.find("positive"), std::string::npos) << error;
    }
  }
  EXPECT_NE(build_error("[method]\nname = \"ringmaster\"\nvariant = \"halt\"\n", 4)
                .find("'method.variant'"),
            std::string::npos);
  EXPECT_NE(
      build_error("[method]\nname = \"rescaled-asgd\"\ntau = \"guess\"\n", 4).find("'method.tau'"),
      std::string::npos);

  // tau = "model" needs finite per-worker means: Pareto with alpha <= 1 has none.
  const std::string pareto = build_error("[method]\nname = \"rescaled-asgd\"\ntau = \"model\"\n", 4,
                                         "[timing]\nmodel = \"pareto\"\nalpha = 0.8\n");
  EXPECT_NE(pareto.find("'method.tau'"), std::string::npos) << pareto;
  EXPECT_NE(pareto.find("pareto"), std::string::npos) << pareto;
  EXPECT_NE(pareto.find("\"estimate\""), std::string::npos) << pareto;
  EXPECT_EQ(build_error("[method]\nname = \"rescaled-asgd\"\ntau = \"estimate\"\n", 4,
                        "[timing]\nmodel = \"pareto\"\nalpha = 0.8\n"),
            "");
  // Without a timing model (MPI with engine.inject = "none"): tau = "model" is refused, and the
  // default is "estimate".
  EXPECT_NE(build_error("[method]\nname = \"rescaled-asgd\"\ntau = \"model\"\n", 4, "",
                        /*with_timing=*/false)
                .find("'method.tau'"),
            std::string::npos);
  EXPECT_EQ(build_error("[method]\nname = \"rescaled-asgd\"\n", 4, "", /*with_timing=*/false), "");
}

TEST(AsyncMaster, StartsEveryWorkerAtX0AndTagsJobsWithTheUpdateCount) {
  Harness h("[method]\nname = \"asgd\"\n", 3);
  ScriptedCluster cluster(3, true);
  h.master->start(cluster);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(cluster.busy(i));
    EXPECT_EQ(cluster.tag(i), 0);
    EXPECT_EQ(cluster.model(i), Vec::Zero(2));
  }
  cluster.answer(*h.master, 1, vec2(1, 2));
  // The replying worker gets the new x, tagged with the number of updates so far.
  EXPECT_EQ(cluster.tag(1), 1);
  EXPECT_EQ(cluster.model(1), h.trainer->x());
  cluster.answer(*h.master, 0, vec2(0, 1));  // sent at 0, one update since: δ = 1
  ASSERT_EQ(h.monitor.records.size(), 2u);
  EXPECT_EQ(h.monitor.records[0].staleness, 0);
  EXPECT_EQ(h.monitor.records[1].staleness, 1);
  EXPECT_EQ(h.monitor.records[1].worker, 0);
  EXPECT_EQ(h.monitor.records[1].responders, 1);
  nlohmann::json s = h.summary();
  EXPECT_EQ(s["delay_histogram"]["0"], 1);
  EXPECT_EQ(s["delay_histogram"]["1"], 1);
  EXPECT_EQ(s["updates_per_worker"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(s["arrivals_per_worker"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 1, 0}));
}

TEST(Asgd, StepsAlongEveryGradient) {
  Harness h("[method]\nname = \"asgd\"\n", 2);
  ScriptedCluster cluster(2, false);
  h.master->start(cluster);
  cluster.answer(*h.master, 1, vec2(1, -2));
  cluster.answer(*h.master, 1, vec2(3, 0));
  cluster.answer(*h.master, 0, vec2(0, 4));
  expect_near(h.trainer->x(), -kLr * (vec2(1, -2) + vec2(3, 0) + vec2(0, 4)));
  for (const UpdateRecord& r : h.monitor.records) EXPECT_DOUBLE_EQ(r.stepsize, kLr);
}

TEST(DelayAdaptiveAsgd, ScalesByMinOfOneAndNOverDelay) {
  const int n = 2;
  Harness h("[method]\nname = \"delay-adaptive-asgd\"\n", n);
  ScriptedCluster cluster(n, false);
  h.master->start(cluster);
  // Worker 1 updates 5 times (δ = 0 each); worker 0's first gradient then has δ = 5.
  for (int k = 0; k < 5; ++k) cluster.answer(*h.master, 1, vec2(1, 0));
  cluster.answer(*h.master, 0, vec2(0, 1));
  ASSERT_EQ(h.monitor.records.size(), 6u);
  for (int k = 0; k < 5; ++k) EXPECT_DOUBLE_EQ(h.monitor.records[k].stepsize, kLr);
  EXPECT_EQ(h.monitor.records[5].staleness, 5);
  EXPECT_DOUBLE_EQ(h.monitor.records[5].stepsize, kLr * n / 5.0);
  // δ = 1 ≤ n: full step.
  cluster.answer(*h.master, 1, vec2(1, 0));
  EXPECT_EQ(h.monitor.records[6].staleness, 1);
  EXPECT_DOUBLE_EQ(h.monitor.records[6].stepsize, kLr);
}

// γ_i = γ τ_i τ_H / (n τ_max) for τ = {1, 1, 2, 2}: τ_H = 4/3, τ_max = 2, so γ_i = γ τ_i / 6.
TEST(RescaledAsgd, ModelTauGivesTheRescaledStepsizes) {
  Harness h("[method]\nname = \"rescaled-asgd\"\ntau = \"model\"\n", 4, 2,
            "[timing]\nmodel = \"fixed\"\nprofile = \"harmonic\"\ntau = 1.0\n");
  ScriptedCluster cluster(4, false);
  h.master->start(cluster);
  for (int i = 0; i < 4; ++i) cluster.answer(*h.master, i, vec2(1, 1));
  const double tau[] = {1, 1, 2, 2};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(h.monitor.records[i].stepsize, kLr * tau[i] / 6.0, 1e-15) << i;
  }
  nlohmann::json s = h.summary();
  EXPECT_EQ(s["tau_source"], "model");
  EXPECT_EQ(s["tau"].get<std::vector<double>>(), (std::vector<double>{1, 1, 2, 2}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(s["stepsize_per_worker"][i].get<double>(), kLr * tau[i] / 6.0, 1e-15);
  }
  // K_i γ_i is the same for every worker over one cycle of length τ_max (K_i = τ_max / τ_i).
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR((2.0 / tau[i]) * s["lr_scale_per_worker"][i].get<double>(), 1.0 / 3.0, 1e-15);
  }
}

TEST(RescaledAsgd, EstimateUsesGammaOverNUntilEveryWorkerReported) {
  const int n = 3;
  Harness h("[method]\nname = \"rescaled-asgd\"\ntau = \"estimate\"\n", n);
  ScriptedCluster cluster(n, false);
  h.master->start(cluster);
  cluster.answer(*h.master, 0, vec2(1, 0), 1.0);
  cluster.answer(*h.master, 0, vec2(1, 0), 3.0);  // worker 0's running mean: 2
  cluster.answer(*h.master, 1, vec2(1, 0), 4.0);
  for (const UpdateRecord& r : h.monitor.records) EXPECT_DOUBLE_EQ(r.stepsize, kLr / n);
  nlohmann::json s = h.summary();
  EXPECT_EQ(s["tau_source"], "estimate");
  EXPECT_TRUE(s["tau"][2].is_null());

  // Worker 2 reports: τ = {2, 4, 8}, τ_H = 3 / (1/2 + 1/4 + 1/8) = 24/7, τ_max = 8.
  cluster.answer(*h.master, 2, vec2(1, 0), 8.0);
  const double tau_h = 24.0 / 7.0;
  EXPECT_NEAR(h.monitor.records.back().stepsize, kLr * 8.0 * tau_h / (n * 8.0), 1e-15);
  cluster.answer(*h.master, 1, vec2(1, 0), 4.0);
  EXPECT_NEAR(h.monitor.records.back().stepsize, kLr * 4.0 * tau_h / (n * 8.0), 1e-15);
  s = h.summary();
  EXPECT_EQ(s["tau"].get<std::vector<double>>(), (std::vector<double>{2, 4, 8}));
}

// Ringmaster discards exactly the gradients whose delay δ = updates since their model was sent
// is at least R; every arrival order is covered by a long random schedule.
TEST(Ringmaster, DiscardsExactlyTheGradientsWithDelayAtLeastR) {
  const int n = 4;
  for (int64_t threshold : {1, 2, 3, 6}) {
    Harness h("[method]\nname = \"ringmaster\"\nR = " + std::to_string(threshold) + "\n", n);
    ScriptedCluster cluster(n, false);
    h.master->start(cluster);
    Rng rng(threshold, "schedule");
    int64_t discarded = 0, applied = 0;
    for (int event = 0; event < 400; ++event) {
      // Worker 0 is fast, the others answer rarely, so large delays occur.
      const int w = rng.uniform() < 0.6 ? 0 : 1 + static_cast<int>(rng.uniform_int(n - 1));
      const int64_t delay = h.trainer->steps() - cluster.tag(w);
      const int64_t before = h.trainer->steps();
      cluster.answer(*h.master, w, vec2(1, static_cast<double>(w)));
      const bool updated = h.trainer->steps() == before + 1;
      EXPECT_EQ(updated, delay < threshold) << "R=" << threshold << " δ=" << delay;
      if (updated) {
        EXPECT_EQ(h.monitor.records.back().staleness, delay);
        ++applied;
      } else {
        ++discarded;
      }
      EXPECT_EQ(cluster.tag(w), h.trainer->steps());  // the worker restarts at the current x
    }
    EXPECT_GT(discarded, 0) << "R=" << threshold;
    EXPECT_GT(applied, 0);
    nlohmann::json s = h.summary();
    int64_t counted = 0;
    for (int64_t c : s["gradients_discarded_per_worker"].get<std::vector<int64_t>>()) counted += c;
    EXPECT_EQ(counted, discarded);
    int64_t histogram_stale = 0;
    for (const auto& [delay, count] : s["delay_histogram"].items()) {
      if (std::stoll(delay) >= threshold) histogram_stale += count.get<int64_t>();
    }
    EXPECT_EQ(histogram_stale, discarded);
    EXPECT_EQ(s["variant"], "discard");
    EXPECT_EQ(cluster.cancellations, 0);
  }
}

// Variant "stop": after each update every running job sent R or more updates ago is cancelled
// and restarted at the current x, so no gradient with δ ≥ R ever arrives.
TEST(Ringmaster, StopRestartsJobsThatBecameTooStale) {
  const int n = 4;
  const int64_t threshold = 2;
  Harness h("[method]\nname = \"ringmaster\"\nR = 2\nvariant = \"stop\"\n", n);
  ScriptedCluster cluster(n, true);
  h.master->start(cluster);
  Rng rng(5, "schedule");
  for (int event = 0; event < 300; ++event) {
    const int w = rng.uniform() < 0.7 ? 0 : 1 + static_cast<int>(rng.uniform_int(n - 1));
    const int64_t before = h.trainer->steps();
    ASSERT_LT(before - cluster.tag(w), threshold);
    cluster.answer(*h.master, w, vec2(1, 0));
    EXPECT_EQ(h.trainer->steps(), before + 1);
    for (int i = 0; i < n; ++i) EXPECT_GT(cluster.tag(i), h.trainer->steps() - threshold);
  }
  EXPECT_GT(cluster.cancellations, 0);
  nlohmann::json s = h.summary();
  EXPECT_EQ(s["cancelled_jobs"], cluster.cancellations);
  EXPECT_EQ(s["variant"], "stop");
}

TEST(Ringmaster, StopNeedsAnEngineThatCancels) {
  Harness h("[method]\nname = \"ringmaster\"\nvariant = \"stop\"\n", 3);
  ScriptedCluster cluster(3, false);
  try {
    h.master->start(cluster);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("method.variant"), std::string::npos) << e.what();
  }
}

// Rennala(S): a round closes at the arrival that makes Σ_i B_i ≥ S and steps along the pooled
// mean; then every worker restarts at x_{k+1}.
TEST(Rennala, ClosesWhenSumOfCountsReachesSAndRestartsEveryone) {
  Harness h("[method]\nname = \"rennala\"\nS = 4\n", 3);
  ScriptedCluster cluster(3, true);
  h.master->start(cluster);
  cluster.answer(*h.master, 0, vec2(1, 0));
  cluster.answer(*h.master, 0, vec2(2, 0));
  cluster.answer(*h.master, 1, vec2(0, 3));
  EXPECT_EQ(h.trainer->steps(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(cluster.tag(i), 0);  // still computing at x_0
  cluster.answer(*h.master, 0, vec2(3, 5));
  ASSERT_EQ(h.trainer->steps(), 1);
  const Vec pooled = (vec2(1, 0) + vec2(2, 0) + vec2(0, 3) + vec2(3, 5)) / 4.0;
  expect_near(h.trainer->x(), -kLr * pooled);
  EXPECT_EQ(h.monitor.records[0].responders, 4);
  EXPECT_EQ(h.monitor.records[0].worker, 0);
  // Workers 1 and 2 were busy at x_0: cancelled and restarted at x_1.
  EXPECT_EQ(cluster.cancellations, 2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(cluster.tag(i), 1);
    EXPECT_EQ(cluster.model(i), h.trainer->x());
  }
  nlohmann::json s = h.summary();
  EXPECT_EQ(s["gradients_used_per_worker"].get<std::vector<int64_t>>(),
            (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(s["rounds"], 1);
}

TEST(Rennala, CancelRestartIsRefusedOnEnginesThatCannotCancel) {
  Harness h("[method]\nname = \"rennala\"\nS = 2\n", 3);
  ScriptedCluster cluster(3, false);
  EXPECT_THROW(h.master->start(cluster), Error);
}

TEST(Rennala, WithoutCancelStaleArrivalsAreDiscarded) {
  Harness h("[method]\nname = \"rennala\"\nS = 2\nrestart = \"discard\"\n", 3);
  ScriptedCluster cluster(3, true);
  h.master->start(cluster);
  cluster.answer(*h.master, 0, vec2(1, 0));
  cluster.answer(*h.master, 1, vec2(0, 1));  // closes round 0
  ASSERT_EQ(h.trainer->steps(), 1);
  // Workers 0 (which received x_0 again after its first arrival) and 2 are still busy with x_0.
  EXPECT_EQ(cluster.tag(0), 0);
  EXPECT_EQ(cluster.tag(2), 0);
  cluster.answer(*h.master, 2, vec2(9, 9));  // computed at x_0: discarded
  EXPECT_EQ(h.trainer->steps(), 1);
  EXPECT_EQ(cluster.tag(2), 1);  // and restarted at x_1
  cluster.answer(*h.master, 2, vec2(1, 1));
  EXPECT_EQ(h.trainer->steps(), 1);
  cluster.answer(*h.master, 0, vec2(8, 8));  // computed at x_0: discarded
  EXPECT_EQ(h.trainer->steps(), 1);
  cluster.answer(*h.master, 0, vec2(3, 1));
  ASSERT_EQ(h.trainer->steps(), 2);
  const Vec x1 = -kLr * (vec2(1, 0) + vec2(0, 1)) / 2.0;
  expect_near(h.trainer->x(), x1 - kLr * (vec2(1, 1) + vec2(3, 1)) / 2.0);
  EXPECT_EQ(cluster.cancellations, 0);
  nlohmann::json s = h.summary();
  EXPECT_EQ(s["stale_gradients_discarded"], 2);
  EXPECT_EQ(s["gradients_discarded_per_worker"].get<std::vector<int64_t>>(),
            (std::vector<int64_t>{1, 0, 1}));
}

// Malenia(S): closes when ((1/n) Σ 1/B_i)⁻¹ ≥ S/n and steps along (1/n) Σ_i sum_i / B_i.
TEST(Malenia, ClosesOnTheHarmonicMeanOfCounts) {
  const int n = 3;
  Harness h("[method]\nname = \"malenia\"\nS = 6\n", n);  // S/n = 2
  ScriptedCluster cluster(n, true);
  h.master->start(cluster);
  // B = (3, 3, 0): some worker has nothing, never closes however many the others send.
  for (int k = 0; k < 3; ++k) {
    cluster.answer(*h.master, 0, vec2(1, 0));
    cluster.answer(*h.master, 1, vec2(0, 1));
  }
  EXPECT_EQ(h.trainer->steps(), 0);
  // B = (3, 3, 1): harmonic 3 / (1/3 + 1/3 + 1) = 1.8 < 2.
  cluster.answer(*h.master, 2, vec2(2, 2));
  EXPECT_EQ(h.trainer->steps(), 0);
  // B = (4, 3, 1): 3 / (1/4 + 1/3 + 1) = 1.89 < 2.
  cluster.answer(*h.master, 0, vec2(5, 0));
  EXPECT_EQ(h.trainer->steps(), 0);
  // B = (4, 4, 1): 3 / (1/4 + 1/4 + 1) = 2 ≥ 2: closes.
  cluster.answer(*h.master, 1, vec2(0, 5));
  ASSERT_EQ(h.trainer->steps(), 1);
  const Vec mean0 = (3 * vec2(1, 0) + vec2(5, 0)) / 4.0;
  const Vec mean1 = (3 * vec2(0, 1) + vec2(0, 5)) / 4.0;
  const Vec mean2 = vec2(2, 2);
  expect_near(h.trainer->x(), -kLr * (mean0 + mean1 + mean2) / 3.0);
  EXPECT_EQ(h.monitor.records[0].responders, 9);
  EXPECT_EQ(cluster.cancellations, 2);
}

// The close rule is decided exactly: a round whose harmonic mean lands on S/n closes, although in
// double n / Σ 1/B_i computes to just below it (issue: B = (5, 5, 5), S = 15 gave
// 4.999999999999999 < 5 and the round closed one gradient late).
GradientTable table_with_counts(const std::vector<int>& counts) {
  GradientTable table(static_cast<int>(counts.size()), 2);
  for (size_t w = 0; w < counts.size(); ++w) {
    for (int k = 0; k < counts[w]; ++k) table.add(static_cast<int>(w), vec2(1, 1), 0.5, 0);
  }
  return table;
}

TEST(GradientTable, HarmonicMeanRuleIsExactOnTies) {
  const GradientTable fives = table_with_counts({5, 5, 5});
  EXPECT_TRUE(fives.harmonic_mean_count_reaches(15));  // (1/3 · 3/5)⁻¹ = 5 = 15/3
  EXPECT_FALSE(fives.harmonic_mean_count_reaches(15.000001));
  EXPECT_TRUE(fives.harmonic_mean_count_reaches(14.999999));
  const GradientTable mixed = table_with_counts({1, 1, 3, 3});
  EXPECT_TRUE(mixed.harmonic_mean_count_reaches(6));  // (1/4 · 8/3)⁻¹ = 1.5 = 6/4
  EXPECT_FALSE(mixed.harmonic_mean_count_reaches(6.0000000001));
  EXPECT_FALSE(mixed.harmonic_mean_count_reaches(std::nextafter(6.0, 7.0)));  // one ulp above
  // A table with an empty entry never reaches.
  EXPECT_FALSE(table_with_counts({5, 0, 5}).harmonic_mean_count_reaches(0.001));
}

TEST(Malenia, ClosesExactlyOnATiedThreshold) {
  for (const auto& [counts, s] :
       std::vector<std::pair<std::vector<int>, int>>{{{5, 5, 5}, 15}, {{1, 1, 3, 3}, 6}}) {
    const int n = static_cast<int>(counts.size());
    Harness h("[method]\nname = \"malenia\"\nS = " + std::to_string(s) + "\n", n);
    ScriptedCluster cluster(n, true);
    h.master->start(cluster);
    std::vector<int> sent(n, 0);
    int last = -1;  // the worker whose gradient completes the counts
    for (int round = 0; round < counts[0] + 3; ++round) {
      for (int w = 0; w < n; ++w) {
        if (sent[w] == counts[w]) continue;
        EXPECT_EQ(h.trainer->steps(), 0) << "closed before B reached the counts";
        cluster.answer(*h.master, w, vec2(1, 0));
        ++sent[w];
        last = w;
      }
    }
    ASSERT_GE(last, 0);
    EXPECT_EQ(h.trainer->steps(), 1) << "S = " << s << ": the round did not close at the tie";
  }
}

TEST(Malenia, WithSEqualToNClosesAtTheLastFirstArrival) {
  Harness h("[method]\nname = \"malenia\"\n", 3);  // S defaults to n
  ScriptedCluster cluster(3, true);
  h.master->start(cluster);
  cluster.answer(*h.master, 2, vec2(1, 0));
  cluster.answer(*h.master, 2, vec2(3, 0));
  cluster.answer(*h.master, 0, vec2(0, 1));
  EXPECT_EQ(h.trainer->steps(), 0);
  cluster.answer(*h.master, 1, vec2(0, 2));
  ASSERT_EQ(h.trainer->steps(), 1);
  expect_near(h.trainer->x(), -kLr * (vec2(2, 0) + vec2(0, 1) + vec2(0, 2)) / 3.0);
}

// Ringleader: phase 1 gathers until every worker has an entry (no update); phase 2 makes exactly
// n updates, one per worker, each on that worker's arrival; arrivals of workers that already
// updated fill the next round's table.
TEST(Ringleader, GathersThenUpdatesOncePerWorkerAndBuffersTheRest) {
  const int n = 3;
  Harness h("[method]\nname = \"ringleader\"\n", n);
  ScriptedCluster cluster(n, true);
  h.master->start(cluster);
  // Phase 1.
  cluster.answer(*h.master, 0, vec2(1, 0));
  cluster.answer(*h.master, 0, vec2(3, 0));
  cluster.answer(*h.master, 1, vec2(0, 2));
  cluster.answer(*h.master, 2, vec2(6, 6));  // table full: still no update
  EXPECT_EQ(h.trainer->steps(), 0);
  // Phase 2: worker 0 refreshes its entry (mean of 1, 3, 5 → 3) and updates.
  cluster.answer(*h.master, 0, vec2(5, 0));
  ASSERT_EQ(h.trainer->steps(), 1);
  Vec expected = -kLr * (vec2(3, 0) + vec2(0, 2) + vec2(6, 6)) / 3.0;
  expect_near(h.trainer->x(), expected);
  EXPECT_EQ(h.monitor.records[0].responders, 5);
  // Worker 0 again: already updated, goes to the next table; no update.
  cluster.answer(*h.master, 0, vec2(7, 7));
  EXPECT_EQ(h.trainer->steps(), 1);
  // Worker 1 refreshes (mean of 2 and 4 → 3 in the second coordinate) and updates.
  cluster.answer(*h.master, 1, vec2(0, 4));
  ASSERT_EQ(h.trainer->steps(), 2);
  expected -= kLr * (vec2(3, 0) + vec2(0, 3) + vec2(6, 6)) / 3.0;
  expect_near(h.trainer->x(), expected);
  // Worker 2: the n-th update ends the round.
  cluster.answer(*h.master, 2, vec2(0, 0));
  ASSERT_EQ(h.trainer->steps(), 3);
  expected -= kLr * (vec2(3, 0) + vec2(0, 3) + vec2(3, 3)) / 3.0;
  expect_near(h.trainer->x(), expected);
  // Round 2 starts from the next table (worker 0: {7,7}); phase 1 until 1 and 2 report.
  cluster.answer(*h.master, 1, vec2(1, 1));
  EXPECT_EQ(h.trainer->steps(), 3);
  cluster.answer(*h.master, 2, vec2(2, 2));
  EXPECT_EQ(h.trainer->steps(), 3);
  cluster.answer(*h.master, 2, vec2(4, 4));  // phase 2: worker 2 updates (mean {3,3})
  ASSERT_EQ(h.trainer->steps(), 4);
  expected -= kLr * (vec2(7, 7) + vec2(1, 1) + vec2(3, 3)) / 3.0;
  expect_near(h.trainer->x(), expected);
  EXPECT_EQ(cluster.cancellations, 0);  // Ringleader never throws work away
  nlohmann::json s = h.summary();
  EXPECT_EQ(s["rounds_completed"], 1);
  EXPECT_EQ(s["gradients_used_per_worker"].get<std::vector<int64_t>>(),
            (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(s["updates_per_worker"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 1, 2}));
}

// Lost workers (method/protocol.h): every asynchronous method continues with the survivors.

TEST(Malenia, ClosesTheRoundWithoutALostWorker) {
  const int n = 3;
  Harness h("[method]\nname = \"malenia\"\nS = 6\n", n);  // S/n = 2
  ScriptedCluster cluster(n, true);
  h.master->start(cluster);
  // B = (2, 2, 0): worker 2 has sent nothing, so the round waits for it.
  for (int k = 0; k < 2; ++k) {
    cluster.answer(*h.master, 0, vec2(1, 0));
    cluster.answer(*h.master, 1, vec2(0, 1));
  }
  EXPECT_EQ(h.trainer->steps(), 0);
  // Worker 2 is lost. Over the n = 2 live workers the rule is harmonic(B) ≥ S/n = 3, and
  // harmonic(2, 2) = 2: the round still waits.
  cluster.lose(*h.master, 2);
  EXPECT_EQ(h.trainer->steps(), 0);
  // B = (3, 3): harmonic 3 ≥ 3: closes on the two live workers' means only.
  cluster.answer(*h.master, 0, vec2(1, 0));
  cluster.answer(*h.master, 1, vec2(0, 1));
  ASSERT_EQ(h.trainer->steps(), 1);
  expect_near(h.trainer->x(), -kLr * (vec2(1, 0) + vec2(0, 1)) / 2.0);
  EXPECT_EQ(h.monitor.records[0].responders, 6);
  // The lost worker is never restarted: only worker 0, busy at the close, was cancelled (worker 1
  // had just replied).
  EXPECT_FALSE(cluster.busy(2));
  EXPECT_EQ(cluster.cancellations, 1);
  const nlohmann::json lost = h.master->lost_workers_json();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0]["worker"], 2);
  EXPECT_EQ(lost[0]["step"], 0);
}

TEST(Malenia, ALossCanCloseTheRoundAtOnce) {
  const int n = 3;
  Harness h("[method]\nname = \"malenia\"\n", n);  // S = n = 3
  ScriptedCluster cluster(n, true);
  h.master->start(cluster);
  for (int k = 1; k <= 2; ++k) {
    cluster.answer(*h.master, 0, vec2(2 * k, 0));
    cluster.answer(*h.master, 1, vec2(0, 2 * k));
  }
  EXPECT_EQ(h.trainer->steps(), 0);  // B = (2, 2, 0): waits for worker 2
  // Lost: over the 2 live workers harmonic(2, 2) = 2 ≥ S/2 = 1.5, so the loss closes the round.
  cluster.lose(*h.master, 2);
  ASSERT_EQ(h.trainer->steps(), 1);
  expect_near(h.trainer->x(), -kLr * (vec2(3, 0) + vec2(0, 3)) / 2.0);
  EXPECT_EQ(cluster.cancellations, 2);  // both live workers restart at x_1
}

TEST(Rennala, KeepsClosingRoundsOnTheSurvivorsAndTakesBackAReturningWorker) {
  Harness h("[method]\nname = \"rennala\"\nS = 2\n", 3);
  ScriptedCluster cluster(3, true);
  h.master->start(cluster);
  cluster.answer(*h.master, 2, vec2(9, 9));
  cluster.lose(*h.master, 2);  // its gradient at x_0 leaves the table with it
  cluster.answer(*h.master, 0, vec2(1, 0));
  EXPECT_EQ(h.trainer->steps(), 0);
  cluster.answer(*h.master, 1, vec2(0, 1));
  ASSERT_EQ(h.trainer->steps(), 1);
  expect_near(h.trainer->x(), -kLr * vec2(0.5, 0.5));
  cluster.rejoin(*h.master, 2);
  EXPECT_TRUE(cluster.busy(2));  // sent the current x at once
  EXPECT_EQ(cluster.tag(2), 1);
  cluster.answer(*h.master, 2, vec2(2, 2));
  cluster.answer(*h.master, 0, vec2(0, 0));
  ASSERT_EQ(h.trainer->steps(), 2);
  const nlohmann::json lost = h.master->lost_workers_json();
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_TRUE(lost[0].contains("rejoined_time"));
}

TEST(Ringleader, StopsWaitingForALostWorkersEntry) {
  const int n = 3;
  Harness h("[method]\nname = \"ringleader\"\n", n);
  ScriptedCluster cluster(n, true);
  h.master->start(cluster);
  cluster.answer(*h.master, 0, vec2(2, 0));
  cluster.answer(*h.master, 1, vec2(0, 2));
  EXPECT_EQ(h.trainer->steps(), 0);  // phase 1 waits for worker 2's entry
  cluster.lose(*h.master, 2);        // ... no longer: phase 2 starts
  cluster.answer(*h.master, 0, vec2(4, 0));
  ASSERT_EQ(h.trainer->steps(), 1);
  Vec expected = -kLr * (vec2(3, 0) + vec2(0, 2)) / 2.0;
  expect_near(h.trainer->x(), expected);
  // Worker 1's update is the last of the round: 2 live workers, 2 updates.
  cluster.answer(*h.master, 1, vec2(0, 4));
  ASSERT_EQ(h.trainer->steps(), 2);
  expected -= kLr * (vec2(3, 0) + vec2(0, 3)) / 2.0;
  expect_near(h.trainer->x(), expected);
  EXPECT_EQ(h.summary()["rounds_completed"], 1);
}

TEST(Ringleader, AWorkerBackInPhaseTwoJoinsTheNextRound) {
  const int n = 3;
  Harness h("[method]\nname = \"ringleader\"\n", n);
  ScriptedCluster cluster(n, true);
  h.master->start(cluster);
  for (int i = 0; i < n; ++i) cluster.answer(*h.master, i, vec2(1, 1));  // phase 1 full
  cluster.answer(*h.master, 0, vec2(1, 1));                              // update 1 (worker 0)
  ASSERT_EQ(h.trainer->steps(), 1);
  cluster.lose(*h.master, 2);
  cluster.rejoin(*h.master, 2);              // back in phase 2: not in this round's table
  cluster.answer(*h.master, 1, vec2(1, 1));  // update 2: every worker of the round has updated
  ASSERT_EQ(h.trainer->steps(), 2);
  EXPECT_EQ(h.summary()["rounds_completed"], 1);
  // The next round gathers from all three again, worker 2 included, and updates.
  cluster.answer(*h.master, 2, vec2(1, 1));
  cluster.answer(*h.master, 0, vec2(1, 1));
  EXPECT_EQ(h.trainer->steps(), 2);  // worker 1 has no entry yet in the new round
  cluster.answer(*h.master, 1, vec2(1, 1));
  cluster.answer(*h.master, 2, vec2(1, 1));
  EXPECT_EQ(h.trainer->steps(), 3);
}

TEST(RescaledAsgd, RecomputesTheStepsizesOverTheLiveWorkers) {
  Harness h("[method]\nname = \"rescaled-asgd\"\ntau = \"model\"\n", 4, 2,
            "[timing]\nmodel = \"fixed\"\nprofile = \"harmonic\"\ntau = 1.0\n");
  ScriptedCluster cluster(4, false);
  h.master->start(cluster);
  // τ = (1, 1, 2, 2). Losing worker 3 leaves τ = (1, 1, 2): τ_H = 3 / 2.5 = 1.2, τ_max = 2,
  // γ_i = γ τ_i · 1.2 / (3 · 2) = γ τ_i / 5.
  cluster.lose(*h.master, 3);
  for (int i = 0; i < 3; ++i) cluster.answer(*h.master, i, vec2(1, 1));
  const double tau[] = {1, 1, 2};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(h.monitor.records[i].stepsize, kLr * tau[i] / 5.0, 1e-15) << i;
  }
  EXPECT_EQ(h.summary()["lr_scale_per_worker"][3], 0.0);
}

TEST(AsyncMaster, EndsTheRunWhenNoWorkerIsLeft) {
  Harness h("[method]\nname = \"asgd\"\n", 2);
  ScriptedCluster cluster(2, false);
  h.master->start(cluster);
  cluster.answer(*h.master, 0, vec2(1, 1));
  cluster.lose(*h.master, 0);
  EXPECT_FALSE(h.master->finished());
  cluster.answer(*h.master, 1, vec2(1, 1));  // the survivor goes on alone
  EXPECT_EQ(h.trainer->steps(), 2);
  cluster.lose(*h.master, 1);
  EXPECT_TRUE(h.master->finished());
  EXPECT_EQ(h.monitor.stop_status, "too_many_lost");
  EXPECT_NE(h.monitor.stop_reason.find("workers 0, 1 are lost"), std::string::npos)
      << h.monitor.stop_reason;
}

}  // namespace
}  // namespace pacer
