#include "pacer/run/target_estimate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pacer/core/error.h"
#include "pacer/core/rng.h"
#include "pacer/core/state.h"

namespace pacer {

TargetLossEstimator::TargetLossEstimator(const Objective& objective, int64_t sample_rows)
    : objective_(objective), scratch_(objective.make_scratch()) {
  PACER_CHECK(sample_rows >= 0);
  const int parts = objective.num_partitions();
  for (int p = 0; p < parts; ++p) population_ += objective.partition(p).rows();
  // Level 0 is kLevelChunks chunks of about sample_rows / kLevelChunks rows each (at least
  // kMinChunkRows); every partition is cut into near-equal chunks of at most that many rows (a
  // scratch holds a partition).
  const int64_t chunk_rows =
      std::max<int64_t>(kMinChunkRows, (sample_rows + kLevelChunks - 1) / kLevelChunks);
  for (int p = 0; p < parts; ++p) {
    const Batch all = Batch::of(objective.partition(p));
    const double weight =
        static_cast<double>(population_) / (static_cast<double>(parts) * all.rows);
    const int pieces = static_cast<int>((all.rows + chunk_rows - 1) / chunk_rows);
    for (int k = 0; k < pieces; ++k) {
      const int begin = static_cast<int>(static_cast<int64_t>(all.rows) * k / pieces);
      const int end = static_cast<int>(static_cast<int64_t>(all.rows) * (k + 1) / pieces);
      const Batch rows{all.features + static_cast<int64_t>(begin) * all.cols, all.labels + begin,
                       end - begin, all.cols};
      chunks_.push_back(Chunk{rows, weight});
    }
  }
  Rng rng(0, "target-sample");  // one order for every run seed and method
  rng.shuffle(chunks_);
  const size_t total = chunks_.size();
  size_t k = sample_rows == 0 ? total : static_cast<size_t>(kLevelChunks);
  for (; k < total; k *= 2) level_chunks_.push_back(k);
  level_chunks_.push_back(total);
  for (size_t chunks : level_chunks_) {
    int64_t rows = 0;
    for (size_t c = 0; c < chunks; ++c) rows += chunks_[c].rows.rows;
    level_rows_.push_back(rows);
  }
  // The gradients an anchor keeps: the chunks of the first three levels (within 256 MiB), and of
  // as many more sampled levels as fit in 64 MiB, so that a close decision is refined one level at
  // a time with the second-order estimate before F itself (a small model keeps every sampled
  // level's; a large one's anchor, kept in checkpoints too, stays as small as before).
  if (levels() > 1) {
    const double gradient_bytes = 8.0 * static_cast<double>(objective.dim());
    const size_t first_three = level_chunks_[std::min<size_t>(2, level_chunks_.size() - 2)];
    gradient_chunks_ =
        std::min(first_three, static_cast<size_t>(256.0 * 1024 * 1024 / gradient_bytes));
    for (size_t l = 0; l + 1 < level_chunks_.size(); ++l) {
      if (gradient_bytes * static_cast<double>(level_chunks_[l]) <= 64.0 * 1024 * 1024) {
        gradient_chunks_ = std::max(gradient_chunks_, level_chunks_[l]);
      }
    }
  }
}

std::vector<Batch> TargetLossEstimator::batches(size_t from, size_t to) const {
  std::vector<Batch> out;
  for (size_t c = from; c < to; ++c) out.push_back(chunks_[c].rows);
  return out;
}

void TargetLossEstimator::set_pool(ComputePool* pool, const Objective::Slots* slots) {
  PACER_CHECK((pool == nullptr) == (slots == nullptr));
  pool_ = pool;
  slots_ = slots;
}

int TargetLossEstimator::level_of(const Sums& sums) const {
  int level = -1;
  while (level + 1 < levels() && sums.y.size() >= level_chunks_[static_cast<size_t>(level + 1)]) {
    ++level;
  }
  return level;
}

void TargetLossEstimator::extend(const Vec& x, int level, Sums& sums) {
  PACER_CHECK(level >= 0 && level < levels());
  const size_t from = sums.y.size(), to = level_chunks_[static_cast<size_t>(level)];
  if (from >= to) return;
  const std::vector<Batch> rows = batches(from, to);
  const std::vector<double> losses = pool_ ? objective_.batch_losses(x, rows, *pool_, *slots_)
                                           : objective_.batch_losses(x, rows, *scratch_);
  for (size_t c = from; c < to; ++c) {
    const Chunk& chunk = chunks_[c];
    sums.y.push_back(chunk.weight * chunk.rows.rows * losses[c - from]);
  }
}

TargetLoss TargetLossEstimator::from(const std::vector<double>& values, size_t k) const {
  const double chunks = static_cast<double>(chunks_.size());
  const double scale = chunks / (static_cast<double>(k) * static_cast<double>(population_));
  double sum = 0;
  for (size_t c = 0; c < k; ++c) sum += values[c];
  if (k == chunks_.size()) return TargetLoss{sum / static_cast<double>(population_), 0};
  const double mean = sum / static_cast<double>(k);
  double squares = 0;
  for (size_t c = 0; c < k; ++c) squares += (values[c] - mean) * (values[c] - mean);
  const double variance = squares / static_cast<double>(k - 1);
  const double correction = 1.0 - static_cast<double>(k) / chunks;
  const double se = (chunks / static_cast<double>(population_)) *
                    std::sqrt(correction * variance / static_cast<double>(k));
  return TargetLoss{scale * sum, se};
}

TargetLoss TargetLossEstimator::plain_estimate(const Sums& sums) const {
  PACER_CHECK(!sums.y.empty());
  return from(sums.y, sums.y.size());
}

TargetLoss TargetLossEstimator::estimate(const Sums& sums, const Vec& x) const {
  if (!anchored() || exact(sums)) return plain_estimate(sums);
  const size_t k = sums.y.size();
  const double population = static_cast<double>(population_);
  std::vector<double> changes(k);
  double first_order = 0;  // ∇F(x_a)·Δ, known exactly
  // The anchor's own gradients (a checkpoint of another build may hold fewer than this one keeps).
  if (k <= anchor_grads_.size()) {
    const Vec delta = x - anchor_x_;
    first_order = anchor_total_.dot(delta) / population;
    for (size_t c = 0; c < k; ++c) {
      changes[c] = sums.y[c] - anchor_.y[c] - anchor_grads_[c].dot(delta);
    }
  } else {
    for (size_t c = 0; c < k; ++c) changes[c] = sums.y[c] - anchor_.y[c];
  }
  const TargetLoss change = from(changes, k);
  return TargetLoss{anchor_loss() + first_order + change.value, change.se};
}

TargetLossEstimator::Sums TargetLossEstimator::anchor(const Vec& x) {
  const size_t total = chunks_.size();
  std::vector<Vec> kept(gradient_chunks_);
  Vec sum = Vec::Zero(objective_.dim());
  // Called in chunk order: the sum is the same for any number of threads.
  const Objective::GradientUse use = [&](int c, const Vec& gradient) {
    const Chunk& chunk = chunks_[static_cast<size_t>(c)];
    const double scale = chunk.weight * chunk.rows.rows;
    if (static_cast<size_t>(c) < gradient_chunks_) {
      kept[static_cast<size_t>(c)] = scale * gradient;
      sum += kept[static_cast<size_t>(c)];
    } else {
      sum += scale * gradient;
    }
  };
  const std::vector<Batch> rows = batches(0, total);
  const std::vector<double> losses = pool_
                                         ? objective_.batch_gradients(x, rows, use, *pool_, *slots_)
                                         : objective_.batch_gradients(x, rows, use, *scratch_);
  Sums sums;
  for (size_t c = 0; c < total; ++c) {
    sums.y.push_back(chunks_[c].weight * chunks_[c].rows.rows * losses[c]);
  }
  anchor_ = sums;
  anchor_x_ = x;
  anchor_grads_ = std::move(kept);
  anchor_total_ = std::move(sum);
  return sums;
}

int TargetLossEstimator::refinement_ceiling() const {
  if (!anchored()) return levels() - 1;
  int level = 0;
  while (level + 1 < levels() - 1 &&
         level_chunks_[static_cast<size_t>(level + 1)] <= anchor_grads_.size()) {
    ++level;
  }
  return level;
}

double TargetLossEstimator::anchor_loss() const {
  PACER_CHECK(anchored());
  return plain_estimate(anchor_).value;
}

double TargetLossEstimator::anchor_grad_norm_sq() const {
  PACER_CHECK(anchored());
  return (anchor_total_ / static_cast<double>(population_)).squaredNorm();
}

void TargetLossEstimator::checkpoint(StateArchive& a) {
  a.section("target_estimate");
  a.io(anchor_.y);
  a.io(anchor_x_);
  a.io(anchor_grads_);
  a.io(anchor_total_);
}

}  // namespace pacer
