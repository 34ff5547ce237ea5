#include "pacer/coding/encoding.h"

#include <Eigen/Dense>
#include <Eigen/SVD>
#include <cmath>
#include <limits>

#include "pacer/core/error.h"

namespace pacer {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A uniformly random responder mask with exactly `stragglers` workers missing.
std::vector<bool> random_responder_set(int workers, int stragglers, Rng& rng) {
  std::vector<int> order(workers);
  for (int i = 0; i < workers; ++i) order[i] = i;
  std::vector<bool> mask(workers, true);
  for (int k = 0; k < stragglers; ++k) {  // partial Fisher-Yates: the first k are the missing
    std::swap(order[k], order[k + rng.uniform_int(workers - k)]);
    mask[order[k]] = false;
  }
  return mask;
}

Eigen::MatrixXd standard_normal(int rows, int cols, Rng& rng) {
  Eigen::MatrixXd m(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m(r, c) = rng.normal();
  }
  return m;
}

// Solutions of aᵀB = 1ᵀ for every responder set of size n − s, from one SVD of Bᵀ: a particular
// solution a_0 (the pseudo-inverse one, B having rank n − s) and an orthonormal basis K of the
// null space of Bᵀ; a_F = a_0 + K z with z making a vanish on the missing workers.
class NullSpaceSolver {
 public:
  NullSpaceSolver(const RowMatrix& encoding, int stragglers)
      : encoding_(encoding), stragglers_(stragglers) {
    const int n = static_cast<int>(encoding.rows());
    const int rank = n - stragglers;
    Eigen::BDCSVD<Eigen::MatrixXd> svd(encoding.transpose(),
                                       Eigen::ComputeFullU | Eigen::ComputeFullV);
    const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
    const Eigen::VectorXd projected = svd.matrixU().leftCols(rank).transpose() * ones;
    particular_ =
        svd.matrixV().leftCols(rank) * projected.cwiseQuotient(svd.singularValues().head(rank));
    null_ = svd.matrixV().rightCols(stragglers);
    support_.resize(n);
    for (int i = 0; i < n; ++i) {
      for (int p = 0; p < n; ++p) {
        if (encoding(i, p) != 0.0) support_[i].push_back(p);
      }
    }
  }

  // max|a_F| and ‖a_Fᵀ B_F − 1ᵀ‖_∞ for the responder mask (n − s entries true): O(s³ + n·(s + c))
  // once the SVD is done.
  std::pair<double, double> evaluate(const std::vector<bool>& responders) {
    const int n = static_cast<int>(responders.size());
    a_ = particular_;
    if (stragglers_ > 0) {
      Eigen::MatrixXd rows(stragglers_, stragglers_);
      Eigen::VectorXd rhs(stragglers_);
      int k = 0;
      for (int i = 0; i < n; ++i) {
        if (responders[i]) continue;
        rows.row(k) = null_.row(i);
        rhs[k++] = -particular_[i];
      }
      Eigen::FullPivLU<Eigen::MatrixXd> lu(rows);
      if (!lu.isInvertible()) return {kInfinity, kInfinity};
      a_ += null_ * lu.solve(rhs);
      for (int i = 0; i < n; ++i) {
        if (!responders[i]) a_[i] = 0.0;
      }
    }
    // a_Fᵀ B_F over the rows' supports (c entries each), so a set costs O(n·c), not O(n²).
    column_ = Eigen::VectorXd::Constant(n, -1.0);
    for (int i = 0; i < n; ++i) {
      if (a_[i] == 0.0) continue;
      for (int p : support_[i]) column_[p] += a_[i] * encoding_(i, p);
    }
    const double residual = column_.cwiseAbs().maxCoeff();
    const double max_abs = a_.cwiseAbs().maxCoeff();
    if (!std::isfinite(max_abs) || !std::isfinite(residual)) return {kInfinity, kInfinity};
    return {max_abs, residual};
  }

 private:
  const RowMatrix& encoding_;
  int stragglers_;
  Eigen::VectorXd particular_;
  Eigen::MatrixXd null_;
  std::vector<std::vector<int>> support_;  // nonzero columns of each row of B
  Eigen::VectorXd a_;
  Eigen::VectorXd column_;
};

}  // namespace

RowMatrix ones_encoding(const Placement& placement) {
  const int n = placement.workers();
  RowMatrix b = RowMatrix::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    for (int p : placement.partitions(i)) b(i, p) = 1.0;
  }
  return b;
}

