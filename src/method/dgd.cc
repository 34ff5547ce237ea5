// Distributed gradient descent (DGD): every worker i sends g_i(x_t); the master waits for all n
// and steps along ĝ_t = (1/n) Σ_i m_i.
//
// Lost workers (method.on_lost):
//   "fail" (default)  DGD needs every partition's gradient: the first loss ends the run with
//                     status too_many_lost.
//   "drop"            the step waits only for the surviving workers (and any message that
//                     arrived before a loss) and steps along the mean of the messages in,
//                     ĝ_t = (1/|F_t|) Σ_{i∈F_t} m_i. The method then minimises the mean of the
//                     surviving partitions' losses, not F: summary.json says so
//                     ("dropped_partitions", "objective").
#include <nlohmann/json.hpp>

#include "method_factories.h"
#include "pacer/method/sync_master.h"

namespace pacer {
namespace {

class DgdMaster : public SyncMaster {
 public:
  DgdMaster(Trainer& trainer, int workers, int64_t dim, StragglerPolicy policy, bool drop_lost)
      : SyncMaster(trainer, workers, dim, policy), drop_lost_(drop_lost) {}

 protected:
  bool step_complete() const override {
    for (int i = 0; i < workers(); ++i) {
      if (!arrived(i) && !(drop_lost_ && lost(i))) return false;
    }
    return true;
  }
  void decode(Vec& g, std::vector<int>& used) override {
    g.setZero();
    for (int i = 0; i < workers(); ++i) {
      if (!arrived(i)) continue;  // a lost worker (on_lost = "drop")
      g += message(i);
      used.push_back(i);
    }
    g /= static_cast<double>(used.size());
  }
  std::string lost_requirement() const override {
    return drop_lost_ ? "at least one surviving worker"
                      : "every worker (DGD waits for all n; method.on_lost = \"fail\")";
  }
  std::string lost_advice() const override {
    return drop_lost_ ? ""
                      : "method.on_lost = \"drop\" continues on the surviving partitions (the "
                        "method then minimises their mean loss, not F)";
  }
  void summarize_method(nlohmann::json& out) const override {
    out["on_lost"] = drop_lost_ ? "drop" : "fail";
    if (!drop_lost_ || num_lost() == 0) return;
    std::vector<int> dropped;
    for (int i = 0; i < workers(); ++i) {
      if (lost(i)) dropped.push_back(i);
    }
    out["dropped_partitions"] = dropped;
    out["objective"] =
        "biased: the mean loss of the surviving partitions (not F) since the first loss";
  }

 private:
  bool drop_lost_;
};

class Dgd : public GradientSyncMethod {
 public:
  Dgd(const Config& config, const MethodSetup& setup)
      : GradientSyncMethod(config, setup),
        drop_lost_(config.get_choice("method.on_lost", "fail", {"fail", "drop"}) == "drop") {}
  std::string name() const override { return "dgd"; }
  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<DgdMaster>(trainer, workers(), dim(), policy(), drop_lost_);
  }

 private:
  bool drop_lost_;
};

}  // namespace

std::unique_ptr<Method> make_dgd(const Config& config, const MethodSetup& setup) {
  return std::make_unique<Dgd>(config, setup);
}

}  // namespace pacer
