#include "pacer/data/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "data_fixtures.h"

namespace pacer {
namespace {

using testing::contains;
using testing::error_of;

// Every index in range, no index twice across all partitions; returns how many rows are covered.
size_t check_disjoint(const Partition& partition, int rows) {
  std::set<int> seen;
  size_t total = 0;
  for (const std::vector<int>& part : partition) {
    for (int row : part) {
      EXPECT_GE(row, 0);
      EXPECT_LT(row, rows);
      EXPECT_TRUE(seen.insert(row).second) << "row " << row << " appears twice";
    }
    total += part.size();
  }
  return total;
}

// `rows` samples whose label is row % classes.
Dataset cyclic_labels(int rows, int classes) {
  Dataset data;
  data.features = RowMatrix::Zero(rows, 2);
  data.labels.resize(rows);
  for (int r = 0; r < rows; ++r) data.labels[r] = r % classes;
  data.num_classes = classes;
  data.name = "cyclic";
  return data;
}

TEST(PartitionContiguous, EqualBlocksDropTheRemainder) {
  const Partition partition = partition_contiguous(11, 3);
  ASSERT_EQ(partition.size(), 3u);
  for (int p = 0; p < 3; ++p) {
    ASSERT_EQ(partition[p].size(), 3u);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(partition[p][k], 3 * p + k);
  }
  EXPECT_EQ(check_disjoint(partition, 11), 9u);
}

TEST(PartitionIid, EqualSizesDisjointAndSeeded) {
  Rng a(1, "partition"), b(1, "partition"), c(2, "partition");
  const Partition first = partition_iid(103, 10, a);
  ASSERT_EQ(first.size(), 10u);
  for (const auto& part : first) EXPECT_EQ(part.size(), 10u);
  EXPECT_EQ(check_disjoint(first, 103), 100u);
  EXPECT_EQ(first, partition_iid(103, 10, b));
  EXPECT_NE(first, partition_iid(103, 10, c));
  EXPECT_NE(first, partition_contiguous(103, 10));
}

TEST(Partition, TooFewRowsOrPartsAreErrors) {
  Rng rng(1, "partition");
  EXPECT_PRED2(contains, error_of([&] { partition_iid(3, 4, rng); }),
               "partition 'iid': cannot split 3 rows into 4 non-empty partitions");
  EXPECT_PRED2(contains, error_of([&] { partition_contiguous(3, 0); }),
               "number of partitions must be positive, got 0");
  EXPECT_PRED2(contains, error_of([&] { partition_dirichlet(cyclic_labels(3, 3), 4, 1.0, rng); }),
               "partition 'dirichlet': cannot split 3 rows");
}

TEST(PartitionByClass, EachPartitionHoldsExactlyOneClass) {
  const Dataset data = cyclic_labels(23, 4);
  const Partition partition = partition_by_class(data, 4);
  ASSERT_EQ(partition.size(), 4u);
  EXPECT_EQ(check_disjoint(partition, 23), 23u);
  for (int p = 0; p < 4; ++p) {
    for (int row : partition[p]) EXPECT_EQ(data.labels[row], p);
  }
  EXPECT_EQ(partition[0].size(), 6u);
  EXPECT_EQ(partition[3].size(), 5u);
  EXPECT_PRED2(contains, error_of([&] { partition_by_class(data, 5); }),
               "needs workers = 4 (the number of classes of");
  Dataset missing = cyclic_labels(6, 3);
  missing.num_classes = 4;
  EXPECT_PRED2(contains, error_of([&] { partition_by_class(missing, 4); }), "class 3 has no rows");
  Dataset regression = cyclic_labels(6, 3);
  regression.num_classes = 0;
  EXPECT_PRED2(contains, error_of([&] { partition_by_class(regression, 0); }),
               "needs class labels");
}

TEST(PartitionDirichlet, CoversEveryRowOnceAndIsSeeded) {
  const Dataset data = cyclic_labels(200, 10);
  for (double alpha : {0.001, 0.1, 1.0, 100.0}) {
    Rng a(7, "partition"), b(7, "partition");
    const Partition partition = partition_dirichlet(data, 10, alpha, a);
    ASSERT_EQ(partition.size(), 10u);
    EXPECT_EQ(check_disjoint(partition, 200), 200u) << alpha;
    for (const auto& part : partition) EXPECT_FALSE(part.empty()) << alpha;
    EXPECT_EQ(partition, partition_dirichlet(data, 10, alpha, b)) << alpha;
  }
}

TEST(PartitionDirichlet, AlphaControlsSkew) {
  const Dataset data = cyclic_labels(5000, 5);
  // Fraction of each class's rows that land in its most used partition, averaged over classes.
  const auto concentration = [&](double alpha) {
    Rng rng(11, "partition");
    const Partition partition = partition_dirichlet(data, 5, alpha, rng);
    std::vector<std::vector<int>> counts(5, std::vector<int>(5));
    for (int p = 0; p < 5; ++p) {
      for (int row : partition[p]) ++counts[static_cast<int>(data.labels[row])][p];
    }
    double sum = 0;
    for (const auto& per_part : counts) {
      sum += *std::max_element(per_part.begin(), per_part.end()) / 1000.0;
    }
    return sum / 5;
  };
  EXPECT_GT(concentration(0.01), 0.9);
  EXPECT_LT(concentration(1000.0), 0.3);
  Rng rng(1, "partition");
  EXPECT_PRED2(contains, error_of([&] { partition_dirichlet(data, 5, 0.0, rng); }),
               "alpha must be a finite number > 0, got 0");
}

TEST(MakePartition, DispatchesByName) {
  const Dataset data = cyclic_labels(20, 4);
  Rng a(3, "partition"), b(3, "partition");
  EXPECT_EQ(make_partition("contiguous", data, 4, 0, a), partition_contiguous(20, 4));
  EXPECT_EQ(make_partition("iid", data, 4, 0, a), partition_iid(20, 4, b));
  EXPECT_EQ(make_partition("by_class", data, 4, 0, a), partition_by_class(data, 4));
  EXPECT_EQ(make_partition("dirichlet", data, 4, 0.5, a), partition_dirichlet(data, 4, 0.5, b));
  EXPECT_PRED2(contains, error_of([&] { make_partition("random", data, 4, 0, a); }),
               "unknown scheme 'random'; expected contiguous, iid, by_class or dirichlet");
}

}  // namespace
}  // namespace pacer
