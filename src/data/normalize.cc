#include "pacer/data/normalize.h"

#include <algorithm>
#include <cmath>

#include "pacer/core/error.h"

namespace pacer {
namespace {

void scale(DataSplit& split) {
  if (split.train.features.size() == 0) return;
  const double largest = split.train.features.cwiseAbs().maxCoeff();
  if (largest == 0) return;  // all-zero features: nothing to scale
  split.train.features /= largest;
  if (split.test.features.size() > 0) split.test.features /= largest;
}

void standardize(DataSplit& split) {
  const int rows = split.train.rows();
  if (rows == 0) return;
  PACER_CHECK(split.test.rows() == 0 || split.test.cols() == split.train.cols());
  const Eigen::RowVectorXd mean = split.train.features.colwise().mean();
  const Eigen::RowVectorXd variance =
      (split.train.features.rowwise() - mean).array().square().colwise().sum() / rows;
  // Features that are constant on the training set are only centred; dividing by their (zero or
  // round-off) spread would blow up test values.
  Eigen::RowVectorXd inverse_std(mean.size());
  for (Eigen::Index c = 0; c < mean.size(); ++c) {
    const double std_dev = std::sqrt(variance[c]);
    const bool constant = std_dev <= 1e-12 * std::max(1.0, std::abs(mean[c]));
    inverse_std[c] = constant ? 1.0 : 1.0 / std_dev;
  }
  for (Dataset* data : {&split.train, &split.test}) {
    if (data->rows() == 0) continue;
    data->features = (data->features.rowwise() - mean).array().rowwise() * inverse_std.array();
  }
}

}  // namespace

void normalize(const std::string& method, DataSplit& split) {
  if (method == "none") return;
  if (method == "scale") return scale(split);
  if (method == "standard") return standardize(split);
  fail("normalize: unknown method '{}'; expected none, scale or standard", method);
}

}  // namespace pacer
