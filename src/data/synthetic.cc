// Synthetic problems. Each generator draws its problem parameters (x*, the covariance's rotation,
// the blob centres) first and then the samples row by row, so the first m rows do not depend on
// how many rows are requested: asking for train+test rows in one call and splitting them gives
// a training set that does not change when the test set size does.
#include "pacer/data/synthetic.h"

#include <Eigen/QR>
#include <cmath>
#include <numeric>
#include <vector>

#include "pacer/core/error.h"

namespace pacer {
namespace {

void check_options(const SyntheticOptions& options, const char* generator) {
  if (options.samples <= 0) {
    fail("{}: samples must be positive, got {}", generator, options.samples);
  }
  if (options.features <= 0) {
    fail("{}: features must be positive, got {}", generator, options.features);
  }
  if (!(options.noise >= 0) || !std::isfinite(options.noise)) {
    fail("{}: noise must be a finite number >= 0, got {}", generator, options.noise);
  }
  if (!(options.condition_number >= 1) || !std::isfinite(options.condition_number)) {
    fail("{}: condition_number must be a finite number >= 1, got {}", generator,
         options.condition_number);
  }
}

Vec standard_normal(int size, Rng& rng) {
  Vec v(size);
  for (int i = 0; i < size; ++i) v[i] = rng.normal();
  return v;
}

// Feature rows a = Q diag(sqrt(λ)) z with z ~ N(0, I), so Cov(a) = Q diag(λ) Qᵀ, λ geometric from
// 1 to 1/condition_number. Q is a random rotation, so that the conditioning is not aligned with
// the coordinate axes (per-feature standardisation would undo an axis-aligned one). Rows are
// computed one at a time: a matrix-matrix product may round a row differently depending on how
// many rows it holds, which would break the prefix property above.
class CorrelatedFeatures {
 public:
  CorrelatedFeatures(const SyntheticOptions& options, Rng& rng) : scale_(options.features) {
    const int d = options.features;
    for (int k = 0; k < d; ++k) {
      const double t = d == 1 ? 0.0 : static_cast<double>(k) / (d - 1);
      scale_[k] = std::pow(options.condition_number, -0.5 * t);
    }
    if (options.condition_number != 1.0 && d > 1) {
      Eigen::MatrixXd gaussian(d, d);
      for (int i = 0; i < d; ++i) gaussian.row(i) = standard_normal(d, rng).transpose();
      rotation_ = Eigen::HouseholderQR<Eigen::MatrixXd>(gaussian).householderQ();
    }
  }

  Vec draw(Rng& rng) const {
    const Vec scaled = standard_normal(static_cast<int>(scale_.size()), rng).cwiseProduct(scale_);
    return rotation_.size() > 0 ? Vec(rotation_ * scaled) : scaled;
  }

 private:
  Vec scale_;
  Eigen::MatrixXd rotation_;  // empty when the covariance is isotropic
};

// Rows a_j from CorrelatedFeatures and a hidden x* ~ N(0, I); each label is `label(z, rng)` of
// the noisy response z = a_j·x* + noise·N(0,1). The two linear generators differ only in it.
template <typename Label>
Dataset make_linear_model(const SyntheticOptions& options, Rng& rng, const char* kind,
                          int num_classes, Label label) {
  check_options(options, kind);
  const Vec solution = standard_normal(options.features, rng);
  const CorrelatedFeatures features(options, rng);
  Dataset data;
  data.name = std::string("synthetic ") + kind;
  data.num_classes = num_classes;
  data.features.resize(options.samples, options.features);
  data.labels.resize(options.samples);
  for (int j = 0; j < options.samples; ++j) {
    const Vec a = features.draw(rng);
    data.features.row(j) = a.transpose();
    data.labels[j] = label(a.dot(solution) + options.noise * rng.normal(), rng);
  }
  return data;
}

}  // namespace

Dataset make_least_squares(const SyntheticOptions& options, Rng& rng) {
  return make_linear_model(options, rng, "least_squares", 0,
                           [](double response, Rng&) { return response; });
}

Dataset make_logistic(const SyntheticOptions& options, Rng& rng) {
  return make_linear_model(options, rng, "logistic", 2, [](double logit, Rng& draw) {
    return draw.uniform() < 1.0 / (1.0 + std::exp(-logit)) ? 1.0 : 0.0;
  });
}

Dataset make_blobs(const SyntheticOptions& options, Rng& rng) {
  check_options(options, "blobs");
  if (options.classes < 2) fail("blobs: classes must be at least 2, got {}", options.classes);
  const int k = options.classes;
  RowMatrix centres(k, options.features);
  for (int c = 0; c < k; ++c) {
    centres.row(c) = 2.0 * standard_normal(options.features, rng).transpose();
  }
  Dataset data;
  data.name = "synthetic blobs";
  data.num_classes = k;
  data.features.resize(options.samples, options.features);
  data.labels.resize(options.samples);
  // Classes come in shuffled blocks of k rows: every class once per block, so any prefix of the
  // rows is balanced to within one sample per class, and the order is not a fixed cycle.
  std::vector<int> block(k);
  std::iota(block.begin(), block.end(), 0);
  for (int j = 0; j < options.samples; ++j) {
    if (j % k == 0) rng.shuffle(block);
    const int c = block[j % k];
    data.labels[j] = c;
    data.features.row(j) =
        centres.row(c) + options.noise * standard_normal(options.features, rng).transpose();
  }
  return data;
}

}  // namespace pacer
