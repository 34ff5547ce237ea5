#include "pacer/data/dataset.h"

#include <gtest/gtest.h>

namespace pacer {
namespace {

TEST(Dataset, SubsetCopiesRowsInTheGivenOrder) {
  Dataset data;
  data.num_classes = 3;
  data.name = std::string(1, 'd');
  data.features.resize(3, 2);
  data.features << 1, 2, 3, 4, 5, 6;
  data.labels = Vec::LinSpaced(3, 0, 2);
  const Dataset picked = data.subset({2, 0, 2});
  ASSERT_EQ(picked.rows(), 3);
  ASSERT_EQ(picked.cols(), 2);
  EXPECT_EQ(picked.features(0, 1), 6);
  EXPECT_EQ(picked.features(1, 0), 1);
  EXPECT_EQ(picked.labels[0], 2);
  EXPECT_EQ(picked.labels[1], 0);
  EXPECT_EQ(picked.num_classes, 3);
  EXPECT_EQ(picked.name, "d");
  const Batch batch = Batch::of(picked);
  EXPECT_EQ(batch.X()(2, 1), 6);
  EXPECT_EQ(batch.y()[1], 0);
  EXPECT_EQ(data.subset({}).rows(), 0);
}

}  // namespace
}  // namespace pacer
