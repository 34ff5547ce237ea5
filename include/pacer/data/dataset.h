// In-memory data sets and views of their rows.
#pragma once

#include <string>
#include <vector>

#include "pacer/core/vector.h"

namespace pacer {

// A labelled data set held in memory, one sample per row.
//   * Classification: y holds the class index (0..num_classes-1) as a double.
//   * Regression: y holds the target and num_classes is 0.
//   * Binary logistic regression uses num_classes == 2 with labels 0/1.
struct Dataset {
  RowMatrix features;  // rows() samples x cols() features
  Vec labels;          // one entry per row
  int num_classes = 0;
  std::string name;  // where it came from (file or generator), for messages and summaries

  int rows() const { return static_cast<int>(features.rows()); }
  int cols() const { return static_cast<int>(features.cols()); }

  // The rows listed in `indices`, in that order, as a new data set (same classes and name).
  Dataset subset(const std::vector<int>& indices) const;
};

// A non-owning view of `rows` consecutive samples: features row-major, rows x cols, and
// labels. Models compute on Batches, so a whole partition (contiguous in memory) and a gathered
// minibatch look the same to them.
struct Batch {
  const double* features = nullptr;
  const double* labels = nullptr;
  int rows = 0;
  int cols = 0;

  static Batch of(const Dataset& data) {
    return Batch{data.features.data(), data.labels.data(), data.rows(), data.cols()};
  }
  Eigen::Map<const RowMatrix> X() const { return {features, rows, cols}; }
  Eigen::Map<const Vec> y() const { return {labels, rows}; }
};

// A training set and, optionally, a test set of the same width.
struct DataSplit {
  Dataset train;
  Dataset test;  // rows() == 0 when there is none
};

}  // namespace pacer
