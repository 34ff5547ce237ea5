// Encoding matrices of gradient coding (DESIGN.md section 3.1).
//
// An encoding is an n×n matrix B whose row i is supported on S_i: worker i sends
// m_i = Σ_{p∈S_i} B_ip g_p. For a responder set F, exact decoding needs a_F with
// a_Fᵀ B_F = 1ᵀ (B_F = the rows of F), so that Σ_{i∈F} a_i m_i = Σ_p g_p.
//
//   ones_encoding      B_ip = 1 on S_i: the plain sums of FR, IS-GC and PGC workers.
//   tandon_encoding    the cyclic (CR) construction of Tandon et al. 2017: an s×n matrix
//                      H = [H', −H'·1] (so H·1 = 0); B_ii = 1 and the other s entries of row i
//                      solve H[:, S_i∖i] b = −H[:, i]. Every row then lies in the null space of H,
//                      which has dimension n − s and contains 1, so for generic H any n − s rows
//                      span it and a_F exists (and is unique) for every F of size n − s.
//   circulant_encoding row i = the coefficients of P(z) = Π_{ζ∈R} (1 − z/ζ) shifted to start at
//                      i, for a set R of s roots of unity of an order q dividing n (see below).
//
// With H' standard normal the Tandon construction is badly conditioned: some F need large |a_i|,
// which amplifies rounding (and, in a pipeline, the differences between stale copies). Solving
// a_Fᵀ B_F = 1ᵀ column by column around the cycle is a linear recurrence with random
// coefficients, so the worst max|a| grows fast with n. Measured (seed 1, s = 2, all sets): one
// draw gives 130, 2585 and 3.3e5 at n = 12, 24 and 32, the search below 20.1, 34.7 and 155; at
// n = 64 the search reaches 2212 (2000 sampled sets) after 4 s. make_cyclic_encoding therefore
// searches random H' only for small n (kSearchMaxWorkers) and uses the best circulant encoding
// above: its recurrence has its roots on the unit circle, and its worst max|a| is 1 at n = 100
// and 1000 for s = 1 and 2 (every set; encoding_scale_bench).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
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

// The affine space of exact decoding vectors of an encoding B of rank n − s: every a with
// aᵀB = 1ᵀ is a = particular + basis·z for some z ∈ R^s.
struct DecodingSpace {
  Eigen::VectorXd particular;  // n entries, orthogonal to the basis: the minimum-norm solution
  Eigen::MatrixXd basis;       // n×s, orthonormal columns: the null space of Bᵀ
};

// The decoding space of `encoding` (of rank n − `stragglers`) from one SVD of Bᵀ: O(n³).
DecodingSpace decoding_space(const RowMatrix& encoding, int stragglers);

// a_F from a decoding space in O(n·s + s³) per responder set instead of a least-squares solve:
// with M the missing workers, a_F = particular + basis·z where basis[M, :]·z = −particular[M]
// (then a_F is set to exactly 0 on M).
//   kUnique       the s×s system must be invertible (FullPivLU), else the set counts as not
//                 decodable. make_cyclic_encoding's search judges encodings so.
//   kMinimumNorm  z is the minimum-norm least-squares solution (complete orthogonal
//                 decomposition, pivots below 1e-10 of the largest taken as zero), so a_F is the
//                 minimum-norm solution of a_Fᵀ B_F = 1ᵀ, the same as ExactDecoder's
//                 least-squares one: for |M| < s, and for B_F of rank below n − s whose system is
//                 still consistent (the circulant encodings' sets whose missing workers share a
//                 residue mod q). An inconsistent set shows as a large residual.
class NullSpaceSolver {
 public:
  enum class Rule { kUnique, kMinimumNorm };
  NullSpaceSolver(const RowMatrix& encoding, DecodingSpace space, Rule rule);

  // a_F (n entries, 0 outside the mask) for a responder mask with at least n − s entries true
  // (exactly n − s under kUnique), into `a`. Returns {max|a|, ‖a_Fᵀ B_F − 1ᵀ‖_∞}, both infinity
  // for a set the rule cannot decode. The residual is computed over the rows' supports: O(n·c).
  std::pair<double, double> solve(const std::vector<bool>& responders, Eigen::VectorXd& a) const;

