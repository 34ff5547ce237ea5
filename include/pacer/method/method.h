// Training methods (DESIGN.md section 3): one file per method, each a factory of a master half
// and n worker halves that talk through method/protocol.h.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/method/protocol.h"
#include "pacer/method/trainer.h"
#include "pacer/model/objective.h"
#include "pacer/timing/timing_model.h"

namespace pacer {

// A master that also reports what it measured (decode statistics, staleness, stragglers...).
class TrainingMaster : public Master {
 public:
  bool finished() const override { return trainer_.finished(); }
  // Adds method-specific entries to summary.json.
  virtual void summarize(nlohmann::json& out) const = 0;

 protected:
  explicit TrainingMaster(Trainer& trainer) : trainer_(trainer) {}
  Trainer& trainer_;
};

// Everything a method may need to build its halves.
struct MethodSetup {
  std::shared_ptr<const Objective> objective;
  const TimingModel* timing = nullptr;  // the run's timing model (Rescaled ASGD's τ); may be null
  int workers = 0;
  uint64_t seed = 0;
};

class Method {
 public:
  virtual ~Method() = default;
  // The registry name ("dgd", "pgc-cr", ...).
  virtual std::string name() const = 0;
  // Synchronous methods update once per step; asynchronous ones on every arrival.
  virtual bool synchronous() const = 0;
  virtual std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const = 0;
  // Worker i's half. Every worker half draws only from its own seeded streams.
  virtual std::unique_ptr<Worker> make_worker(int worker) const = 0;
};

// Builds the method named by method.name, reading its method.* keys. Impossible parameters are
// Errors naming the key and saying what would be valid.
std::unique_ptr<Method> make_method(const Config& config, const MethodSetup& setup);
// Every registered method name, in the order `pacer compare` lists them.
std::vector<std::string> method_names();

}  // namespace pacer
