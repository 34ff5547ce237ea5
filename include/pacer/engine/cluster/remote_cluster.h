// The cluster protocol (DESIGN.md section 5): endpoint 0 runs the master half of a method,
// endpoints 1..n run worker halves 0..n−1, and Jobs and Replies travel as messages over a
// Transport (transport.h) in real time. Two engines use it: `mpi` (one process per endpoint,
// engine/mpi) and `local` (one thread per endpoint in one process, engine/local). Below, "rank r"
// is endpoint r, whichever the transport.
//
// Semantics mirror the simulator (engine/sim/simulator.h):
//   * busy(w) is true from assign() until w's reply has been handed to Master::on_reply;
//   * every reply, late ones included, is delivered to the master until it is finished; replies
//     that are still in flight when it finishes are drained at shutdown and counted;
//   * the same timing model draws each job's modelled duration from worker i's own stream
//     Rng(seed, "duration", i), in job order, so the modelled durations equal the simulator's;
//   * jobs cannot be cancelled (can_cancel() is false; straggler_policy = cancel is refused by the
//     method at start);
//   * a worker's error (a method or data error in its worker half, or a SIGINT/SIGTERM that
//     reached that rank alone) is delivered as a Reply with status kFailed whose error names the
//     rank and worker ("rank 3 (worker 2): received SIGTERM: ..."); that worker takes no more jobs
//     in the run (its rank drops them), so assign() to it is an Error;
//   * a Reply's started and finished (for jobs.csv) are on rank 0's clock although the worker
//     measured them: the worker reports its span from receiving the job to sending the reply
//     (job_time), and rank 0 places it in the middle of the round trip, started = assigned +
//     (round trip − job_time) / 2, i.e. assuming the job and the reply travelled equally long.
//     No clock is synchronised; on one host the error is the asymmetry of the two transfers.
//     The round trip runs from the job's send, which is assign() itself except for a job held
//     during a checkpoint's drain (below): its Reply says when it was sent (Reply::sent). The
//     worker's injected sleep (engine.inject) is Reply::injected_time.
//
// Lost workers (method/protocol.h). A transport need not report a dead peer (Open MPI 4.1 does
// not: under `mpirun --enable-recovery` the job survives, a receive posted for the dead rank simply
// never completes). So death is a missed deadline: a worker whose job has been out for longer than
// the worker deadline (engine.worker_timeout_s, below) with no reply header arrived is declared
// lost: it is no longer busy, alive() is false, its job is dropped and Master::on_lost is called.
// Its receives stay posted. If its reply arrives later after all (it was a straggler, not dead),
// the reply is dropped, the worker is idle and alive again, and Master::on_rejoined is called.
//   The deadline: engine.worker_timeout_s seconds when set (0 = never declare a worker lost);
// unset, it adapts to the run: max(kWorkerTimeoutFloorS, kWorkerTimeoutFactor × the longest job
// round trip (assign to reply arrival, any worker) seen so far in the run), on the run's clock
// (the master's evaluations excluded). A straggler is told from a dead process only by time: one
// that takes more than ten times the longest job seen so far (at least a minute) is treated as
// dead until its reply proves otherwise; since the late reply's round trip then counts as
// observed, the deadline grows with it, and the same straggle does not cost the worker again.
// engine.timeout_s still ends the run when no reply at all arrives for that long while jobs are
// out or lost workers might come back; lost workers are not waited for by it while others answer.
//   At shutdown no goodbye is waited for from a lost worker. It is sent stop flagged lost (a
// worker alive after all then leaves at once), unless rank 0 can see that its process is gone
// (Transport::peer_known_dead). Its buffers and posted receives are kept until the process ends
// (the transport may still use them), and the transport records it as lost
// (Transport::set_peer_lost; MPI: that bounds MPI_Finalize and refuses further runs of the
// session).
//
// Rank 0 never blocks on one worker: it keeps one receive posted per worker for the reply header
// (and one for its payload), polls them all (Transport::test_some) and idles up to poll_sleep_us
// between empty polls. Workers poll-sleep the same way while they wait for a job. Replies that
// complete in the same poll are delivered in worker-index order.
//
// Lean messages. assign() does not copy x per worker: the jobs of one tag carry the same x
// (method/protocol.h), so rank 0 makes one snapshot per model version, in each precision the
// workers read, shares it among every job of that tag (a synchronous step's n jobs: one copy
// instead of n) and keeps it until every send from it has completed; a snapshot no slot holds is
// reused for a later version. Precision (wire.h): a worker whose half reads the model in float32
// (Worker::model_precision: a float32 torch model without L2 term) says so in its replies, and is
// sent x rounded to float from then on (its first job goes in double); since that model rounds x
// to float itself, this changes nothing it computes. Its payload travels in float32 when every
// value is exactly a float (a float32 model's own gradients; not, mostly, sums or coded
// combinations of them), else in double: no value changes on the way, so results equal the
// simulator's as for a double model. A payload is received straight into the slot's vector
// (floats widened in place as they arrive) and offered to the master (Reply::owned_payload),
// which may swap it for a vector of its own instead of copying it.
//
// Checkpoints (engine.h, EngineRun::checkpoint). The worker halves live on other ranks, so a
// consistent cut needs every worker idle. When the hook says a checkpoint is due (asked at every
// quiet point of run(): between two polls, outside every master callback), the cluster DRAINS:
// assign() keeps the job on rank 0 (the worker is busy for the master, the job's tag and a copy
// of x are held) instead of sending it, until no job is in flight. Every worker is then idle:
// rank 0 asks each worker that is not lost for its state (save request; the worker rank visits
// its duration stream, its statistics and its worker half's checkpoint()), and calls
// hook->write(), inside which checkpoint() records the clock, the held jobs, the timer, the lost
// flags, the statistics and the workers' states; then the held jobs are sent and the run goes on.
// The drain costs at most one job time (the longest job in flight when the checkpoint fell due;
// the workers that finish meanwhile wait), and it stays in the run's clock; the state fetch and
// hook->write() themselves are taken out of it (like the master's evaluations). Loading (before
// run()): the clock continues from the saved time, the statistics and flags are restored, every
// worker that was not lost is sent its state (load request, answered once loaded), and run()
// sends the held jobs instead of calling master.start(). A worker lost at the checkpoint runs
// afresh on the new job: run() re-admits it at once (Master::on_rejoined), with its worker half
// as the configuration built it (its state was not saved). A checkpoint is possible only at the
// cluster's own drain: an interrupted run is resumed from its last periodic checkpoint.
//
// Messages (8-byte fields, native byte order: every host of a job must share one architecture):
//   job    rank 0 -> worker: header {kind = job | stop | save | load, tag, model size (load:
//          state bytes), stop status, lost, bytes per model value}; then the model x (doubles or
//          floats) for a job, the state (bytes, tag state) for a load
//   reply  worker -> rank 0: header {kind = reply | error | bye | state, tag, payload size
//          (state: bytes), versions count, loss, units, job seconds, compute seconds, injected
//          seconds, bytes per payload value, bytes per value of the model this worker reads}
//          followed by the versions (reply), the error text (error; state when the worker could
//          not save or load), or the worker's statistics (bye); then the payload (doubles or
//          floats) for a reply, the state (bytes, tag state) for the answer to a save
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/state.h"
#include "pacer/engine/cluster/transport.h"
#include "pacer/engine/engine.h"
#include "pacer/method/protocol.h"
#include "pacer/timing/timing_model.h"

