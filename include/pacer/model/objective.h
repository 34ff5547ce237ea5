// The training objective of DESIGN.md section 2: F(x) = (1/P) Σ_p f_p(x).
//
// An Objective owns the P partitions (each a contiguous copy of its rows, so a full-partition
// gradient reads memory in order) and a shared Model. g_p(x) is the gradient of f_p on a minibatch
// of `batch` rows of D_p (or all of D_p when batch is 0 or at least its size), and the three
// partition_gradient functions below differ only in which rows (DESIGN.md section 2, the
// method layer's training.sampling):
//   partition_gradient        draws from a stream that continues across draws, through a
//                             permutation that persists in the Scratch (a worker's own stream);
//   partition_gradient_fresh  draws afresh from the stream it is given: the rows depend on that
//                             stream alone, not on earlier draws (a stream keyed by partition and
//                             step gives every worker the same rows);
//   partition_gradient_first  the first `batch` rows, always (the PGC authors' code).
// Both random draws are without replacement and uniform over D_p's batch-subsets. The Objective is
// const and thread-compatible: each worker brings its own Scratch and Rng.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "pacer/core/compute_pool.h"
#include "pacer/core/rng.h"
#include "pacer/core/vector.h"
#include "pacer/data/dataset.h"
#include "pacer/data/partition.h"
#include "pacer/model/model.h"

namespace pacer {

class Objective {
 public:
  // Per-worker scratch, sized once by make_scratch() so that gradient calls do not allocate.
  struct Scratch {
    std::unique_ptr<Workspace> workspace;  // for the largest partition
    Dataset gathered;                      // the current minibatch (batch rows)
    std::vector<int> order;  // a permutation of the partition's rows; its first `batch` entries
                             // are the current minibatch (partial Fisher-Yates), and it persists
                             // between draws
    Vec gradient;            // one partition's gradient inside full_gradient
    // partition_gradient_fresh: the identity permutation of the largest partition's rows, swapped
    // during a draw and restored before it returns, and the draw's swaps (to undo them).
    std::vector<int> identity;
    std::vector<int> swaps;
  };

  // Copies the rows of each partition out of train. Partitions may differ in size; an empty one is
  // an Error naming the data set. Requires batch >= 0 and at least one partition.
  Objective(std::shared_ptr<const Model> model, const Dataset& train, const Partition& partition,
            int batch);

  const Model& model() const { return *model_; }
  int num_partitions() const { return static_cast<int>(parts_.size()); }
  const Dataset& partition(int p) const { return parts_[p]; }
  int batch() const { return batch_; }
  int64_t dim() const { return model_->num_params(); }

  std::unique_ptr<Scratch> make_scratch() const;

  // Every gradient call below resizes grad to dim() (which allocates only if it had another size)
  // and overwrites it. `scratch` must come from this Objective's make_scratch().

  // g_p(x) into grad; returns the minibatch loss. Draws the minibatch from rng (nothing is drawn
  // when the batch is the whole partition).
  double partition_gradient(int p, const Vec& x, Vec& grad, Rng& rng, Scratch& scratch) const;
  // The same on rows drawn afresh from rng (see the file comment): O(batch) per draw, and the
  // Scratch is left as it was found.
  double partition_gradient_fresh(int p, const Vec& x, Vec& grad, Rng& rng, Scratch& scratch) const;
  // The same on the first `batch` rows of D_p.
  double partition_gradient_first(int p, const Vec& x, Vec& grad, Scratch& scratch) const;
  // Exact f_p(x) and ∇f_p(x) over the whole partition.
  double full_partition_gradient(int p, const Vec& x, Vec& grad, Scratch& scratch) const;
  // F(x) = (1/P) Σ_p f_p(x) and ∇F(x) = (1/P) Σ_p ∇f_p(x) into grad.
  double full_gradient(const Vec& x, Vec& grad, Scratch& scratch) const;
  // f_p(x) for every p.
  std::vector<double> partition_losses(const Vec& x, Scratch& scratch) const;

  // The same two on the threads of `pool` (core/compute_pool.h), one partition per task, at most
  // slots.size() (>= 1) at a time, each task with a scratch of its own; the partitions' results
  // are combined in partition order, so both return exactly, bit for bit, what the functions
  // above return, for any pool and number of slots. Call from one thread at a time.
  using Slots = std::vector<std::unique_ptr<Scratch>>;
  double full_gradient(const Vec& x, Vec& grad, ComputePool& pool, const Slots& slots) const;
  std::vector<double> partition_losses(const Vec& x, ComputePool& pool, const Slots& slots) const;

  // The model's mean loss on each of `batches`, in order. Each batch must have at most as many
  // rows as the largest partition (what a scratch's workspace holds). The pool
  // overload computes one batch per task like the functions above and returns the same values,
  // bit for bit, for any pool and number of slots.
  std::vector<double> batch_losses(const Vec& x, const std::vector<Batch>& batches,
                                   Scratch& scratch) const;
  std::vector<double> batch_losses(const Vec& x, const std::vector<Batch>& batches,
                                   ComputePool& pool, const Slots& slots) const;
  // The same with each batch's gradient: use(k, gradient) is called on the calling thread for
  // k = 0, 1, ... in order, with the gradient of batch k's mean loss (valid during the call only).
  // Returns the mean losses.
  using GradientUse = std::function<void(int, const Vec&)>;
  std::vector<double> batch_gradients(const Vec& x, const std::vector<Batch>& batches,
                                      const GradientUse& use, Scratch& scratch) const;
  std::vector<double> batch_gradients(const Vec& x, const std::vector<Batch>& batches,
                                      const GradientUse& use, ComputePool& pool,
                                      const Slots& slots) const;

 private:
  // Whether g_p is computed on a minibatch (0 < batch < |D_p|), not on the whole partition.
  bool samples(int p) const;
  // The model's loss and gradient on the first `batch` rows of scratch.gathered.
  double gathered_gradient(const Vec& x, Vec& grad, Scratch& scratch) const;
  // Copies row `row` of D_p into row `i` of scratch.gathered.
  void gather(int p, int row, int i, Scratch& scratch) const;

  // For k = 0..count−1 in turn: compute(k, slot) runs on the pool (slot = k mod slots), then
  // combine(k, slot) on the calling thread once compute(k) is done, in increasing k.
  template <typename Compute, typename Combine>
  void for_each_task(int count, ComputePool& pool, const Slots& slots, Compute&& compute,
                     Combine&& combine) const;

  std::shared_ptr<const Model> model_;
  std::vector<Dataset> parts_;
  int batch_;
  int max_rows_;
};

}  // namespace pacer
