#include "pacer/coding/placement.h"

#include <gtest/gtest.h>

#include <set>

#include "pacer/coding/pipeline.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

TEST(Placement, FractionalGroupsHoldTheirOwnBlock) {
  Placement fr(PlacementKind::kFractional, 12, 2);
  EXPECT_EQ(fr.load(), 3);
  EXPECT_EQ(fr.num_groups(), 4);
  for (int i = 0; i < 12; ++i) {
    const int k = i / 3;
    EXPECT_EQ(fr.group(i), k);
    EXPECT_EQ(fr.partitions(i), (std::vector<int>{3 * k, 3 * k + 1, 3 * k + 2}));
  }
  EXPECT_TRUE(fr.disjoint(0, 3));
  EXPECT_FALSE(fr.disjoint(0, 2));
  EXPECT_EQ(fr.holders(4), (std::vector<int>{3, 4, 5}));
}

TEST(Placement, CyclicWindowsWrapAround) {
  Placement cr(PlacementKind::kCyclic, 6, 2);
  EXPECT_EQ(cr.partitions(0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(cr.partitions(5), (std::vector<int>{5, 0, 1}));
  EXPECT_EQ(cr.holders(0), (std::vector<int>{0, 4, 5}));
  EXPECT_TRUE(cr.disjoint(0, 3));
  EXPECT_FALSE(cr.disjoint(0, 4));
  EXPECT_FALSE(cr.disjoint(1, 1));
}

TEST(Placement, EveryPartitionHasCHolders) {
  for (PlacementKind kind : {PlacementKind::kFractional, PlacementKind::kCyclic}) {
    for (int s : {0, 1, 2, 3, 5, 11}) {
      Placement p(kind, 12, s);
      for (int q = 0; q < 12; ++q) {
        std::vector<int> holders = p.holders(q);
        EXPECT_EQ(static_cast<int>(holders.size()), s + 1);
        for (int i : holders) EXPECT_TRUE(p.holds(i, q));
      }
    }
  }
}

TEST(Placement, RequirementsNameWhatIsValid) {
  EXPECT_EQ(placement_requirement(PlacementKind::kFractional, 12, 2), "");
  EXPECT_EQ(placement_requirement(PlacementKind::kCyclic, 10, 2), "");
  EXPECT_EQ(valid_fractional_stragglers(10), (std::vector<int>{0, 1, 4, 9}));
  const std::string fr = placement_requirement(PlacementKind::kFractional, 10, 2);
  EXPECT_NE(fr.find("0, 1, 4, 9"), std::string::npos) << fr;
  EXPECT_NE(placement_requirement(PlacementKind::kCyclic, 10, 10).find("s < workers"),
            std::string::npos);
  EXPECT_NE(placement_requirement(PlacementKind::kCyclic, 10, -1), "");
  EXPECT_THROW(Placement(PlacementKind::kFractional, 10, 2), Error);
  EXPECT_THROW(Placement(PlacementKind::kCyclic, 4, 4), Error);
}

TEST(PipelineCache, WarmUpRefreshesEverySlotThenOnePerStep) {
  PipelineCache cache({4, 5, 0}, 1);
  EXPECT_FALSE(cache.warm());
  EXPECT_EQ(cache.slots_due(0).size(), 3u);
  for (int k = 0; k < 3; ++k) {
    cache.gradient(k) = Vec::Constant(2, k + 1.0);
    cache.store(k, 0);
  }
  ASSERT_TRUE(cache.warm());
  for (int64_t t = 1; t < 7; ++t) {
    std::span<const int> due = cache.slots_due(t);
    ASSERT_EQ(due.size(), 1u);
    EXPECT_EQ(due[0], (t + 1) % 3);
    EXPECT_EQ(cache.partition_due(t), cache.partition(due[0]));
  }
  Vec out;
  const double weights[] = {1.0, 10.0, 100.0};
  cache.combine(weights, out);
  EXPECT_EQ(out, Vec::Constant(2, 321.0));
}

TEST(PipelineCache, CyclicScheduleRefreshesEveryPartitionOncePerStep) {
  for (int s : {1, 2, 3}) {
    const int n = 12;
    Placement cr(PlacementKind::kCyclic, n, s);
    for (int64_t t = 0; t < 10; ++t) {
      std::multiset<int> fresh;
      for (int i = 0; i < n; ++i) fresh.insert(PipelineCache(cr.partitions(i), 0).partition_due(t));
      for (int p = 0; p < n; ++p) EXPECT_EQ(fresh.count(p), 1u) << "s=" << s << " t=" << t;
    }
  }
}

TEST(PipelineCache, StaggeredFractionalGroupsRefreshEachPartitionOncePerStep) {
  Placement fr(PlacementKind::kFractional, 12, 2);
  for (int64_t t = 0; t < 6; ++t) {
    std::multiset<int> fresh;
    for (int i = 0; i < 12; ++i) {
      fresh.insert(PipelineCache(fr.partitions(i), i % fr.load()).partition_due(t));
    }
    for (int p = 0; p < 12; ++p) EXPECT_EQ(fresh.count(p), 1u);
  }
}

}  // namespace
}  // namespace pacer