RowMatrix tandon_encoding(const Placement& placement, const Eigen::MatrixXd& h_prime) {
  PACER_CHECK(placement.kind() == PlacementKind::kCyclic);
  const int n = placement.workers();
  const int s = placement.stragglers();
  PACER_CHECK(h_prime.rows() == s && h_prime.cols() == n - 1);
  Eigen::MatrixXd h(s, n);  // H = [H', −H'·1], so H·1 = 0
  h.leftCols(n - 1) = h_prime;
  h.col(n - 1) = -h_prime.rowwise().sum();

  RowMatrix b = RowMatrix::Zero(n, n);
  Eigen::MatrixXd others(s, s);
  for (int i = 0; i < n; ++i) {
    // S_i = (i, i+1, ..., i+s): B_ii = 1 and H[:, S_i∖i]·b = −H[:, i] for the other entries.
    const std::vector<int>& window = placement.partitions(i);
    for (int k = 0; k < s; ++k) others.col(k) = h.col(window[k + 1]);
    const Eigen::VectorXd rest = others.colPivHouseholderQr().solve(-h.col(i));
    b(i, i) = 1.0;
    for (int k = 0; k < s; ++k) b(i, window[k + 1]) = rest[k];
  }
  return b;
}

RowMatrix tandon_encoding(const Placement& placement, Rng& rng) {
  return tandon_encoding(placement,
                         standard_normal(placement.stragglers(), placement.workers() - 1, rng));
}

std::vector<double> row_coefficients(const RowMatrix& encoding, const Placement& placement,
                                     int worker) {
  std::vector<double> row;
  for (int p : placement.partitions(worker)) row.push_back(encoding(worker, p));
  return row;
}

int64_t count_responder_sets(int workers, int stragglers) {
  // C(n, s) computed incrementally: C(n, k) = C(n, k−1)·(n − k + 1)/k stays an integer.
  const int64_t limit = std::numeric_limits<int64_t>::max();
  int64_t count = 1;
  for (int k = 1; k <= stragglers; ++k) {
    const int64_t factor = workers - k + 1;
    if (count > limit / factor) return limit;
    count = count * factor / k;
  }
  return count;
}

EncodingQuality evaluate_encoding(const RowMatrix& encoding, int stragglers, int64_t max_sets,
                                  Rng& rng) {
  const int n = static_cast<int>(encoding.rows());
  EncodingQuality quality;
  if (!encoding.allFinite()) {
    quality.worst_max_abs = quality.worst_residual = kInfinity;
    return quality;
  }
  NullSpaceSolver solver(encoding, stragglers);
  auto visit = [&](const std::vector<bool>& responders) {
    const auto [max_abs, residual] = solver.evaluate(responders);
    quality.worst_max_abs = std::max(quality.worst_max_abs, max_abs);
    quality.worst_residual = std::max(quality.worst_residual, residual);
    ++quality.sets;
  };
  quality.exhaustive = count_responder_sets(n, stragglers) <= max_sets;
  if (quality.exhaustive) {
    for_each_responder_set(n, stragglers, visit);
  } else {
    for (int64_t k = 0; k < max_sets; ++k) visit(random_responder_set(n, stragglers, rng));
  }
  return quality;
}

CyclicEncoding make_cyclic_encoding(const Placement& placement, uint64_t seed,
                                    const CyclicEncodingOptions& options) {
  PACER_CHECK(options.trials >= 1 && options.refine_steps >= 0 && options.max_sets >= 1);
  const int s = placement.stragglers();
  const int n = placement.workers();
  auto quality_of = [&](const RowMatrix& b) {
    Rng sets_rng(seed, "gc-encoding-sets");  // the same sampled sets for every candidate
    return evaluate_encoding(b, s, options.max_sets, sets_rng);
  };

  // 1. Best of `trials` random draws.
  CyclicEncoding best;
  best.options = options;
  Eigen::MatrixXd best_h;
  for (int t = 0; t < options.trials; ++t) {
    Rng draw_rng(seed, "gc-encoding", static_cast<uint64_t>(t));
    Eigen::MatrixXd h = standard_normal(s, n - 1, draw_rng);
    RowMatrix b = tandon_encoding(placement, h);
    EncodingQuality quality = quality_of(b);
    if (t == 0) best.first_trial = quality;
    if (t == 0 || quality.worst_max_abs < best.quality.worst_max_abs) {
      best.matrix = std::move(b);
      best.trial = t;
      best.quality = quality;
      best_h = std::move(h);
    }
  }
  best.best_of_trials_max_abs = best.quality.worst_max_abs;

  // 2. (1+1) evolution strategy on H'.
  if (s == 0) return best;
  Rng refine_rng(seed, "gc-encoding-refine");
  double sigma = 0.3;
  for (int step = 0; step < options.refine_steps; ++step) {
    Eigen::MatrixXd h = best_h + sigma * standard_normal(s, n - 1, refine_rng);
    RowMatrix b = tandon_encoding(placement, h);
    EncodingQuality quality = quality_of(b);
    if (quality.worst_max_abs < best.quality.worst_max_abs) {
      best.matrix = std::move(b);
      best.quality = quality;
      best_h = std::move(h);
      ++best.improvements;
      sigma *= 1.5;
    } else {
      sigma *= 0.95;
      if (sigma < 1e-3) sigma = 0.3;
    }
  }
  return best;
}

}  // namespace pacer
