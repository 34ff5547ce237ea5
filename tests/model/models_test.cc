#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "model_test_util.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/model.h"

namespace pacer {
namespace {

using testing::random_dataset;
using testing::random_params;

struct ModelCase {
  std::string label;
  int classes;  // of the data the model fits; 0 for regression
  std::function<std::unique_ptr<Model>(int features)> make;
};

std::ostream& operator<<(std::ostream& os, const ModelCase& c) { return os << c.label; }

std::vector<ModelCase> model_cases() {
  return {
      {"least_squares", 0, [](int d) { return make_least_squares_model(d, 0.0); }},
      {"least_squares_l2", 0, [](int d) { return make_least_squares_model(d, 0.3); }},
      {"logistic", 2, [](int d) { return make_logistic_model(d, 0.0); }},
      {"logistic_l2", 2, [](int d) { return make_logistic_model(d, 0.3); }},
      {"softmax", 4, [](int d) { return make_softmax_model(d, 4, 0.0); }},
      {"softmax_l2", 4, [](int d) { return make_softmax_model(d, 4, 0.3); }},
      {"mlp", 3, [](int d) { return make_mlp_model(d, 6, 3, 0.0); }},
      {"mlp_l2", 3, [](int d) { return make_mlp_model(d, 6, 3, 0.3); }},
  };
}

class EveryModel : public ::testing::TestWithParam<ModelCase> {};

// ‖a − b‖ / max(‖a‖, ‖b‖).
double relative_error(const Vec& a, const Vec& b) {
  return (a - b).norm() / std::max(a.norm(), b.norm());
}

TEST_P(EveryModel, GradientMatchesCentralFiniteDifferences) {
  const ModelCase& c = GetParam();
  const Dataset data = random_dataset(7, 5, c.classes, 11);
  auto model = c.make(data.cols());
  auto ws = model->make_workspace(data.rows());
  const Batch batch = Batch::of(data);
  for (uint64_t seed : {1, 2, 3}) {
    const Vec x = random_params(*model, 0.7, seed);
    Vec grad(model->num_params());
    model->loss_and_gradient(x, batch, grad, *ws);

    Vec numeric(model->num_params());
    const double h = 1e-5;
    Vec probe = x;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      probe[i] = x[i] + h;
      const double up = model->loss(probe, batch, *ws);
      probe[i] = x[i] - h;
      const double down = model->loss(probe, batch, *ws);
      probe[i] = x[i];
      numeric[i] = (up - down) / (2 * h);
    }
    EXPECT_LT(relative_error(grad, numeric), 1e-6) << "seed " << seed;
  }
}

TEST_P(EveryModel, LossAndGradientReturnsTheLoss) {
  const ModelCase& c = GetParam();
  const Dataset data = random_dataset(20, 6, c.classes, 12);
  auto model = c.make(data.cols());
  auto ws = model->make_workspace(32);
  const Vec x = random_params(*model, 0.5, 4);
  Vec grad(model->num_params());
  const double with_gradient = model->loss_and_gradient(x, Batch::of(data), grad, *ws);
  const double alone = model->loss(x, Batch::of(data), *ws);
  EXPECT_NEAR(with_gradient, alone, 1e-13 * std::abs(alone));
}

TEST_P(EveryModel, GradientOverwritesRatherThanAccumulates) {
  const ModelCase& c = GetParam();
  const Dataset data = random_dataset(9, 4, c.classes, 13);
  auto model = c.make(data.cols());
  auto ws = model->make_workspace(data.rows());
  const Vec x = random_params(*model, 0.5, 5);
  Vec fresh(model->num_params()), reused = Vec::Constant(model->num_params(), 123.0);
  model->loss_and_gradient(x, Batch::of(data), fresh, *ws);
  model->loss_and_gradient(x, Batch::of(data), reused, *ws);
  EXPECT_EQ(fresh, reused);
}

TEST_P(EveryModel, SmallerBatchInALargerWorkspaceMatchesAnExactFit) {
  const ModelCase& c = GetParam();
  const Dataset data = random_dataset(10, 4, c.classes, 14);
  auto model = c.make(data.cols());
  auto exact = model->make_workspace(10);
  auto large = model->make_workspace(64);
  const Vec x = random_params(*model, 0.5, 6);
  Vec g1(model->num_params()), g2(model->num_params());
  const double l1 = model->loss_and_gradient(x, Batch::of(data), g1, *exact);
  const double l2 = model->loss_and_gradient(x, Batch::of(data), g2, *large);
  EXPECT_NEAR(l1, l2, 1e-13 * std::abs(l1));
  EXPECT_LT(relative_error(g1, g2), 1e-13);
}

TEST_P(EveryModel, EmptyBatchHasOnlyThePenalty) {
  const ModelCase& c = GetParam();
  auto model = c.make(3);
  auto ws = model->make_workspace(0);
  const Vec x = random_params(*model, 1.0, 8);
  const double l2 = c.label.ends_with("_l2") ? 0.3 : 0.0;
  const Batch empty{nullptr, nullptr, 0, 3};
  Vec grad(model->num_params());
  EXPECT_NEAR(model->loss_and_gradient(x, empty, grad, *ws), 0.5 * l2 * x.squaredNorm(), 1e-12);
  EXPECT_LT((grad - l2 * x).cwiseAbs().maxCoeff(), 1e-15);
}

TEST_P(EveryModel, EvaluateInChunksMatchesOneChunk) {
  const ModelCase& c = GetParam();
  const Dataset data = random_dataset(37, 5, c.classes, 15);
  auto model = c.make(data.cols());
  const Vec x = random_params(*model, 0.5, 7);
  auto whole = model->make_workspace(data.rows());
  auto chunked = model->make_workspace(5);  // 7 full chunks and one of 2 rows
  const Evaluation a = model->evaluate(x, data, *whole);
  const Evaluation b = model->evaluate(x, data, *chunked);
  EXPECT_NEAR(a.loss, b.loss, 1e-12 * std::abs(a.loss));
  EXPECT_NEAR(a.loss, model->loss(x, Batch::of(data), *whole), 1e-12 * std::abs(a.loss));
  if (c.classes == 0) {
    EXPECT_TRUE(std::isnan(a.accuracy));
    EXPECT_TRUE(std::isnan(b.accuracy));
  } else {
    EXPECT_EQ(a.accuracy, b.accuracy);
    EXPECT_GE(a.accuracy, 0.0);
    EXPECT_LE(a.accuracy, 1.0);
  }
}

TEST_P(EveryModel, InitializeIsDeterministicPerSeed) {
  const ModelCase& c = GetParam();
  auto model = c.make(8);
  Vec a, b;
  Rng r1(9, "init"), r2(9, "init");
  model->initialize(a, r1);
  model->initialize(b, r2);
  ASSERT_EQ(a.size(), model->num_params());
  EXPECT_EQ(a, b);
}

INSTANTIATE_TEST_SUITE_P(Models, EveryModel, ::testing::ValuesIn(model_cases()),
                         [](const auto& info) { return info.param.label; });

TEST(ModelLayouts, NumParamsFollowTheDocumentedLayouts) {
  EXPECT_EQ(make_least_squares_model(784, 0)->num_params(), 784);
  EXPECT_EQ(make_logistic_model(784, 0)->num_params(), 785);
  EXPECT_EQ(make_softmax_model(784, 10, 0)->num_params(), 10 * 784 + 10);
  EXPECT_EQ(make_mlp_model(784, 128, 10, 0)->num_params(), 128 * 784 + 128 + 10 * 128 + 10);
}

// Softmax and MLP on Fashion-MNIST-sized rows, with batches smaller than the workspace, against
// the textbook formulas written with plain Eigen expressions: exercises the blocked products with
// several cache blocks per dimension.
RowMatrix softmax_rows(const RowMatrix& z) {
  RowMatrix p = z;
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    p.row(i).array() = (p.row(i).array() - p.row(i).maxCoeff()).exp();
    p.row(i) /= p.row(i).sum();
  }
  return p;
}

