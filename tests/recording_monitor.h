// A Monitor for tests that records every update and the model after it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pacer/method/trainer.h"

namespace pacer::testing {

// Records every update and the model after it; ends the run after `max_steps` updates.
class RecordingMonitor : public Monitor {
 public:
  explicit RecordingMonitor(int64_t max_steps = 1 << 30) : max_steps_(max_steps) {}
  bool on_update(const UpdateRecord& record, const Vec& x) override {
    records.push_back(record);
    models.push_back(x);
    return record.step < max_steps_;
  }
  void on_stopped(std::string_view status, std::string_view reason) override {
    stop_status = status;
    stop_reason = reason;
  }
  std::vector<UpdateRecord> records;
  std::vector<Vec> models;
  // What the method said when it stopped the run (Trainer::stop); empty if it did not.
  std::string stop_status, stop_reason;

 private:
  int64_t max_steps_;
};

}  // namespace pacer::testing
