// Pipelined gradient coding with fractional repetition, PGC-FR(s): the FR placement and close
// rule of GC-FR, but each worker sends the sum of its pipeline cache, Σ_{p∈S_i} C_i[p], after
// refreshing only one partition per step (one work unit; c at the warm-up).
//   method.stagger (default false): in lockstep (o_i = 0), every member of a group refreshes the
//     same partition S_i[t mod c] at step t, as the PGC authors' code runs it; true staggers them
//     (member j refreshes S_i[(t + j) mod c]), so the group refreshes all its c partitions every
//     step.
//   method.group_average (default false): average all messages a group sent by the close
//     instead of using its first one.
//
// Lost workers: permanent stragglers; the run goes on while every group keeps a survivor
// (GroupMaster, coded.h), else it stops with status too_many_lost.
#include "coded.h"
#include "method_factories.h"
#include "pacer/method/coded_worker.h"

namespace pacer {
namespace {

class PgcFr : public CodedMethod {
 public:
  PgcFr(const Config& config, const MethodSetup& setup)
      : CodedMethod(config, setup, PlacementKind::kFractional),
        stagger_(config.get_bool("method.stagger", false)),
        group_average_(config.get_bool("method.group_average", false)) {}
  std::string name() const override { return "pgc-fr"; }

  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<GroupMaster>(trainer, placement_, dim(), policy_, group_average_);
  }
  std::unique_ptr<Worker> make_worker(int worker) const override {
    const std::vector<int>& partitions = placement_.partitions(worker);
    const int offset = stagger_ ? worker % placement_.load() : 0;
    return std::make_unique<PipelineWorker>(setup_.objective, worker, setup_.seed, sampling_,
                                            partitions, offset,
                                            std::vector<double>(partitions.size(), 1.0));
  }

 private:
  bool stagger_;
  bool group_average_;
};

}  // namespace

std::unique_ptr<Method> make_pgc_fr(const Config& config, const MethodSetup& setup) {
  return std::make_unique<PgcFr>(config, setup);
}

}  // namespace pacer