RowMatrix one_hot(const Vec& labels, int classes) {
  RowMatrix y = RowMatrix::Zero(labels.size(), classes);
  for (Eigen::Index i = 0; i < labels.size(); ++i) y(i, static_cast<int>(labels[i])) = 1;
  return y;
}

double mean_cross_entropy(const RowMatrix& p, const Vec& labels) {
  double total = 0;
  for (Eigen::Index i = 0; i < p.rows(); ++i) total -= std::log(p(i, static_cast<int>(labels[i])));
  return total / p.rows();
}

TEST(LargeBatches, SoftmaxMatchesTheTextbookFormula) {
  const int d = 784, k = 10, m = 300;
  const Dataset data = random_dataset(m, d, k, 41);
  auto model = make_softmax_model(d, k, 0.0);
  auto ws = model->make_workspace(700);
  const Vec x = random_params(*model, 0.05, 42);
  Vec grad(model->num_params());
  const double loss = model->loss_and_gradient(x, Batch::of(data), grad, *ws);

  const Eigen::Map<const RowMatrix> w(x.data(), k, d);
  const Eigen::Map<const Vec> b(x.data() + k * d, k);
  const RowMatrix z = (data.features * w.transpose()).rowwise() + b.transpose();
  const RowMatrix p = softmax_rows(z);
  const RowMatrix dz = (p - one_hot(data.labels, k)) / m;
  Vec expected(model->num_params());
  Eigen::Map<RowMatrix>(expected.data(), k, d) = dz.transpose() * data.features;
  expected.tail(k) = dz.colwise().sum().transpose();
  EXPECT_NEAR(loss, mean_cross_entropy(p, data.labels), 1e-12);
  EXPECT_LT(relative_error(grad, expected), 1e-12);
}

