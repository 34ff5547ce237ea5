// Workers of the gradient-coding methods (DESIGN.md section 3.1).
//
// Worker i holds the partitions S_i of its placement (coding/placement.h), listed in a fixed
// order, and one coefficient per entry (a row of the encoding matrix restricted to S_i: all ones
// for plain sums). Both workers report, in WorkerOutput::versions, the step at which each of the
// c partition gradients in their message was computed, in the order of S_i.
#pragma once

#include <memory>
#include <vector>

#include "pacer/coding/pipeline.h"
#include "pacer/method/gradient_worker.h"

namespace pacer {

// GC-FR, GC-CR, IS-GC: every job computes g_p(x) for every p ∈ S_i at the job's model (c work
// units) and sends m_i = Σ_k coefficients[k] · g_{S_i[k]}(x), summed in the order of S_i. The
// reported loss is the mean of the c minibatch losses. The partition gradients pass through one
// buffer per thread, so n workers hold no n·d scratch between jobs.
class CodedWorker : public PartitionWorkerBase {
 public:
  // `partitions` (S_i) and `coefficients` have the same length c >= 1.
  CodedWorker(std::shared_ptr<const Objective> objective, int worker, uint64_t seed,
              MinibatchSampling sampling, std::vector<int> partitions,
              std::vector<double> coefficients);
  double units(const Job&) const override { return static_cast<double>(partitions_.size()); }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override;

 private:
  std::vector<int> partitions_;
  std::vector<double> coefficients_;
};

// PGC-FR, PGC-CR: the pipeline of coding/pipeline.h. The first job computes all c partitions at
// its model (the warm-up, c work units); every later job of step t computes only
// p_i(t) = S_i[(t + offset) mod c] (one work unit) into the cache. Every job sends
// m_i = Σ_k coefficients[k] · C_i[S_i[k]], the coded sum of the cache. The reported loss is the
// mean minibatch loss of the gradients computed by this job: the one fresh partition's, or the c
// partitions' at the warm-up (the stale cached ones are not re-evaluated).
//
// A cancelled job never reaches compute(), so it leaves the cache as it was (and a cancelled
// warm-up is redone by the next job).
class PipelineWorker : public PartitionWorkerBase {
 public:
  PipelineWorker(std::shared_ptr<const Objective> objective, int worker, uint64_t seed,
                 MinibatchSampling sampling, std::vector<int> partitions, int offset,
                 std::vector<double> coefficients);
  double units(const Job& job) const override {
    return static_cast<double>(cache_.slots_due(job.tag).size());
  }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override;
  const PipelineCache& cache() const { return cache_; }

 protected:
  void checkpoint_worker(StateArchive& a) override { cache_.checkpoint(a); }

 private:
  PipelineCache cache_;
  std::vector<double> coefficients_;
};

}  // namespace pacer
