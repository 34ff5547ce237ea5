// A timing model for the simulator's tests whose durations are known in advance.
#pragma once

#include <optional>
#include <string>

#include "pacer/timing/timing_model.h"

namespace pacer::testing {

// Worker i takes (i + 1) · units seconds per job, with no random part.
class LinearTiming : public TimingModel {
 public:
  explicit LinearTiming(int n) : n_(n) {}
  std::string name() const override { return "linear"; }
  int num_workers() const override { return n_; }
  Duration compute_time(int worker, double units, int64_t, Rng&) const override {
    return Duration{units * (worker + 1), 0};
  }
  std::optional<double> mean_unit_time(int worker) const override { return worker + 1; }

 private:
  int n_;
};

}  // namespace pacer::testing
