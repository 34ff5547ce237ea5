// Least squares: loss ½(a·w − y)² per row (layout in eigen_models.h).
#include <memory>
#include <string>

#include "internal.h"
#include "pacer/model/eigen_models.h"

namespace pacer {
namespace {

using model_internal::workspace_as;

class LeastSquaresWorkspace final : public Workspace {
 public:
  explicit LeastSquaresWorkspace(int max_rows) : residual(max_rows) {}
  int max_rows() const override { return static_cast<int>(residual.size()); }

  Vec residual;  // a·w − y per row
};

class LeastSquares final : public model_internal::EigenModel {
 public:
  LeastSquares(int features, double l2) : EigenModel(features, l2) {}

  std::string name() const override { return "least_squares"; }
  int64_t num_params() const override { return features(); }
  void initialize(Vec& x, Rng& /*rng*/) const override { x.setZero(num_params()); }
  std::unique_ptr<Workspace> make_workspace(int max_rows) const override {
    return std::make_unique<LeastSquaresWorkspace>(max_rows);
  }
  double workspace_bytes(int max_rows) const override { return 8.0 * max_rows; }

  double loss(const Vec& x, const Batch& batch, Workspace& ws) const override {
    auto& w = workspace_as<LeastSquaresWorkspace>(ws);
    check_arguments(x, batch, ws);
    auto r = residuals(x, batch, w);
    return 0.5 * r.squaredNorm() * inverse_rows(batch) + penalty(x);
  }

  double loss_and_gradient(const Vec& x, const Batch& batch, Vec& grad,
                           Workspace& ws) const override {
    auto& w = workspace_as<LeastSquaresWorkspace>(ws);
    check_arguments(x, batch, ws);
    check_gradient(grad);
    auto r = residuals(x, batch, w);
    const double loss = 0.5 * r.squaredNorm() * inverse_rows(batch) + penalty(x);
    r *= inverse_rows(batch);
    grad.noalias() = batch.X().transpose() * r;
    add_penalty_gradient(x, grad);
    return loss;
  }

 private:
  // a·w − y for every row of batch, in the workspace.
  static Eigen::VectorBlock<Vec> residuals(const Vec& x, const Batch& batch,
                                           LeastSquaresWorkspace& w) {
    auto r = w.residual.head(batch.rows);
    r.noalias() = batch.X() * x;
    r -= batch.y();
    return r;
  }
};

}  // namespace

std::unique_ptr<Model> make_least_squares_model(int features, double l2) {
  return std::make_unique<LeastSquares>(features, l2);
}

}  // namespace pacer
