#include "pacer/coding/placement.h"

#include <fmt/format.h>

#include "pacer/core/error.h"

namespace pacer {

std::string placement_name(PlacementKind kind) {
  return kind == PlacementKind::kFractional ? "fr" : "cr";
}

std::vector<int> valid_fractional_stragglers(int workers) {
  std::vector<int> valid;
  for (int c = 1; c <= workers; ++c) {
    if (workers % c == 0) valid.push_back(c - 1);
  }
  return valid;
}

std::string placement_requirement(PlacementKind kind, int workers, int stragglers) {
  PACER_CHECK(workers > 0);
  if (stragglers < 0 || stragglers >= workers) {
    return fmt::format("0 <= s < workers (= {}), so that c = s + 1 <= n", workers);
  }
  if (kind == PlacementKind::kFractional && workers % (stragglers + 1) != 0) {
    return fmt::format("s + 1 dividing workers (= {}) for fractional repetition: one of {}",
                       workers, fmt::join(valid_fractional_stragglers(workers), ", "));
  }
  return "";
}

Placement::Placement(PlacementKind kind, int workers, int stragglers)
    : kind_(kind), workers_(workers), stragglers_(stragglers) {
  std::string requirement = placement_requirement(kind, workers, stragglers);
  if (!requirement.empty()) {
    fail("{} placement with n = {} workers and s = {}: expected {}", placement_name(kind), workers,
         stragglers, requirement);
  }
  const int c = load();
  sets_.resize(workers);
  for (int i = 0; i < workers; ++i) {
    const int first = kind == PlacementKind::kFractional ? (i / c) * c : i;
    for (int k = 0; k < c; ++k) sets_[i].push_back((first + k) % workers);
  }
}

bool Placement::holds(int worker, int partition) const {
  // Both placements hold a run of c consecutive partitions (cyclically) starting at S_i[0].
  const int start = sets_[worker][0];
  return (partition - start + workers_) % workers_ < load();
}

std::vector<int> Placement::holders(int partition) const {
  std::vector<int> result;
  for (int i = 0; i < workers_; ++i) {
    if (holds(i, partition)) result.push_back(i);
  }
  return result;
}

bool Placement::disjoint(int a, int b) const {
  for (int p : sets_[a]) {
    if (holds(b, p)) return false;
  }
  return true;
}

int Placement::group(int worker) const {
  PACER_CHECK(kind_ == PlacementKind::kFractional);
  return worker / load();
}

int Placement::num_groups() const {
  PACER_CHECK(kind_ == PlacementKind::kFractional);
  return workers_ / load();
}

}  // namespace pacer
