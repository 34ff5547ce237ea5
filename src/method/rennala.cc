// Rennala SGD(S) (Tyurin & Richtárik), DESIGN.md section 3.2.
//
//   round k at x_k: every worker computes gradients at x_k over and over;
//     sum_i, B_i = sum and count of worker i's gradients computed at x_k
//     (gradients computed at an older model are discarded)
//   when Σ_i B_i ≥ S:   x_{k+1} = x_k − γ (Σ_i sum_i) / (Σ_i B_i);   restart every worker at
//   x_{k+1}
//
// method.S (> 0, default n). The round loop (and what restarting means on each engine) is
// RoundMaster's (method/async_master.h); this file is the close rule and the combination.
#include <nlohmann/json.hpp>

#include "method_factories.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

class RennalaMaster : public RoundMaster {
 public:
  RennalaMaster(Trainer& trainer, int workers, int64_t dim, double batch, bool cancel_busy)
      : RoundMaster(trainer, workers, dim, cancel_busy), batch_(batch) {}

 protected:
  bool round_complete(const GradientTable& table) const override {
    return static_cast<double>(table.total()) >= batch_;
  }
  void direction(const GradientTable& table, Vec& out) const override { table.pooled_mean(out); }
  void summarize_method(nlohmann::json& out) const override {
    RoundMaster::summarize_method(out);
    out["S"] = batch_;
  }

 private:
  double batch_;  // S
};

class Rennala : public AsyncMethod {
 public:
  Rennala(const Config& config, const MethodSetup& setup)
      : AsyncMethod(config, setup),
        batch_(read_round_size(config, setup.workers)),
        cancel_busy_(read_round_restart_cancels(config)) {}
  std::string name() const override { return "rennala"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<RennalaMaster>(trainer, workers(), dim(), batch_, cancel_busy_);
  }

 private:
  double batch_;
  bool cancel_busy_;
};

}  // namespace

std::unique_ptr<Method> make_rennala(const Config& config, const MethodSetup& setup) {
  return std::make_unique<Rennala>(config, setup);
}

}  // namespace pacer
