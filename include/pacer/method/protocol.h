// The seam between training methods and the engines that run them (DESIGN.md sections 1 and 5).
//
// A method is a pair of halves that exchange messages:
//   * a Master, which owns the model, decides when to update it, and hands out Jobs;
//   * n Workers, each of which answers a Job by computing at the model the Job carries.
// An engine moves Jobs from the master to the workers and Replies back, and decides *when* things
// happen: the simulator in virtual time from a timing model, the MPI runtime in real time. The
// master sees the engine only through the Cluster interface below, and workers see no engine at
// all. So a method never knows which engine runs it, and a method written once runs on both.
//
// Ownership and lifetimes:
//   * Cluster::assign copies the model it is given before returning; the master may change its x
//     at once. Every job with the same tag carries the same x (the model version the tag names),
//     so an engine may make one copy of x for all the jobs of a tag.
//   * A Reply (and the payload it points to) is valid only during Master::on_reply; a master that
//     needs a payload later copies it, or, when the engine offers it (Reply::owned_payload), swaps
//     it with a vector of its own.
//   * Replies from one worker arrive in the order its jobs were assigned. Replies from different
//     workers arrive in any order; a master whose result must not depend on arrival order (every
//     synchronous decoder) combines messages in worker-index order.
//
// Lost workers (DESIGN.md section 5): an engine may declare a worker lost (the simulator when a
// [faults] entry kills it, MPI when it misses engine.worker_timeout_s). From then on alive(i) is
// false, i is not busy, the job it had is dropped (no reply comes for it) and the master is told
// once through Master::on_lost; the master must not assign to it. A lost worker may come back
// (the simulator's faults.rejoin_after; on MPI a late reply): alive(i) becomes true, the worker is
// idle, the late reply itself is dropped, and Master::on_rejoined is called. What a method does
// about a loss is stated in its own file; a master that ignores on_lost treats the lost worker
// as a permanent straggler.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "pacer/core/state.h"
#include "pacer/core/vector.h"
#include "pacer/model/model.h"

