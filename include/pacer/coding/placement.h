// Data placement of the coded synchronous schemes (DESIGN.md section 3.1).
//
// n workers, s stragglers tolerated, c = s + 1 partitions per worker, P = n partitions. Worker i
// holds the partitions S_i, listed in a fixed order (the order in which its coefficients, its
// pipeline cache slots and its warm-up are laid out):
//   fractional repetition (FR)  needs n % c == 0. Group k = workers kc..kc+c−1; every member of
//                               group k holds S_i = (kc, kc+1, ..., kc+c−1). Groups are disjoint.
//   cyclic repetition (CR)      S_i = (i, i+1, ..., i+s) mod n: worker i's window starts at i.
// Every partition is held by exactly c workers in both placements.
#pragma once

#include <string>
#include <vector>

namespace pacer {

enum class PlacementKind { kFractional, kCyclic };

// "fr" or "cr".
std::string placement_name(PlacementKind kind);

// The values of s for which FR placement with `workers` workers exists: every s >= 0 with
// (s + 1) dividing workers, in increasing order (so always 0 and workers − 1).
std::vector<int> valid_fractional_stragglers(int workers);

// Empty when `stragglers` is valid for `kind` with `workers` (> 0) workers; otherwise a phrase
// saying what would be valid, for an error message after "expected":
// "0 <= s < workers (= 12), so that c = s + 1 <= n" (both kinds), or
// "s + 1 dividing workers (= 10) for fractional repetition: one of 0, 1, 4, 9".
std::string placement_requirement(PlacementKind kind, int workers, int stragglers);

class Placement {
 public:
  // Requires placement_requirement(kind, workers, stragglers) to be empty; throws pacer::Error
  // with that requirement otherwise.
  Placement(PlacementKind kind, int workers, int stragglers);

  PlacementKind kind() const { return kind_; }
  int workers() const { return workers_; }
  int stragglers() const { return stragglers_; }
  // c = s + 1: partitions per worker, and holders per partition.
  int load() const { return stragglers_ + 1; }

  // S_i in its fixed order (see the top of this file).
  const std::vector<int>& partitions(int worker) const { return sets_[worker]; }
  // Whether worker i holds partition p.
  bool holds(int worker, int partition) const;
  // The c workers holding partition p, in increasing index order.
  std::vector<int> holders(int partition) const;
  // Whether S_a and S_b share no partition (false for a == b).
  bool disjoint(int a, int b) const;

  // FR only: the group of a worker (worker / c) and the number of groups (n / c).
  int group(int worker) const;
  int num_groups() const;

 private:
  PlacementKind kind_;
  int workers_;
  int stragglers_;
  std::vector<std::vector<int>> sets_;
};

}  // namespace pacer
