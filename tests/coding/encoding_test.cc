// The large-n GC-CR encodings (coding/encoding.h: circulant codes, the null-space decoder).
#include "pacer/coding/encoding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "coding_test_util.h"
#include "pacer/coding/decoder.h"

namespace pacer {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

using testing::definition_residual;

// What rounding alone leaves of a_Fᵀ B_F − 1ᵀ: every column sums c products of magnitude at most
// max|a|·max|B_ip|, and a itself comes out of sums of at most n terms of that size (the
// decoding space's products, or a least-squares solve), each rounded at ε: n·ε relative to the
// largest product, doubled for the two sums in turn.
double rounding_bound(const RowMatrix& b, double max_abs) {
  const int n = static_cast<int>(b.rows());
  return 2.0 * n * kEps * (1.0 + max_abs * b.cwiseAbs().maxCoeff() * b.cols());
}

std::vector<bool> mask_without(int n, std::initializer_list<int> missing) {
  std::vector<bool> mask(n, true);
  for (int m : missing) mask[m] = false;
  return mask;
}

TEST(CirculantCodes, EnumeratesOrdersDividingNAndConjugatePairs) {
  const std::vector<CirculantCode> codes = circulant_codes(1000, 2, 100);
  ASSERT_GE(codes.size(), 3u);
  EXPECT_EQ(codes[0].order, 4);  // ±i: listed, and rejected by the evaluation (i² = −1)
  EXPECT_EQ(codes[0].exponents, (std::vector<int>{1, 3}));
  EXPECT_EQ(codes[1].order, 5);
  EXPECT_EQ(codes[1].exponents, (std::vector<int>{1, 4}));
  EXPECT_EQ(codes[2].order, 5);
  EXPECT_EQ(codes[2].exponents, (std::vector<int>{2, 3}));
  for (const CirculantCode& code : codes) {
    EXPECT_EQ(1000 % code.order, 0);
    EXPECT_EQ(code.exponents.size(), 2u);
  }
  // s odd needs −1, hence an even order; n odd has none.
  EXPECT_TRUE(circulant_codes(99, 1, 100).empty());
  EXPECT_EQ(circulant_codes(100, 1, 100)[0].exponents, (std::vector<int>{1}));
  EXPECT_EQ(circulant_codes(100, 2, 1).size(), 1u);
}

TEST(CirculantEncoding, OrderSPlusOneIsTheOnesEncoding) {
  for (int s : {1, 2, 3}) {
    Placement cr(PlacementKind::kCyclic, 12, s);
    const std::vector<CirculantCode> codes = circulant_codes(12, s, 100);
    ASSERT_FALSE(codes.empty());
    EXPECT_EQ(codes[0].order, s + 1);
    const RowMatrix b = circulant_encoding(cr, codes[0]);
    EXPECT_LT((b - ones_encoding(cr)).cwiseAbs().maxCoeff(), 4 * kEps) << s;
  }
}

TEST(CirculantEncoding, DecodingSpaceSolvesTheDefinition) {
  Placement cr(PlacementKind::kCyclic, 100, 2);
  const CirculantCode code{5, {2, 3}};
  const RowMatrix b = circulant_encoding(cr, code);
  const DecodingSpace space = circulant_decoding_space(cr, code);
  const double bound = rounding_bound(b, space.particular.cwiseAbs().maxCoeff());
  // particularᵀ B = 1ᵀ, basisᵀ B = 0, the basis orthonormal and orthogonal to the particular.
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(100);
  EXPECT_LT((b.transpose() * space.particular - ones).cwiseAbs().maxCoeff(), bound);
  EXPECT_LT((b.transpose() * space.basis).cwiseAbs().maxCoeff(), rounding_bound(b, 1.0));
  const Eigen::MatrixXd gram = space.basis.transpose() * space.basis;
  EXPECT_LT((gram - Eigen::MatrixXd::Identity(2, 2)).cwiseAbs().maxCoeff(), 100 * kEps);
  EXPECT_LT((space.basis.transpose() * space.particular).cwiseAbs().maxCoeff(), 100 * kEps);
}

// The worst case the circulant construction states (one set per multiset of residues mod q)
// is the worst case over every responder set, decoded by least squares.
TEST(CirculantEncoding, StatedWorstCaseIsTheExhaustiveOne) {
  for (int s : {1, 2, 3}) {
    const int n = 40;  // above kSearchMaxWorkers: the automatic construction is a circulant
    Placement cr(PlacementKind::kCyclic, n, s);
    const CyclicEncoding encoding = make_cyclic_encoding(cr, 3);
    ASSERT_EQ(encoding.construction, CyclicConstruction::kCirculant) << s;
    EXPECT_TRUE(encoding.quality.exhaustive);
    ExactDecoder decoder(encoding.matrix, s);  // n <= kLeastSquaresMaxWorkers: least squares
    for_each_responder_set(n, s, [&](const std::vector<bool>& f) {
      const ExactCoefficients& a = decoder.decode(f);
      EXPECT_LE(definition_residual(encoding.matrix, a.a),
                rounding_bound(encoding.matrix, a.max_abs));
    });
    const double stated = encoding.quality.worst_max_abs;
    EXPECT_NEAR(decoder.max_abs_seen(), stated, rounding_bound(encoding.matrix, stated)) << s;
  }
}

TEST(CyclicEncoding, LargeNIsBuiltFastAndDecodesSampledSets) {
  const int n = 200;
  const int s = 2;
  Placement cr(PlacementKind::kCyclic, n, s);
  const CyclicEncoding encoding = make_cyclic_encoding(cr, 9);
  ASSERT_EQ(encoding.construction, CyclicConstruction::kCirculant);
  ASSERT_TRUE(encoding.space.has_value());
  EXPECT_TRUE(encoding.quality.exhaustive);
  EXPECT_EQ(make_cyclic_encoding(cr, 9).matrix, encoding.matrix);
  const double stated = encoding.quality.worst_max_abs;
  ASSERT_TRUE(std::isfinite(stated));

  ExactDecoder decoder(encoding.matrix, s, kExactDecodeTolerance, encoding.space);
  Rng rng(1, "test");
  for (int k = 0; k < 500; ++k) {
    const int first = static_cast<int>(rng.uniform_int(n));
    const int second = (first + 1 + static_cast<int>(rng.uniform_int(n - 1))) % n;
    const std::vector<bool> f = mask_without(n, {first, second});
    const ExactCoefficients& a = decoder.decode(f);
    EXPECT_EQ(a.a[first], 0.0);
    EXPECT_EQ(a.a[second], 0.0);
    EXPECT_LE(definition_residual(encoding.matrix, a.a), rounding_bound(encoding.matrix, stated));
    EXPECT_LE(a.max_abs, stated + rounding_bound(encoding.matrix, stated));
  }
  // Adjacent stragglers, and stragglers sharing a residue mod q (B_F rank-deficient).
  const int q = encoding.code->order;
  for (const std::vector<bool>& f : {mask_without(n, {0, 1}), mask_without(n, {7, 7 + q})}) {
    const ExactCoefficients& a = decoder.decode(f);
    EXPECT_LE(definition_residual(encoding.matrix, a.a), rounding_bound(encoding.matrix, stated));
  }
  // Fewer than s missing: the minimum-norm solution, 1/P(1) everywhere with nobody missing.
  const ExactCoefficients& all = decoder.decode(std::vector<bool>(n, true));
  EXPECT_NEAR(all.a[0], encoding.space->particular[0], 4 * kEps);
}

// Without a closed form, the decoder above kLeastSquaresMaxWorkers factors B once and agrees
// with the closed form.
TEST(ExactDecoder, NullSpaceFromOneSvdAgreesWithTheClosedForm) {
  Placement cr(PlacementKind::kCyclic, 100, 2);
  const CyclicEncoding encoding = make_cyclic_encoding(cr, 1);
  ExactDecoder closed(encoding.matrix, 2, kExactDecodeTolerance, encoding.space);
  ExactDecoder factored(encoding.matrix, 2);
  const double stated = encoding.quality.worst_max_abs;
  for (const std::vector<bool>& f : {mask_without(100, {3, 4}), mask_without(100, {10, 60})}) {
    const ExactCoefficients& a = closed.decode(f);
    const ExactCoefficients& b = factored.decode(f);
    for (int i = 0; i < 100; ++i) {
      EXPECT_NEAR(a.a[i], b.a[i], rounding_bound(encoding.matrix, stated)) << i;
    }
  }
}

TEST(CyclicEncoding, FallsBackToTheSearchWithoutACirculant) {
  // s = 2 needs an odd order dividing n (an even one puts −1 among a pair's powers): none for 64.
  Placement cr(PlacementKind::kCyclic, 64, 2);
  const CyclicEncoding encoding =
      make_cyclic_encoding(cr, 1,
                           {.trials = 1,
                            .refine_steps = 0,
                            .max_sets = 10,
                            .construction = CyclicConstruction::kCirculant});
  EXPECT_EQ(encoding.construction, CyclicConstruction::kSearch);
  EXPECT_FALSE(encoding.space.has_value());
}

TEST(CyclicEncoding, SmallNKeepsTheSearch) {
  Placement cr(PlacementKind::kCyclic, 12, 2);
  const CyclicEncoding automatic = make_cyclic_encoding(cr, 11, {.trials = 2, .refine_steps = 5});
  const CyclicEncoding search = make_cyclic_encoding(
      cr, 11, {.trials = 2, .refine_steps = 5, .construction = CyclicConstruction::kSearch});
  EXPECT_EQ(automatic.construction, CyclicConstruction::kSearch);
  EXPECT_EQ(automatic.matrix, search.matrix);
}

}  // namespace
}  // namespace pacer
