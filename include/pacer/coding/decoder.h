// Decoders of the coded synchronous schemes (DESIGN.md section 3.1): how the master turns the
// messages of a responder set F into ĝ.
//
// Responder sets are masks: n entries, true for the workers in F. Every decoder here returns
// per-worker weights w_i (0 outside the set it uses), and the master forms ĝ = Σ_i w_i m_i with
// weighted_sum, accumulating in increasing worker index so that ĝ does not depend on the order
// in which messages arrived.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "pacer/coding/encoding.h"
#include "pacer/coding/placement.h"
#include "pacer/core/vector.h"

namespace pacer {

class StateArchive;

// out = Σ_{i∈workers} weights[i] · message(i), accumulated in the order of `workers` (callers
// pass increasing worker index). `message(i)` returns a const Vec& of out's dimension. With no
// workers, out is set to zero (keeping its size).
template <typename MessageAt>
void weighted_sum(std::span<const int> workers, std::span<const double> weights,
                  MessageAt&& message, Vec& out) {
  if (workers.empty()) {
    out.setZero();
    return;
  }
  out = weights[workers[0]] * message(workers[0]);
  for (size_t k = 1; k < workers.size(); ++k) {
    out.noalias() += weights[workers[k]] * message(workers[k]);
  }
}

// ---- exact decoding (GC-CR, and PGC-CR with decoder = exact) ----

struct ExactCoefficients {
  std::vector<double> a;  // n entries: a_i for i ∈ F, 0 elsewhere
  double residual = 0;    // ‖a_Fᵀ B_F − 1ᵀ‖_∞
  double max_abs = 0;     // max_{i∈F} |a_i|
};

// The largest decode residual ExactDecoder accepts by default.
inline constexpr double kExactDecodeTolerance = 1e-6;
// Up to this n, ExactDecoder::solve is one least-squares solve per set (O(n³), microseconds at
// n = 12); above it, the null-space solve of coding/encoding.h (O(n·s + s³) per set).
inline constexpr int kLeastSquaresMaxWorkers = 64;

class ExactDecoder {
 public:
  // `encoding` is B (n×n); decode() accepts responder sets of at least n − `stragglers` workers
  // and throws when a residual exceeds `tolerance`. Above kLeastSquaresMaxWorkers, solve() uses
  // `space` (the encoding's decoding space, e.g. a circulant's closed form), or one SVD of B
  // (decoding_space: O(n³), once) when it is not given.
  ExactDecoder(RowMatrix encoding, int stragglers, double tolerance = kExactDecodeTolerance,
               std::optional<DecodingSpace> space = std::nullopt);

  int workers() const { return static_cast<int>(encoding_.rows()); }
  const RowMatrix& encoding() const { return encoding_; }

  // a_F solving a_Fᵀ B_F = 1ᵀ in double precision, as the minimum-norm least-squares solution of
  // B_Fᵀ a = 1 (complete orthogonal decomposition of the n×|F| matrix B_Fᵀ); for |F| = n − s and
  // B_F of full rank it is the unique solution. Above kLeastSquaresMaxWorkers the same minimum-
  // norm solution (exactly, up to rounding, when the system is consistent) comes from the null-
  // space solve (NullSpaceSolver::Rule::kMinimumNorm), so a step's decode is O(n·s + s³), not
  // O(n³). Requires at least n − s responders. Uncached and unchecked: the residual is
  // reported, not judged.
  ExactCoefficients solve(const std::vector<bool>& responders) const;

  // The same, cached per responder set: the first call for a set solves it and checks the
  // residual (a pacer::Error naming the responders when it exceeds the tolerance: B cannot decode
  // that set); later calls return the stored result. References stay valid for the decoder's
  // lifetime. Updates the statistics below.
  const ExactCoefficients& decode(const std::vector<bool>& responders);

  int64_t decodes() const { return decodes_; }  // decode() calls
  int64_t cached_sets() const { return static_cast<int64_t>(cache_.size()); }
  double max_abs_seen() const { return max_abs_seen_; }  // over every decode() call
  double max_residual_seen() const { return max_residual_seen_; }
  // The cached responder sets (re-solved when loading: solve() is deterministic) and the
  // statistics, for checkpoints (core/state.h).
  void checkpoint(StateArchive& a);

