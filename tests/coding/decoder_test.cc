#include "pacer/coding/decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "coding_test_util.h"
#include "pacer/coding/encoding.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

struct Case {
  int n;
  int s;
};

// Every (n, s) of n ∈ {4, 6, 12}, s ∈ {1, 2, 3} with s < n.
std::vector<Case> cases() {
  std::vector<Case> result;
  for (int n : {4, 6, 12}) {
    for (int s : {1, 2, 3}) {
      if (s < n) result.push_back({n, s});
    }
  }
  return result;
}

using testing::definition_residual;

TEST(Encoding, TandonRowsHaveSupportSiAndUnitDiagonal) {
  Placement cr(PlacementKind::kCyclic, 12, 3);
  Rng rng(1, "test");
  RowMatrix b = tandon_encoding(cr, rng);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(b(i, i), 1.0);
    for (int p = 0; p < 12; ++p) {
      if (!cr.holds(i, p)) {
        EXPECT_EQ(b(i, p), 0.0) << i << "," << p;
      }
    }
    std::vector<double> row = row_coefficients(b, cr, i);
    ASSERT_EQ(row.size(), 4u);
    EXPECT_EQ(row[0], 1.0);
  }
}

TEST(ExactDecoder, SolvesEveryResponderSetOfSizeNMinusS) {
  for (Case k : cases()) {
    Placement cr(PlacementKind::kCyclic, k.n, k.s);
    CyclicEncoding encoding = make_cyclic_encoding(cr, 7, {.trials = 5, .refine_steps = 50});
    ExactDecoder decoder(encoding.matrix, k.s);
    int64_t sets = 0;
    for_each_responder_set(k.n, k.s, [&](const std::vector<bool>& f) {
      const ExactCoefficients& a = decoder.decode(f);
      for (int i = 0; i < k.n; ++i) {
        if (!f[i]) {
          EXPECT_EQ(a.a[i], 0.0);
        }
      }
      EXPECT_LT(definition_residual(encoding.matrix, a.a), 1e-9) << "n=" << k.n << " s=" << k.s;
      EXPECT_LE(a.residual, 1e-9);
      ++sets;
    });
    EXPECT_EQ(sets, count_responder_sets(k.n, k.s));
    EXPECT_EQ(decoder.cached_sets(), sets);
    // The fast null-space evaluation agrees with the least-squares decoder.
    EXPECT_TRUE(encoding.quality.exhaustive);
    EXPECT_NEAR(decoder.max_abs_seen(), encoding.quality.worst_max_abs,
                1e-9 * encoding.quality.worst_max_abs);
  }
}

TEST(ExactDecoder, CachesPerResponderSet) {
  Placement cr(PlacementKind::kCyclic, 6, 2);
  ExactDecoder decoder(make_cyclic_encoding(cr, 3).matrix, 2);
  std::vector<bool> f = {true, false, true, true, false, true};
  const ExactCoefficients* first = &decoder.decode(f);
  EXPECT_EQ(&decoder.decode(f), first);
  EXPECT_EQ(decoder.cached_sets(), 1);
  EXPECT_EQ(decoder.decodes(), 2);
  // A superset of n − s responders also decodes (minimum-norm least squares).
  const ExactCoefficients& all = decoder.decode(std::vector<bool>(6, true));
  EXPECT_LT(definition_residual(decoder.encoding(), all.a), 1e-9);
}

TEST(ExactDecoder, RejectsASetTheEncodingCannotDecode) {
  // The 0/1 cyclic matrix with odd n and s = 1 cannot decode F = {0, 1, 2, 3} (n = 5).
  Placement cr(PlacementKind::kCyclic, 5, 1);
  ExactDecoder decoder(ones_encoding(cr), 1);
  EXPECT_GT(decoder.solve({true, true, true, true, false}).residual, 0.1);
  EXPECT_THROW(decoder.decode({true, true, true, true, false}), Error);
}

TEST(Encoding, EvaluationAgreesWithTheDecoderOnARandomMatrix) {
  Placement cr(PlacementKind::kCyclic, 12, 3);
  Rng rng(2, "test");
  RowMatrix b = tandon_encoding(cr, rng);
  ExactDecoder decoder(b, 3);
  for_each_responder_set(12, 3, [&](const std::vector<bool>& f) { decoder.decode(f); });
  Rng sets(1, "unused");
  EncodingQuality quality = evaluate_encoding(b, 3, 1000, sets);
  EXPECT_EQ(quality.sets, 220);
  EXPECT_NEAR(quality.worst_max_abs, decoder.max_abs_seen(), 1e-7 * decoder.max_abs_seen());
}

TEST(Encoding, SearchImprovesOnASingleDrawAndIsDeterministic) {
  for (int s : {2, 3}) {
    Placement cr(PlacementKind::kCyclic, 12, s);
    CyclicEncoding one = make_cyclic_encoding(cr, 11, {.trials = 1, .refine_steps = 0});
    CyclicEncoding best = make_cyclic_encoding(cr, 11);
    EXPECT_DOUBLE_EQ(best.first_trial.worst_max_abs, one.quality.worst_max_abs);
    EXPECT_LE(best.best_of_trials_max_abs, one.quality.worst_max_abs);
    EXPECT_LE(best.quality.worst_max_abs, best.best_of_trials_max_abs);
    EXPECT_EQ(best.quality.sets, count_responder_sets(12, s));
    EXPECT_LT(best.quality.worst_residual, 1e-9);
    EXPECT_EQ(make_cyclic_encoding(cr, 11).matrix, best.matrix);
    ::testing::Test::RecordProperty("worst_max_abs_s" + std::to_string(s),
                                    std::to_string(best.quality.worst_max_abs));
  }
}