namespace pacer::cluster {

// How a worker imposes the timing model on its real jobs (engine.inject).
enum class Inject {
  kNone,   // real speed only
  kDelay,  // after computing, sleep the modelled Duration.extra
  kPace,   // pad the job to the modelled Duration.total(); a job whose real compute took longer is
           // counted as an overrun
};

// The largest model (values) the protocol carries: one message of 8 bytes per value, and MPI counts
// bytes in an int.
inline constexpr int64_t kMaxDim = INT_MAX / 8;

// The [engine] keys of a run on the cluster protocol.
struct ClusterOptions {
  Inject inject = Inject::kNone;
  int poll_sleep_us = 100;      // sleep between two empty polls, on every rank
  double timeout_s = 1800;      // rank 0: longest wait for a reply while jobs are out; 0 = none
  double drain_timeout_s = 60;  // at shutdown: longest wait for the workers' goodbyes
  // The worker deadline (file comment): > 0 seconds, 0 = never declare a worker lost, or
  // kAdaptiveWorkerTimeout.
  double worker_timeout_s = kAdaptiveWorkerTimeout;
  static constexpr double kAdaptiveWorkerTimeout = -1;
};

// The adaptive worker deadline, max(floor, factor × longest round trip seen): a minute covers a
// first job that pays for warm-up (page faults, libtorch initialisation) before any job has been
// seen, and ten times the longest job leaves room for heavy-tailed timing models.
inline constexpr double kWorkerTimeoutFloorS = 60;
inline constexpr double kWorkerTimeoutFactor = 10;

// Reads engine.inject ("none" default | "delay" | "pace"), engine.poll_sleep_us (1..1000000,
// default 100), engine.timeout_s (>= 0, default 1800; 0 = wait forever),
// engine.drain_timeout_s (> 0, default 60) and engine.worker_timeout_s (finite, >= 0; unset =
// adaptive, which leaves the key out of the resolved configuration).
ClusterOptions read_cluster_options(const Config& config);
const char* inject_name(Inject inject);

// How a run or a worker's service ended, sent with the stop message.
enum class StopStatus { kOk = 0, kError = 1, kInterrupted = 2 };

// What one worker rank measured, sent to rank 0 in its goodbye.
struct WorkerStats {
  double jobs = 0;
  double compute_time = 0;   // seconds inside Worker::units/compute
  double injected_time = 0;  // seconds slept by delay injection
  double busy_time = 0;      // seconds from receiving a job to sending its reply
  double lifetime = 0;       // seconds from entering the job loop to receiving stop
  double overruns = 0;       // inject = pace: jobs whose real compute exceeded the modelled time
  double max_overrun = 0;    // seconds, the largest such excess
  double dropped_jobs = 0;   // jobs received after an error (not computed)
};

// Endpoint 0's side of a run: the Cluster a Master drives. Requires transport.rank() == 0, a
// transport of workers + 1 endpoints whose endpoints 1..n serve (serve_jobs) this run; the
// transport outlives the cluster.
class RemoteCluster : public Cluster {
 public:
  RemoteCluster(Transport& transport, const ClusterOptions& options, int workers, int64_t dim);
  // Shuts the workers down (status error) if shutdown() was not called; never throws.
  ~RemoteCluster() override;
  RemoteCluster(const RemoteCluster&) = delete;
  RemoteCluster& operator=(const RemoteCluster&) = delete;