 private:
  DecodingSpace space_;
  Rule rule_;
  std::vector<std::vector<std::pair<int, double>>> rows_;  // the nonzero (p, B_ip) of each row
};

// How well exact decoding of an encoding behaves over responder sets of size n − s.
struct EncodingQuality {
  double worst_max_abs = 0;   // max over the sets evaluated of max_i |a_i|
  double worst_residual = 0;  // max over the sets evaluated of ‖a_Fᵀ B_F − 1ᵀ‖_∞
  int64_t sets = 0;           // responder sets evaluated
  // Whether the figures hold for all C(n, n − s) sets: they were all evaluated or, for a
  // circulant encoding, one set per multiset of the missing workers' residues mod q was (a_F
  // depends on nothing else; circulant_quality).
  bool exhaustive = false;
};

// Evaluates `encoding` (for `stragglers` = s, of rank n − s) on every responder set of size
// n − s when there are at most `max_sets` of them, otherwise on `max_sets` sets drawn uniformly
// from `rng`. After one SVD of B (O(n³): decoding_space), each set costs O(s³ + n·c)
// (NullSpaceSolver, Rule::kUnique). A set B cannot decode counts as max|a| = residual = infinity.
EncodingQuality evaluate_encoding(const RowMatrix& encoding, int stragglers, int64_t max_sets,
                                  Rng& rng);

// The number of responder sets of size n − s, C(n, s), saturating at INT64_MAX.
int64_t count_responder_sets(int workers, int stragglers);

// Calls visit(mask) for every responder mask with exactly n − s entries true, in lexicographic
// order of the missing workers.
template <typename Visit>
void for_each_responder_set(int workers, int stragglers, Visit&& visit);

// ---- circulant encodings (large n) ----
//
// For roots R = {ζ_1, ..., ζ_s} of unity of an order q dividing n, closed under conjugation and
// without 1, the circulant B_{i, i+k mod n} = β_k with P(z) = Π_{ζ∈R} (1 − z/ζ) = Σ_k β_k z^k
// (β_0 = 1, degree s, real) is supported on the CR windows. Its left null space is spanned by the
// n-periodic vectors (ζ^j)_j, ζ ∈ R, so B has rank n − s, 1 = B-row-space vector with
// a = 1/P(1)·1, and, in real form, the decoding space is known without any factorisation:
//   particular = 1/P(1)·1,  basis = cos(2πkj/q)/√(n/2), sin(2πkj/q)/√(n/2) per pair e^{±2πik/q},
//                           (−1)^j/√n for ζ = −1.
// basis[j, :] depends only on j mod q, so a_F depends on the missing workers only through their
// residues mod q: the worst case over all C(n, s) sets is the worst over one representative set
// per multiset of residues. Two missing workers with equal residues make B_F rank-deficient but
// keep the system consistent (equal rows, equal right-hand sides); with q odd and prime every
// other set has a unique a_F (every minor of the q-point DFT is nonzero: Chebotarev), while
// orders with −1 among the powers of a pair can give inconsistent sets, which the evaluation
// rejects.
//
// Examples: s + 1 dividing n gives all nontrivial (s+1)-th roots, i.e. ones_encoding (0/1, a_F
// = an indicator of disjoint windows, max|a| = 1); n = 1000, s = 2 has q = 5, R = e^{±4πi/5},
// β = (1, 2cos(π/5), 1).

struct CirculantCode {
  int order = 0;               // q (divides n, > s)
  std::vector<int> exponents;  // R = {e^{2πik/q} : k ∈ exponents}, in increasing order
};

// The circulant of `code` (requires a cyclic placement, q | n and |R| = s).
RowMatrix circulant_encoding(const Placement& placement, const CirculantCode& code);
// Its decoding space, in closed form (above): O(n·s).
DecodingSpace circulant_decoding_space(const Placement& placement, const CirculantCode& code);
// The codes make_cyclic_encoding tries, in this order: for each q dividing n with
// s < q <= min(n / s, 4(s + 1)) in increasing order, every R of s/2 pairs e^{±2πik/q}
// (0 < k < q/2), plus −1 when s is odd (then q must be even), in lexicographic order of the
// pairs' k; at most `limit` codes.
std::vector<CirculantCode> circulant_codes(int workers, int stragglers, int limit);
// Exact decoding of the circulant of `code` (NullSpaceSolver, Rule::kMinimumNorm) on one
// representative set per multiset of residues mod q when there are at most `max_sets` of them
// (exhaustive), otherwise on `max_sets` sets drawn uniformly from `rng`.
EncodingQuality circulant_quality(const Placement& placement, const CirculantCode& code,
                                  const RowMatrix& encoding, const DecodingSpace& space,
                                  int64_t max_sets, Rng& rng);

