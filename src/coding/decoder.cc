#include "pacer/coding/decoder.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "pacer/core/error.h"
#include "pacer/core/state.h"

namespace pacer {
namespace {

std::vector<int> members(const std::vector<bool>& mask) {
  std::vector<int> result;
  for (int i = 0; i < static_cast<int>(mask.size()); ++i) {
    if (mask[i]) result.push_back(i);
  }
  return result;
}

void pack(const std::vector<bool>& mask, std::vector<uint64_t>& key) {
  key.assign((mask.size() + 63) / 64, 0);
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i]) key[i / 64] |= uint64_t{1} << (i % 64);
  }
}

}  // namespace

size_t ExactDecoder::KeyHash::operator()(const std::vector<uint64_t>& key) const {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (uint64_t word : key) h = (h ^ word) * 0x100000001b3ULL + (h >> 29);
  return static_cast<size_t>(h);
}

ExactDecoder::ExactDecoder(RowMatrix encoding, int stragglers, double tolerance,
                           std::optional<DecodingSpace> space)
    : encoding_(std::move(encoding)), stragglers_(stragglers), tolerance_(tolerance) {
  PACER_CHECK(encoding_.rows() == encoding_.cols() && stragglers >= 0 &&
              stragglers < encoding_.rows());
  if (workers() > kLeastSquaresMaxWorkers) {
    if (!space) space = decoding_space(encoding_, stragglers_);
    null_space_.emplace(encoding_, *std::move(space), NullSpaceSolver::Rule::kMinimumNorm);
  }
}

ExactCoefficients ExactDecoder::solve(const std::vector<bool>& responders) const {
  const int n = workers();
  PACER_CHECK(static_cast<int>(responders.size()) == n);
  const std::vector<int> f = members(responders);
  PACER_CHECK(static_cast<int>(f.size()) >= n - stragglers_);
  if (null_space_) return solve_null_space(responders);
  // a_Fᵀ B_F = 1ᵀ  <=>  B_Fᵀ a_F = 1: n equations in |F| unknowns.
  Eigen::MatrixXd bt(n, f.size());
  for (size_t k = 0; k < f.size(); ++k) bt.col(k) = encoding_.row(f[k]).transpose();
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
  const Eigen::VectorXd a = bt.completeOrthogonalDecomposition().solve(ones);

  ExactCoefficients result;
  result.a.assign(n, 0.0);
  for (size_t k = 0; k < f.size(); ++k) result.a[f[k]] = a[k];
  result.residual = (bt * a - ones).cwiseAbs().maxCoeff();
  result.max_abs = a.cwiseAbs().maxCoeff();
  return result;
}

ExactCoefficients ExactDecoder::solve_null_space(const std::vector<bool>& responders) const {
  Eigen::VectorXd a;
  const auto [max_abs, residual] = null_space_->solve(responders, a);
  ExactCoefficients result;
  result.a.assign(a.data(), a.data() + a.size());
  result.max_abs = max_abs;
  result.residual = residual;
  return result;
}

const ExactCoefficients& ExactDecoder::decode(const std::vector<bool>& responders) {
  pack(responders, key_);
  auto it = cache_.find(key_);
  if (it == cache_.end()) {
    ExactCoefficients solved = solve(responders);
    if (!(solved.residual <= tolerance_)) {
      fail(
          "exact gradient-coding decoder: responders {{{}}} cannot be decoded (residual {:.3g} "
          "of a_Fᵀ B_F = 1ᵀ exceeds {:.3g}); use another encoding seed or more code trials",
          fmt::join(members(responders), ", "), solved.residual, tolerance_);
    }
    it = cache_.emplace(key_, std::move(solved)).first;
  }
  ++decodes_;
  max_abs_seen_ = std::max(max_abs_seen_, it->second.max_abs);
  max_residual_seen_ = std::max(max_residual_seen_, it->second.residual);
  return it->second;
}

void ExactDecoder::checkpoint(StateArchive& a) {
  a.section("exact_decoder");
  std::vector<std::vector<uint64_t>> keys;
  for (const auto& entry : cache_) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  a.io(keys);
  if (a.loading()) {
    cache_.clear();
    std::vector<bool> responders(workers());
    for (const std::vector<uint64_t>& key : keys) {
      if (key.size() != (responders.size() + 63) / 64) a.mismatch("a responder set of another n");
      for (size_t i = 0; i < responders.size(); ++i) responders[i] = (key[i / 64] >> (i % 64)) & 1;
      cache_.emplace(key, solve(responders));
    }
  }
  a.io(decodes_);
  a.io(max_abs_seen_);
  a.io(max_residual_seen_);
}

double relaxed_mu(int workers, int stragglers) {
  PACER_CHECK(stragglers >= 0 && stragglers < workers);
  return static_cast<double>(workers) /
         (static_cast<double>(workers - stragglers) * static_cast<double>(stragglers + 1));
}