  enum class Outcome { kFinished, kMaxTime, kInterrupted };
  // Starts the clock, calls master.start() (after a loaded checkpoint: sends the held jobs and
  // re-admits the workers lost then, file comment) and delivers replies until master.finished(),
  // until max_time wall seconds have passed (0 = no limit), or until SIGINT/SIGTERM; declares
  // workers lost and re-admits them (file comment). Rank 0 warns once per process, at the first
  // run, when the worker deadline is on but the job was not launched with --enable-recovery (a dead
  // worker then ends the whole job). Throws what the master throws (a master given a kFailed reply
  // throws its error), and Error when no reply arrives for timeout_s while jobs are out or lost
  // workers may still answer, when no job is out, no timer set, no worker lost and the master
  // has not finished (the method stalled), or on a transport failure. Call once.
  Outcome run(Master& master, double max_time);

  // Sends stop to every worker, delivers nothing more: replies still in flight are drained and
  // counted, and each worker's goodbye (with its statistics) is collected, except from workers
  // that are lost (file comment) or whose process rank 0 sees end meanwhile (they are then lost,
  // with tag -1 in "losses"). Waits at most drain_timeout_s (or `timeout_s` if > 0). If a
  // worker that is not lost does not say goodbye in time, or the transport fails, the ranks can no
  // longer end cleanly (MPI_Finalize would hang): it prints one error (with the error that ended
  // run(), if any, and the silent ranks) and aborts the job (Transport::abort_job, exit status 1).
  // Call once; later calls do nothing.
  void shutdown(StopStatus status, double timeout_s = 0);

