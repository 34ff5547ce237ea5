// Workers that evaluate partition gradients g_p(x) (DESIGN.md section 2).
#pragma once

#include <memory>

#include "pacer/core/rng.h"
#include "pacer/method/protocol.h"
#include "pacer/model/objective.h"

namespace pacer {

// What every partition-gradient worker holds: the shared objective, its own scratch memory, its
// own minibatch stream Rng(seed, "minibatch", worker), and a gradient buffer.
class PartitionWorkerBase : public Worker {
 public:
  // The minibatch stream's position, then checkpoint_worker.
  void checkpoint(StateArchive& a) final;
  // The model's: x is used only through evaluate().
  Precision model_precision() const final { return objective_->model().parameter_precision(); }

 protected:
  PartitionWorkerBase(std::shared_ptr<const Objective> objective, int worker, uint64_t seed);
  // g_p(x) into `gradient` (resized to the model dimension if needed); returns the minibatch
  // loss.
  double evaluate(int p, const Vec& x, Vec& gradient);
  const Objective& objective() const { return *objective_; }
  int index() const { return worker_; }
  // A worker's own state between jobs (caches), for checkpoints.
  virtual void checkpoint_worker(StateArchive& /*a*/) {}

 private:
  std::shared_ptr<const Objective> objective_;
  int worker_;
  Rng rng_;
  std::unique_ptr<Objective::Scratch> scratch_;
};

// Worker i sends g_i(x), the gradient of its own partition D_i: one work unit per job. Used by
// DGD, IS-SGD and every asynchronous method.
class GradientWorker : public PartitionWorkerBase {
 public:
  GradientWorker(std::shared_ptr<const Objective> objective, int worker, uint64_t seed);
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override;
};

}  // namespace pacer