std::vector<double> relaxed_partition_coefficients(const Placement& placement,
                                                   const std::vector<bool>& responders) {
  const double mu = relaxed_mu(placement.workers(), placement.stragglers());
  std::vector<double> coefficient(placement.workers(), 0.0);
  for (int i = 0; i < placement.workers(); ++i) {
    if (!responders[i]) continue;
    for (int p : placement.partitions(i)) coefficient[p] += mu;
  }
  return coefficient;
}

Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                          double tolerance) {
  const Eigen::Index cols = a.cols();
  PACER_CHECK(a.rows() == b.size() && cols > 0);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(cols);
  std::vector<bool> passive(cols, false);
  tolerance = std::max(
      tolerance, 10 * std::numeric_limits<double>::epsilon() * a.norm() * std::max(1.0, b.norm()));
  // The unconstrained least-squares solution on the passive columns (zero elsewhere).
  auto solve_passive = [&] {
    std::vector<Eigen::Index> index;
    for (Eigen::Index j = 0; j < cols; ++j) {
      if (passive[j]) index.push_back(j);
    }
    Eigen::VectorXd z = Eigen::VectorXd::Zero(cols);
    if (index.empty()) return z;
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(index.size()));
    for (size_t k = 0; k < index.size(); ++k)
      sub.col(static_cast<Eigen::Index>(k)) = a.col(index[k]);
    const Eigen::VectorXd zp = sub.colPivHouseholderQr().solve(b);
    for (size_t k = 0; k < index.size(); ++k) z[index[k]] = zp[static_cast<Eigen::Index>(k)];
    return z;
  };
  for (Eigen::Index outer = 0; outer < 3 * cols; ++outer) {
    const Eigen::VectorXd gradient = a.transpose() * (b - a * x);  // −½ ∇‖Ax − b‖²
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < cols; ++j) {
      if (!passive[j] && gradient[j] > tolerance && (best < 0 || gradient[j] > gradient[best])) {
        best = j;
      }
    }
    if (best < 0) break;  // Kuhn–Tucker conditions hold
    passive[best] = true;
    for (;;) {
      const Eigen::VectorXd z = solve_passive();
      double step = 1.0;  // the longest step from x towards z that keeps x >= 0
      Eigen::Index blocking = -1;
      for (Eigen::Index j = 0; j < cols; ++j) {
        if (passive[j] && z[j] <= 0 && x[j] - z[j] > 0 && x[j] / (x[j] - z[j]) < step) {
          step = x[j] / (x[j] - z[j]);
          blocking = j;
        }
      }
      if (blocking < 0) {
        x = z;
        break;
      }
      x += step * (z - x);
      x[blocking] = 0;  // exactly, whatever the rounding of the step
      for (Eigen::Index j = 0; j < cols; ++j) {
        if (passive[j] && x[j] <= 0) {
          passive[j] = false;
          x[j] = 0;
        }
      }
    }
  }
  return x;
}

AdaptiveRelaxedWeights adaptive_relaxed_weights(const Placement& placement,
                                                std::span<const double> rates) {
  const int n = placement.workers();
  PACER_CHECK(static_cast<int>(rates.size()) == n);
  const double mu = relaxed_mu(n, placement.stragglers());
  const double root_eps = std::sqrt(kAdaptiveRegularization);
  // [M; √ε I] w ≈ [1; √ε μ 1].
  Eigen::MatrixXd system = Eigen::MatrixXd::Zero(2 * n, n);
  Eigen::VectorXd target(2 * n);
  for (int i = 0; i < n; ++i) {
    for (int p : placement.partitions(i)) system(p, i) = rates[i];
    system(n + i, i) = root_eps;
    target[i] = 1.0;
    target[n + i] = root_eps * mu;
  }
  // The ε term's gradient at a weight 0 is ε·μ: stop well below it, so that it still decides.
  const Eigen::VectorXd w =
      nonnegative_least_squares(system, target, 1e-2 * kAdaptiveRegularization * mu);
  AdaptiveRelaxedWeights result;
  result.weights.assign(w.data(), w.data() + n);
  result.bias = (system.topRows(n) * w - Eigen::VectorXd::Ones(n)).cwiseAbs().maxCoeff();
  return result;
}

std::vector<int> select_disjoint(const Placement& placement, std::span<const int> arrivals) {
  std::vector<int> chosen;
  if (placement.kind() == PlacementKind::kFractional) {
    std::vector<bool> group_taken(placement.num_groups(), false);
    for (int w : arrivals) {
      const int g = placement.group(w);
      if (group_taken[g]) continue;
      group_taken[g] = true;
      chosen.push_back(w);
    }
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }
  // CR: windows [i, i+s] on the cycle of n partitions. Fix the first window at each arrival in
  // turn and sweep the others in cyclic index order from it, taking every window that starts
  // after the last taken one ends and ends before the first one starts again.
  const int n = placement.workers();
  const int c = placement.load();
  std::vector<int> sorted(arrivals.begin(), arrivals.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> candidate;
  for (size_t first = 0; first < sorted.size(); ++first) {
    candidate.assign(1, sorted[first]);
    int next_free = c;  // distance from the first window's start to the first free partition
    for (size_t k = 1; k < sorted.size(); ++k) {
      const int w = sorted[(first + k) % sorted.size()];
      const int start = (w - sorted[first] + n) % n;
      if (start >= next_free && start + c <= n) {
        candidate.push_back(w);
        next_free = start + c;
      }
    }
    if (candidate.size() > chosen.size()) chosen = candidate;
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace pacer
