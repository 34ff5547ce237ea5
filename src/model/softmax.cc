// Softmax (multinomial logistic) regression: cross-entropy of softmax(W a + b) (layout in
// eigen_models.h).
#include <memory>
#include <string>

#include "internal.h"
#include "pacer/model/eigen_models.h"

namespace pacer {
namespace {

using model_internal::ConstMatrixRef;
using model_internal::DenseLayer;
using model_internal::MatrixRef;
using model_internal::workspace_as;

class SoftmaxWorkspace final : public Workspace {
 public:
  SoftmaxWorkspace(int max_rows, int features, int classes)
      : layer(max_rows, features, classes, false), logits(max_rows, classes) {}
  int max_rows() const override { return static_cast<int>(logits.rows()); }

  DenseLayer layer;
  RowMatrix logits;  // W a + b per row; then ∂(mean loss)/∂logits
};

class Softmax final : public model_internal::CrossEntropyModel {
 public:
  Softmax(int features, int classes, double l2) : CrossEntropyModel(features, classes, l2) {}

  std::string name() const override { return "softmax"; }
  int64_t num_params() const override { return static_cast<int64_t>(classes()) * (features() + 1); }
  void initialize(Vec& x, Rng& /*rng*/) const override { x.setZero(num_params()); }
  std::unique_ptr<Workspace> make_workspace(int max_rows) const override {
    return std::make_unique<SoftmaxWorkspace>(max_rows, features(), classes());
  }
  double workspace_bytes(int max_rows) const override { return 8.0 * max_rows * classes(); }

 protected:
  MatrixRef forward(const Vec& x, const Batch& batch, Workspace& ws) const override {
    auto& w = workspace_as<SoftmaxWorkspace>(ws);
    MatrixRef logits = w.logits.topRows(batch.rows);
    w.layer.forward(x.data(), batch.X(), logits);
    return logits;
  }

  void backward(const Vec& /*x*/, const Batch& batch, const ConstMatrixRef& d_logits, Vec& grad,
                Workspace& ws) const override {
    workspace_as<SoftmaxWorkspace>(ws).layer.parameter_gradient(batch.X(), d_logits, grad.data());
  }
};

}  // namespace

std::unique_ptr<Model> make_softmax_model(int features, int classes, double l2) {
  return std::make_unique<Softmax>(features, classes, l2);
}

}  // namespace pacer
