#include "pacer/engine/sim/sim_engine.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "pacer/engine/sim/simulator.h"

namespace pacer {
namespace {

class SimulatorRun : public EngineRun {
 public:
  SimulatorRun(const EngineInputs& in, const CommModel& comm, const FaultPlan& faults)
      : simulator_(in.timing, comm, in.seed,
                   in.max_time > 0 ? in.max_time : std::numeric_limits<double>::infinity()) {
    simulator_.set_faults(faults);
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
    simulator_.checkpoint(a);
    for (std::unique_ptr<Worker>& worker : workers_) worker->checkpoint(a);
  }

 private:
  Simulator simulator_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

class SimEngine : public Engine {
 public:
  SimEngine(const Config& config, int workers)
      : comm_(make_comm_model(config)), faults_(read_fault_plan(config, workers)) {}
  std::string name() const override { return "sim"; }
  bool timing_describes_run() const override { return true; }
  std::unique_ptr<EngineRun> start(const EngineInputs& inputs) const override {
    return std::make_unique<SimulatorRun>(inputs, comm_, faults_);
  }

 private:
  CommModel comm_;
  FaultPlan faults_;
};

}  // namespace

std::unique_ptr<Engine> make_sim_engine(const Config& config, int workers) {
  return std::make_unique<SimEngine>(config, workers);
}

}  // namespace pacer
