#include "pacer/method/gradient_worker.h"

#include <fmt/format.h>

#include "pacer/core/state.h"

namespace pacer {

MinibatchSampling read_minibatch_sampling(const Config& config) {
  const std::string sampling =
      config.get_choice("training.sampling", "shared", {"shared", "independent", "fixed"});
  if (sampling == "independent") return MinibatchSampling::kIndependent;
  return sampling == "fixed" ? MinibatchSampling::kFixed : MinibatchSampling::kShared;
}

void check_asynchronous_sampling(const Config& config) {
  const std::string sampling =
      config.get_choice("training.sampling", "independent", {"shared", "independent", "fixed"});
  if (sampling == "independent") return;
  config.fail_key(
      "training.sampling",
      fmt::format("\"independent\" or no key for the asynchronous method '{}': its workers each "
                  "own a partition and draw their minibatches from their own stream (\"{}\" is "
                  "for synchronous methods)",
                  config.get_string("method.name", ""), sampling));
}

PartitionWorkerBase::PartitionWorkerBase(std::shared_ptr<const Objective> objective, int worker,
                                         uint64_t seed, MinibatchSampling sampling)
    : objective_(std::move(objective)),
      worker_(worker),
      seed_(seed),
      sampling_(sampling),
      rng_(seed, "minibatch", static_cast<uint64_t>(worker)),
      scratch_(objective_->make_scratch()) {}

double PartitionWorkerBase::evaluate(int p, int64_t tag, const Vec& x, Vec& gradient) {
  if (gradient.size() != objective_->dim()) gradient.resize(objective_->dim());
  switch (sampling_) {
    case MinibatchSampling::kIndependent:
      return objective_->partition_gradient(p, x, gradient, rng_, *scratch_);
    case MinibatchSampling::kFixed:
      return objective_->partition_gradient_first(p, x, gradient, *scratch_);
    case MinibatchSampling::kShared:
      break;
  }
  // Two O(1) stream constructions: the partition's stream seeds the step's.
  const uint64_t partition_seed =
      Rng(seed_, "minibatch-partition", static_cast<uint64_t>(p)).next_u64();
  Rng rows(partition_seed, "minibatch-step", static_cast<uint64_t>(tag));
  return objective_->partition_gradient_fresh(p, x, gradient, rows, *scratch_);
}

void PartitionWorkerBase::checkpoint(StateArchive& a) {
  a.section("partition_worker");
  a.expect(worker_, "the worker index");
  // kIndependent's stream and permutation (saved whatever the sampling: kShared and kFixed keep no
  // state between draws).
  rng_.checkpoint(a);
  a.io(scratch_->order);
  checkpoint_worker(a);
}

GradientWorker::GradientWorker(std::shared_ptr<const Objective> objective, int worker,
                               uint64_t seed, MinibatchSampling sampling)
    : PartitionWorkerBase(std::move(objective), worker, seed, sampling) {}

void GradientWorker::compute(const Job& job, const Vec& x, WorkerOutput& out) {
  out.loss = evaluate(index(), job.tag, x, out.payload);
  out.versions.assign(1, job.tag);
}

}  // namespace pacer
