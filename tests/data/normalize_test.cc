#include "pacer/data/normalize.h"

#include <gtest/gtest.h>

#include "data_fixtures.h"

namespace pacer {
namespace {

using testing::contains;
using testing::error_of;

DataSplit small_split() {
  DataSplit split;
  split.train.features.resize(4, 3);
  split.train.features << 0, 5, 7,  //
      -255, 5, 1,                   //
      10, 5, 2,                     //
      20, 5, 6;
  split.train.labels = Vec::Zero(4);
  split.test.features.resize(2, 3);
  split.test.features << 510, 6, 4,  //
      0, 5, 0;
  split.test.labels = Vec::Zero(2);
  return split;
}

TEST(Normalize, NoneLeavesDataUnchanged) {
  DataSplit split = small_split();
  normalize("none", split);
  EXPECT_EQ(split.train.features, small_split().train.features);
  EXPECT_EQ(split.test.features, small_split().test.features);
}

TEST(Normalize, ScaleDividesByTheLargestTrainingMagnitude) {
  DataSplit split = small_split();
  normalize("scale", split);
  EXPECT_DOUBLE_EQ(split.train.features.cwiseAbs().maxCoeff(), 1.0);
  EXPECT_DOUBLE_EQ(split.train.features(1, 0), -1.0);
  EXPECT_DOUBLE_EQ(split.train.features(0, 1), 5.0 / 255);
  EXPECT_DOUBLE_EQ(split.test.features(0, 0), 2.0);  // test scaled with the training factor
}

TEST(Normalize, StandardUsesTrainingStatistics) {
  DataSplit split = small_split();
  const RowMatrix original_train = split.train.features;
  normalize("standard", split);
  const Eigen::RowVectorXd mean = split.train.features.colwise().mean();
  const Eigen::RowVectorXd mean_square = split.train.features.array().square().colwise().mean();
  for (int c : {0, 2}) {
    EXPECT_NEAR(mean[c], 0.0, 1e-12);
    EXPECT_NEAR(mean_square[c], 1.0, 1e-12);
  }
  // The constant column is only centred: train becomes 0, test keeps its offset.
  EXPECT_EQ(split.train.features.col(1).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_DOUBLE_EQ(split.test.features(0, 1), 1.0);
  // Test data: (x - train mean) / train std.
  const double mean0 = original_train.col(0).mean();
  const double std0 = std::sqrt((original_train.col(0).array() - mean0).square().mean());
  EXPECT_NEAR(split.test.features(0, 0), (510 - mean0) / std0, 1e-12);
}

TEST(Normalize, EmptyTestSetAndUnknownMethod) {
  DataSplit split = small_split();
  split.test = Dataset{};
  normalize("standard", split);
  normalize("scale", split);
  EXPECT_EQ(split.test.rows(), 0);
  EXPECT_PRED2(contains, error_of([&] { normalize("minmax", split); }),
               "unknown method 'minmax'; expected none, scale or standard");
}

}  // namespace
}  // namespace pacer
