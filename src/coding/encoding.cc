#include "pacer/coding/encoding.h"

#include <Eigen/Dense>
#include <Eigen/SVD>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "pacer/core/error.h"

namespace pacer {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

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

// Adds one set's {max|a|, residual} to the quality's worst cases.
void record(std::pair<double, double> set, EncodingQuality& quality) {
  quality.worst_max_abs = std::max(quality.worst_max_abs, set.first);
  quality.worst_residual = std::max(quality.worst_residual, set.second);
  ++quality.sets;
}

// make_cyclic_encoding with CyclicConstruction::kSearch.
CyclicEncoding search_encoding(const Placement& placement, uint64_t seed,
                               const CyclicEncodingOptions& options) {
  const int s = placement.stragglers();
  const int n = placement.workers();
  auto quality_of = [&](const RowMatrix& b) {
    Rng sets_rng(seed, "gc-encoding-sets");  // the same sampled sets for every candidate
    return evaluate_encoding(b, s, options.max_sets, sets_rng);
  };

  // 1. Best of `trials` random draws.
  CyclicEncoding best;
  best.options = options;
  best.construction = CyclicConstruction::kSearch;
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

// The coefficients β_0..β_s of P(z) = Π_{ζ∈R} (1 − z/ζ), real: a pair e^{±2πik/q} contributes
// 1 − 2cos(2πk/q) z + z², and −1 contributes 1 + z.
std::vector<double> circulant_polynomial(const CirculantCode& code) {
  std::vector<double> beta = {1.0};
  auto multiply = [&beta](std::vector<double> factor) {
    std::vector<double> product(beta.size() + factor.size() - 1, 0.0);
    for (size_t i = 0; i < beta.size(); ++i) {
      for (size_t j = 0; j < factor.size(); ++j) product[i + j] += beta[i] * factor[j];
    }
    beta = std::move(product);
  };
  const int q = code.order;
  for (int k : code.exponents) {
    if (2 * k < q) multiply({1.0, -2.0 * std::cos(2 * kPi * k / q), 1.0});
    if (2 * k == q) multiply({1.0, 1.0});
  }
  return beta;
}

// Calls visit(missing) with one set of `stragglers` distinct workers for every multiset of
// residues mod q (non-decreasing residues; the j-th repeat of residue r is worker r + j·q).
template <typename Visit>
void for_each_residue_multiset(int order, int stragglers, Visit&& visit) {
  std::vector<int> residues(stragglers, 0);
  std::vector<int> missing(stragglers);
  while (true) {
    for (int k = 0; k < stragglers; ++k) {
      missing[k] = k > 0 && residues[k] == residues[k - 1] ? missing[k - 1] + order : residues[k];
    }
    visit(static_cast<const std::vector<int>&>(missing));
    int k = stragglers - 1;
    while (k >= 0 && residues[k] == order - 1) --k;
    if (k < 0) return;
    ++residues[k];
    for (int j = k + 1; j < stragglers; ++j) residues[j] = residues[k];
  }
}

// Appends every choice of `count` pairs from the exponents 1..⌈q/2⌉−1 (lexicographic), each
// completed by the conjugates and by `extra` (q/2 for −1, or none), while codes.size() < limit.
void append_pair_choices(int order, int count, std::optional<int> extra, int limit,
                         std::vector<CirculantCode>& codes) {
  const int pairs = (order - 1) / 2;
  if (count > pairs) return;
  std::vector<int> chosen(count);
  for (int k = 0; k < count; ++k) chosen[k] = k + 1;
  while (static_cast<int>(codes.size()) < limit) {
    CirculantCode code{order, {}};
    for (int k : chosen) code.exponents.insert(code.exponents.end(), {k, order - k});
    if (extra) code.exponents.push_back(*extra);
    std::sort(code.exponents.begin(), code.exponents.end());
    codes.push_back(std::move(code));
    int k = count - 1;
    while (k >= 0 && chosen[k] == pairs - (count - 1 - k)) --k;
    if (k < 0) return;
    ++chosen[k];
    for (int j = k + 1; j < count; ++j) chosen[j] = chosen[j - 1] + 1;
  }
}

// The circulant of `code` with its quality, as make_cyclic_encoding reports it.
CyclicEncoding circulant_candidate(const Placement& placement, const CirculantCode& code,
                                   uint64_t seed, const CyclicEncodingOptions& options) {
  CyclicEncoding candidate;
  candidate.options = options;
  candidate.construction = CyclicConstruction::kCirculant;
  candidate.code = code;
  candidate.matrix = circulant_encoding(placement, code);
  candidate.space = circulant_decoding_space(placement, code);
  Rng sets_rng(seed, "gc-encoding-sets");
  candidate.quality = circulant_quality(placement, code, candidate.matrix, *candidate.space,
                                        options.max_sets, sets_rng);
  candidate.best_of_trials_max_abs = candidate.quality.worst_max_abs;
  return candidate;
}

// make_cyclic_encoding with CyclicConstruction::kCirculant; nullopt when no code decodes every
// set evaluated.
std::optional<CyclicEncoding> best_circulant(const Placement& placement, uint64_t seed,
                                             const CyclicEncodingOptions& options) {
  constexpr double kMaxResidual = 1e-8;
  const std::vector<CirculantCode> codes =
      circulant_codes(placement.workers(), placement.stragglers(), options.circulant_limit);
  std::optional<CyclicEncoding> best;
  EncodingQuality first;
  for (size_t k = 0; k < codes.size(); ++k) {
    CyclicEncoding candidate = circulant_candidate(placement, codes[k], seed, options);
    if (k == 0) first = candidate.quality;
    if (!(candidate.quality.worst_residual <= kMaxResidual)) continue;
    if (!best || candidate.quality.worst_max_abs < best->quality.worst_max_abs) {
      candidate.trial = static_cast<int>(k);
      best = std::move(candidate);
    }
  }
  if (best) best->first_trial = first;
  return best;
}

}  // namespace

RowMatrix circulant_encoding(const Placement& placement, const CirculantCode& code) {
  PACER_CHECK(placement.kind() == PlacementKind::kCyclic);
  const int n = placement.workers();
  const std::vector<double> beta = circulant_polynomial(code);
  PACER_CHECK(n % code.order == 0 && static_cast<int>(beta.size()) == placement.load());
  RowMatrix b = RowMatrix::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    const std::vector<int>& window = placement.partitions(i);  // i, i+1, ..., i+s mod n
    for (size_t k = 0; k < beta.size(); ++k) b(i, window[k]) = beta[k];
  }
  return b;
}

