// The per-worker cache of Pipelined Gradient Coding (DESIGN.md section 3.1, "Pipeline").
//
// Worker i keeps C_i[p], its most recent gradient of each p ∈ S_i, in c slots laid out in the
// order of S_i, with the step (model version) each was computed at. The schedule:
//   * until every slot has been filled once (the warm-up), a job refreshes all c slots at its x
//     (c work units);
//   * afterwards, the job of step t refreshes only slot (t + o) mod c, i.e. partition
//     p_i(t) = S_i[(t + o) mod c] (one work unit).
// The offset o is 0 for CR placement (so p_i(t) = (i + t mod c) mod n and every partition is
// refreshed exactly once per step across the cluster), and i mod c for FR with staggering (the c
// members of a group refresh c different partitions each step).
//
// If the worker answers every step, cached gradients are 0..c−1 steps old when sent. A worker
// that misses steps (a straggler whose late job finished, or a cancelled job) keeps older copies.
//
// The cache holds vectors only; computing gradients is the caller's business.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pacer/core/vector.h"

namespace pacer {

class StateArchive;

class PipelineCache {
 public:
  // `partitions` = S_i in its fixed order (c >= 1 entries), `offset` = o (any integer >= 0).
  PipelineCache(std::vector<int> partitions, int offset);

  int size() const { return static_cast<int>(partitions_.size()); }  // c
  int partition(int slot) const { return partitions_[slot]; }
  int offset() const { return offset_; }
  // Whether every slot has been filled at least once.
  bool warm() const { return filled_ == size(); }

  // The slots the job of `step` refreshes: all c before warm-up, else the one slot
  // (step + o) mod c. Does not change the cache.
  std::span<const int> slots_due(int64_t step) const;
  // The partition the job of `step` refreshes once warm: S_i[(step + o) mod c].
  int partition_due(int64_t step) const;

  // The slot's gradient buffer, to be overwritten by the caller, then marked with store().
  Vec& gradient(int slot) { return gradients_[slot]; }
  const Vec& gradient(int slot) const { return gradients_[slot]; }
  // Records that the slot now holds the gradient computed at model version `version`.
  void store(int slot, int64_t version);
  int64_t version(int slot) const { return versions_[slot]; }

  // out = Σ_k weights[k]·C[k] over the slots in order (weights has c entries). Requires warm().
  void combine(std::span<const double> weights, Vec& out) const;
  // The versions of the c slots, in slot order (what a reply reports for staleness).
  void versions(std::vector<int64_t>& out) const { out.assign(versions_.begin(), versions_.end()); }
  // The slots' gradients and versions, for checkpoints (core/state.h).
  void checkpoint(StateArchive& a);

 private:
  std::vector<int> partitions_;
  int offset_;
  std::vector<int> slots_;  // 0..c−1, viewed whole or one entry at a time by slots_due()
  std::vector<Vec> gradients_;
  std::vector<int64_t> versions_;
  std::vector<bool> stored_;
  int filled_ = 0;
};

}  // namespace pacer
