#include "pacer/method/trainer.h"

namespace pacer {

Trainer::Trainer(Vec x0, Optimizer optimizer, Monitor& monitor)
    : x_(std::move(x0)), optimizer_(std::move(optimizer)), monitor_(monitor) {}

void Trainer::apply(const Vec& direction, UpdateRecord record, double lr_scale) {
  record.grad_norm = direction.norm();
  record.stepsize = optimizer_.apply(x_, direction, steps_, lr_scale);
  ++steps_;
  record.step = steps_;
  record.work_units = work_units_;
  record.jobs = jobs_;
  if (!monitor_.on_update(record, x_)) finished_ = true;
}

}  // namespace pacer
