// Gradient coding with fractional repetition, GC-FR(s): groups of c = s + 1 workers hold the same
// c partitions; worker i sends m_i = Σ_{p∈S_i} g_p(x_t) (c work units); the master closes the
// step once every group has been heard from and steps along ĝ_t = (1/n) Σ_groups m_first, the
// first message of each group. Every partition is summed exactly once, so ĝ_t = (1/n) Σ_p g_p.
//
// Lost workers: permanent stragglers; the run goes on while every group keeps a survivor
// (GroupMaster, coded.h), else it stops with status too_many_lost.
#include "coded.h"
#include "method_factories.h"
#include "pacer/method/coded_worker.h"

namespace pacer {
namespace {

class GcFr : public CodedMethod {
 public:
  GcFr(const Config& config, const MethodSetup& setup)
      : CodedMethod(config, setup, PlacementKind::kFractional) {}
  std::string name() const override { return "gc-fr"; }

  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<GroupMaster>(trainer, placement_, dim(), policy_,
                                         /*group_average=*/false);
  }
  std::unique_ptr<Worker> make_worker(int worker) const override {
    const std::vector<int>& partitions = placement_.partitions(worker);
    return std::make_unique<CodedWorker>(setup_.objective, worker, setup_.seed, sampling_,
                                         partitions, std::vector<double>(partitions.size(), 1.0));
  }
};

}  // namespace

std::unique_ptr<Method> make_gc_fr(const Config& config, const MethodSetup& setup) {
  return std::make_unique<GcFr>(config, setup);
}

}  // namespace pacer
