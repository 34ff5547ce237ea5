// Building blocks shared by the Eigen models: cached matrix products and dense layers.
#include <algorithm>

#include "internal.h"

namespace pacer::model_internal {

MatMul::MatMul(Index max_rows, Index max_cols, Index max_depth)
    : max_rows_(max_rows),
      max_cols_(max_cols),
      max_depth_(max_depth)
#if EIGEN_VERSION_AT_LEAST(3, 4, 0)
      ,
      blocking_(std::max<Index>(max_rows, 1), std::max<Index>(max_cols, 1),
                std::max<Index>(max_depth, 1), 1, true)
#endif
{
  PACER_CHECK(max_rows >= 0 && max_cols >= 0 && max_depth >= 0);
#if EIGEN_VERSION_AT_LEAST(3, 4, 0)
  blocking_.allocateAll();
#endif
}

DenseLayer::DenseLayer(Index max_rows, Index inputs, Index outputs, bool with_input_gradient)
    : inputs_(inputs),
      outputs_(outputs),
      forward_(max_rows, outputs, inputs),
      weight_gradient_(outputs, inputs, max_rows) {
  if (with_input_gradient) input_gradient_.emplace(max_rows, inputs, outputs);
}

void DenseLayer::forward(const double* params, const ConstMatrixRef& in, MatrixRef out) {
  const ConstMatrixMap w(params, outputs_, inputs_);
  const ConstVecMap b(params + outputs_ * inputs_, outputs_);
  forward_.assign<false, true>(out, in, w);
  out.rowwise() += b.transpose();
}

void DenseLayer::parameter_gradient(const ConstMatrixRef& in, const ConstMatrixRef& d_out,
                                    double* grad_params) {
  weight_gradient_.assign<true, false>(MatrixMap(grad_params, outputs_, inputs_), d_out, in);
  // Bias gradient: column sums of d_out, accumulated row by row to read it in memory order.
  VecMap grad_b(grad_params + outputs_ * inputs_, outputs_);
  grad_b.setZero();
  for (Index i = 0; i < d_out.rows(); ++i) grad_b += d_out.row(i).transpose();
}

void DenseLayer::input_gradient(const double* params, const ConstMatrixRef& d_out, MatrixRef d_in) {
  PACER_CHECK(input_gradient_.has_value());
  input_gradient_->assign<false, false>(d_in, d_out, ConstMatrixMap(params, outputs_, inputs_));
}

}  // namespace pacer::model_internal
