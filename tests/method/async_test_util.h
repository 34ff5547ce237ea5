// A closed-form heterogeneous problem for the asynchronous-method tests, and a Monitor that
// records every update.
//
// Worker i's objective is F_i(x) = ½‖x − b_i‖², built from the existing layers: a least-squares
// model on d features, and partition i holds the d rows √d·e_j with labels √d·b_ij, so that
//     f_i(x) = (1/d) Σ_j ½ (√d x_j − √d b_ij)² = ½‖x − b_i‖²,   ∇f_i(x) = x − b_i.
// Hence argmin F = mean of the b_i and argmin F̃ = Σ_i w_i b_i. With batch = 1 a worker's gradient
// is d (x_j − b_ij) e_j for a uniformly drawn coordinate j: unbiased, with noise.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include "pacer/core/vector.h"
#include "pacer/data/dataset.h"
#include "pacer/data/partition.h"
#include "pacer/method/trainer.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/objective.h"
#include "recording_monitor.h"

namespace pacer::testing {

struct Quadratic {
  std::vector<Vec> centers;  // b_i
  std::shared_ptr<const Objective> objective;

  // Σ_i w_i b_i for weights w (normalised here).
  Vec weighted_center(const std::vector<double>& w) const {
    double total = 0;
    for (double v : w) total += v;
    Vec out = Vec::Zero(centers[0].size());
    for (size_t i = 0; i < centers.size(); ++i) out += (w[i] / total) * centers[i];
    return out;
  }
  Vec mean_center() const { return weighted_center(std::vector<double>(centers.size(), 1.0)); }
};

inline Quadratic make_quadratic(const std::vector<Vec>& centers, int batch) {
  const int n = static_cast<int>(centers.size());
  const int d = static_cast<int>(centers[0].size());
  const double root_d = std::sqrt(static_cast<double>(d));
  Dataset data;
  data.name = "quadratic centers";
  data.num_classes = 0;
  data.features = RowMatrix::Zero(n * d, d);
  data.labels = Vec::Zero(n * d);
  Partition partition(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) {
      const int row = i * d + j;
      data.features(row, j) = root_d;
      data.labels[row] = root_d * centers[i][j];
      partition[i].push_back(row);
    }
  }
  std::shared_ptr<const Model> model = make_least_squares_model(d, 0.0);
  return Quadratic{centers, std::make_shared<Objective>(model, data, partition, batch)};
}

// Workers 0..n/2−1 centred at `a`, the others at `b`.
inline Quadratic two_group_quadratic(int n, const Vec& a, const Vec& b, int batch) {
  std::vector<Vec> centers;
  for (int i = 0; i < n; ++i) centers.push_back(i < n / 2 ? a : b);
  return make_quadratic(centers, batch);
}

}  // namespace pacer::testing