namespace pacer {

// A unit of work the master gives one worker.
struct Job {
  // The version of the model the job computes at: the step t of a synchronous method, the number
  // of master updates so far for an asynchronous one. Echoed in the Reply.
  int64_t tag = 0;
};

// What a worker's compute() fills in. Owned and reused by the engine (one per worker), so that
// answering a job allocates nothing once the buffers have their size.
struct WorkerOutput {
  Vec payload;      // the message m_i: a gradient, or a (coded) sum of partition gradients
  double loss = 0;  // mean training loss of the samples freshly evaluated by this job
  // For each gradient summed into payload, the tag of the model it was computed at (one entry
  // for a plain gradient; c entries for a gradient-coding pipeline cache). Masters derive
  // staleness from it.
  std::vector<int64_t> versions;
};

// How a job ended.
enum class ReplyStatus {
  kOk,      // the worker answered; payload, loss and versions are set
  kFailed,  // the worker half failed on the job (a method or data error): `error` says why, and
            // nothing else but worker, tag, units and compute_time is set
};

// A worker's answer as delivered to the master.
struct Reply {
  ReplyStatus status = ReplyStatus::kOk;
  std::string_view error = {};  // kFailed: the worker's message, naming where it ran
  int worker = 0;
  int64_t tag = 0;  // the Job's tag
  const Vec* payload = nullptr;
  double loss = 0;
  double units = 0;         // work units the job cost
  double compute_time = 0;  // seconds the job took on the worker (virtual or wall-clock)
  std::span<const int64_t> versions;
  // When the worker began and ended the job, on the engine's clock (Cluster::now); NaN when the
  // engine cannot say. The simulator knows them exactly; MPI places a worker's own span on rank
  // 0's clock (engine/mpi/mpi_cluster.h). For the job log (jobs.csv) and the timeline only.
  double started = std::numeric_limits<double>::quiet_NaN();
  double finished = std::numeric_limits<double>::quiet_NaN();
  // When the job left the master, on the engine's clock, if the engine held it after assign()
  // (MPI holds the jobs handed out during a checkpoint's drain until the checkpoint is written:
  // engine/mpi/mpi_cluster.h); NaN when it was sent at assign(). For the job log only.
  double sent = std::numeric_limits<double>::quiet_NaN();
  // Of compute_time, the seconds the worker slept by delay injection (MPI's engine.inject); 0
  // when none was injected (always in the simulator, whose modelled duration is the compute).
  double injected_time = 0;
  int64_t bytes = 0;  // bytes of the reply message as the engine counts them
  // When not null, the vector `payload` points to, offered to the master: instead of copying it,
  // the master may swap it (Vec::swap) with a vector of its own of the same size, which the engine
  // then fills with a later reply. Null when the engine does not offer it (the simulator).
  Vec* owned_payload = nullptr;
};

// The worker half of a method. One object per worker; an engine calls it from one thread.
class Worker {
 public:
  virtual ~Worker() = default;
  // Work units the job will cost (DESIGN.md section 2), asked before compute() so that an engine
  // can model the job's duration. Must not change state.
  virtual double units(const Job& job) const = 0;
  // Answers `job` at model `x`: fills out.payload (resized to the model dimension), out.loss and
  // out.versions. Called exactly once per job that is not cancelled, in assignment order.
  virtual void compute(const Job& job, const Vec& x, WorkerOutput& out) = 0;
  // kFloat32 when compute() depends on x only through its entries rounded to float (the model's
  // Model::parameter_precision), so that an engine may send x in float32 without changing any
  // result (MPI does). kFloat64, the default, otherwise.
  virtual Precision model_precision() const { return Precision::kFloat64; }
  // Visits the worker's state between jobs (core/state.h: caches, random streams), for
  // checkpoints. A worker that cannot be checkpointed keeps this default, which throws Error.
  virtual void checkpoint(StateArchive& /*a*/) { refuse_checkpoint("this worker"); }
};

// The engine as the master sees it.
class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual int num_workers() const = 0;
  // Seconds since the run started: virtual time in the simulator, wall-clock time on MPI.
  virtual double now() const = 0;
  // Sends `job` with model `x` to `worker`, which must not be busy. x is copied before return.
  virtual void assign(int worker, const Job& job, const Vec& x) = 0;
  // True from assign() until the worker's reply has been handed to Master::on_reply (or until
  // cancel()). This is the master's view: a worker whose reply is in flight is still busy.
  virtual bool busy(int worker) const = 0;
  // Whether cancel() is available (the simulator: yes; MPI: no, jobs always run to the end).
  virtual bool can_cancel() const = 0;
  // Drops the worker's job: no reply will come for it and the worker is idle at once. If the job
  // had not finished, its compute() is never called; if it had and only its reply was in flight,
  // the reply is dropped. Requires can_cancel() and busy(worker).
  virtual void cancel(int worker) = 0;
  // False from the moment the engine declared `worker` lost until it comes back (see the file
  // comment). A lost worker is not busy and must not be assigned a job.
  virtual bool alive(int worker) const = 0;
  // Asks for one Master::on_timer call at engine time `time` (now() or later; an earlier time is
  // treated as now). Replaces the timer set before, if any; the call comes before any reply
  // delivered at a later time. A master uses it for deadlines of its own.
  virtual void set_timer(double time) = 0;
  // When the busy worker's current job begins (or began) on the worker, on the engine's clock,
  // for the job log; NaN when the engine cannot say (MPI) or the worker is not busy.
  virtual double job_started(int /*worker*/) const {
    return std::numeric_limits<double>::quiet_NaN();
  }
};

// The master half of a method.
class Master {
 public:
  virtual ~Master() = default;
  // Called once before any reply: hand out the first jobs.
  virtual void start(Cluster& cluster) = 0;
  // Called for every reply, in the engine's delivery order.
  virtual void on_reply(const Reply& reply, Cluster& cluster) = 0;
  // Called once when the engine declares `worker` lost (alive(worker) is already false and the
  // worker's job dropped), and once when a lost worker comes back (alive again and idle). By
  // default nothing happens: the lost worker is a permanent straggler, and one that comes back
  // stays idle.
  virtual void on_lost(int /*worker*/, Cluster& /*cluster*/) {}
  virtual void on_rejoined(int /*worker*/, Cluster& /*cluster*/) {}
  // The timer set with Cluster::set_timer fired. By default nothing happens.
  virtual void on_timer(Cluster& /*cluster*/) {}
  // True once the run should end (a target or a limit was reached). Engines stop delivering
  // replies when it becomes true.
  virtual bool finished() const = 0;
  // Visits the master's state between two engine events (core/state.h), for checkpoints: after
  // loading it, the engine continues the run without calling start() again. A master that cannot
  // be checkpointed keeps this default, which throws Error.
  virtual void checkpoint(StateArchive& /*a*/) { refuse_checkpoint("this master"); }
};

}  // namespace pacer