  // engine_stats for summary.json. First the keys every engine writes (engine/worker_statistics.h,
  // EngineWorkerStatistics::to_json; docs/outputs.md), filled from rank 0's view of each worker:
  // jobs completed (replies delivered during the run), jobs cancelled (the job dropped at each
  // loss; the master cannot cancel), late replies drained at shutdown, busy time (Σ job seconds
  // of delivered replies: compute + injected), compute and injected time, idle time and
  // utilisation (busy / end_time), losses, rejoins, lost at the end and the run time of the last
  // loss (null if none), with "end_time" and the totals "workers_lost", "workers_rejoined" and
  // "late_replies_drained". Then the protocol's own: per worker the median job time, the mean
  // round trip (assign to delivery) and its part not spent on the worker's job. Rank 0: messages
  // and bytes sent and received, polls, and its own seconds inside test_some calls that received
  // something, in those that did not, in assign() (making a model snapshot, sending) and the
  // master's code; "float32_jobs" and "float32_replies", the jobs whose model and the replies
  // whose payload travelled in float32 (not carried over a resume). After a clean shutdown,
  // "worker_reported": each worker's own count of jobs, lifetime, wait time, pace overruns and
  // dropped jobs (null for a worker lost at the end, which said no goodbye). Lost workers:
  // "worker_timeout" ("adaptive", "fixed" or "off"), "worker_deadline_s" (the deadline in force at
  // the end; 0 when off), "launched_with_recovery", and "losses": one {worker, rank, time, tag,
  // elapsed[, rejoined_time]} per loss (tag: the dropped job's, -1 for a process seen gone at
  // shutdown; elapsed: how long it had been out). The engine adds "engine" (its name).
  void to_json(nlohmann::json& out) const;
  // Wall seconds from run() to the end of the run (before shutdown), less excluded time; inside
  // the checkpoint hook's write(), the run's time at the checkpoint.
  double end_time() const;
  // Moves the run's clock back by `seconds` of wall time that the master spent on something that
  // is not part of the run (evaluating the model): now(), the step times and max_time exclude it.
  // Workers are not paused: a synchronous step's workers are idle while the master evaluates
  // between steps, but a job in flight meanwhile (an asynchronous worker, a straggler under the
  // finish policy) appears to take `seconds` less.
  void exclude_time(double seconds);

  // Checkpoints (file comment). With `hook` set (null = none), run() drains and calls
  // hook->write() when hook->due(). Call before run().
  void set_checkpoint_hook(CheckpointHook* hook);
  // True only inside the hook->write() that run() calls: saving is possible only then.
  bool can_checkpoint_now() const;
  // Saving (inside hook->write()): records the cluster's state and the workers'. Loading (before
  // run()): restores it and sends each worker rank its state, waiting (at most timeout_s) until
  // each has loaded it. Throws Error when saving outside hook->write(), on a state that does not
  // fit (core/state.h) and when a worker cannot load its state (naming the rank).
  void checkpoint(StateArchive& a);

  // Cluster:
  int num_workers() const override;
  double now() const override;
  void assign(int worker, const Job& job, const Vec& x) override;
  bool busy(int worker) const override;
  bool can_cancel() const override { return false; }
  void cancel(int worker) override;
  bool alive(int worker) const override;
  void set_timer(double time) override;

 private:
  Outcome run_loop(Master& master, double max_time);
  struct Impl;  // the requests and buffers (master.h)
  std::unique_ptr<Impl> impl_;
};

// A worker rank's job loop: answers rank 0's jobs with `worker` (worker half `index`) until rank 0
// sends stop, then says goodbye with its statistics and returns the stop status. A stop flagged
// lost (rank 0 declared this worker lost and waits for nothing more from it) returns at once,
// without a goodbye and without waiting for this worker's last sends (whose buffers are then
// kept until the process ends). Durations are
// drawn from timing.compute_time(index, units, tag, Rng(seed, "duration", index)) and injected as
// options.inject says. A method or data error inside the worker is sent to rank 0 (which ends the
// run); later jobs are then dropped until stop. Throws Error on a transport failure, when a reply's
// send does not complete within options.timeout_s, or when no job or stop arrives within
// 2·timeout_s + drain_timeout_s (longer than rank 0's own timeout, so that rank 0 reports a silent
// worker first), or at once when rank 0's process is seen to have ended
// (Transport::peer_known_dead: under --enable-recovery mpirun would not end this rank). Between
// jobs it answers rank 0's save and load requests (file comment: its duration stream, its
// statistics and worker.checkpoint()); a worker half that cannot save or load says so in the
// answer, and rank 0 ends the run with that error.
StopStatus serve_jobs(Transport& transport, Worker& worker, TimingModel& timing, int index,
                      uint64_t seed, const ClusterOptions& options, int64_t dim);

}  // namespace pacer::cluster
