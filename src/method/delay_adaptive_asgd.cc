// Delay-adaptive asynchronous SGD, DESIGN.md section 3.2.
//
//   on arrival of g = g_i(x_{k−δ}) from worker i:   x ← x − γ · min(1, n/δ) · g;   send x to i
//
// with min(1, n/δ) = 1 for δ = 0: gradients older than n updates take proportionally shorter steps.
//
// Lost workers: n in min(1, n/δ) is the number of live workers.
#include <algorithm>

#include "method_factories.h"
#include "pacer/method/async_master.h"

namespace pacer {
namespace {

class DelayAdaptiveMaster : public AsyncMaster {
 public:
  using AsyncMaster::AsyncMaster;

 protected:
  void on_gradient(const Reply& reply, int64_t delay, Cluster& cluster) override {
    const double n = static_cast<double>(live_workers());  // n of the workers not lost
    const double scale = delay == 0 ? 1.0 : std::min(1.0, n / static_cast<double>(delay));
    apply_gradient(reply, delay, scale, cluster);
  }
};

class DelayAdaptiveAsgd : public AsyncMethod {
 public:
  using AsyncMethod::AsyncMethod;
  std::string name() const override { return "delay-adaptive-asgd"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<DelayAdaptiveMaster>(trainer, workers());
  }
};

}  // namespace

std::unique_ptr<Method> make_delay_adaptive_asgd(const Config& config, const MethodSetup& setup) {
  return std::make_unique<DelayAdaptiveAsgd>(config, setup);
}

}  // namespace pacer
