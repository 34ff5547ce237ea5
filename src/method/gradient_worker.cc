#include "pacer/method/gradient_worker.h"

#include "pacer/core/state.h"

namespace pacer {

PartitionWorkerBase::PartitionWorkerBase(std::shared_ptr<const Objective> objective, int worker,
                                         uint64_t seed)
    : objective_(std::move(objective)),
      worker_(worker),
      rng_(seed, "minibatch", static_cast<uint64_t>(worker)),
      scratch_(objective_->make_scratch()) {}

double PartitionWorkerBase::evaluate(int p, const Vec& x, Vec& gradient) {
  if (gradient.size() != objective_->dim()) gradient.resize(objective_->dim());
  return objective_->partition_gradient(p, x, gradient, rng_, *scratch_);
}

void PartitionWorkerBase::checkpoint(StateArchive& a) {
  a.section("partition_worker");
  a.expect(worker_, "the worker index");
  rng_.checkpoint(a);
  // The minibatch permutation persists between draws (Objective::Scratch).
  a.io(scratch_->order);
  checkpoint_worker(a);
}

GradientWorker::GradientWorker(std::shared_ptr<const Objective> objective, int worker,
                               uint64_t seed)
    : PartitionWorkerBase(std::move(objective), worker, seed) {}

void GradientWorker::compute(const Job& job, const Vec& x, WorkerOutput& out) {
  out.loss = evaluate(index(), x, out.payload);
  out.versions.assign(1, job.tag);
}

}  // namespace pacer
