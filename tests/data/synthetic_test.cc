#include "pacer/data/synthetic.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include "data_fixtures.h"

namespace pacer {
namespace {

using testing::contains;
using testing::error_of;

TEST(MakeLeastSquares, NoiselessLabelsAreExactlyLinear) {
  SyntheticOptions options;
  options.samples = 60;
  options.features = 8;
  options.noise = 0.0;
  options.condition_number = 50.0;
  Rng rng(1, "test");
  const Dataset data = make_least_squares(options, rng);
  ASSERT_EQ(data.rows(), 60);
  ASSERT_EQ(data.cols(), 8);
  EXPECT_EQ(data.num_classes, 0);
  // y = A x* exactly, so the least-squares solution recovers x* with zero residual.
  const Eigen::MatrixXd a = data.features;
  const Vec solution = a.colPivHouseholderQr().solve(data.labels);
  EXPECT_LT((a * solution - data.labels).norm(), 1e-9 * data.labels.norm());
  EXPECT_GT(data.labels.norm(), 1.0);
}

TEST(MakeLeastSquares, NoiseLeavesAResidualOfTheRightSize) {
  SyntheticOptions options;
  options.samples = 4000;
  options.features = 5;
  options.noise = 0.5;
  Rng rng(2, "test");
  const Dataset data = make_least_squares(options, rng);
  const Eigen::MatrixXd a = data.features;
  const Vec solution = a.colPivHouseholderQr().solve(data.labels);
  const double residual_std = (a * solution - data.labels).norm() / std::sqrt(4000.0);
  EXPECT_NEAR(residual_std, 0.5, 0.03);
}

TEST(MakeLeastSquares, CovarianceHasTheRequestedConditionNumber) {
  SyntheticOptions options;
  options.samples = 40000;
  options.features = 4;
  options.condition_number = 100.0;
  Rng rng(3, "test");
  const Dataset data = make_least_squares(options, rng);
  const Eigen::MatrixXd covariance =
      data.features.transpose() * data.features / static_cast<double>(data.rows());
  const Vec eigenvalues = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(covariance).eigenvalues();
  EXPECT_NEAR(eigenvalues.maxCoeff(), 1.0, 0.05);
  EXPECT_NEAR(eigenvalues.minCoeff(), 0.01, 0.001);
  // Rotated, not axis-aligned: the smallest direction is spread over several coordinates.
  EXPECT_GT(covariance.diagonal().minCoeff(), 0.02);
}

TEST(Synthetic, SameSeedSameDataAndRowsDoNotDependOnCount) {
  SyntheticOptions small;
  small.samples = 30;
  small.condition_number = 10;
  SyntheticOptions large = small;
  large.samples = 45;
  for (auto* make : {&make_least_squares, &make_logistic, &make_blobs}) {
    Rng a(9, "test"), b(9, "test"), c(10, "test");
    const Dataset first = make(small, a);
    const Dataset longer = make(large, b);
    const Dataset other = make(small, c);
    EXPECT_EQ(first.features, longer.features.topRows(30)) << first.name;
    EXPECT_EQ(first.labels, longer.labels.head(30)) << first.name;
    EXPECT_NE(first.features, other.features) << first.name;
  }
}

TEST(MakeLogistic, BinaryLabelsFollowTheModel) {
  SyntheticOptions options;
  options.samples = 2000;
  options.features = 3;
  options.noise = 0.0;
  Rng rng(4, "test");
  const Dataset data = make_logistic(options, rng);
  EXPECT_EQ(data.num_classes, 2);
  int ones = 0;
  for (int j = 0; j < data.rows(); ++j) {
    ASSERT_TRUE(data.labels[j] == 0 || data.labels[j] == 1);
    ones += data.labels[j] == 1;
  }
  // Symmetric features and x*: both classes are common.
  EXPECT_GT(ones, 600);
  EXPECT_LT(ones, 1400);
  // A logistic-regression direction exists: the least-squares fit of 2y-1 correlates with y.
  const Eigen::MatrixXd a = data.features;
  const Vec target = 2 * data.labels.array() - 1;
  const Vec w = a.colPivHouseholderQr().solve(target);
  const Vec score = a * w;
  int agree = 0;
  for (int j = 0; j < data.rows(); ++j) agree += (score[j] > 0) == (data.labels[j] == 1);
  EXPECT_GT(agree, 0.8 * data.rows());
}

TEST(MakeBlobs, BalancedClassesAroundTheirCentres) {
  SyntheticOptions options;
  options.samples = 301;
  options.features = 4;
  options.classes = 3;
  options.noise = 0.01;
  Rng rng(5, "test");
  const Dataset data = make_blobs(options, rng);
  EXPECT_EQ(data.num_classes, 3);
  std::vector<int> counts(3);
  std::vector<Vec> first_of_class(3);
  for (int j = 0; j < data.rows(); ++j) {
    const int c = static_cast<int>(data.labels[j]);
    ASSERT_GE(c, 0);
    ASSERT_LT(c, 3);
    ++counts[c];
    if (first_of_class[c].size() == 0) first_of_class[c] = data.features.row(j).transpose();
    EXPECT_LT((data.features.row(j).transpose() - first_of_class[c]).norm(), 0.2);
  }
  EXPECT_EQ(counts[0] + counts[1] + counts[2], 301);
  for (int c : counts) {
    EXPECT_GE(c, 100);
    EXPECT_LE(c, 101);
  }
  EXPECT_GT((first_of_class[0] - first_of_class[1]).norm(), 0.2);
}

TEST(Synthetic, InvalidOptionsAreErrors) {
  Rng rng(6, "test");
  SyntheticOptions options;
  options.samples = 0;
  EXPECT_PRED2(contains, error_of([&] { make_least_squares(options, rng); }),
               "least_squares: samples must be positive, got 0");
  options = {};
  options.condition_number = 0.5;
  EXPECT_PRED2(contains, error_of([&] { make_logistic(options, rng); }),
               "logistic: condition_number must be a finite number >= 1");
  options = {};
  options.classes = 1;
  EXPECT_PRED2(contains, error_of([&] { make_blobs(options, rng); }),
               "blobs: classes must be at least 2, got 1");
  options = {};
  options.noise = -1;
  EXPECT_PRED2(contains, error_of([&] { make_blobs(options, rng); }), "blobs: noise must be");
}

}  // namespace
}  // namespace pacer
