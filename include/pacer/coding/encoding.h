// Encoding matrices of gradient coding (DESIGN.md section 3.1).
//
// An encoding is an n×n matrix B whose row i is supported on S_i: worker i sends
// m_i = Σ_{p∈S_i} B_ip g_p. For a responder set F, exact decoding needs a_F with
// a_Fᵀ B_F = 1ᵀ (B_F = the rows of F), so that Σ_{i∈F} a_i m_i = Σ_p g_p.
//
//   ones_encoding     B_ip = 1 on S_i: the plain sums of FR, IS-GC and PGC workers.
//   tandon_encoding   the cyclic (CR) construction of Tandon et al. 2017: an s×n matrix
//                     H = [H', −H'·1] (so H·1 = 0); B_ii = 1 and the other s entries of row i
//                     solve H[:, S_i∖i] b = −H[:, i]. Every row then lies in the null space of H,
//                     which has dimension n − s and contains 1, so for generic H any n − s rows
//                     span it and a_F exists (and is unique) for every F of size n − s.
//
// With H' standard normal the construction is badly conditioned: some F need large |a_i|, which
// amplifies rounding (and, in a pipeline, the differences between stale copies).
// make_cyclic_encoding therefore draws several H', keeps the one whose worst max|a| over
// responder sets is smallest, and then refines it by a seeded local search on H'.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "pacer/coding/placement.h"
#include "pacer/core/rng.h"
#include "pacer/core/vector.h"

namespace pacer {

// B_ip = 1 for p ∈ S_i, 0 elsewhere.
RowMatrix ones_encoding(const Placement& placement);

// The Tandon et al. matrix of `h_prime` (s×(n−1)), H = [H', −H'·1]. Requires a cyclic placement.
// With s = 0 it is the identity.
RowMatrix tandon_encoding(const Placement& placement, const Eigen::MatrixXd& h_prime);
// The same with H' standard normal, drawn from `rng`.
RowMatrix tandon_encoding(const Placement& placement, Rng& rng);

// Row i of B restricted to S_i, in the order of placement.partitions(i): the coefficients worker
// i applies to its partition gradients.
std::vector<double> row_coefficients(const RowMatrix& encoding, const Placement& placement,
                                     int worker);

// How well exact decoding of an encoding behaves over responder sets of size n − s.
struct EncodingQuality {
  double worst_max_abs = 0;   // max over the sets evaluated of max_i |a_i|
  double worst_residual = 0;  // max over the sets evaluated of ‖a_Fᵀ B_F − 1ᵀ‖_∞
  int64_t sets = 0;           // responder sets evaluated
  bool exhaustive = false;    // whether those were all C(n, n − s) sets
};

// Evaluates `encoding` (for `stragglers` = s, of rank n − s) on every responder set of size
// n − s when there are at most `max_sets` of them, otherwise on `max_sets` sets drawn uniformly
// from `rng`. After one SVD of B (O(n³)), each set costs O(s³ + n·c), not a least-squares solve:
// with a_0 one solution of Bᵀa = 1 and K a basis of the null space of Bᵀ (n×s), a_F = a_0 + K z
// where the s×s system K[M, :] z = −a_0[M] makes a vanish on the missing workers M. A set B cannot
// decode (singular system) counts as max|a| = residual = infinity.
EncodingQuality evaluate_encoding(const RowMatrix& encoding, int stragglers, int64_t max_sets,
                                  Rng& rng);

// The number of responder sets of size n − s, C(n, s), saturating at INT64_MAX.
int64_t count_responder_sets(int workers, int stragglers);

// Calls visit(mask) for every responder mask with exactly n − s entries true, in lexicographic
// order of the missing workers.
template <typename Visit>
void for_each_responder_set(int workers, int stragglers, Visit&& visit);

struct CyclicEncodingOptions {
  int trials = 20;          // random H' drawn (>= 1)
  int refine_steps = 1000;  // local-search steps after the draws (>= 0)
  int64_t max_sets = 2000;  // responder sets per evaluation (all of them when there are fewer)
};

struct CyclicEncoding {
  RowMatrix matrix;
  CyclicEncodingOptions options;      // what it was built with
  int trial = 0;                      // which draw the kept matrix started from (0-based)
  int improvements = 0;               // refinement steps that were accepted
  EncodingQuality quality;            // of the kept matrix
  EncodingQuality first_trial;        // of draw 0: what a single random H' gives
  double best_of_trials_max_abs = 0;  // worst max|a| of the best draw, before refinement
};

// A well-conditioned Tandon matrix, deterministic in (placement, seed, options):
//   1. draw `trials` matrices, H' of draw k from Rng(seed, "gc-encoding", k), and keep the one
//      with the smallest worst max|a| (evaluate_encoding, the same sets for every candidate;
//      ties to the earlier draw);
//   2. `refine_steps` steps of a (1+1) evolution strategy from Rng(seed, "gc-encoding-refine"):
//      perturb H' by σ·N(0, 1) entrywise and keep the candidate when its worst max|a| is smaller
//      (σ starts at 0.3, grows ×1.5 on success, shrinks ×0.95 on failure, restarts at 0.3 below
//      1e-3).
// At n = 12 this cuts the worst max|a| of a single draw by one to two orders of magnitude.
// Requires a cyclic placement.
CyclicEncoding make_cyclic_encoding(const Placement& placement, uint64_t seed,
                                    const CyclicEncodingOptions& options = {});

// ---- implementation of the template above ----

template <typename Visit>
void for_each_responder_set(int workers, int stragglers, Visit&& visit) {
  std::vector<int> missing(stragglers);
  for (int k = 0; k < stragglers; ++k) missing[k] = k;
  std::vector<bool> mask(workers);
  while (true) {
    std::fill(mask.begin(), mask.end(), true);
    for (int m : missing) mask[m] = false;
    visit(static_cast<const std::vector<bool>&>(mask));
    // Next combination of `stragglers` missing workers out of `workers`.
    int k = stragglers - 1;
    while (k >= 0 && missing[k] == workers - stragglers + k) --k;
    if (k < 0) return;
    ++missing[k];
    for (int j = k + 1; j < stragglers; ++j) missing[j] = missing[j - 1] + 1;
  }
}

}  // namespace pacer
