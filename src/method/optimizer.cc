#include "pacer/method/optimizer.h"

#include <cmath>

#include "pacer/core/error.h"
#include "pacer/core/state.h"

namespace pacer {

OptimizerOptions read_optimizer_options(const Config& config, int64_t default_horizon) {
  OptimizerOptions o;
  o.lr = config.get_double("optimizer.lr", o.lr);
  if (!(o.lr > 0) || !std::isfinite(o.lr)) config.fail_key("optimizer.lr", "a positive number");
  o.momentum = config.get_double("optimizer.momentum", o.momentum);
  if (!(o.momentum >= 0 && o.momentum < 1)) {
    config.fail_key("optimizer.momentum", "a number in [0, 1)");
  }
  o.weight_decay = config.get_double("optimizer.weight_decay", o.weight_decay);
  if (!(o.weight_decay >= 0)) config.fail_key("optimizer.weight_decay", "a number >= 0");
  o.schedule = config.get_choice("optimizer.schedule", o.schedule, {"constant", "step", "cosine"});
  if (o.schedule == "step") {
    o.step_every = config.get_int("optimizer.step_every", o.step_every);
    if (o.step_every <= 0) config.fail_key("optimizer.step_every", "a positive integer");
    o.gamma = config.get_double("optimizer.gamma", o.gamma);
    if (!(o.gamma > 0)) config.fail_key("optimizer.gamma", "a positive number");
  } else if (o.schedule == "cosine") {
    o.horizon = config.get_int("optimizer.horizon", default_horizon > 0 ? default_horizon : 1000);
    if (o.horizon <= 0) config.fail_key("optimizer.horizon", "a positive integer");
    o.min_lr = config.get_double("optimizer.min_lr", o.min_lr);
    if (!(o.min_lr >= 0 && o.min_lr <= o.lr)) {
      config.fail_key("optimizer.min_lr", "a number in [0, optimizer.lr]");
    }
  }
  return o;
}

Optimizer::Optimizer(OptimizerOptions options) : options_(std::move(options)) {}

double Optimizer::learning_rate(int64_t step) const {
  const OptimizerOptions& o = options_;
  if (o.schedule == "step") {
    return o.lr * std::pow(o.gamma, static_cast<double>(step / o.step_every));
  }
  if (o.schedule == "cosine") {
    if (step >= o.horizon) return o.min_lr;
    double progress = static_cast<double>(step) / static_cast<double>(o.horizon);
    return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1.0 + std::cos(M_PI * progress));
  }
  return o.lr;
}

double Optimizer::apply(Vec& x, const Vec& direction, int64_t step, double scale) {
  const double eta = learning_rate(step);
  if (options_.momentum == 0 && options_.weight_decay == 0) {
    x.noalias() -= (eta * scale) * direction;
    return eta * scale;
  }
  // The per-update scale weighs only this update's direction, so an asynchronous method's
  // per-arrival stepsize (Rescaled ASGD's γ_i) is not applied to other workers' gradients that
  // linger in the velocity.
  if (velocity_.size() != x.size()) velocity_ = Vec::Zero(x.size());
  velocity_ *= options_.momentum;
  velocity_ += scale * direction;
  if (options_.weight_decay != 0) velocity_ += (scale * options_.weight_decay) * x;
  x.noalias() -= eta * velocity_;
  return eta * scale;
}

void Optimizer::checkpoint(StateArchive& a) {
  a.section("optimizer");
  a.io(velocity_);
}

}  // namespace pacer
