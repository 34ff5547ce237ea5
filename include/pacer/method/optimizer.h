// The master's optimizer: x_{t+1} = x_t − η_t · v_t (DESIGN.md section 3.1).
//
//   v_t = momentum · v_{t−1} + scale_t · (ĝ_t + weight_decay · x_t)       (v_{−1} = 0)
//   η_t = lr · schedule(t)
// where scale_t is the update's own stepsize factor (1 for synchronous methods; an asynchronous
// method's per-arrival factor, e.g. Rescaled ASGD's γ_i/γ), so momentum never re-weights earlier
// updates with the current arrival's factor.
// Schedules: "constant"; "step" multiplies by gamma every step_every steps; "cosine" decays from
// lr to min_lr over horizon steps (then stays at min_lr). With momentum 0 and weight decay 0 the
// update is exactly x − η·ĝ, so DGD with full-batch gradients is plain gradient descent.
#pragma once

#include <cstdint>
#include <string>

#include "pacer/core/config.h"
#include "pacer/core/vector.h"

namespace pacer {

class StateArchive;

struct OptimizerOptions {
  double lr = 0.1;
  double momentum = 0;
  double weight_decay = 0;
  std::string schedule = "constant";
  int64_t step_every = 100;
  double gamma = 0.1;
  int64_t horizon = 1000;
  double min_lr = 0;
};

// Reads optimizer.{lr, momentum, weight_decay, schedule, step_every, gamma, horizon, min_lr};
// `default_horizon` (the run's max_steps) is the cosine horizon unless optimizer.horizon is set.
OptimizerOptions read_optimizer_options(const Config& config, int64_t default_horizon);

class Optimizer {
 public:
  explicit Optimizer(OptimizerOptions options);
  const OptimizerOptions& options() const { return options_; }
  // The scheduled learning rate η at update `step` (before any per-update scale).
  double learning_rate(int64_t step) const;
  // Applies one update in place; returns the stepsize η used (learning_rate(step) · scale).
  double apply(Vec& x, const Vec& direction, int64_t step, double scale);
  // The momentum buffer (core/state.h); the options come from the configuration.
  void checkpoint(StateArchive& a);

 private:
  OptimizerOptions options_;
  Vec velocity_;
};

}  // namespace pacer
