// Two-layer perceptron: cross-entropy of softmax(W2 relu(W1 a + b1) + b2) (layout in
// eigen_models.h).
#include <cmath>
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

class MlpWorkspace final : public Workspace {
 public:
  MlpWorkspace(int max_rows, int features, int hidden, int classes)
      : hidden_layer(max_rows, features, hidden, false),
        output_layer(max_rows, hidden, classes, true),
        hidden(max_rows, hidden),
        d_hidden(max_rows, hidden),
        logits(max_rows, classes) {}
  int max_rows() const override { return static_cast<int>(logits.rows()); }

  DenseLayer hidden_layer, output_layer;
  RowMatrix hidden;    // relu(W1 a + b1) per row
  RowMatrix d_hidden;  // ∂(mean loss)/∂hidden
  RowMatrix logits;    // W2 hidden + b2 per row; then ∂(mean loss)/∂logits
};

class Mlp final : public model_internal::CrossEntropyModel {
 public:
  Mlp(int features, int hidden, int classes, double l2)
      : CrossEntropyModel(features, classes, l2), hidden_(hidden) {
    PACER_CHECK(hidden > 0);
  }

  std::string name() const override { return "mlp"; }
  int64_t num_params() const override { return hidden_params() + output_params(); }

  // He-normal weights (standard deviation sqrt(2 / fan_in)), W1 then W2 in layout order; zero
  // biases.
  void initialize(Vec& x, Rng& rng) const override {
    x.setZero(num_params());
    const auto fill = [&rng](double* w, int64_t count, int fan_in) {
      const double std_dev = std::sqrt(2.0 / fan_in);
      for (int64_t i = 0; i < count; ++i) w[i] = std_dev * rng.normal();
    };
    fill(x.data(), static_cast<int64_t>(hidden_) * features(), features());
    fill(x.data() + hidden_params(), static_cast<int64_t>(classes()) * hidden_, hidden_);
  }

  std::unique_ptr<Workspace> make_workspace(int max_rows) const override {
    return std::make_unique<MlpWorkspace>(max_rows, features(), hidden_, classes());
  }
  // hidden, d_hidden and logits.
  double workspace_bytes(int max_rows) const override {
    return 8.0 * max_rows * (2.0 * hidden_ + classes());
  }

 protected:
  MatrixRef forward(const Vec& x, const Batch& batch, Workspace& ws) const override {
    auto& w = workspace_as<MlpWorkspace>(ws);
    auto hidden = w.hidden.topRows(batch.rows);
    w.hidden_layer.forward(x.data(), batch.X(), hidden);
    hidden = hidden.cwiseMax(0.0);
    MatrixRef logits = w.logits.topRows(batch.rows);
    w.output_layer.forward(x.data() + hidden_params(), hidden, logits);
    return logits;
  }

  void backward(const Vec& x, const Batch& batch, const ConstMatrixRef& d_logits, Vec& grad,
                Workspace& ws) const override {
    auto& w = workspace_as<MlpWorkspace>(ws);
    const auto hidden = w.hidden.topRows(batch.rows);
    auto d_hidden = w.d_hidden.topRows(batch.rows);
    const double* output_params = x.data() + hidden_params();
    w.output_layer.parameter_gradient(hidden, d_logits, grad.data() + hidden_params());
    w.output_layer.input_gradient(output_params, d_logits, d_hidden);
    d_hidden.array() = (hidden.array() > 0).select(d_hidden.array(), 0.0);  // through the ReLU
    w.hidden_layer.parameter_gradient(batch.X(), d_hidden, grad.data());
  }

 private:
  int64_t hidden_params() const { return static_cast<int64_t>(hidden_) * (features() + 1); }
  int64_t output_params() const { return static_cast<int64_t>(classes()) * (hidden_ + 1); }

  int hidden_;
};

}  // namespace

std::unique_ptr<Model> make_mlp_model(int features, int hidden, int classes, double l2) {
  return std::make_unique<Mlp>(features, hidden, classes, l2);
}

}  // namespace pacer
