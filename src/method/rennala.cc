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
//
// Lost workers: a lost worker leaves the round table (RoundMaster) with the gradients it gave at
// x_k; rounds close on Σ B_i ≥ S over the live workers.

#include "method_factories.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

class RennalaMaster : public RoundMaster {
 public:
  using RoundMaster::RoundMaster;

 protected:
  bool round_complete(const GradientTable& table) const override {
    return static_cast<double>(table.total()) >= round_size();
  }
  void direction(const GradientTable& table, Vec& out) const override { table.pooled_mean(out); }
};

}  // namespace

std::unique_ptr<Method> make_rennala(const Config& config, const MethodSetup& setup) {
  return std::make_unique<RoundMethod<RennalaMaster>>(config, setup, "rennala");
}

}  // namespace pacer