DecodingSpace circulant_decoding_space(const Placement& placement, const CirculantCode& code) {
  const int n = placement.workers();
  const int q = code.order;
  const std::vector<double> beta = circulant_polynomial(code);
  DecodingSpace space;
  const double p_at_one = std::accumulate(beta.begin(), beta.end(), 0.0);  // P(1)
  space.particular = Eigen::VectorXd::Constant(n, 1.0 / p_at_one);
  space.basis.resize(n, placement.stragglers());
  int column = 0;
  for (int k : code.exponents) {
    if (2 * k > q) continue;
    for (int j = 0; j < n; ++j) {  // depends on j mod q only, bit for bit
      const double angle = 2 * kPi * k * (j % q) / q;
      if (2 * k == q) {
        space.basis(j, column) = (j % 2 == 0 ? 1.0 : -1.0) / std::sqrt(n);
      } else {
        space.basis(j, column) = std::cos(angle) / std::sqrt(n / 2.0);
        space.basis(j, column + 1) = std::sin(angle) / std::sqrt(n / 2.0);
      }
    }
    column += 2 * k == q ? 1 : 2;
  }
  PACER_CHECK(column == placement.stragglers());
  return space;
}

std::vector<CirculantCode> circulant_codes(int workers, int stragglers, int limit) {
  if (stragglers == 0) return {CirculantCode{1, {}}};
  std::vector<CirculantCode> codes;
  const int max_order = std::min(workers / stragglers, 4 * (stragglers + 1));
  for (int q = stragglers + 1; q <= max_order; ++q) {
    if (workers % q != 0) continue;
    if (stragglers % 2 == 0) {
      append_pair_choices(q, stragglers / 2, std::nullopt, limit, codes);
    } else if (q % 2 == 0) {
      append_pair_choices(q, stragglers / 2, q / 2, limit, codes);
    }
  }
  return codes;
}

EncodingQuality circulant_quality(const Placement& placement, const CirculantCode& code,
                                  const RowMatrix& encoding, const DecodingSpace& space,
                                  int64_t max_sets, Rng& rng) {
  const int n = placement.workers();
  const int s = placement.stragglers();
  const NullSpaceSolver solver(encoding, space, NullSpaceSolver::Rule::kMinimumNorm);
  EncodingQuality quality;
  Eigen::VectorXd a;
  quality.exhaustive = count_responder_sets(code.order + s - 1, s) <= max_sets;
  if (quality.exhaustive) {
    std::vector<bool> mask(n);
    for_each_residue_multiset(code.order, s, [&](const std::vector<int>& missing) {
      std::fill(mask.begin(), mask.end(), true);
      for (int m : missing) mask[m] = false;
      record(solver.solve(mask, a), quality);
    });
  } else {
    for (int64_t k = 0; k < max_sets; ++k) {
      record(solver.solve(random_responder_set(n, s, rng), a), quality);
    }
  }
  return quality;
}

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

