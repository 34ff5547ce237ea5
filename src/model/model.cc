#include "pacer/model/model.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "internal.h"

namespace pacer {

Evaluation Model::evaluate(const Vec& x, const Dataset& data, Workspace& ws) const {
  const int total = data.rows();
  const int chunk = ws.max_rows();
  PACER_CHECK(chunk > 0);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (total == 0) return {kNaN, kNaN};

  std::vector<int> predicted(static_cast<size_t>(std::min(chunk, total)));
  bool classifier = true;
  int64_t correct = 0;
  double loss_sum = 0;
  for (int start = 0; start < total; start += chunk) {
    const int rows = std::min(chunk, total - start);
    const Batch batch{data.features.data() + static_cast<int64_t>(start) * data.cols(),
                      data.labels.data() + start, rows, data.cols()};
    // Chunk losses weighted by their share of the rows: the weights sum to 1, so the L2 term that
    // every chunk loss carries is counted exactly once.
    loss_sum += loss(x, batch, ws) * rows;
    if (classifier && predict(x, batch, ws, predicted.data())) {
      for (int i = 0; i < rows; ++i) {
        correct += predicted[i] == static_cast<int>(batch.labels[i]);
      }
    } else {
      classifier = false;
    }
  }
  return {loss_sum / total, classifier ? static_cast<double>(correct) / total : kNaN};
}

bool Model::predict(const Vec& /*x*/, const Batch& /*batch*/, Workspace& /*ws*/,
                    int* /*out*/) const {
  return false;
}

namespace model_internal {

EigenModel::EigenModel(int features, double l2) : features_(features), l2_(l2) {
  PACER_CHECK(features > 0);
  PACER_CHECK(l2 >= 0);
}

void EigenModel::check_arguments(const Vec& x, const Batch& batch, const Workspace& ws) const {
  PACER_CHECK(x.size() == num_params());
  PACER_CHECK(batch.cols == features_);
  PACER_CHECK(batch.rows >= 0 && batch.rows <= ws.max_rows());
}

void EigenModel::check_gradient(const Vec& grad) const { PACER_CHECK(grad.size() == num_params()); }

}  // namespace model_internal
}  // namespace pacer