TEST(LargeBatches, MlpMatchesTheTextbookFormula) {
  const int d = 784, h = 128, k = 10, m = 300;
  const Dataset data = random_dataset(m, d, k, 43);
  auto model = make_mlp_model(d, h, k, 0.0);
  auto ws = model->make_workspace(700);
  Vec x;
  Rng rng(44, "init");
  model->initialize(x, rng);
  x += random_params(*model, 0.01, 45);  // non-zero biases
  Vec grad(model->num_params());
  const double loss = model->loss_and_gradient(x, Batch::of(data), grad, *ws);

  const Eigen::Map<const RowMatrix> w1(x.data(), h, d);
  const Eigen::Map<const Vec> b1(x.data() + h * d, h);
  const Eigen::Map<const RowMatrix> w2(x.data() + h * (d + 1), k, h);
  const Eigen::Map<const Vec> b2(x.data() + h * (d + 1) + k * h, k);
  const RowMatrix pre = (data.features * w1.transpose()).rowwise() + b1.transpose();
  const RowMatrix hidden = pre.cwiseMax(0.0);
  const RowMatrix p = softmax_rows((hidden * w2.transpose()).rowwise() + b2.transpose());
  const RowMatrix dz = (p - one_hot(data.labels, k)) / m;
  const RowMatrix dpre = ((dz * w2).array() * (pre.array() > 0).cast<double>()).matrix();
  Vec expected(model->num_params());
  Eigen::Map<RowMatrix>(expected.data(), h, d) = dpre.transpose() * data.features;
  expected.segment(h * d, h) = dpre.colwise().sum().transpose();
  Eigen::Map<RowMatrix>(expected.data() + h * (d + 1), k, h) = dz.transpose() * hidden;
  expected.tail(k) = dz.colwise().sum().transpose();
  EXPECT_NEAR(loss, mean_cross_entropy(p, data.labels), 1e-12);
  EXPECT_LT(relative_error(grad, expected), 1e-12);
}

TEST(LeastSquares, LossAtAKnownPoint) {
  Dataset data;
  data.features.resize(2, 2);
  data.features << 1, 2, 3, 4;
  data.labels.resize(2);
  data.labels << 1, 2;
  auto model = make_least_squares_model(2, 0.1);
  auto ws = model->make_workspace(2);
  Vec x(2);
  x << 0.5, -1;
  // Residuals a·w − y: 0.5 − 2 − 1 = −2.5 and 1.5 − 4 − 2 = −4.5.
  // Mean of ½r²: (3.125 + 10.125) / 2 = 6.625. L2: 0.05 · (0.25 + 1) = 0.0625.
  EXPECT_NEAR(model->loss(x, Batch::of(data), *ws), 6.6875, 1e-14);
  // Gradient: Xᵀr / 2 + 0.1 w = ((−2.5 − 13.5)/2, (−5 − 18)/2) + (0.05, −0.1).
  Vec grad(2);
  model->loss_and_gradient(x, Batch::of(data), grad, *ws);
  EXPECT_NEAR(grad[0], -8.0 + 0.05, 1e-14);
  EXPECT_NEAR(grad[1], -11.5 - 0.1, 1e-14);
}

TEST(Softmax, LossAndAccuracyAtAKnownPoint) {
  Dataset data;
  data.features.resize(2, 2);
  data.features << 1, 2, 0, 0;
  data.labels.resize(2);
  data.labels << 0, 2;
  data.num_classes = 3;
  auto model = make_softmax_model(2, 3, 0.0);
  auto ws = model->make_workspace(2);
  Vec x(9);
  x << 1, 0, 0, 1, 0, 0,  // W (3 x 2)
      0, 0, 1;            // b
  // Logits: row 0: (1, 2, 1), label 0; row 1: (0, 0, 1), label 2.
  const double e = std::exp(1.0);
  const double row0 = std::log(e + e * e + e) - 1;
  const double row1 = std::log(1 + 1 + e) - 1;
  EXPECT_NEAR(model->loss(x, Batch::of(data), *ws), (row0 + row1) / 2, 1e-14);
  // Row 0 predicts class 1 (wrong), row 1 predicts class 2 (right).
  EXPECT_DOUBLE_EQ(model->evaluate(x, data, *ws).accuracy, 0.5);
}

