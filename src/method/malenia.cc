// Malenia SGD(S) (Tyurin & Richtárik), DESIGN.md section 3.2.
//
//   round k at x_k: every worker computes gradients at x_k over and over;
//     sum_i, B_i = sum and count of worker i's gradients computed at x_k
//     (gradients computed at an older model are discarded)
//   when ((1/n) Σ_i 1/B_i)⁻¹ ≥ S/n  (which needs every B_i ≥ 1):
//     x_{k+1} = x_k − γ (1/n) Σ_i sum_i / B_i;   restart every worker at x_{k+1}
//
// Every worker's mean gradient gets weight 1/n whatever its speed, so Malenia minimises F. With
// S = n the rule closes as soon as every worker has sent one gradient at x_k, and with full-batch
// gradients the step is exactly gradient descent on F. method.S (> 0, default n). The round loop
// is RoundMaster's (method/async_master.h); this file is the close rule and the combination.
#include <nlohmann/json.hpp>

#include "method_factories.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

class MaleniaMaster : public RoundMaster {
 public:
  MaleniaMaster(Trainer& trainer, int workers, int64_t dim, double batch, bool cancel_busy)
      : RoundMaster(trainer, workers, dim, cancel_busy), batch_(batch) {}

 protected:
  bool round_complete(const GradientTable& table) const override {
    if (table.filled() < table.workers()) return false;
    return table.harmonic_mean_count() >= batch_ / static_cast<double>(table.workers());
  }
  void direction(const GradientTable& table, Vec& out) const override { table.mean_of_means(out); }
  void summarize_method(nlohmann::json& out) const override {
    RoundMaster::summarize_method(out);
    out["S"] = batch_;
  }

 private:
  double batch_;  // S
};

class Malenia : public AsyncMethod {
 public:
  Malenia(const Config& config, const MethodSetup& setup)
      : AsyncMethod(config, setup),
        batch_(read_round_size(config, setup.workers)),
        cancel_busy_(read_round_restart_cancels(config)) {}
  std::string name() const override { return "malenia"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<MaleniaMaster>(trainer, workers(), dim(), batch_, cancel_busy_);
  }

 private:
  double batch_;
  bool cancel_busy_;
};

}  // namespace

std::unique_ptr<Method> make_malenia(const Config& config, const MethodSetup& setup) {
  return std::make_unique<Malenia>(config, setup);
}

}  // namespace pacer
