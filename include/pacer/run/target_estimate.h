// The quantity a run's target is judged on when target.on = "full": the full training loss
// F(x) = (1/P) Σ_p f_p(x) of DESIGN.md section 2, evaluated on as many training rows as a decision
// needs (DESIGN.md section 6: one method-neutral criterion).
//
// Evaluating F on every row at every step the target watch looks at would cost far more than the
// training itself on large data sets (60 000 Fashion-MNIST rows against 252 per step), so F is
// estimated from clusters of rows, and refined where a decision is close:
//   * Clusters. Every partition's rows (contiguous in memory) are cut into chunks of about
//     target.sample / 16 rows (at least 32), C chunks in all, put in one random order by the
//     stream Rng(0, "target-sample"). Level l evaluates the first k_l = 16 · 2^l chunks of that
//     order, the last level every chunk: F itself.
//   * Plain estimate (cluster sampling, Horvitz–Thompson): with y_c = w_p · r_c · ℓ̄_c for chunk c
//     of partition p (r_c rows, mean loss ℓ̄_c, w_p = N / (P · |D_p|), N the rows in partitions),
//     F̂ = C / (k N) · Σ_{c < k} y_c is unbiased for F, and
//     se² = (1 − k/C) · (C/N)² · s_y² / k, with s_y² the sample variance of the k values y_c. At
//     k = C it is F exactly, se = 0.
//   * Anchored estimate (control variates): anchor(x_a) evaluates every chunk's loss and gradient
//     G_c = ∇y_c(x_a) at a model x_a, so F(x_a) and ∇F(x_a) = Σ_c G_c / N are known exactly. Then,
//     with Δ = x − x_a,
//       F̃(x) = F(x_a) + ∇F(x_a)·Δ + C / (k N) · Σ_{c < k} (y_c(x) − y_c(x_a) − G_c·Δ),
//     unbiased as well, and far more precise near x_a: what is left to estimate is the second-
//     order change of each row's loss, not its change. G_c is kept for the chunks of the first
//     three levels (within 256 MiB) and of every further sampled level that fits in 64 MiB (for
//     softmax regression on Fashion-MNIST, 16 MB: every sampled level); above those, the
//     first-order term is left in the differences (F(x_a) + C / (k N) · Σ (y_c(x) − y_c(x_a))).
//   * The standard error has k − 1 ≥ 15 degrees of freedom: a decision made where
//     |estimate − target| ≥ 3 se (TargetWatch) is wrong with probability below 1 % (two-sided
//     Student t at 15 df: 0.9 %); closer ones are refined (refinement_ceiling), up to F itself.
// With target.sample = 0, or at least the rows in partitions, level 0 is F itself. Evaluations
// run one chunk per task on the pool given and combine in chunk order, so every value is the
// same, bit for bit, for any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pacer/core/compute_pool.h"
#include "pacer/core/vector.h"
#include "pacer/model/objective.h"

namespace pacer {

class StateArchive;

// One evaluation of the target quantity.
struct TargetLoss {
  double value = 0;  // F(x) (exact) or its unbiased estimate
  double se = 0;     // its standard error over the draw of the chunks (0: exact)
};

class TargetLossEstimator {
 public:
  static constexpr int kLevelChunks = 16;   // chunks at level 0
  static constexpr int kMinChunkRows = 32;  // rows per chunk at least

  // One model's evaluation so far: y_c of the first y.size() chunks of the order.
  struct Sums {
    std::vector<double> y;
  };

  // `sample_rows` is target.sample (0 or >= the rows in partitions: level 0 is exact). The
  // objective must outlive the estimator.
  TargetLossEstimator(const Objective& objective, int64_t sample_rows);
  TargetLossEstimator(const TargetLossEstimator&) = delete;
  TargetLossEstimator& operator=(const TargetLossEstimator&) = delete;

  // Evaluations on `pool`'s threads with one scratch per slot; without this, on the calling thread.
  void set_pool(ComputePool* pool, const Objective::Slots* slots);

  int levels() const { return static_cast<int>(level_chunks_.size()); }
  int64_t rows_at(int level) const { return level_rows_[static_cast<size_t>(level)]; }
  int64_t population() const { return population_; }
  // The highest level `sums` completes (-1: none).
  int level_of(const Sums& sums) const;
  bool exact(const Sums& sums) const { return sums.y.size() == chunks_.size(); }
  // The last level a close decision is refined to one level at a time: while anchored, the last
  // level whose chunks' gradients the anchor keeps, or level 0 when it keeps fewer (the levels
  // above it would be estimated without the second-order term: a decision still close there goes
  // to F itself at once); without an anchor, F itself.
  int refinement_ceiling() const;

  // Evaluates the chunks `sums` lacks up to `level`, at x (the model `sums` belongs to).
  void extend(const Vec& x, int level, Sums& sums);
  // The estimate from `sums` of the model x: anchored when an anchor is set, plain otherwise.
  TargetLoss estimate(const Sums& sums, const Vec& x) const;
  TargetLoss plain_estimate(const Sums& sums) const;

  // Evaluates every chunk's loss and gradient at x and makes x the anchor; returns the exact
  // evaluation of x. Costs one pass of loss and gradient over every row.
  Sums anchor(const Vec& x);
  bool anchored() const { return !anchor_.y.empty(); }
  // At the anchor, exactly: F and ‖∇F‖² (for a final evaluation at the same model).
  double anchor_loss() const;
  double anchor_grad_norm_sq() const;

  // The anchor, for checkpoints.
  void checkpoint(StateArchive& a);

 private:
  struct Chunk {
    Batch rows;
    double weight = 1;  // w_p of its partition
  };
  TargetLoss from(const std::vector<double>& values, size_t k) const;
  // The batches of chunks [from, to).
  std::vector<Batch> batches(size_t from, size_t to) const;

  const Objective& objective_;
  int64_t population_ = 0;
  std::vector<Chunk> chunks_;  // in the random order
  std::vector<size_t> level_chunks_;
  std::vector<int64_t> level_rows_;
  std::unique_ptr<Objective::Scratch> scratch_;
  ComputePool* pool_ = nullptr;
  const Objective::Slots* slots_ = nullptr;
  size_t gradient_chunks_ = 0;     // chunks whose gradient an anchor keeps
  Sums anchor_;                    // every chunk's y_c at the anchor (empty: none)
  Vec anchor_x_;                   // x_a
  std::vector<Vec> anchor_grads_;  // G_c for c < gradient_chunks_
  Vec anchor_total_;               // Σ_c G_c = N ∇F(x_a)
};

}  // namespace pacer
