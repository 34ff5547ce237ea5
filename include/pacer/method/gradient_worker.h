// Workers that evaluate partition gradients g_p(x) (DESIGN.md section 2).
#pragma once

#include <memory>

#include "pacer/core/config.h"
#include "pacer/core/rng.h"
#include "pacer/method/protocol.h"
#include "pacer/model/objective.h"

namespace pacer {

// Which rows a minibatch of partition p holds when a job of step (tag) t evaluates g_p
// (training.sampling; docs/methods.md states each method's):
//   kShared       Objective::partition_gradient_fresh from Rng(s_p, "minibatch-step", t), where
//                 s_p is the first number of Rng(seed, "minibatch-partition", p): every worker that
//                 evaluates p at step t draws the same rows, whatever it drew before, so the c
//                 copies of g_p(x_t) in a gradient code agree (synchronous methods' default).
//   kIndependent  Objective::partition_gradient from the worker's own stream
//                 Rng(seed, "minibatch", worker), continued from job to job (asynchronous
//                 methods, whose worker owns its partition; before training.sampling existed,
//                 every method).
//   kFixed        Objective::partition_gradient_first: the first `batch` rows, every step (the PGC
//                 authors' code).
// With batch 0 (or at least a partition's size) all three are the whole partition.
enum class MinibatchSampling { kShared, kIndependent, kFixed };

// Reads training.sampling ("shared", default, "independent" or "fixed") for a synchronous method.
MinibatchSampling read_minibatch_sampling(const Config& config);
// For an asynchronous method, whose workers always draw independently: training.sampling may be
// absent or "independent"; "shared" or "fixed" is an Error naming the key, the method and why.
// Records "independent" in the resolved configuration.
void check_asynchronous_sampling(const Config& config);

// What every partition-gradient worker holds: the shared objective, its own scratch memory, its
// minibatch rule (MinibatchSampling, with its own stream for kIndependent), and a gradient buffer.
class PartitionWorkerBase : public Worker {
 public:
  // The minibatch stream's position, then checkpoint_worker.
  void checkpoint(StateArchive& a) final;
  // The model's: x is used only through evaluate().
  Precision model_precision() const final { return objective_->model().parameter_precision(); }

 protected:
  PartitionWorkerBase(std::shared_ptr<const Objective> objective, int worker, uint64_t seed,
                      MinibatchSampling sampling);
  // g_p(x) for the job of step `tag` into `gradient` (resized to the model dimension if needed);
  // returns the minibatch loss.
  double evaluate(int p, int64_t tag, const Vec& x, Vec& gradient);
  const Objective& objective() const { return *objective_; }
  int index() const { return worker_; }
  // A worker's own state between jobs (caches), for checkpoints.
  virtual void checkpoint_worker(StateArchive& /*a*/) {}

 private:
  std::shared_ptr<const Objective> objective_;
  int worker_;
  uint64_t seed_;
  MinibatchSampling sampling_;
  Rng rng_;  // kIndependent's stream
  std::unique_ptr<Objective::Scratch> scratch_;
};

// Worker i sends g_i(x), the gradient of its own partition D_i: one work unit per job. Used by
// DGD, IS-SGD and every asynchronous method.
class GradientWorker : public PartitionWorkerBase {
 public:
  GradientWorker(std::shared_ptr<const Objective> objective, int worker, uint64_t seed,
                 MinibatchSampling sampling);
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override;
};

}  // namespace pacer
