// Random data sets and models shared by the model-layer tests.
#pragma once

#include <memory>
#include <string>

#include "pacer/core/rng.h"
#include "pacer/data/dataset.h"
#include "pacer/model/model.h"

namespace pacer::testing {

// rows x cols standard-normal features; labels uniform class indices in 0..classes-1, or
// standard-normal targets when classes is 0.
inline Dataset random_dataset(int rows, int cols, int classes, uint64_t seed) {
  Rng rng(seed, "test-data");
  Dataset data;
  data.features.resize(rows, cols);
  data.labels.resize(rows);
  data.num_classes = classes;
  data.name = "random";
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) data.features(i, j) = rng.normal();
    data.labels[i] = classes > 0 ? static_cast<double>(rng.uniform_int(classes)) : rng.normal();
  }
  return data;
}

// Parameters with standard-normal entries times `scale`.
inline Vec random_params(const Model& model, double scale, uint64_t seed) {
  Rng rng(seed, "test-params");
  Vec x(model.num_params());
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = scale * rng.normal();
  return x;
}

}  // namespace pacer::testing
