// The discrete-event simulator engine (DESIGN.md section 5).
//
// Virtual time, real math. assign() draws the job's duration from the timing model on the
// worker's own stream Rng(seed, "duration", worker) and schedules its completion; when the
// completion event fires, the worker half computes its answer at the model it was sent (so a
// cancelled job never touches worker state), and the reply reaches the master after the
// communication model's delay. Messages cost latency + bytes/bandwidth each way (8 bytes per
// model or payload entry).
//
// Same timing model, seed, method and worker halves => the same sequence of events, bit for bit.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "pacer/core/rng.h"
#include "pacer/engine/sim/event_queue.h"
#include "pacer/method/protocol.h"
#include "pacer/timing/timing_model.h"

namespace pacer {

struct SimulatorStats {
  double end_time = 0;
  uint64_t events = 0;
  std::vector<double> busy_time;  // per worker: virtual seconds spent computing
  std::vector<int64_t> jobs_completed;
  std::vector<int64_t> jobs_cancelled;
  void to_json(nlohmann::json& out) const;
};

class Simulator : public Cluster {
 public:
  // `timing` must outlive the simulator. `max_time` stops the run once the next event lies
  // beyond it (a safety net for methods that stall; targets are the monitor's business).
  Simulator(const TimingModel& timing, CommModel comm, uint64_t seed,
            double max_time = std::numeric_limits<double>::infinity());

  // Runs the method until master.finished(), max_time, or no event is left. Running out of
  // events while the master is not finished is an Error (the method stalled).
  void run(Master& master, std::vector<std::unique_ptr<Worker>>& workers);

  const SimulatorStats& stats() const { return stats_; }

  // Cluster:
  int num_workers() const override { return static_cast<int>(state_.size()); }
  double now() const override { return now_; }
  void assign(int worker, const Job& job, const Vec& x) override;
  bool busy(int worker) const override { return state_[worker].busy; }
  bool can_cancel() const override { return true; }
  void cancel(int worker) override;

 private:
  enum EventKind { kJobDone = 0, kReplyArrives = 1 };
  struct WorkerState {
    explicit WorkerState(Rng duration_rng) : rng(duration_rng) {}
    bool busy = false;
    uint64_t job_id = 0;  // id of the current job; events of older ids are stale
    Job job;
    Vec x;  // the model the current job computes at
    double units = 0;
    double start = 0;
    double duration = 0;
    bool computed = false;  // compute() has run; the reply may still be in flight
    WorkerOutput output;
    Rng rng;
  };

  void finish_job(int worker);
  void deliver(int worker, Master& master);

  const TimingModel& timing_;
  CommModel comm_;
  double max_time_;
  double now_ = 0;
  EventQueue queue_;
  std::vector<WorkerState> state_;
  std::vector<std::unique_ptr<Worker>>* workers_ = nullptr;
  uint64_t seed_;
  SimulatorStats stats_;
};

}  // namespace pacer