TEST(Softmax, LossIsFiniteForHugeLogits) {
  Dataset data;
  data.features.resize(1, 1);
  data.features << 1;
  data.labels.resize(1);
  data.labels << 0;
  data.num_classes = 2;
  auto model = make_softmax_model(1, 2, 0.0);
  auto ws = model->make_workspace(1);
  Vec x(4);
  x << 1000, -1000, 0, 0;  // logits (1000, −1000): loss log(1 + e^{−2000}) ≈ 0
  Vec grad(4);
  EXPECT_NEAR(model->loss_and_gradient(x, Batch::of(data), grad, *ws), 0.0, 1e-300);
  EXPECT_TRUE(grad.allFinite());
  x << -1000, 1000, 0, 0;  // loss ≈ 2000
  EXPECT_NEAR(model->loss(x, Batch::of(data), *ws), 2000.0, 1e-9);
}

TEST(Logistic, LossAtKnownPoints) {
  Dataset data;
  data.features.resize(2, 1);
  data.features << 2, -1;
  data.labels.resize(2);
  data.labels << 1, 0;
  data.num_classes = 2;
  auto model = make_logistic_model(1, 0.0);
  auto ws = model->make_workspace(2);
  Vec x = Vec::Zero(2);
  EXPECT_NEAR(model->loss(x, Batch::of(data), *ws), std::log(2.0), 1e-15);
  x << 1, 0.5;  // z = 2.5 (label 1) and −0.5 (label 0)
  const double expected = (std::log1p(std::exp(-2.5)) + std::log1p(std::exp(-0.5))) / 2;
  EXPECT_NEAR(model->loss(x, Batch::of(data), *ws), expected, 1e-15);
  EXPECT_DOUBLE_EQ(model->evaluate(x, data, *ws).accuracy, 1.0);
  x << 800, 0;  // z = 1600 and −800: both far on the right side, loss ≈ 0 without overflow
  EXPECT_NEAR(model->loss(x, Batch::of(data), *ws), 0.0, 1e-300);
  x << -800, 0;  // loss ≈ (1600 + 800) / 2
  EXPECT_NEAR(model->loss(x, Batch::of(data), *ws), 1200.0, 1e-9);
}

TEST(Mlp, ZeroParametersGiveLogClasses) {
  const Dataset data = random_dataset(6, 3, 5, 21);
  auto model = make_mlp_model(3, 4, 5, 0.0);
  auto ws = model->make_workspace(6);
  EXPECT_NEAR(model->loss(Vec::Zero(model->num_params()), Batch::of(data), *ws), std::log(5.0),
              1e-15);
}

TEST(Mlp, InitializationIsHeNormalWithZeroBiases) {
  const int d = 784, h = 128, k = 10;
  auto model = make_mlp_model(d, h, k, 0.0);
  Vec x;
  Rng rng(3, "init");
  model->initialize(x, rng);
  const Eigen::Map<const Vec> w1(x.data(), h * d), b1(x.data() + h * d, h);
  const Eigen::Map<const Vec> w2(x.data() + h * (d + 1), k * h),
      b2(x.data() + h * (d + 1) + k * h, k);
  const auto sample_std = [](const Eigen::Map<const Vec>& v) {
    const double mean = v.mean();
    return std::sqrt((v.array() - mean).square().sum() / (v.size() - 1));
  };
  EXPECT_NEAR(sample_std(w1), std::sqrt(2.0 / d), 0.01 * std::sqrt(2.0 / d));
  EXPECT_NEAR(sample_std(w2), std::sqrt(2.0 / h), 0.05 * std::sqrt(2.0 / h));
  EXPECT_NEAR(w1.mean(), 0.0, 5 * std::sqrt(2.0 / d) / std::sqrt(double(h * d)));
  EXPECT_TRUE(b1.isZero(0.0));
  EXPECT_TRUE(b2.isZero(0.0));
}

TEST(LinearModels, InitializeToZero) {
  Rng rng(1, "init");
  for (const auto& model :
       {make_least_squares_model(5, 0), make_logistic_model(5, 0), make_softmax_model(5, 3, 0)}) {
    Vec x = Vec::Constant(2, 7.0);
    model->initialize(x, rng);
    ASSERT_EQ(x.size(), model->num_params());
    EXPECT_TRUE(x.isZero(0.0)) << model->name();
  }
}

TEST(Evaluate, EmptyDataGivesNaN) {
  auto model = make_softmax_model(3, 2, 0.0);
  auto ws = model->make_workspace(4);
  Dataset empty;
  empty.features.resize(0, 3);
  empty.num_classes = 2;
  const Evaluation e = model->evaluate(Vec::Zero(model->num_params()), empty, *ws);
  EXPECT_TRUE(std::isnan(e.loss));
  EXPECT_TRUE(std::isnan(e.accuracy));
}

}  // namespace
}  // namespace pacer