DecodingSpace decoding_space(const RowMatrix& encoding, int stragglers) {
  const int n = static_cast<int>(encoding.rows());
  const int rank = n - stragglers;
  Eigen::BDCSVD<Eigen::MatrixXd> svd(encoding.transpose(),
                                     Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
  const Eigen::VectorXd projected = svd.matrixU().leftCols(rank).transpose() * ones;
  DecodingSpace space;
  space.particular =
      svd.matrixV().leftCols(rank) * projected.cwiseQuotient(svd.singularValues().head(rank));
  space.basis = svd.matrixV().rightCols(stragglers);
  return space;
}

NullSpaceSolver::NullSpaceSolver(const RowMatrix& encoding, DecodingSpace space, Rule rule)
    : space_(std::move(space)), rule_(rule) {
  const int n = static_cast<int>(encoding.rows());
  PACER_CHECK(space_.particular.size() == n && space_.basis.rows() == n);
  rows_.resize(n);
  for (int i = 0; i < n; ++i) {
    for (int p = 0; p < n; ++p) {
      if (encoding(i, p) != 0.0) rows_[i].push_back({p, encoding(i, p)});
    }
  }
}

std::pair<double, double> NullSpaceSolver::solve(const std::vector<bool>& responders,
                                                 Eigen::VectorXd& a) const {
  const int n = static_cast<int>(responders.size());
  const int s = static_cast<int>(space_.basis.cols());
  const int missing = n - static_cast<int>(std::count(responders.begin(), responders.end(), true));
  PACER_CHECK(missing <= s && (rule_ == Rule::kMinimumNorm || missing == s));
  a = space_.particular;
  if (missing > 0) {
    Eigen::MatrixXd rows(missing, s);
    Eigen::VectorXd rhs(missing);
    int k = 0;
    for (int i = 0; i < n; ++i) {
      if (responders[i]) continue;
      rows.row(k) = space_.basis.row(i);
      rhs[k++] = -space_.particular[i];
    }
    if (rule_ == Rule::kUnique) {
      Eigen::FullPivLU<Eigen::MatrixXd> lu(rows);
      if (!lu.isInvertible()) return {kInfinity, kInfinity};
      a += space_.basis * lu.solve(rhs);
    } else {
      Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;
      cod.setThreshold(1e-10);
      cod.compute(rows);
      a += space_.basis * cod.solve(rhs);
    }
    for (int i = 0; i < n; ++i) {
      if (!responders[i]) a[i] = 0.0;
    }
  }
  // a_Fᵀ B_F over the rows' supports (c entries each), so a set costs O(n·c), not O(n²).
  Eigen::VectorXd column = Eigen::VectorXd::Constant(n, -1.0);
  for (int i = 0; i < n; ++i) {
    if (a[i] == 0.0) continue;
    for (const auto& [p, b] : rows_[i]) column[p] += a[i] * b;
  }
  const double residual = column.cwiseAbs().maxCoeff();
  const double max_abs = a.cwiseAbs().maxCoeff();
  if (!std::isfinite(max_abs) || !std::isfinite(residual)) return {kInfinity, kInfinity};
  return {max_abs, residual};
}

EncodingQuality evaluate_encoding(const RowMatrix& encoding, int stragglers, int64_t max_sets,
                                  Rng& rng) {
  const int n = static_cast<int>(encoding.rows());
  EncodingQuality quality;
  if (!encoding.allFinite()) {
    quality.worst_max_abs = quality.worst_residual = kInfinity;
    return quality;
  }
  const NullSpaceSolver solver(encoding, decoding_space(encoding, stragglers),
                               NullSpaceSolver::Rule::kUnique);
  Eigen::VectorXd a;
  auto visit = [&](const std::vector<bool>& responders) {
    record(solver.solve(responders, a), quality);
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
  PACER_CHECK(options.trials >= 1 && options.refine_steps >= 0 && options.max_sets >= 1 &&
              options.circulant_limit >= 1);
  const bool circulant = options.construction == CyclicConstruction::kCirculant ||
                         (options.construction == CyclicConstruction::kAuto &&
                          placement.workers() > kSearchMaxWorkers);
  if (circulant) {
    std::optional<CyclicEncoding> best = best_circulant(placement, seed, options);
    if (best) return *std::move(best);
  }
  return search_encoding(placement, seed, options);
}

}  // namespace pacer