// ---- the encoding of GC-CR and PGC-CR (decoder = exact) ----

// Above this n, CyclicConstruction::kAuto uses a circulant (the random search is O(n³) per
// candidate and its encodings decode ever worse; see the top of this file).
inline constexpr int kSearchMaxWorkers = 32;

enum class CyclicConstruction {
  kAuto,       // kSearch for n <= kSearchMaxWorkers, else kCirculant
  kSearch,     // best of random Tandon matrices, then local search
  kCirculant,  // the best circulant_codes() entry; kSearch when none decodes every set
};

struct CyclicEncodingOptions {
  int trials = 20;          // random H' drawn (>= 1)
  int refine_steps = 1000;  // local-search steps after the draws (>= 0)
  int64_t max_sets = 2000;  // responder sets per evaluation (all of them when there are fewer)
  CyclicConstruction construction = CyclicConstruction::kAuto;
  int circulant_limit = 64;  // circulant codes tried (>= 1)
};

struct CyclicEncoding {
  RowMatrix matrix;
  CyclicEncodingOptions options;  // what it was built with
  // kSearch or kCirculant: the construction actually used (never kAuto).
  CyclicConstruction construction = CyclicConstruction::kSearch;
  std::optional<CirculantCode> code;   // kCirculant: the code kept
  std::optional<DecodingSpace> space;  // kCirculant: its closed-form decoding space
  int trial = 0;                       // which draw (search) or code (circulant) was kept
  int improvements = 0;                // refinement steps that were accepted (search)
  EncodingQuality quality;             // of the kept matrix
  EncodingQuality first_trial;         // of draw 0 (search) or of the first code (circulant)
  double best_of_trials_max_abs = 0;   // worst max|a| of the best draw, before refinement
};

// A well-conditioned encoding for the cyclic placement, deterministic in (placement, seed,
// options). kSearch:
//   1. draw `trials` matrices, H' of draw k from Rng(seed, "gc-encoding", k), and keep the one
//      with the smallest worst max|a| (evaluate_encoding, the same sets for every candidate;
//      ties to the earlier draw);
//   2. `refine_steps` steps of a (1+1) evolution strategy from Rng(seed, "gc-encoding-refine"):
//      perturb H' by σ·N(0, 1) entrywise and keep the candidate when its worst max|a| is smaller
//      (σ starts at 0.3, grows ×1.5 on success, shrinks ×0.95 on failure, restarts at 0.3 below
//      1e-3).
//   At n = 12 this cuts the worst max|a| of a single draw by one to two orders of magnitude. It
//   costs (trials + refine_steps) SVDs of B and evaluations of max_sets sets: 0.4 to 2.4 s at
//   n = 32 (s = 1 to 3), 1020 SVDs of a 1000×1000 matrix at n = 1000.
// kCirculant: every code of circulant_codes(n, s, circulant_limit) judged by circulant_quality
//   (sets sampled from Rng(seed, "gc-encoding-sets") when not exhaustive); the one with the
//   smallest worst max|a| among those whose worst residual is below 1e-8 wins (ties to the
//   earlier). Measured (bench/encoding_scale_bench.cc), worst max|a| over all C(n, s) sets:
//     n = 100 and 1000, s = 1: 1 (q = 2: ones_encoding), built in < 1 ms and 14 ms;
//     n = 100 and 1000, s = 2: 1 (q = 5, R = e^{±2πi/5}), built in < 1 ms and 26 ms;
//   (n = 12 keeps the search: 2.97 for s = 1, 20.1 for s = 2, seed 1.)
//   When no code decodes every set (e.g. s = 1 with n odd; s = 2 with n a power of 2) it falls
//   back to kSearch.
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
