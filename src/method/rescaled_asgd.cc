// Rescaled asynchronous SGD (Mahran, Maranjyan & Richtárik), DESIGN.md section 3.2.
//
//   τ_H = n / Σ_j 1/τ_j  (harmonic mean),   τ_max = max_j τ_j
//   γ_i = γ · τ_i · τ_H / (n · τ_max)
//   on arrival of g = g_i(x_{k−δ}) from worker i:   x ← x − γ_i g;   send x to worker i
//
// Worker i arrives K_i = τ_max/τ_i times per cycle of length τ_max, so K_i γ_i = γ τ_H / n is the
// same for every worker: each F_i gets equal total weight, and the iterates settle at the
// minimiser of F instead of F̃ (vanilla ASGD).
//
// τ_i, the mean time of one job (one work unit) on worker i, comes from method.tau:
//   "model"     (default) the timing model's mean_unit_time(i); refused when the model has none;
//   "estimate"  the running mean of worker i's observed job durations (reply.compute_time per
//               work unit), updated on every arrival; until every worker has reported once, every
//               γ_i is γ/n.
// The trainer logs the stepsize each update used (log.csv "stepsize"); summary.json adds τ, the
// scales γ_i/γ and the stepsizes γ_i in force at the end of the run.
//
// Lost workers: n, τ_H and τ_max are taken over the live workers only, recomputed at each loss and
// return (a lost worker's scale is 0), so that the survivors' F_i keep equal total weight.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "method_factories.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

enum class TauSource { kModel, kEstimate };

// γ_i/γ = τ_i · τ_H / (n · τ_max) for every live i, with n, τ_H and τ_max over the live workers;
// 0 for the others. Requires τ_i > 0 for every live i and at least one live worker.
std::vector<double> rescaled_scales(const std::vector<double>& tau, const std::vector<bool>& live) {
  double n = 0, inverse_sum = 0, tau_max = 0;
  for (size_t i = 0; i < tau.size(); ++i) {
    if (!live[i]) continue;
    n += 1;
    inverse_sum += 1.0 / tau[i];
    tau_max = std::max(tau_max, tau[i]);
  }
  const double tau_h = n / inverse_sum;
  std::vector<double> scale(tau.size(), 0.0);
  for (size_t i = 0; i < tau.size(); ++i) {
    if (live[i]) scale[i] = tau[i] * tau_h / (n * tau_max);
  }
  return scale;
}

class RescaledMaster : public AsyncMaster {
 public:
  // `model_tau`: the timing model's τ for TauSource::kModel; ignored for kEstimate.
  RescaledMaster(Trainer& trainer, int workers, TauSource source, std::vector<double> model_tau)
      : AsyncMaster(trainer, workers), source_(source) {
    if (source_ == TauSource::kModel) {
      tau_ = std::move(model_tau);
      scale_ = rescaled_scales(tau_, live_mask());
    } else {
      tau_.assign(workers, 0.0);
      scale_.assign(workers, 1.0 / static_cast<double>(workers));
    }
  }

 protected:
  void on_gradient(const Reply& reply, int64_t delay, Cluster& cluster) override {
    if (source_ == TauSource::kEstimate) update_estimate(reply.worker);
    apply_gradient(reply, delay, scale_[reply.worker], cluster);
  }

  void checkpoint_method(StateArchive& a) override {
    a.section("rescaled_asgd");
    a.io(tau_);
    a.io(scale_);
  }
  void on_worker_lost(int /*worker*/, Cluster& /*cluster*/) override { rescale(); }
  void on_worker_rejoined(int /*worker*/) override { rescale(); }
  void summarize_method(nlohmann::json& out) const override {
    out["tau_source"] = source_ == TauSource::kModel ? "model" : "estimate";
    nlohmann::json tau = nlohmann::json::array();
    for (int i = 0; i < workers(); ++i) {
      if (tau_[i] > 0) {
        tau.push_back(tau_[i]);
      } else {
        tau.push_back(nullptr);  // no estimate yet
      }
    }
    out["tau"] = tau;
    out["lr_scale_per_worker"] = scale_;
    const double lr = trainer_.optimizer().options().lr;
    std::vector<double> stepsize(scale_.size());
    for (size_t i = 0; i < scale_.size(); ++i) stepsize[i] = lr * scale_[i];
    out["stepsize_per_worker"] = stepsize;  // γ_i with γ = optimizer.lr (before any schedule)
  }

 private:
  // Worker w's running mean changed (AsyncMaster already folded in its new duration).
  void update_estimate(int w) {
    tau_[w] = observed_unit_time(w);
    rescale();
  }
  // γ_i from τ over the live workers; in estimate mode only once every live worker has an
  // estimate (until then the scales stay as they are, γ/n at the start).
  void rescale() {
    for (int i = 0; i < workers(); ++i) {
      if (live(i) && !(tau_[i] > 0)) return;
    }
    scale_ = rescaled_scales(tau_, live_mask());
  }
  std::vector<bool> live_mask() const {
    std::vector<bool> mask(workers());
    for (int i = 0; i < workers(); ++i) mask[i] = live(i);
    return mask;
  }

  TauSource source_;
  std::vector<double> tau_;    // τ_i in use (estimate mode: 0 until worker i reports)
  std::vector<double> scale_;  // γ_i / γ
};

class RescaledAsgd : public AsyncMethod {
 public:
  RescaledAsgd(const Config& config, const MethodSetup& setup) : AsyncMethod(config, setup) {
    // By default τ comes from the timing model where one describes the compute times, and is
    // learnt online where none does (the MPI and local engines with engine.inject = "none").
    const char* fallback = setup.timing ? "model" : "estimate";
    source_ = config.get_choice("method.tau", fallback, {"model", "estimate"}) == "model"
                  ? TauSource::kModel
                  : TauSource::kEstimate;
    if (source_ == TauSource::kEstimate) return;
    if (!setup.timing) {
      config.fail_key("method.tau",
                      "\"estimate\": no timing model describes this run's compute times (e.g. "
                      "the MPI engine with engine.inject = \"none\"), so τ must be learnt online");
    }
    for (int i = 0; i < workers(); ++i) {
      std::optional<double> tau = setup.timing->mean_unit_time(i);
      if (!tau || !(*tau > 0) || !std::isfinite(*tau)) {
        config.fail_key("method.tau",
                        fmt::format("\"estimate\": the timing model '{}' defines no finite mean "
                                    "job time for worker {}, so tau = \"model\" is impossible",
                                    setup.timing->name(), i));
      }
      tau_.push_back(*tau);
    }
  }
  std::string name() const override { return "rescaled-asgd"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<RescaledMaster>(trainer, workers(), source_, tau_);
  }

 private:
  TauSource source_ = TauSource::kModel;
  std::vector<double> tau_;  // the timing model's means (kModel)
};

}  // namespace

std::unique_ptr<Method> make_rescaled_asgd(const Config& config, const MethodSetup& setup) {
  return std::make_unique<RescaledAsgd>(config, setup);
}

}  // namespace pacer
