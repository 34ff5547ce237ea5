#include "pacer/data/dataset.h"

#include "pacer/core/error.h"

namespace pacer {

Dataset Dataset::subset(const std::vector<int>& indices) const {
  Dataset out;
  out.num_classes = num_classes;
  out.name = name;
  const auto count = static_cast<Eigen::Index>(indices.size());
  out.features.resize(count, features.cols());
  out.labels.resize(count);
  for (Eigen::Index i = 0; i < count; ++i) {
    const int row = indices[i];
    PACER_CHECK(row >= 0 && row < rows());
    out.features.row(i) = features.row(row);
    out.labels[i] = labels[row];
  }
  return out;
}

}  // namespace pacer
