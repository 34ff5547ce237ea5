// Asynchronous SGD (vanilla), DESIGN.md section 3.2.
//
//   x_0 to every worker
//   on arrival of g = g_i(x_{k−δ}) from worker i:   x ← x − γ g;   send x to worker i
//
// Fast workers update more often, so with heterogeneous data the iterates settle at the minimiser
// of F̃ = Σ_i w_i F_i with w_i ∝ 1/τ_i rather than of F (the recorder logs both).
//
// Lost workers: nothing to do; the survivors' gradients keep arriving (AsyncMaster).
#include "method_factories.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

class AsgdMaster : public AsyncMaster {
 public:
  using AsyncMaster::AsyncMaster;

 protected:
  void on_gradient(const Reply& reply, int64_t delay, Cluster& cluster) override {
    apply_gradient(reply, delay, 1.0, cluster);
  }
};

class Asgd : public AsyncMethod {
 public:
  using AsyncMethod::AsyncMethod;
  std::string name() const override { return "asgd"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<AsgdMaster>(trainer, workers());
  }
};

}  // namespace

std::unique_ptr<Method> make_asgd(const Config& config, const MethodSetup& setup) {
  return std::make_unique<Asgd>(config, setup);
}

}  // namespace pacer
