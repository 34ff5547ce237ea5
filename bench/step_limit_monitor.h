// The monitor of the engine-only benchmarks: it records nothing and ends the run after a number
// of updates, so that what is timed is the engine, the method and the trainer alone.
#pragma once

#include <cstdint>

#include "pacer/method/trainer.h"

namespace pacer {

class StepLimitMonitor : public Monitor {
 public:
  explicit StepLimitMonitor(int64_t steps) : steps_(steps) {}
  bool on_update(const UpdateRecord& record, const Vec&) override { return record.step < steps_; }

 private:
  int64_t steps_;
};

}  // namespace pacer
