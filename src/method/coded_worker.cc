#include "pacer/method/coded_worker.h"

#include "pacer/core/error.h"

namespace pacer {

CodedWorker::CodedWorker(std::shared_ptr<const Objective> objective, int worker, uint64_t seed,
                         MinibatchSampling sampling, std::vector<int> partitions,
                         std::vector<double> coefficients)
    : PartitionWorkerBase(std::move(objective), worker, seed, sampling),
      partitions_(std::move(partitions)),
      coefficients_(std::move(coefficients)) {
  PACER_CHECK(!partitions_.empty() && partitions_.size() == coefficients_.size());
}

void CodedWorker::compute(const Job& job, const Vec& x, WorkerOutput& out) {
  // One buffer per thread, not per worker: n·d doubles saved at n = 1000 (issue #15).
  thread_local Vec gradient;
  double loss = 0;
  for (size_t k = 0; k < partitions_.size(); ++k) {
    loss += evaluate(partitions_[k], job.tag, x, gradient);
    if (k == 0) {
      out.payload = coefficients_[0] * gradient;
    } else {
      out.payload.noalias() += coefficients_[k] * gradient;
    }
  }
  out.loss = loss / static_cast<double>(partitions_.size());
  out.versions.assign(partitions_.size(), job.tag);
}

PipelineWorker::PipelineWorker(std::shared_ptr<const Objective> objective, int worker,
                               uint64_t seed, MinibatchSampling sampling,
                               std::vector<int> partitions, int offset,
                               std::vector<double> coefficients)
    : PartitionWorkerBase(std::move(objective), worker, seed, sampling),
      cache_(std::move(partitions), offset),
      coefficients_(std::move(coefficients)) {
  PACER_CHECK(static_cast<int>(coefficients_.size()) == cache_.size());
}

void PipelineWorker::compute(const Job& job, const Vec& x, WorkerOutput& out) {
  double loss = 0;
  const std::span<const int> due = cache_.slots_due(job.tag);
  for (int slot : due) {
    loss += evaluate(cache_.partition(slot), job.tag, x, cache_.gradient(slot));
    cache_.store(slot, job.tag);
  }
  out.loss = loss / static_cast<double>(due.size());
  cache_.combine(coefficients_, out.payload);
  cache_.versions(out.versions);
}

}  // namespace pacer
