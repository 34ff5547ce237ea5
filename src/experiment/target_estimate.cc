#include "pacer/experiment/target_estimate.h"

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
  // Each partition in near-equal chunks of at most kChunkRows rows (a scratch holds a partition).
  for (int p = 0; p < parts; ++p) {
    const Batch all = Batch::of(objective.partition(p));
    const double weight =
        static_cast<double>(population_) / (static_cast<double>(parts) * all.rows);
    const int pieces = (all.rows + kChunkRows - 1) / kChunkRows;
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
  const int64_t wanted = (sample_rows + kChunkRows - 1) / kChunkRows;
  size_t k = sample_rows == 0 ? total : std::max<size_t>(kMinChunks, static_cast<size_t>(wanted));
  for (; k < total; k *= 2) level_chunks_.push_back(k);
  level_chunks_.push_back(total);
  for (size_t chunks : level_chunks_) {
    int64_t rows = 0;
    for (size_t c = 0; c < chunks; ++c) rows += chunks_[c].rows.rows;
    level_rows_.push_back(rows);
  }
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
  std::vector<Batch> batches;
  for (size_t c = from; c < to; ++c) batches.push_back(chunks_[c].rows);
  const std::vector<double> losses = pool_ ? objective_.batch_losses(x, batches, *pool_, *slots_)
                                           : objective_.batch_losses(x, batches, *scratch_);
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

TargetLoss TargetLossEstimator::estimate(const Sums& sums) const {
  if (!anchored() || exact(sums)) return plain_estimate(sums);
  const size_t k = sums.y.size();
  std::vector<double> changes(k);
  for (size_t c = 0; c < k; ++c) changes[c] = sums.y[c] - anchor_.y[c];
  TargetLoss change = from(changes, k);
  const TargetLoss at_anchor = plain_estimate(anchor_);
  return TargetLoss{at_anchor.value + change.value, change.se};
}

void TargetLossEstimator::set_anchor(const Sums& sums) {
  PACER_CHECK(exact(sums));
  anchor_ = sums;
}

void TargetLossEstimator::checkpoint(StateArchive& a) {
  a.section("target_estimate");
  a.io(anchor_.y);
}

}  // namespace pacer