TEST(Encoding, SamplesResponderSetsWhenThereAreTooMany) {
  Placement cr(PlacementKind::kCyclic, 30, 3);  // C(30, 3) = 4060 sets
  CyclicEncoding encoding =
      make_cyclic_encoding(cr, 5, {.trials = 2, .refine_steps = 0, .max_sets = 100});
  EXPECT_FALSE(encoding.quality.exhaustive);
  EXPECT_EQ(encoding.quality.sets, 100);
  EXPECT_LT(encoding.quality.worst_residual, 1e-6);
}

TEST(RelaxedDecoder, CoefficientIsMuTimesHoldersAmongResponders) {
  Placement cr(PlacementKind::kCyclic, 12, 2);
  const double mu = relaxed_mu(12, 2);
  EXPECT_DOUBLE_EQ(mu, 12.0 / (10.0 * 3.0));
  std::vector<bool> f(12, true);
  f[3] = f[4] = false;
  std::vector<double> coefficient = relaxed_partition_coefficients(cr, f);
  for (int p = 0; p < 12; ++p) {
    int holders = 0;
    for (int i : cr.holders(p)) holders += f[i];
    EXPECT_DOUBLE_EQ(coefficient[p], mu * holders) << p;
  }
}

TEST(RelaxedDecoder, ExpectationIsOneAndMaximumIsNOverNMinusS) {
  const double paper_max[] = {0, 1.091, 1.2, 1.333};  // DESIGN.md section 8, n = 12
  for (int s : {1, 2, 3}) {
    const int n = 12;
    Placement cr(PlacementKind::kCyclic, n, s);
    std::vector<double> sum(n, 0.0);
    double largest = 0;
    int64_t sets = 0;
    for_each_responder_set(n, s, [&](const std::vector<bool>& f) {
      std::vector<double> coefficient = relaxed_partition_coefficients(cr, f);
      for (int p = 0; p < n; ++p) {
        sum[p] += coefficient[p];
        largest = std::max(largest, coefficient[p]);
      }
      ++sets;
    });
    for (int p = 0; p < n; ++p) EXPECT_NEAR(sum[p] / sets, 1.0, 1e-12) << "s=" << s;
    EXPECT_NEAR(largest, static_cast<double>(n) / (n - s), 1e-12);
    EXPECT_NEAR(largest, paper_max[s], 5e-4);
  }
}

// Brute force: the size of a largest pairwise-disjoint subset of `arrivals`.
size_t largest_disjoint(const Placement& placement, const std::vector<int>& arrivals) {
  size_t best = 0;
  for (uint32_t subset = 0; subset < (1u << arrivals.size()); ++subset) {
    std::vector<int> chosen;
    for (size_t k = 0; k < arrivals.size(); ++k) {
      if (subset >> k & 1u) chosen.push_back(arrivals[k]);
    }
    bool ok = true;
    for (size_t a = 0; a < chosen.size() && ok; ++a) {
      for (size_t b = a + 1; b < chosen.size() && ok; ++b) {
        ok = placement.disjoint(chosen[a], chosen[b]);
      }
    }
    if (ok) best = std::max(best, chosen.size());
  }
  return best;
}

void expect_pairwise_disjoint(const Placement& placement, const std::vector<int>& chosen) {
  for (size_t a = 0; a < chosen.size(); ++a) {
    for (size_t b = a + 1; b < chosen.size(); ++b) {
      EXPECT_TRUE(placement.disjoint(chosen[a], chosen[b])) << chosen[a] << " " << chosen[b];
    }
  }
}

TEST(IsGcSelection, PairwiseDisjointAndMaximumOverRandomArrivals) {
  Rng rng(5, "test-arrivals");
  for (PlacementKind kind : {PlacementKind::kFractional, PlacementKind::kCyclic}) {
    for (int s : {1, 2, 3}) {
      Placement placement(kind, 12, s);
      for (int trial = 0; trial < 50; ++trial) {
        std::vector<int> arrivals(12);
        std::iota(arrivals.begin(), arrivals.end(), 0);
        rng.shuffle(arrivals);
        arrivals.resize(12 - s);
        std::vector<int> chosen = select_disjoint(placement, arrivals);
        EXPECT_TRUE(std::is_sorted(chosen.begin(), chosen.end()));
        expect_pairwise_disjoint(placement, chosen);
        EXPECT_EQ(chosen.size(), largest_disjoint(placement, arrivals));
        if (kind == PlacementKind::kFractional) {
          // One per group heard from, and it is the group's first arrival.
          for (int w : chosen) {
            for (int v : arrivals) {
              if (placement.group(v) == placement.group(w)) {
                EXPECT_EQ(v, w);
                break;
              }
            }
          }
        }
        // Only the set of arrivals matters for CR.
        if (kind == PlacementKind::kCyclic) {
          std::vector<int> reversed(arrivals.rbegin(), arrivals.rend());
          EXPECT_EQ(select_disjoint(placement, reversed), chosen);
        }
      }
    }
  }
}

TEST(WeightedSum, AccumulatesInTheGivenOrder) {
  std::vector<Vec> messages = {Vec::Constant(3, 1.0), Vec::Constant(3, 2.0), Vec::Constant(3, 4.0)};
  const double weights[] = {0.5, 0.0, 2.0};
  const int used[] = {0, 2};
  Vec out(3);
  const auto message_of = [&](int i) -> const Vec& { return messages[i]; };
  weighted_sum(used, weights, message_of, out);
  EXPECT_EQ(out, Vec::Constant(3, 8.5));
  weighted_sum({}, weights, message_of, out);
  EXPECT_EQ(out, Vec::Zero(3));
}

}  // namespace
}  // namespace pacer
