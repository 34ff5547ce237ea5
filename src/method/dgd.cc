// Distributed gradient descent (DGD): every worker i sends g_i(x_t); the master waits for all n
// and steps along ĝ_t = (1/n) Σ_i m_i.
#include <nlohmann/json.hpp>

#include "method_factories.h"
#include "pacer/method/sync_master.h"

namespace pacer {
namespace {

class DgdMaster : public SyncMaster {
 public:
  using SyncMaster::SyncMaster;

 protected:
  bool step_complete() const override { return num_arrived() == workers(); }

  void decode(Vec& g, std::vector<int>& used) override {
    g.setZero();
    for (int i = 0; i < workers(); ++i) {
      g += message(i);
      used.push_back(i);
    }
    g /= static_cast<double>(workers());
  }
};

class Dgd : public GradientSyncMethod {
 public:
  using GradientSyncMethod::GradientSyncMethod;
  std::string name() const override { return "dgd"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<DgdMaster>(trainer, workers(), dim(), policy());
  }
};

}  // namespace

std::unique_ptr<Method> make_dgd(const Config& config, const MethodSetup& setup) {
  return std::make_unique<Dgd>(config, setup);
}

}  // namespace pacer
