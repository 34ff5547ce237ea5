#include "pacer/engine/sim/sim_engine.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pacer/core/compute_pool.h"
#include "pacer/core/error.h"
#include "pacer/engine/sim/simulator.h"

namespace pacer {
namespace {

// engine.compute_ahead: "auto" or "always" (Simulator::ComputeAhead). Its default is the
// environment variable PACER_COMPUTE_AHEAD when set, else "auto"; like engine.threads it changes
// only how fast a run goes, and the default is not written into the resolved config.
Simulator::ComputeAhead read_compute_ahead(const Config& config) {
  constexpr const char* kExpected =
      "\"auto\" (compute jobs ahead when they are long enough to pay for it) or \"always\"";
  std::string value;
  if (config.has("engine.compute_ahead")) {
    value = config.get_string("engine.compute_ahead", "auto");
    if (value != "auto" && value != "always") config.fail_key("engine.compute_ahead", kExpected);
  } else if (const char* env = std::getenv("PACER_COMPUTE_AHEAD"); env && *env) {
    value = env;
    if (value != "auto" && value != "always") {
      fail("environment variable PACER_COMPUTE_AHEAD = \"{}\": expected {}", value, kExpected);
    }
  }
  return value == "always" ? Simulator::ComputeAhead::kAlways : Simulator::ComputeAhead::kAuto;
}

class SimulatorRun : public EngineRun {
 public:
  SimulatorRun(const EngineInputs& in, const CommModel& comm, const FaultPlan& faults, int threads,
               Simulator::ComputeAhead ahead)
      : simulator_(in.timing, comm, in.seed,
                   in.max_time > 0 ? in.max_time : std::numeric_limits<double>::infinity()) {
    simulator_.set_faults(faults);
    simulator_.set_threads(std::max(1, std::min(threads, in.workers)));
    simulator_.set_compute_ahead(ahead);
    for (int i = 0; i < in.workers; ++i) workers_.push_back(in.method.make_worker(i));
  }
  bool run(Master& master) override {
    simulator_.run(master, workers_);
    return simulator_.interrupted();
  }
  void stop(EndKind) override {}
  double end_time() const override { return simulator_.now(); }
  void stats(nlohmann::json& out) const override { simulator_.stats().to_json(out); }
  void set_checkpoint_hook(CheckpointHook* hook) override {
    if (!hook) {
      simulator_.set_quiet_point(nullptr);
      return;
    }
    simulator_.set_quiet_point([hook] {
      if (hook->due()) hook->write();
    });
  }
  void checkpoint(StateArchive& a) override {
    simulator_.checkpoint(a);  // no computation ahead runs until restart_ahead()
    for (std::unique_ptr<Worker>& worker : workers_) worker->checkpoint(a);
    if (!a.loading()) simulator_.restart_ahead();
  }

 private:
  Simulator simulator_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

class SimEngine : public Engine {
 public:
  SimEngine(const Config& config, int workers)
      : comm_(make_comm_model(config)),
        faults_(read_fault_plan(config, workers)),
        threads_(read_engine_threads(config)),
        ahead_(read_compute_ahead(config)) {}
  std::string name() const override { return "sim"; }
  bool timing_describes_run() const override { return true; }
  std::unique_ptr<EngineRun> start(const EngineInputs& inputs) const override {
    return std::make_unique<SimulatorRun>(inputs, comm_, faults_, threads_, ahead_);
  }

 private:
  CommModel comm_;
  FaultPlan faults_;
  int threads_;
  Simulator::ComputeAhead ahead_;
};

}  // namespace

std::unique_ptr<Engine> make_sim_engine(const Config& config, int workers) {
  return std::make_unique<SimEngine>(config, workers);
}

}  // namespace pacer
