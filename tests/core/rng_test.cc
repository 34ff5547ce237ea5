#include "pacer/core/rng.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pacer {
namespace {

TEST(Rng, SameSeedPurposeIndexGivesSameStream) {
  Rng a(42, "duration", 3), b(42, "duration", 3);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, StreamsDifferByPurposeIndexAndSeed) {
  Rng base(42, "duration", 3);
  Rng other_index(42, "duration", 4), other_purpose(42, "minibatch", 3),
      other_seed(43, "duration", 3);
  uint64_t v = base.next_u64();
  EXPECT_NE(v, other_index.next_u64());
  EXPECT_NE(v, other_purpose.next_u64());
  EXPECT_NE(v, other_seed.next_u64());
}

TEST(Rng, DistributionMomentsMatchDefinitions) {
  Rng rng(7, "moments");
  const int n = 200000;
  double sum_u = 0, sum_e = 0, sum_n = 0, sum_n2 = 0, sum_p = 0, sum_g = 0;
  for (int i = 0; i < n; ++i) {
    sum_u += rng.uniform();
    sum_e += rng.exponential(2.0);
    double z = rng.normal();
    sum_n += z;
    sum_n2 += z * z;
    sum_p += rng.pareto(3.0);
    sum_g += rng.gamma(0.5);
  }
  EXPECT_NEAR(sum_u / n, 0.5, 0.005);
  EXPECT_NEAR(sum_e / n, 2.0, 0.03);
  EXPECT_NEAR(sum_n / n, 0.0, 0.01);
  EXPECT_NEAR(sum_n2 / n, 1.0, 0.02);
  EXPECT_NEAR(sum_p / n, 1.5, 0.03);  // alpha / (alpha - 1)
  EXPECT_NEAR(sum_g / n, 0.5, 0.01);
}

TEST(Rng, UniformIntCoversRangeUniformly) {
  Rng rng(1, "int");
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) counts[rng.uniform_int(7)]++;
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
}

}  // namespace
}  // namespace pacer
