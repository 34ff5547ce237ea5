// Small synchronous-training set-ups shared by the engine tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/data/partition.h"
#include "pacer/data/synthetic.h"
#include "pacer/engine/sim/simulator.h"
#include "pacer/method/method.h"
#include "pacer/model/eigen_models.h"
#include "recording_monitor.h"

namespace pacer::testing {

// Least squares on `rows` samples and `features` features, split contiguously over n workers.
inline std::shared_ptr<const Objective> least_squares_objective(int n, int rows, int features,
                                                                int batch, uint64_t seed = 3) {
  Rng rng(seed, "test-data");
  SyntheticOptions o;
  o.samples = rows;
  o.features = features;
  o.noise = 0.5;
  o.condition_number = 10;
  Dataset data = make_least_squares(o, rng);
  std::shared_ptr<const Model> model = make_least_squares_model(features, 0.0);
  return std::make_shared<Objective>(model, data, partition_contiguous(rows, n), batch);
}

struct SimRun {
  std::vector<UpdateRecord> records;
  std::vector<Vec> trajectory;
  nlohmann::json method_summary;
  SimulatorStats stats;
};

// Runs the method named in `config` on the simulator with the given timing model.
SimRun run_on_simulator(const Config& config, std::shared_ptr<const Objective> objective,
                        const TimingModel& timing, int64_t steps, double lr, uint64_t seed = 1);

}  // namespace pacer::testing