 private:
  ExactCoefficients solve_null_space(const std::vector<bool>& responders) const;
  struct KeyHash {
    size_t operator()(const std::vector<uint64_t>& key) const;
  };
  RowMatrix encoding_;
  int stragglers_;
  double tolerance_;
  std::optional<NullSpaceSolver> null_space_;  // n > kLeastSquaresMaxWorkers
  std::unordered_map<std::vector<uint64_t>, ExactCoefficients, KeyHash> cache_;
  std::vector<uint64_t> key_;  // reused lookup key
  int64_t decodes_ = 0;
  double max_abs_seen_ = 0;
  double max_residual_seen_ = 0;
};

// ---- relaxed decoding (PGC-CR) ----
//
// Workers send plain sums m_i = Σ_{p∈S_i} C_i[p] and the master uses ĝ = (1/n)·μ·Σ_{i∈F} m_i
// with μ = n / ((n − s)(s + 1)). Partition p then enters ĝ as (1/n)·μ·h_p(F)·g_p, where h_p(F)
// is the number of its holders among the responders: its coefficient μ·h_p(F) is 1 in
// expectation over uniformly random F of size n − s, and at most μ(s + 1) = n / (n − s).

// μ = n / ((n − s)(s + 1)). Requires 0 <= s < n.
double relaxed_mu(int workers, int stragglers);

// The coefficient μ·h_p(F) of every partition p (n entries) for responder mask `responders`
// (with μ computed for n − s responders, whatever the mask's count).
std::vector<double> relaxed_partition_coefficients(const Placement& placement,
                                                   const std::vector<bool>& responders);

// ---- frequency-aware relaxed decoding (PGC-CR, decoder = "adaptive") ----
//
// Relaxed decoding is unbiased only when F is uniformly random. In general let ρ_i = P(i ∈ F) be
// worker i's response rate. With weights w_i fixed before F is drawn, partition p enters ĝ with
// coefficient c_p(F) = Σ_{i holds p} 1[i ∈ F]·w_i (the master's (1/n) aside), and
//   E c_p = Σ_{i holds p} ρ_i w_i = (M w)_p,   M_{p,i} = ρ_i·1[i holds p]   (n × n).
// Every partition is unbiased iff M w = 1. The weights chosen are
//   w = argmin_{w >= 0} ‖M w − 1‖² + ε‖w − μ1‖²,   ε = kAdaptiveRegularization,
// i.e. non-negative least squares where M w = 1 has no non-negative solution, and among (nearly)
// exact solutions the one closest to relaxed decoding's μ. Solved to a tolerance of 1e-2·ε·μ on
// the gradient, which rounding allows while 10·ε_mach·‖A‖·‖b‖ ≈ 2e-15·n·√(s+1) stays below it
// (n up to about 10⁴ at s = 2). Why each part:
//   * w >= 0: ĝ never subtracts one worker's stale cache from another's, the amplification that
//     makes exact decoding noisy (pgc-cr:decoder=exact);
//   * the ε term makes the minimiser unique (M is singular whenever (s+1) shares a factor with n:
//     the circulant's eigenvalue 1 + ω^k + ... + ω^{ks} vanishes) and gives a worker never heard
//     from (ρ_i = 0) the weight μ; it moves ‖M w − 1‖ by O(ε) only;
//   * uniform ρ_i = (n − s)/n gives M(μ1) = (s+1)·((n−s)/n)·μ·1 = 1: the objective is 0 at μ1, so
//     the decoder reduces to relaxed decoding exactly;
//   * persistent stragglers (the same F every step, ρ_i ∈ {0, 1}): c_p(F) = E c_p at every step,
//     so ĝ's fixed point is ∇F's, not a reweighted objective's.
inline constexpr double kAdaptiveRegularization = 1e-10;

struct AdaptiveRelaxedWeights {
  std::vector<double> weights;  // w_i (n entries), before the 1/n of ĝ
  double bias = 0;  // max_p |(M w)_p − 1|: the remaining bias of the expected coefficient
};

// The weights above for response rates `rates` (n entries in [0, 1]) on a cyclic placement.
AdaptiveRelaxedWeights adaptive_relaxed_weights(const Placement& placement,
                                                std::span<const double> rates);

// argmin_{x >= 0} ‖A x − b‖ by Lawson and Hanson's active-set algorithm ("Solving Least Squares
// Problems", 1974, ch. 23), for A of full column rank (as the regularised system above is).
// Stops when no variable held at 0 has a component of Aᵀ(b − Ax) above `tolerance` (raised to
// 10 units of rounding, 10·ε_mach·‖A‖·‖b‖, if below), or after 3·cols outer iterations. Each
// outer iteration solves one least-squares problem on the free columns: O(rows·cols²) each,
// O(rows·cols³) in all at worst.
Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                          double tolerance = 0);

// ---- ignore-stragglers gradient coding (IS-GC) ----

// J: a largest subset of the arrivals (worker indices, in arrival order) whose S_i are pairwise
// disjoint, returned in increasing worker index.
//   FR: the first arrival of every group that has one (|J| = number of groups heard from).
//   CR: a maximum set of pairwise-disjoint windows, found by trying every arrival as the first
//       window and sweeping the others greedily in increasing cyclic index order from it; the
//       largest set wins, ties to the smallest first index. For equal-length windows on a cycle
//       this is optimal, and it depends only on the set of arrivals, not on their order.
std::vector<int> select_disjoint(const Placement& placement, std::span<const int> arrivals);

}  // namespace pacer
