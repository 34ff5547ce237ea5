// Pieces shared by the Eigen models of src/model. Not part of the public interface.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <optional>

#include "pacer/core/error.h"
#include "pacer/core/vector.h"
#include "pacer/data/dataset.h"
#include "pacer/model/model.h"

namespace pacer::model_internal {

using Eigen::Index;
using ConstMatrixRef = Eigen::Ref<const RowMatrix>;
using MatrixRef = Eigen::Ref<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstVecMap = Eigen::Map<const Vec>;
using VecMap = Eigen::Map<Vec>;

// C = op(A)·op(B) through Eigen's blocked matrix kernel, with the packing buffers that kernel needs
// allocated once, here. Eigen's operator* allocates them on the heap on every call once they exceed
// EIGEN_STACK_ALLOCATION_LIMIT (128 KiB), which a batch times 784 features already does. Operands
// are row-major with unit inner stride; op(M) is Mᵀ when the matching template flag is set.
class MatMul {
 public:
  // Products whose C has at most max_rows x max_cols entries and whose inner dimension is at most
  // max_depth.
  MatMul(Index max_rows, Index max_cols, Index max_depth);
  MatMul(const MatMul&) = delete;
  MatMul& operator=(const MatMul&) = delete;

  template <bool kTransposeA, bool kTransposeB>
  void assign(MatrixRef c, const ConstMatrixRef& a, const ConstMatrixRef& b);

 private:
  Index max_rows_, max_cols_, max_depth_;
#if EIGEN_VERSION_AT_LEAST(3, 4, 0)
  Eigen::internal::gemm_blocking_space<Eigen::RowMajor, double, double, Eigen::Dynamic,
                                       Eigen::Dynamic, Eigen::Dynamic, 1, false>
      blocking_;
#endif
};

// A fully connected layer out = in·Wᵀ + 1·bᵀ over batches of up to max_rows rows, with the
// matrix-product buffers of its forward and backward passes. Parameters are W (outputs x inputs,
// row-major) followed by b (outputs), starting at params; their gradients have the same layout.
class DenseLayer {
 public:
  // input_gradient() is available only when with_input_gradient (a first layer does not need it).
  DenseLayer(Index max_rows, Index inputs, Index outputs, bool with_input_gradient);

  Index inputs() const { return inputs_; }
  Index outputs() const { return outputs_; }
  Index num_params() const { return outputs_ * (inputs_ + 1); }

  // out (rows x outputs) = in (rows x inputs)·Wᵀ + 1·bᵀ.
  void forward(const double* params, const ConstMatrixRef& in, MatrixRef out);
  // From d_out = ∂L/∂out: gradients of W and b into grad_params (overwritten).
  void parameter_gradient(const ConstMatrixRef& in, const ConstMatrixRef& d_out,
                          double* grad_params);
  // d_in (rows x inputs) = ∂L/∂in = d_out·W.
  void input_gradient(const double* params, const ConstMatrixRef& d_out, MatrixRef d_in);

 private:
  Index inputs_, outputs_;
  MatMul forward_, weight_gradient_;
  std::optional<MatMul> input_gradient_;
};

// Mean softmax cross-entropy of the rows of `logits` against class labels (class indices stored as
// doubles): mean over rows of log Σ_j exp(z_j) − z_label, computed with the row maximum subtracted.
// With want_gradient, overwrites logits with ∂(mean loss)/∂logits = (softmax(z) − onehot)/rows.
double softmax_cross_entropy(MatrixRef logits, const double* labels, bool want_gradient);

// Index of the largest entry of each row (the first one on ties) into out[0..rows).
void argmax_rows(const ConstMatrixRef& m, int* out);

// Base of the Eigen models: features, the L2 term and the argument checks of every entry point.
class EigenModel : public Model {
 protected:
  EigenModel(int features, double l2);

