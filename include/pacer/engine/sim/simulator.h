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
//
// Failures are modelled (FaultPlan, the [faults] table): at a kill's time the worker is lost (its
// job, finished or not, is dropped and its reply never comes; method/protocol.h), and after
// rejoin_after seconds, if set, it comes back idle. With a deadline (FaultPlan::deadline,
// engine.worker_timeout_s) the master learns of a loss as the cluster engines' masters do: a job
// still unanswered `deadline` seconds after its assign() is declared lost then (a dead worker's,
// or a slow one's), a dead worker that is idle is lost at the deadline of the next job it is
// sent, and a slow worker's late reply re-admits it (on_rejoined; the reply is dropped). alive()
// and busy() are then the master's view of the worker. A planned kill of a worker that is already
// lost at that time (by a random failure) does nothing. Random failures strike each live worker
// after an exponential time of mean 1/rate drawn from its own stream Rng(seed, "faults", worker),
// so they too are the same on every run of the same seed. A run without faults pushes no fault
// event, so its events are exactly those of a simulator without this feature.
//
// Threads (set_threads, engine.threads). With more than one thread, assign() also hands the job's
// compute() to a ComputePool at once, ahead of virtual time: its inputs (the model sent, the
// worker's state after its previous job) are already fixed. Its effects are committed in event
// order: the completion event waits for the computation, and a job that is cancelled or lost
// before its completion event has the worker's state restored from a snapshot taken (with the
// worker's checkpoint(), core/state.h) just before it ran. So the events, the replies and the
// worker states are the same, bit for bit, for any number of threads. A worker that cannot be
// checkpointed is never computed ahead. Each worker alternates between two output buffers, so a
// job computed ahead never writes the buffer of the reply being delivered.
//
// Computing ahead costs a few microseconds per job (a task, a snapshot of the worker's state), more
// than a trivial model's whole gradient. Under ComputeAhead::kAuto (the default) the simulator
// therefore computes the run's first kProbeJobs jobs at their events, timing them, and computes
// ahead from then on only when they took at least kMinAheadJobSeconds each on average; kAlways
// computes every job ahead from the start. Which jobs are computed ahead changes only how fast a
// run goes, never what it computes.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "pacer/core/compute_pool.h"
#include "pacer/core/config.h"
#include "pacer/core/rng.h"
#include "pacer/engine/sim/event_queue.h"
#include "pacer/engine/worker_statistics.h"
#include "pacer/method/protocol.h"
#include "pacer/timing/timing_model.h"

namespace pacer {

// When workers fail in a simulated run.
struct FaultPlan {
  struct Kill {
    int worker = 0;
    double time = 0;  // simulated seconds
  };
  std::vector<Kill> kills;
  double rejoin_after = -1;  // seconds from a loss to the worker's return; < 0: never returns
  double rate = 0;           // random failures per live worker per simulated second; 0: none
  // How the master learns of a failure. 0: at once (the failure's event tells it). > 0
  // (engine.worker_timeout_s): as the cluster engines learn it, by a deadline: a job that has
  // not answered `deadline` seconds after it was assigned is declared lost, whether its worker
  // died or is only slow, and a late reply re-admits the worker (its result dropped).
  double deadline = 0;
  bool empty() const { return kills.empty() && rate == 0; }
};

// Reads the [faults] table: faults.kill_workers (a list of worker indices, each in [0, workers))
// and faults.kill_at (simulated seconds >= 0, a list of the same length, or one number for every
// listed worker), faults.rejoin_after (seconds > 0; absent: lost workers stay lost) and
// faults.rate (>= 0 failures per worker per second, default 0), and engine.worker_timeout_s
// (seconds > 0: FaultPlan::deadline; absent: failures are seen at once; with it,
// faults.rejoin_after is refused: as on MPI, a worker comes back only by answering). Errors name
// the key.
FaultPlan read_fault_plan(const Config& config, int workers);

// What a run did, for engine_stats: the events it handled and what each worker did
// (engine/worker_statistics.h; on the simulator compute time is all of busy time, nothing is
// injected and nothing drained).
struct SimulatorStats {
  uint64_t events = 0;
  // end_time is set when run() returns; the workers' counts are kept up to date as it goes.
  EngineWorkerStatistics workers;
  // engine_stats: "engine": "sim", "events", and the keys of EngineWorkerStatistics::to_json.
  void to_json(nlohmann::json& out) const;
  // The events and every worker's counts (the end time is the clock's, saved by the simulator).
  void checkpoint(StateArchive& a);
};

class Simulator : public Cluster {
 public:
  // `timing` must outlive the simulator. `max_time` stops the run once the next event lies
  // beyond it (a safety net for methods that stall; targets are the monitor's business).
  Simulator(const TimingModel& timing, CommModel comm, uint64_t seed,
            double max_time = std::numeric_limits<double>::infinity());

