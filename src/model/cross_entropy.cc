// The softmax cross-entropy shared by softmax regression and the MLP.
#include <cmath>

#include "internal.h"

namespace pacer::model_internal {

double softmax_cross_entropy(MatrixRef logits, const double* labels, bool want_gradient) {
  const Index rows = logits.rows();
  const Index classes = logits.cols();
  if (rows == 0) return 0;
  const double inv_rows = 1.0 / static_cast<double>(rows);
  double total = 0;
  for (Index i = 0; i < rows; ++i) {
    auto z = logits.row(i);
    const Index label = static_cast<Index>(labels[i]);
    PACER_CHECK(label >= 0 && label < classes);
    const double z_label = z(label);
    const double z_max = z.maxCoeff();
    if (want_gradient) {
      z.array() = (z.array() - z_max).exp();
      const double sum = z.sum();
      total += z_max + std::log(sum) - z_label;
      z *= inv_rows / sum;
      z(label) -= inv_rows;
    } else {
      total += z_max + std::log((z.array() - z_max).exp().sum()) - z_label;
    }
  }
  return total * inv_rows;
}

void argmax_rows(const ConstMatrixRef& m, int* out) {
  for (Index i = 0; i < m.rows(); ++i) {
    Index best = 0;
    m.row(i).maxCoeff(&best);
    out[i] = static_cast<int>(best);
  }
}

CrossEntropyModel::CrossEntropyModel(int features, int classes, double l2)
    : EigenModel(features, l2), classes_(classes) {
  PACER_CHECK(classes >= 2);
}

double CrossEntropyModel::loss(const Vec& x, const Batch& batch, Workspace& ws) const {
  check_arguments(x, batch, ws);
  return softmax_cross_entropy(forward(x, batch, ws), batch.labels, false) + penalty(x);
}

double CrossEntropyModel::loss_and_gradient(const Vec& x, const Batch& batch, Vec& grad,
                                            Workspace& ws) const {
  check_arguments(x, batch, ws);
  check_gradient(grad);
  MatrixRef logits = forward(x, batch, ws);
  const double loss = softmax_cross_entropy(logits, batch.labels, true) + penalty(x);
  backward(x, batch, logits, grad, ws);
  add_penalty_gradient(x, grad);
  return loss;
}

bool CrossEntropyModel::predict(const Vec& x, const Batch& batch, Workspace& ws, int* out) const {
  check_arguments(x, batch, ws);
  argmax_rows(forward(x, batch, ws), out);
  return true;
}

}  // namespace pacer::model_internal
