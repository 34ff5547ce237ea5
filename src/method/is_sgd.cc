// Ignore-stragglers SGD, IS-SGD(k): every worker i sends g_i(x_t); the master closes the step
// with the fastest n−k messages F and steps along ĝ_t = (1/(n−k)) Σ_{i∈F} m_i.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "method_factories.h"
#include "pacer/method/sync_master.h"

namespace pacer {
namespace {

class IsSgdMaster : public SyncMaster {
 public:
  IsSgdMaster(Trainer& trainer, int workers, int64_t dim, StragglerPolicy policy, int ignored)
      : SyncMaster(trainer, workers, dim, policy), ignored_(ignored) {}

 protected:
  bool step_complete() const override { return num_arrived() == workers() - ignored_; }

  void decode(Vec& g, std::vector<int>& used) override {
    g.setZero();
    for (int i = 0; i < workers(); ++i) {
      if (!arrived(i)) continue;
      g += message(i);
      used.push_back(i);
    }
    g /= static_cast<double>(used.size());
  }

  // Lost workers are permanent stragglers: the run goes on while at most k are lost.
  std::string lost_requirement() const override {
    return fmt::format("at most k = {} workers lost (the step waits for n - k messages)", ignored_);
  }
  void summarize_method(nlohmann::json& out) const override { out["k"] = ignored_; }

 private:
  int ignored_;
};

class IsSgd : public GradientSyncMethod {
 public:
  IsSgd(const Config& config, const MethodSetup& setup) : GradientSyncMethod(config, setup) {
    const int64_t k = config.get_int("method.k", 1);
    ignored_ = static_cast<int>(k);
    if (k < 0 || k >= setup.workers) {
      config.fail_key(
          "method.k",
          fmt::format("0 <= k < workers ({}): the number of stragglers ignored", setup.workers));
    }
  }
  std::string name() const override { return "is-sgd"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<IsSgdMaster>(trainer, workers(), dim(), policy(), ignored_);
  }

 private:
  int ignored_ = 1;
};

}  // namespace

std::unique_ptr<Method> make_is_sgd(const Config& config, const MethodSetup& setup) {
  return std::make_unique<IsSgd>(config, setup);
}

}  // namespace pacer
