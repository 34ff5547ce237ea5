// Binary logistic regression: loss log(1 + e^{−s z}), z = a·w + b, s = ±1 from labels {0, 1}
// (layout in eigen_models.h).
#include <cmath>
#include <memory>
#include <string>

#include "internal.h"
#include "pacer/model/eigen_models.h"

namespace pacer {
namespace {

using model_internal::workspace_as;

// log(1 + e^t) without overflow for large t or loss of precision for very negative t.
double softplus(double t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

// 1 / (1 + e^{−t}) without overflow.
double sigmoid(double t) {
  if (t >= 0) return 1.0 / (1.0 + std::exp(-t));
  const double e = std::exp(t);
  return e / (1.0 + e);
}

// +1 for label 1, −1 for label 0.
double sign_of(double label) { return label > 0.5 ? 1.0 : -1.0; }

class LogisticWorkspace final : public Workspace {
 public:
  explicit LogisticWorkspace(int max_rows) : margin(max_rows) {}
  int max_rows() const override { return static_cast<int>(margin.size()); }

  Vec margin;  // z per row; then ∂(mean loss)/∂z
};

class Logistic final : public model_internal::EigenModel {
 public:
  Logistic(int features, double l2) : EigenModel(features, l2) {}

  std::string name() const override { return "logistic"; }
  int64_t num_params() const override { return features() + 1; }
  void initialize(Vec& x, Rng& /*rng*/) const override { x.setZero(num_params()); }
  std::unique_ptr<Workspace> make_workspace(int max_rows) const override {
    return std::make_unique<LogisticWorkspace>(max_rows);
  }
  double workspace_bytes(int max_rows) const override { return 8.0 * max_rows; }

  double loss(const Vec& x, const Batch& batch, Workspace& ws) const override {
    auto& w = workspace_as<LogisticWorkspace>(ws);
    check_arguments(x, batch, ws);
    auto z = margins(x, batch, w);
    double total = 0;
    for (int i = 0; i < batch.rows; ++i) total += softplus(-sign_of(batch.labels[i]) * z(i));
    return total * inverse_rows(batch) + penalty(x);
  }

  double loss_and_gradient(const Vec& x, const Batch& batch, Vec& grad,
                           Workspace& ws) const override {
    auto& w = workspace_as<LogisticWorkspace>(ws);
    check_arguments(x, batch, ws);
    check_gradient(grad);
    auto z = margins(x, batch, w);
    const double inv_rows = inverse_rows(batch);
    double total = 0;
    for (int i = 0; i < batch.rows; ++i) {
      const double s = sign_of(batch.labels[i]);
      const double t = -s * z(i);
      total += softplus(t);
      z(i) = -s * sigmoid(t) * inv_rows;  // ∂/∂z of softplus(−s z) / rows
    }
    const int d = features();
    grad.head(d).noalias() = batch.X().transpose() * z;
    grad(d) = z.sum();
    add_penalty_gradient(x, grad);
    return total * inv_rows + penalty(x);
  }

 protected:
  bool predict(const Vec& x, const Batch& batch, Workspace& ws, int* out) const override {
    auto& w = workspace_as<LogisticWorkspace>(ws);
    check_arguments(x, batch, ws);
    auto z = margins(x, batch, w);
    for (int i = 0; i < batch.rows; ++i) out[i] = z(i) > 0 ? 1 : 0;
    return true;
  }

 private:
  // z = a·w + b for every row of batch, in the workspace.
  Eigen::VectorBlock<Vec> margins(const Vec& x, const Batch& batch, LogisticWorkspace& w) const {
    const int d = features();
    auto z = w.margin.head(batch.rows);
    z.noalias() = batch.X() * x.head(d);
    z.array() += x(d);
    return z;
  }
};

}  // namespace

std::unique_ptr<Model> make_logistic_model(int features, double l2) {
  return std::make_unique<Logistic>(features, l2);
}

}  // namespace pacer