  // Precondition checks (programming errors abort): x has num_params() entries, the batch has
  // features() columns and at most ws.max_rows() rows.
  void check_arguments(const Vec& x, const Batch& batch, const Workspace& ws) const;
  void check_gradient(const Vec& grad) const;
  // (l2/2)·‖x‖².
  double penalty(const Vec& x) const { return l2_ > 0 ? 0.5 * l2_ * x.squaredNorm() : 0.0; }
  // grad += l2·x.
  void add_penalty_gradient(const Vec& x, Vec& grad) const {
    if (l2_ > 0) grad.noalias() += l2_ * x;
  }
  // 1/rows, or 0 for an empty batch (whose mean loss is taken as 0).
  static double inverse_rows(const Batch& batch) { return batch.rows > 0 ? 1.0 / batch.rows : 0.0; }

  int features() const { return features_; }

 private:
  int features_;
  double l2_;
};

// Base of the models whose loss is the mean softmax cross-entropy of per-row logits (softmax
// regression, the MLP): subclasses provide the forward pass to logits and the backward pass from
// their gradient.
class CrossEntropyModel : public EigenModel {
 public:
  double loss(const Vec& x, const Batch& batch, Workspace& ws) const final;
  double loss_and_gradient(const Vec& x, const Batch& batch, Vec& grad, Workspace& ws) const final;

 protected:
  CrossEntropyModel(int features, int classes, double l2);

  bool predict(const Vec& x, const Batch& batch, Workspace& ws, int* out) const final;

  // The logits (batch.rows x classes()) of every row of batch, held in ws.
  virtual MatrixRef forward(const Vec& x, const Batch& batch, Workspace& ws) const = 0;
  // After forward(x, batch, ws): the gradient of the mean loss into grad (overwritten), given
  // d_logits = ∂(mean loss)/∂logits (which may live in ws).
  virtual void backward(const Vec& x, const Batch& batch, const ConstMatrixRef& d_logits, Vec& grad,
                        Workspace& ws) const = 0;

  int classes() const { return classes_; }

 private:
  int classes_;
};

// The workspace `ws` as the concrete type W of the model it was made by (another model's
// workspace is a programming error).
template <typename W>
W& workspace_as(Workspace& ws) {
  W* concrete = dynamic_cast<W*>(&ws);
  PACER_CHECK(concrete != nullptr);
  return *concrete;
}

template <bool kTransposeA, bool kTransposeB>
void MatMul::assign(MatrixRef c, const ConstMatrixRef& a, const ConstMatrixRef& b) {
  const Index rows = kTransposeA ? a.cols() : a.rows();
  const Index depth = kTransposeA ? a.rows() : a.cols();
  const Index cols = kTransposeB ? b.rows() : b.cols();
  PACER_CHECK((kTransposeB ? b.cols() : b.rows()) == depth);
  PACER_CHECK(c.rows() == rows && c.cols() == cols);
  PACER_CHECK(rows <= max_rows_ && cols <= max_cols_ && depth <= max_depth_);
#if EIGEN_VERSION_AT_LEAST(3, 4, 0)
  c.setZero();
  if (rows == 0 || cols == 0 || depth == 0) return;
  // A row-major M read transposed is a column-major Mᵀ with the same stride.
  using Product = Eigen::internal::general_matrix_matrix_product<
      Index, double, kTransposeA ? Eigen::ColMajor : Eigen::RowMajor, false, double,
      kTransposeB ? Eigen::ColMajor : Eigen::RowMajor, false, Eigen::RowMajor, 1>;
  Product::run(rows, cols, depth, a.data(), a.outerStride(), b.data(), b.outerStride(), c.data(), 1,
               c.outerStride(), 1.0, blocking_);
#else
  if constexpr (kTransposeA && kTransposeB) {
    c.noalias() = a.transpose() * b.transpose();
  } else if constexpr (kTransposeA) {
    c.noalias() = a.transpose() * b;
  } else if constexpr (kTransposeB) {
    c.noalias() = a * b.transpose();
  } else {
    c.noalias() = a * b;
  }
#endif
}

}  // namespace pacer::model_internal
