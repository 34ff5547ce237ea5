// Malenia SGD(S) (Tyurin & Richtárik), DESIGN.md section 3.2.
//
//   round k at x_k: every worker computes gradients at x_k over and over;
//     sum_i, B_i = sum and count of worker i's gradients computed at x_k
//     (gradients computed at an older model are discarded)
//   when ((1/n) Σ_i 1/B_i)⁻¹ ≥ S/n  (which needs every B_i ≥ 1):
//     x_{k+1} = x_k − γ (1/n) Σ_i sum_i / B_i;   restart every worker at x_{k+1}
//
// The test is decided exactly (GradientTable::harmonic_mean_count_reaches: n² ≥ S · Σ_i 1/B_i in
// rational arithmetic where double rounding could decide it), so a round that lands on the
// threshold closes at that gradient.
//
// Every worker's mean gradient gets weight 1/n whatever its speed, so Malenia minimises F. With
// S = n the rule closes as soon as every worker has sent one gradient at x_k, and with full-batch
// gradients the step is exactly gradient descent on F. method.S (> 0, default n). The round loop
// is RoundMaster's (method/async_master.h); this file is the close rule and the combination.
//
// Lost workers: a lost worker leaves the round table (RoundMaster), so the test and the mean of
// means range over the live workers: ((1/n') Σ_live 1/B_i)⁻¹ ≥ S/n' with n' live workers.

#include "method_factories.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

class MaleniaMaster : public RoundMaster {
 public:
  using RoundMaster::RoundMaster;

 protected:
  bool round_complete(const GradientTable& table) const override {
    return table.harmonic_mean_count_reaches(round_size());  // exactly, ties included
  }
  void direction(const GradientTable& table, Vec& out) const override { table.mean_of_means(out); }
};

}  // namespace

std::unique_ptr<Method> make_malenia(const Config& config, const MethodSetup& setup) {
  return std::make_unique<RoundMethod<MaleniaMaster>>(config, setup, "malenia");
}

}  // namespace pacer