  // The failures of the next run() (none by default). Workers must be in [0, timing workers).
  void set_faults(FaultPlan plan) { faults_ = std::move(plan); }
  // How many threads compute jobs (>= 1, default 1: every job is computed at its completion
  // event, on the calling thread). See the file comment. Call before run().
  void set_threads(int threads);
  enum class ComputeAhead { kAuto, kAlways };
  static constexpr int kProbeJobs = 24;
  static constexpr double kMinAheadJobSeconds = 30e-6;
  void set_compute_ahead(ComputeAhead policy) { ahead_policy_ = policy; }  // before run()
  // Whether the last run() computed jobs ahead (threads > 1 and, under kAuto, the jobs were long
  // enough); for tests and benchmarks.
  bool computed_ahead() const { return ahead_enabled_; }

  // Runs the method until master.finished(), max_time, or no event is left. Running out of
  // events while the master is not finished is an Error (the method stalled). After a
  // checkpoint was loaded, run() continues the saved run (the master is not started again).
  void run(Master& master, std::vector<std::unique_ptr<Worker>>& workers);
  // Whether run() stopped because of SIGINT or SIGTERM (core/interrupt.h: checked before every
  // event, so the run stops between two events, its state consistent).
  bool interrupted() const { return interrupted_; }

  // Called between every two events while run() runs: the moments at which the whole run (this
  // simulator, the master, the workers) may be checkpointed. Must not change the run.
  void set_quiet_point(std::function<void()> hook) { quiet_point_ = std::move(hook); }
  // The clock, the pending events, every worker's job (its model, its output if computed) and
  // duration stream, the timer and the statistics (core/state.h). Call between events (from the
  // quiet point, or after run() returned for an interrupt) or, to load, before run(). The worker
  // halves are their own owner's to save. Saving first undoes every computation ahead (a saved
  // run holds none: a job not yet computed in virtual time is saved as such); the owner then saves
  // the worker halves and calls restart_ahead(), which computes the pending jobs ahead again.
  void checkpoint(StateArchive& a);
  void restart_ahead();

  const SimulatorStats& stats() const { return stats_; }

  // Cluster:
  int num_workers() const override { return static_cast<int>(state_.size()); }
  double now() const override { return now_; }
  void assign(int worker, const Job& job, const Vec& x) override;
  bool busy(int worker) const override;
  bool can_cancel() const override { return true; }
  void cancel(int worker) override;
  bool alive(int worker) const override;
  void set_timer(double time) override;
  double job_started(int worker) const override;

 private:
  enum EventKind {
    kJobDone = 0,
    kReplyArrives = 1,
    kLost = 2,
    kRejoins = 3,
    kTimer = 4,
    kDeadline = 5
  };
  struct WorkerState {
    WorkerState(Rng duration_rng, Rng fault_rng) : rng(duration_rng), fault_rng(fault_rng) {}
    bool alive = true;  // without a deadline also the master's view; with one, whether it runs
    // With a deadline (FaultPlan::deadline): the master has declared it lost, and the job it was
    // sent that will never answer (its worker died; its deadline is pending).
    bool declared_lost = false;
    bool owed = false;
    // When the job it was sent is answered never (it died): the time the first such job was sent,
    // kept across a cancel() and a new job, so that cancelling cannot postpone its deadline; < 0
    // while nothing is owed. `sent` is the current job's assign() time.
    double owed_since = -1;
    double sent = 0;
    uint64_t fault_epoch = 0;  // losses so far; a random failure drawn before the last is stale
    bool busy = false;
    uint64_t job_id = 0;  // id of the current job; events of older ids are stale
    Job job;
    // The model the current job computes at, shared with every worker sent the same model
    // (set_model()); written only while this worker alone holds it and is not busy.
    std::shared_ptr<Vec> x;
    double units = 0;
    double start = 0;
    double duration = 0;
    bool computed = false;  // compute() has run; the reply may still be in flight
    // The current job's output is outputs[current] (current alternates per job when jobs are
    // computed ahead, and stays 0 otherwise).
    WorkerOutput outputs[2];
    int current = 0;
    WorkerOutput& output() { return outputs[current]; }
    // A computation ahead of virtual time (threads > 1): its ticket (null: none pending), the
    // worker's state before it (to undo it), and what compute() threw.
    ComputePool::Ticket ahead;
    std::string undo;
    std::exception_ptr failure;
    Rng rng;
    Rng fault_rng;
    void checkpoint(StateArchive& a);
  };
  // Sets the state of a run's start for `workers` workers.
  void reset(int workers);
  // The event loop of run().
  void run_events(Master& master);

