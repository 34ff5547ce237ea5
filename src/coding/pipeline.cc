#include "pacer/coding/pipeline.h"

#include "pacer/core/error.h"
#include "pacer/core/state.h"

namespace pacer {

PipelineCache::PipelineCache(std::vector<int> partitions, int offset)
    : partitions_(std::move(partitions)),
      offset_(offset),
      gradients_(partitions_.size()),
      versions_(partitions_.size(), -1),
      stored_(partitions_.size(), false) {
  PACER_CHECK(!partitions_.empty() && offset >= 0);
  for (int k = 0; k < size(); ++k) slots_.push_back(k);
}

std::span<const int> PipelineCache::slots_due(int64_t step) const {
  if (!warm()) return slots_;
  const int slot = static_cast<int>((step + offset_) % size());
  return std::span<const int>(slots_).subspan(slot, 1);
}

int PipelineCache::partition_due(int64_t step) const {
  return partitions_[(step + offset_) % size()];
}

void PipelineCache::store(int slot, int64_t version) {
  versions_[slot] = version;
  if (!stored_[slot]) {
    stored_[slot] = true;
    ++filled_;
  }
}

void PipelineCache::combine(std::span<const double> weights, Vec& out) const {
  PACER_CHECK(warm() && static_cast<int>(weights.size()) == size());
  out = weights[0] * gradients_[0];
  for (int k = 1; k < size(); ++k) out.noalias() += weights[k] * gradients_[k];
}

void PipelineCache::checkpoint(StateArchive& a) {
  a.section("pipeline_cache");
  a.expect(size(), "the worker's partitions c");
  a.io(gradients_);
  a.io(versions_);
  a.io(stored_);
  a.io(filled_);
}

}  // namespace pacer
