// What every master shares: the model x, the optimizer, work accounting and the Monitor that
// records each update and says when to stop.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "pacer/core/vector.h"
#include "pacer/method/optimizer.h"

namespace pacer {

class StateArchive;

// One master update, as recorded in log.csv.
struct UpdateRecord {
  int64_t step = 0;       // updates applied so far, this one included (filled by Trainer)
  double time = 0;        // engine clock at the update
  double work_units = 0;  // work units completed by all workers so far (filled by Trainer)
  int64_t jobs = 0;       // jobs completed by all workers so far (filled by Trainer)
  double loss = std::numeric_limits<double>::quiet_NaN();       // mean fresh training loss reported
                                                                // by the replies used
  double grad_norm = std::numeric_limits<double>::quiet_NaN();  // ‖ĝ‖ (filled by Trainer)
  int responders = 0;                                           // replies combined into this update
  double staleness = 0;  // mean age, in updates, of the gradients used
  // The worker whose message caused the update: an asynchronous method's arriving worker; a
  // synchronous step's decisive worker (whose message, or loss, closed the step). -1: none.
  int worker = -1;
  // Synchronous steps: seconds the step waited for the decisive worker alone (from the arrival
  // of the message before its, or the step's start when it was the first, to the close). NaN
  // otherwise.
  double wait = std::numeric_limits<double>::quiet_NaN();
  double stepsize = 0;  // η actually used (filled by Trainer)

  void checkpoint(StateArchive& a);
};

// Observes a run (implemented by the experiment layer: logging, evaluation, targets).
class Monitor {
 public:
  virtual ~Monitor() = default;
  // Called after every update with the new model. Returns false to end the run.
  virtual bool on_update(const UpdateRecord& record, const Vec& x) = 0;
  // Called once when the method itself ends the run (Trainer::stop): `status` names why
  // ("too_many_lost"), `reason` says it in a sentence for the user.
  virtual void on_stopped(std::string_view /*status*/, std::string_view /*reason*/) {}
  // Called from Master::on_reply when the master does not use the reply it is handling (a
  // synchronous step's late message, a stale gradient discarded): the job log's fate "late".
  virtual void on_unused_reply(int /*worker*/) {}
};

class Trainer {
 public:
  Trainer(Vec x0, Optimizer optimizer, Monitor& monitor);

  const Vec& x() const { return x_; }
  int64_t steps() const { return steps_; }
  double work_units() const { return work_units_; }
  const Optimizer& optimizer() const { return optimizer_; }

  // Counts one completed job of `units` work units (every completed job, used or not).
  void add_work(double units) {
    work_units_ += units;
    ++jobs_;
  }

  // x ← optimizer step along `direction` with stepsize scaled by `lr_scale`; completes `record`
  // (step, work_units, grad_norm, stepsize), hands it to the monitor, and finishes the run if the
  // monitor says so.
  void apply(const Vec& direction, UpdateRecord record, double lr_scale = 1.0);

  // The reply being handled (from `worker`) is not used (Monitor::on_unused_reply).
  void reply_unused(int worker) { monitor_.on_unused_reply(worker); }

  bool finished() const { return finished_; }
  void finish() { finished_ = true; }
  // Ends the run because the method cannot go on: finishes it and tells the monitor why.
  void stop(std::string_view status, std::string_view reason) {
    if (!finished_) monitor_.on_stopped(status, reason);
    finished_ = true;
  }

  // The model, the optimizer's state and the counters (core/state.h).
  void checkpoint(StateArchive& a);

 private:
  Vec x_;
  Optimizer optimizer_;
  Monitor& monitor_;
  int64_t steps_ = 0;
  double work_units_ = 0;
  int64_t jobs_ = 0;
  bool finished_ = false;
};

}  // namespace pacer