  // Gives `s` the model its job is sent: the copy made for the previous assign() when `x` equals
  // it bit for bit (a synchronous step sends one model to every worker: one copy per step, not
  // per worker), else a copy in the worker's own earlier buffer when nobody else holds it (an
  // asynchronous method sends a new model with every job: no allocation), else a new copy.
  void set_model(WorkerState& s, const Vec& x);

  void finish_job(int worker);
  void deliver(int worker, Master& master);
  // Computing ahead (threads > 1): which workers can be (their checkpoint() works), starting one
  // job's computation, and finishing one: its result kept (commit) or its effects undone.
  void find_speculative_workers();
  void compute_ahead(int worker);
  void commit_ahead(int worker);
  void undo_ahead(int worker);
  // Computes a job at its event; under kAuto, times the first kProbeJobs and decides
  // ahead_enabled_.
  void compute_at_event(int worker);
  // Undoes every computation ahead (before a checkpoint is saved, and when run() returns).
  void undo_all_ahead();
  // Fault events: schedule_faults pushes the plan's kills and each worker's first random failure.
  void schedule_faults();
  void schedule_random_failure(int worker);
  // Whether a kLost event still applies (see lose's callers).
  bool loss_is_current(const Event& event) const;
  void lose(int worker, Master& master);
  // The job field of a kill from the plan (never stale).
  static constexpr uint64_t kPlanned = ~uint64_t{0};
  void rejoin(int worker, Master& master);
  // With a deadline: a worker dies (its job, if any, will never answer: owed), a job's deadline
  // passes (the master is told its worker is lost), and a late reply re-admits its worker.
  void die_silently(int worker);
  void deadline_passed(int worker, Master& master);
  void readmit(int worker, Master& master);
  // Drops the worker's job (if any) as cancel() does, counting the work done so far.
  void drop_job(int worker);
  // Adds `seconds` of work to the worker's busy (and compute) time.
  void count_work(int worker, double seconds);

  const TimingModel& timing_;
  CommModel comm_;
  double max_time_;
  double now_ = 0;
  EventQueue queue_;
  std::vector<WorkerState> state_;
  std::vector<std::unique_ptr<Worker>>* workers_ = nullptr;
  uint64_t seed_;
  FaultPlan faults_;
  uint64_t timer_id_ = 0;  // id of the timer in force; older timer events are stale
  bool timer_pending_ = false;
  // What can still make the method go on: busy workers, the timer, and lost workers' returns.
  int busy_workers_ = 0;
  int pending_rejoins_ = 0;
  int owed_jobs_ = 0;  // with a deadline: dead workers' jobs whose deadline is still to come
  SimulatorStats stats_;
  std::function<void()> quiet_point_;
  bool resumed_ = false;  // a checkpoint was loaded: run() continues it
  bool interrupted_ = false;
  std::shared_ptr<Vec> last_model_;  // set_model()'s last copy
  int threads_ = 1;
  std::unique_ptr<ComputePool> pool_;  // threads_ > 1, during run()
  std::vector<bool> speculative_;      // per worker: may be computed ahead
  ComputeAhead ahead_policy_ = ComputeAhead::kAuto;
  bool ahead_enabled_ = false;  // jobs are computed ahead (pool_ and the policy allow it)
  int probed_jobs_ = 0;         // kAuto: jobs timed at their events so far
  double probed_seconds_ = 0;   // their wall seconds
};

}  // namespace pacer
