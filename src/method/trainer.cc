#include "pacer/method/trainer.h"

#include "pacer/core/state.h"

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

void UpdateRecord::checkpoint(StateArchive& a) {
  a.io(step);
  a.io(time);
  a.io(work_units);
  a.io(jobs);
  a.io(loss);
  a.io(grad_norm);
  a.io(responders);
  a.io(staleness);
  a.io(worker);
  a.io(wait);
  a.io(stepsize);
}

void Trainer::checkpoint(StateArchive& a) {
  a.section("trainer");
  a.expect(x_.size(), "the model's parameter count");
  a.io(x_);
  optimizer_.checkpoint(a);
  a.io(steps_);
  a.io(work_units_);
  a.io(jobs_);
  a.io(finished_);
}

}  // namespace pacer
