// The libtorch models (pacer/model/torch_models.h): gradients against central finite differences
// in double, the flat-vector round trip, equality with the Eigen MLP, BatchNorm semantics and the
// config makers.
#include "pacer/model/torch_models.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "model/model_test_util.h"
#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/factory.h"

namespace pacer {
namespace {

using testing::random_dataset;
using testing::random_params;

// The machine is shared: keep torch (and OpenBLAS) to one thread in every test.
const bool kOneThread = (set_torch_threads(1), true);

TorchModelOptions float64(int micro_batch = 256, double l2 = 0) {
  TorchModelOptions options;
  options.dtype = TorchDtype::kFloat64;
  options.micro_batch = micro_batch;
  options.l2 = l2;
  return options;
}

double relative_error(const Vec& a, const Vec& b) {
  return (a - b).norm() / std::max(a.norm(), b.norm());
}

// Central difference of model.loss at x along coordinate i.
double finite_difference(const Model& model, const Vec& x, const Batch& batch, Workspace& ws,
                         Eigen::Index i, double h = 1e-5) {
  Vec probe = x;
  probe[i] = x[i] + h;
  const double up = model.loss(probe, batch, ws);
  probe[i] = x[i] - h;
  const double down = model.loss(probe, batch, ws);
  return (up - down) / (2 * h);
}

// Checks the whole gradient of a small model against central finite differences.
void expect_gradient_matches_finite_differences(const Model& model, const Dataset& data,
                                                double scale, uint64_t seed) {
  auto ws = model.make_workspace(data.rows());
  const Batch batch = Batch::of(data);
  const Vec x = random_params(model, scale, seed);
  Vec grad(model.num_params());
  model.loss_and_gradient(x, batch, grad, *ws);
  Vec numeric(model.num_params());
  for (Eigen::Index i = 0; i < x.size(); ++i)
    numeric[i] = finite_difference(model, x, batch, *ws, i);
  EXPECT_LT(relative_error(grad, numeric), 1e-7) << model.name() << ", seed " << seed;
}

TEST(TorchMlp, GradientMatchesCentralFiniteDifferences) {
  const Dataset data = random_dataset(7, 5, 3, 11);
  for (double l2 : {0.0, 0.3}) {
    auto model = make_torch_mlp_model(5, 6, 3, float64(256, l2));
    for (uint64_t seed : {1, 2})
      expect_gradient_matches_finite_differences(*model, data, 0.7, seed);
  }
}

TEST(TorchCnn, GradientMatchesCentralFiniteDifferences) {
  const Dataset data = random_dataset(4, 16 * 16, 3, 12);
  auto model = make_torch_cnn_model({1, 16, 16}, 8, 3, float64());
  // 6·25+6 + 16·6·25+16 + 16·1·1·8+8 + 8·3+3 parameters.
  EXPECT_EQ(model->num_params(), 156 + 2416 + 136 + 27);
  expect_gradient_matches_finite_differences(*model, data, 0.3, 1);
}

TEST(TorchCnn, TwoChannelImagesAndMicroBatches) {
  const Dataset data = random_dataset(5, 2 * 18 * 17, 4, 13);
  auto whole = make_torch_cnn_model({2, 18, 17}, 5, 4, float64());
  auto split = make_torch_cnn_model({2, 18, 17}, 5, 4, float64(2));
  const Vec x = random_params(*whole, 0.3, 2);
  Vec g_whole(whole->num_params()), g_split(split->num_params());
  auto ws_whole = whole->make_workspace(5);
  auto ws_split = split->make_workspace(5);
  const double l_whole = whole->loss_and_gradient(x, Batch::of(data), g_whole, *ws_whole);
  const double l_split = split->loss_and_gradient(x, Batch::of(data), g_split, *ws_split);
  // Without BatchNorm, micro-batches only change the rounding.
  EXPECT_NEAR(l_whole, l_split, 1e-12 * std::abs(l_whole));
  EXPECT_LT(relative_error(g_whole, g_split), 1e-12);
  expect_gradient_matches_finite_differences(*split, data, 0.3, 3);
}

TEST(ResNet18, LayoutAndParameterCount) {
  auto model = make_resnet18_model({3, 32, 32}, 10, TorchModelOptions{});
  EXPECT_EQ(model->num_params(), 11173962);
  const std::vector<TorchParam>& layout = model->parameter_layout();
  int64_t offset = 0;
  bool has_downsample = false;
  for (const TorchParam& p : layout) {
    EXPECT_EQ(p.offset, offset) << p.name;
    int64_t size = 1;
    for (int64_t s : p.shape) size *= s;
    EXPECT_EQ(p.size, size) << p.name;
    offset += p.size;
    has_downsample |= p.name == "layer2.0.downsample.0.weight";
  }
  EXPECT_EQ(offset, model->num_params());
  EXPECT_TRUE(has_downsample);
  EXPECT_EQ(layout.front().name, "conv1.weight");
  EXPECT_EQ(layout.front().shape, (std::vector<int64_t>{64, 3, 3, 3}));
  EXPECT_EQ(layout.back().name, "fc.bias");
  EXPECT_EQ(layout.back().shape, (std::vector<int64_t>{10}));
}

TEST(ResNet18, InitialisationFollowsTorchvision) {
  auto model = make_resnet18_model({3, 32, 32}, 10, TorchModelOptions{});
  Vec x;
  Rng rng(5, "init");
  model->initialize(x, rng);
  ASSERT_EQ(x.size(), model->num_params());
  for (const TorchParam& p : model->parameter_layout()) {
    const auto block = x.segment(p.offset, p.size);
    if (p.name == "bn1.weight") {
      EXPECT_EQ(block.minCoeff(), 1.0);
      EXPECT_EQ(block.maxCoeff(), 1.0);
    } else if (p.name == "bn1.bias") {
      EXPECT_EQ(block.cwiseAbs().maxCoeff(), 0.0);
    } else if (p.name == "fc.weight" || p.name == "fc.bias") {
      EXPECT_LE(block.cwiseAbs().maxCoeff(), 1.0 / std::sqrt(512.0));
      EXPECT_GT(block.cwiseAbs().maxCoeff(), 0.0);
    } else if (p.name == "layer4.1.conv2.weight") {
      // He-normal over fan-out = 512·3·3.
      const double rms = std::sqrt(block.squaredNorm() / p.size);
      EXPECT_NEAR(rms, std::sqrt(2.0 / (512 * 9)), 0.01 * std::sqrt(2.0 / (512 * 9)));
    }
  }
  Vec again;
  Rng rng2(5, "init");
  model->initialize(again, rng2);
  EXPECT_EQ(x, again);
}

// ResNet-18 on two 32×32 images in double, BatchNorm in training mode: the gradient at a few
// random coordinates (and the first entry of every parameter tensor of the last stage and head)
// against central differences.
TEST(ResNet18, GradientMatchesFiniteDifferencesOnSampledCoordinates) {
  const Dataset data = random_dataset(2, 3072, 10, 14);
  auto model = make_resnet18_model({3, 32, 32}, 10, float64());
  Vec x;
  Rng init(3, "init");
  model->initialize(x, init);
  auto ws = model->make_workspace(2);
  const Batch batch = Batch::of(data);
  Vec grad(model->num_params());
  model->loss_and_gradient(x, batch, grad, *ws);

  std::vector<Eigen::Index> coordinates;
  Rng pick(4, "coordinates");
  for (int k = 0; k < 8; ++k) coordinates.push_back(pick.uniform_int(model->num_params()));
  for (const TorchParam& p : model->parameter_layout()) {
    if (p.name.rfind("layer4.1", 0) == 0 || p.name.rfind("fc.", 0) == 0 ||
        p.name.rfind("bn1.", 0) == 0) {
      coordinates.push_back(p.offset + pick.uniform_int(p.size));
    }
  }
  // A ReLU kink within ±h of the probe spoils a central difference; over 11M parameters that
  // happens for a few coordinates at any one step size, so each coordinate must match at one of
  // two step sizes (a kink rarely lies within both).
  const double scale = grad.cwiseAbs().maxCoeff();
  for (Eigen::Index i : coordinates) {
    double best = std::numeric_limits<double>::infinity();
    for (double h : {1e-5, 1e-6}) {
      best = std::min(best, std::abs(grad[i] - finite_difference(*model, x, batch, *ws, i, h)));
    }
    EXPECT_LE(best, 1e-7 * scale + 1e-6 * std::abs(grad[i])) << "coordinate " << i;
  }
}

// float32 against float64 on a network whose float32 error can be bounded a priori: the torch MLP
// d → h (ReLU) → K with cross-entropy, at a float32-representable point.
//
// Why this point. Inputs are multiples of 1/4 in [-1, 1] and every parameter a multiple of 1/8 in
// [-1/2, 1/2]. Then every partial sum of z1 = W1·x + b1 is a multiple of 1/32 of magnitude at most
// d/2 + 1/2, and every partial sum of z2 = W2·relu(z1) + b2 a multiple of 1/256 of magnitude at
// most (d + 1)·h/4 + 1/2; both fit in float32's 24-bit significand for the sizes below, so the
// forward pass up to the logits is EXACT in float32 whatever the kernel's summation order, blocking
// or use of FMA. Only the softmax, the cross-entropy and the backward products round.
//
// The bound. With u = 2^-24 and γ_k = k·u / (1 − k·u) (the classical bound on a k-term sum or dot
// product, |fl(Σ a_i) − Σ a_i| ≤ γ_k Σ |a_i| for any order and any FMA use):
//   * per row, torch computes log_softmax as (z − m) − log S, S = Σ_k exp(z_k − m), m = max z.
//     z − m is exact; each exp is allowed 4 ulp (libm and SLEEF's u10 kernels promise 1); S then
//     has relative error ≤ γ_K + 4u, log S absolute error ≤ γ_K + 5u + u·|log S|, and the final
//     subtraction adds u·(|z_k − m| + log S). So ε_row := γ_K + 6u + 2u·(max_k |z_k − m| + log S)
//     bounds the absolute error of each log-probability, and p̂_k = exp(log p̂_k) has relative
//     error ≤ e^{ε_row}(1 + 4u) − 1 =: ε_p.
//   * δ2 = (p − y)/B: |δ̂2 − δ2| ≤ e2 := ((ε_p + 3u)·(p + y))/B (subtraction, scaling by 1/B, and
//     the mean's weight, each one rounding).
//   * dW2 = δ2ᵀ·h over B rows (h exact): |error| ≤ Σ_b e2·h + γ_B Σ_b |δ2|·h; db2 likewise with
//     h = 1.
//   * δ1 = (W2ᵀ δ2) ⊙ [z1 > 0] (the mask is exact since z1 is): |error| ≤ e1 := |W2|ᵀ e2 +
//     γ_K |W2|ᵀ|δ2|.
//   * dW1 = δ1ᵀ·x: |error| ≤ Σ_b e1·|x| + γ_B Σ_b |δ1|·|x|; db1 likewise with |x| = 1.
// Every sum over absolute values is evaluated below in double (its own rounding is 1e-16 relative,
// covered by a factor 1.01 on the bound). The loss is a mean over rows of (log S + m − z_y):
// |error| ≤ mean(ε_row) + γ_B·mean(row loss).
// The resulting bound is about 1e-6 of the gradient's scale: a conversion that lost precision
// (through bfloat16 or half, say) or a misplaced parameter would exceed it by orders of magnitude,
// and no correct float32 kernel can.
struct ExactPoint {
  Dataset data;
  Vec x;
};

// d features, h hidden units, K classes, B rows, on the dyadic grids described above.
ExactPoint dyadic_point(const TorchModel& model, int d, int rows, int classes, uint64_t seed) {
  Rng rng(seed, "dyadic");
  ExactPoint point;
  point.data.features.resize(rows, d);
  point.data.labels.resize(rows);
  point.data.num_classes = classes;
  for (int b = 0; b < rows; ++b) {
    for (int i = 0; i < d; ++i)
      point.data.features(b, i) = (static_cast<double>(rng.uniform_int(9)) - 4) / 4;  // [-1, 1]
    point.data.labels[b] = static_cast<double>(rng.uniform_int(classes));
  }
  point.x.resize(model.num_params());
  for (Eigen::Index j = 0; j < point.x.size(); ++j)
    point.x[j] = (static_cast<double>(rng.uniform_int(9)) - 4) / 8;  // [-1/2, 1/2]
  return point;
}

double gamma_u(double k, double u) { return k * u / (1 - k * u); }

// The a-priori bound on |g32 − g64| per parameter (layout fc1.weight h×d, fc1.bias, fc2.weight
// K×h, fc2.bias) and on |l32 − l64| (returned), from the derivation above.
double float32_error_bound(const ExactPoint& point, int h, int K, Vec& bound) {
  const double u = std::ldexp(1.0, -24);
  const Eigen::MatrixXd& X = point.data.features;
  const int B = static_cast<int>(X.rows()), d = static_cast<int>(X.cols());
  const double* p = point.x.data();
  const Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>> W1(p, h, d);
  const Eigen::Map<const Eigen::VectorXd> b1(p + h * d, h);
  const Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>> W2(p + h * d + h, K, h);
  const Eigen::Map<const Eigen::VectorXd> b2(p + h * d + h + K * h, K);
  bound.setZero(point.x.size());
  Eigen::Map<Eigen::Matrix<double, -1, -1, Eigen::RowMajor>> bW1(bound.data(), h, d);
  Eigen::Map<Eigen::VectorXd> bb1(bound.data() + h * d, h);
  Eigen::Map<Eigen::Matrix<double, -1, -1, Eigen::RowMajor>> bW2(bound.data() + h * d + h, K, h);
  Eigen::Map<Eigen::VectorXd> bb2(bound.data() + h * d + h + K * h, K);
  double loss_bound = 0;
  for (int b = 0; b < B; ++b) {
    const Eigen::VectorXd z1 = W1 * X.row(b).transpose() + b1;
    const Eigen::VectorXd hid = z1.cwiseMax(0.0);
    const Eigen::VectorXd z2 = W2 * hid + b2;
    const double m = z2.maxCoeff();
    const double log_s = std::log((z2.array() - m).exp().sum());
    const double eps_row =
        gamma_u(K, u) + 6 * u + 2 * u * ((z2.array() - m).abs().maxCoeff() + log_s);
    const double eps_p = std::exp(eps_row) * (1 + 4 * u) - 1;
    Eigen::VectorXd y = Eigen::VectorXd::Zero(K);
    y[static_cast<int>(point.data.labels[b])] = 1;
    const Eigen::VectorXd prob = (z2.array() - m - log_s).exp();
    const Eigen::VectorXd delta2 = ((prob - y) / B).cwiseAbs();
    const Eigen::VectorXd e2 = (eps_p + 3 * u) * (prob + y) / B;
    const Eigen::VectorXd mask = (z1.array() > 0).cast<double>();
    const Eigen::VectorXd delta1 = (W2.cwiseAbs().transpose() * delta2).cwiseProduct(mask);
    const Eigen::VectorXd e1 =
        (W2.cwiseAbs().transpose() * (e2 + gamma_u(K, u) * delta2)).cwiseProduct(mask);
    const Eigen::VectorXd ax = X.row(b).transpose().cwiseAbs();
    bW2 += (e2 + gamma_u(B, u) * delta2) * hid.transpose();
    bb2 += e2 + gamma_u(B, u) * delta2;
    bW1 += (e1 + gamma_u(B, u) * delta1) * ax.transpose();
    bb1 += e1 + gamma_u(B, u) * delta1;
    loss_bound +=
        (eps_row + gamma_u(B, u) * (log_s + m - z2[static_cast<int>(point.data.labels[b])])) / B;
  }
  bound *= 1.01;
  return 1.01 * loss_bound;
}

TEST(TorchMlp, Float32GradientWithinItsDerivedRoundingBound) {
  constexpr int d = 12, h = 16, K = 5, B = 9;
  auto f64 = make_torch_mlp_model(d, h, K, float64());
  auto f32 = make_torch_mlp_model(d, h, K, TorchModelOptions{});
  ASSERT_EQ(f32->dtype(), TorchDtype::kFloat32);
  for (uint64_t seed : {1, 2, 3}) {
    const ExactPoint point = dyadic_point(*f64, d, B, K, seed);
    auto ws64 = f64->make_workspace(B);
    auto ws32 = f32->make_workspace(B);
    Vec g64(point.x.size()), g32(point.x.size()), bound;
    const double l64 = f64->loss_and_gradient(point.x, Batch::of(point.data), g64, *ws64);
    const double l32 = f32->loss_and_gradient(point.x, Batch::of(point.data), g32, *ws32);
    const double loss_bound = float32_error_bound(point, h, K, bound);
    EXPECT_LE(std::abs(l32 - l64), loss_bound) << "seed " << seed;
    double worst = std::abs(l32 - l64) / loss_bound;  // diagnostic: how much of the bound is used
    for (Eigen::Index j = 0; j < g64.size(); ++j) {
      if (bound[j] > 0) worst = std::max(worst, std::abs(g32[j] - g64[j]) / bound[j]);
      EXPECT_LE(std::abs(g32[j] - g64[j]), bound[j])
          << "parameter " << j << " (" << g32[j] << " vs " << g64[j] << "), seed " << seed;
    }
    std::printf("seed %llu: largest error / bound = %.3g\n", static_cast<unsigned long long>(seed),
                worst);
    // The bound is tight enough to mean something: far below what bfloat16 (8 bits) or a
    // misplaced parameter would give.
    EXPECT_LT(bound.maxCoeff(), 1e-4 * g64.cwiseAbs().maxCoeff()) << "seed " << seed;
  }
}

// No running statistics: the loss is a pure function of (x, batch) — repeating a step, or using a
// fresh workspace, gives the same numbers, and loss() equals loss_and_gradient()'s loss.
TEST(ResNet18, BatchNormKeepsNoStateBetweenCalls) {
  const Dataset data = random_dataset(4, 3 * 12 * 12, 3, 16);
  auto model = make_resnet18_model({3, 12, 12}, 3, float64());
  Vec x;
  Rng init(7, "init");
  model->initialize(x, init);
  auto ws = model->make_workspace(4);
  Vec g1(x.size()), g2(x.size()), g3(x.size());
  const double l1 = model->loss_and_gradient(x, Batch::of(data), g1, *ws);
  const double l2 = model->loss_and_gradient(x, Batch::of(data), g2, *ws);
  auto fresh = model->make_workspace(4);
  const double l3 = model->loss_and_gradient(x, Batch::of(data), g3, *fresh);
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(l1, l3);
  EXPECT_EQ(g1, g2);
  EXPECT_EQ(g1, g3);
  EXPECT_NEAR(model->loss(x, Batch::of(data), *ws), l1, 1e-13 * std::abs(l1));
  const Evaluation e = model->evaluate(x, data, *ws);
  EXPECT_NEAR(e.loss, l1, 1e-13 * std::abs(l1));
  EXPECT_GE(e.accuracy, 0.0);
  EXPECT_LE(e.accuracy, 1.0);
}

// Ghost BatchNorm: micro-batches of 2 rows normalise each pair on its own, so the loss is the mean
// of the two pairs' losses.
TEST(ResNet18, MicroBatchesDefineBatchNormGroups) {
  const Dataset data = random_dataset(4, 3 * 12 * 12, 3, 17);
  auto whole = make_resnet18_model({3, 12, 12}, 3, float64());
  auto pairs = make_resnet18_model({3, 12, 12}, 3, float64(2));
  Vec x;
  Rng init(8, "init");
  whole->initialize(x, init);
  auto ws_whole = whole->make_workspace(4);
  auto ws_pairs = pairs->make_workspace(4);
  const double first = whole->loss(x, Batch::of(data.subset({0, 1})), *ws_whole);
  const double second = whole->loss(x, Batch::of(data.subset({2, 3})), *ws_whole);
  const double grouped = pairs->loss(x, Batch::of(data), *ws_pairs);
  EXPECT_NEAR(grouped, 0.5 * (first + second), 1e-13);
  EXPECT_GT(std::abs(grouped - whole->loss(x, Batch::of(data), *ws_whole)), 1e-6);
  // The groups do not depend on the workspace: evaluate() on a one-row workspace groups alike.
  auto small = pairs->make_workspace(1);
  EXPECT_NEAR(pairs->evaluate(x, data, *small).loss, grouped, 1e-13);
}

TEST(TorchModel, FlatVectorRoundTripIsExact) {
  auto cnn = make_torch_cnn_model({1, 16, 16}, 8, 3, float64());
  auto ws = cnn->make_workspace(2);
  const Vec x = random_params(*cnn, 1.0, 9);
  Vec back;
  cnn->load_parameters(x, *ws);
  cnn->store_parameters(*ws, back);
  EXPECT_EQ(back, x);

  // float32 keeps values representable in float exactly, and rounds the others to nearest.
  auto cnn32 = make_torch_cnn_model({1, 16, 16}, 8, 3, TorchModelOptions{});
  auto ws32 = cnn32->make_workspace(2);
  const Vec rounded = x.cast<float>().cast<double>();
  cnn32->load_parameters(rounded, *ws32);
  cnn32->store_parameters(*ws32, back);
  EXPECT_EQ(back, rounded);
  cnn32->load_parameters(x, *ws32);
  cnn32->store_parameters(*ws32, back);
  EXPECT_EQ(back, rounded);
}

// The documented layout of the Eigen MLP: W1 (h×d), b1, W2 (K×h), b2.
TEST(TorchMlp, LayoutMatchesTheEigenMlp) {
  auto model = make_torch_mlp_model(5, 6, 3, float64());
  const std::vector<TorchParam>& layout = model->parameter_layout();
  ASSERT_EQ(layout.size(), 4u);
  EXPECT_EQ(layout[0].name, "fc1.weight");
  EXPECT_EQ(layout[0].shape, (std::vector<int64_t>{6, 5}));
  EXPECT_EQ(layout[1].name, "fc1.bias");
  EXPECT_EQ(layout[2].name, "fc2.weight");
  EXPECT_EQ(layout[2].shape, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(layout[3].name, "fc2.bias");
  EXPECT_EQ(layout[3].offset, 6 * 6 + 3 * 6);
}

TEST(TorchMlp, SameLossGradientAndInitialisationAsTheEigenMlp) {
  const Dataset data = random_dataset(9, 7, 4, 18);
  for (double l2 : {0.0, 0.25}) {
    auto eigen = make_mlp_model(7, 5, 4, l2);
    auto torch = make_torch_mlp_model(7, 5, 4, float64(4, l2));  // three micro-batches
    ASSERT_EQ(torch->num_params(), eigen->num_params());
    Vec x_eigen, x_torch;
    Rng rng_eigen(10, "init"), rng_torch(10, "init");
    eigen->initialize(x_eigen, rng_eigen);
    torch->initialize(x_torch, rng_torch);
    EXPECT_EQ(x_torch, x_eigen);

    auto ws_eigen = eigen->make_workspace(9);
    auto ws_torch = torch->make_workspace(9);
    for (uint64_t seed : {1, 2}) {
      const Vec x = random_params(*eigen, 0.8, seed);
      Vec g_eigen(x.size()), g_torch(x.size());
      const double l_eigen = eigen->loss_and_gradient(x, Batch::of(data), g_eigen, *ws_eigen);
      const double l_torch = torch->loss_and_gradient(x, Batch::of(data), g_torch, *ws_torch);
      EXPECT_NEAR(l_torch, l_eigen, 1e-10);
      EXPECT_LT((g_torch - g_eigen).cwiseAbs().maxCoeff(), 1e-10);
      const Evaluation e_eigen = eigen->evaluate(x, data, *ws_eigen);
      const Evaluation e_torch = torch->evaluate(x, data, *ws_torch);
      EXPECT_NEAR(e_torch.loss, e_eigen.loss, 1e-10);
      EXPECT_EQ(e_torch.accuracy, e_eigen.accuracy);
    }
  }
}

TEST(TorchModel, EmptyBatchHasOnlyThePenalty) {
  auto model = make_torch_mlp_model(3, 4, 2, float64(256, 0.5));
  auto ws = model->make_workspace(0);
  const Vec x = random_params(*model, 1.0, 11);
  Vec grad(x.size());
  const Batch empty{nullptr, nullptr, 0, 3};
  EXPECT_NEAR(model->loss_and_gradient(x, empty, grad, *ws), 0.25 * x.squaredNorm(), 1e-12);
  EXPECT_LT((grad - 0.5 * x).cwiseAbs().maxCoeff(), 1e-15);
}

// ------------------------------------------------------------------------------------------------
// Config makers.

Config config_of(const std::string& toml) { return Config::parse(toml, "run.toml"); }

std::string error_of(const std::string& toml, const Dataset& train) {
  register_torch_models();
  try {
    make_model(config_of(toml), train);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an Error for " << toml;
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TorchFactory, BuildsEachModelAndInfersImageShapes) {
  register_torch_models();
  const Dataset mnist_like = random_dataset(4, 784, 10, 19);
  const Dataset cifar_like = random_dataset(4, 3072, 10, 20);
  auto mlp = make_model(config_of("model.name = \"torch_mlp\""), mnist_like);
  EXPECT_EQ(mlp->name(), "torch_mlp");
  EXPECT_EQ(mlp->num_params(), make_mlp_model(784, 128, 10, 0)->num_params());
  auto cnn = make_model(config_of("model.name = \"torch_cnn\""), mnist_like);
  EXPECT_EQ(cnn->num_params(),
            make_torch_cnn_model({1, 28, 28}, 128, 10, TorchModelOptions{})->num_params());
  auto cnn_cifar = make_model(config_of("[model]\nname = \"torch_cnn\"\nhidden = 64"), cifar_like);
  EXPECT_EQ(cnn_cifar->num_params(),
            make_torch_cnn_model({3, 32, 32}, 64, 10, TorchModelOptions{})->num_params());
  auto resnet = make_model(
      config_of("[model]\nname = \"resnet18\"\ndtype = \"float64\"\nthreads = 1\nmicro_batch = 64"),
      cifar_like);
  const auto* torch_resnet = dynamic_cast<const TorchModel*>(resnet.get());
  ASSERT_NE(torch_resnet, nullptr);
  EXPECT_EQ(torch_resnet->num_params(), 11173962);
  EXPECT_EQ(torch_resnet->dtype(), TorchDtype::kFloat64);
  EXPECT_EQ(torch_resnet->micro_batch(), 64);
  const Dataset two_channel = random_dataset(4, 2 * 20 * 20, 3, 21);
  auto explicit_shape =
      make_model(config_of("[model]\nname = \"torch_cnn\"\nchannels = 2\nheight = 20\nwidth = 20"),
                 two_channel);
  EXPECT_EQ(explicit_shape->num_params(),
            make_torch_cnn_model({2, 20, 20}, 128, 3, TorchModelOptions{})->num_params());
}

TEST(TorchFactory, BadKeysAndDataGetClearErrors) {
  const Dataset mnist_like = random_dataset(4, 784, 10, 22);
  const Dataset odd = random_dataset(4, 785, 10, 23);
  const Dataset small = random_dataset(4, 100, 10, 24);
  const Dataset regression = random_dataset(4, 784, 0, 25);
  std::string e = error_of("[model]\nname = \"torch_cnn\"\ndtype = \"half\"", mnist_like);
  EXPECT_TRUE(contains(e, "model.dtype")) << e;
  e = error_of("[model]\nname = \"torch_cnn\"\nthreads = 0", mnist_like);
  EXPECT_TRUE(contains(e, "model.threads")) << e;
  e = error_of("[model]\nname = \"resnet18\"\nmicro_batch = 0", mnist_like);
  EXPECT_TRUE(contains(e, "model.micro_batch")) << e;
  e = error_of("model.name = \"torch_cnn\"", odd);
  EXPECT_TRUE(contains(e, "model.channels") && contains(e, "785")) << e;
  e = error_of("model.name = \"torch_cnn\"", small);
  EXPECT_TRUE(contains(e, "16×16") && contains(e, "1×10×10")) << e;
  e = error_of("[model]\nname = \"torch_cnn\"\nchannels = 3\nheight = 28\nwidth = 28", mnist_like);
  EXPECT_TRUE(contains(e, "model.channels") && contains(e, "784")) << e;
  e = error_of("[model]\nname = \"torch_cnn\"\nchannels = 1", mnist_like);
  EXPECT_TRUE(contains(e, "model.height")) << e;
  e = error_of("model.name = \"torch_mlp\"", regression);
  EXPECT_TRUE(contains(e, "model.name") && contains(e, "classification")) << e;
}

TEST(TorchFactory, UnusedKeysStayUnread) {
  register_torch_models();
  const Config config = config_of("[model]\nname = \"resnet18\"\nhidden = 64");
  make_model(config, random_dataset(2, 3072, 10, 26));
  const std::vector<std::string> unread = config.unread_keys();
  EXPECT_EQ(unread, std::vector<std::string>{"model.hidden"});
}

TEST(TorchBuildInfo, NamesTheBlasAndThreads) {
  set_torch_threads(1);
  const std::string info = torch_build_info();
  EXPECT_TRUE(contains(info, "libtorch 1.")) << info;
  EXPECT_TRUE(contains(info, "sgemm_ from")) << info;
  EXPECT_TRUE(contains(info, "blas")) << info;
  EXPECT_TRUE(contains(info, "torch threads: 1")) << info;
}

}  // namespace
}  // namespace pacer
