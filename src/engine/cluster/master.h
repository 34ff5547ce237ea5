// Endpoint 0 of the cluster protocol: the state behind RemoteCluster
// (include/pacer/engine/cluster/remote_cluster.h), shared by the files that implement it:
// remote_cluster.cc (the public calls, the poll loop, job and reply messages, liveness and
// shutdown) and checkpoint_protocol.cc (drains, worker states, checkpoints). Private to
// src/engine/cluster.
#ifndef PACER_SRC_ENGINE_CLUSTER_MASTER_H_
#define PACER_SRC_ENGINE_CLUSTER_MASTER_H_

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "pacer/core/log.h"
#include "pacer/core/rng.h"
#include "pacer/core/stats.h"
#include "pacer/engine/cluster/remote_cluster.h"
#include "pacer/engine/worker_statistics.h"
#include "transport_wait.h"
#include "wire.h"

namespace pacer::cluster {

struct RemoteCluster::Impl {
  // One declaration of a worker as lost.
  struct Loss {
    double time = 0;       // run time
    int64_t tag = -1;      // of the dropped job
    double elapsed = 0;    // how long that job had been out
    double rejoined = -1;  // run time of the late reply that brought the worker back; -1 = none
    void checkpoint(StateArchive& a) {
      a.io(time);
      a.io(tag);
      a.io(elapsed);
      a.io(rejoined);
    }
  };
  // One model version as sent (remote_cluster.h): the x of one job tag, in each precision a worker
  // reads it, made once and shared by every job of that tag; a slot holds it while its send is
  // in flight (or its job held), and it is reused once no slot does.
  struct Snapshot {
    int64_t tag = -1;
    Vec x64;
    std::vector<float> x32;
    bool has64 = false, has32 = false;
    bool has(Precision p) const { return p == Precision::kFloat32 ? has32 : has64; }
    // Makes the values in precision p from x (the master's x of this tag), unless made already.
    void fill(Precision p, const Vec& x) {
      if (has(p)) return;
      if (p == Precision::kFloat32) {
        x32.resize(static_cast<size_t>(x.size()));
        narrow(x.data(), x.size(), x32.data());
        has32 = true;
      } else {
        x64 = x;
        has64 = true;
      }
    }
    const void* data(Precision p) const {
      return p == Precision::kFloat32 ? static_cast<const void*>(x32.data()) : x64.data();
    }
  };

  struct Slot {
    bool busy = false;
    int64_t tag = -1;  // the tag of the job in flight
    double assigned_at = 0;
    // Sending: the job header and the snapshot of the model version its job was sent from (the
    // master's x changes at once).
    JobHeader job_header;
    std::shared_ptr<Snapshot> model;
    // The precision in which the worker reads its model, as its last reply said.
    Precision reads = Precision::kFloat64;
    Request sends[2];
    // The stop message has its own buffer and request: a lost worker's job sends may never
    // complete, and their buffers must not change meanwhile.
    JobHeader stop_header;
    Request stop_send;
    // Receiving: the reply header (+ trailer) and the payload, each with one receive posted.
    std::vector<char> reply_buffer = std::vector<char>(kReplyBufferBytes);
    Vec payload;               // receives doubles, or floats widened in place (wire.h)
    int payload_received = 0;  // bytes of the last payload received
    bool header_done = false, payload_done = false;
    std::vector<int64_t> versions;
    bool said_bye = false;
    bool failed = false;        // reported an error: takes no more jobs in this run
    std::string error;          // that error, for the kFailed Reply (which points into it)
    bool lost = false;          // declared lost and not back (method/protocol.h)
    bool stopped_lost = false;  // was lost when shutdown sent stop: no goodbye is awaited
    std::vector<Loss> losses;
    int64_t rejoins = 0;
    WorkerStats reported;
    // The master's view.
    int64_t replies = 0;            // delivered to the master
    int64_t drained = 0;            // arrived after the master finished
    double busy_time = 0;           // Σ job seconds of delivered replies
    double compute_time = 0;        // Σ compute seconds of delivered replies
    double injected_time = 0;       // Σ injected seconds of delivered replies
    double round_trip = 0;          // Σ (reply handled − assign) of delivered replies
    std::vector<double> job_times;  // of delivered replies
    // Checkpoints (remote_cluster.h): the job assign() held during a drain (busy, tag and model are
    // set; it is sent once the checkpoint is written), and the worker's state (fetched for a
    // save; to be sent after a load).
    bool held = false;
    // The job in flight was held before it was sent: its Reply says when it was (assigned_at).
    bool was_held = false;
    std::string state;
    // An error report that arrived while the states were fetched: delivered after the fetch.
    std::optional<std::pair<ReplyHeader, std::string>> deferred_error;

    // What a checkpoint records of this worker (Impl::checkpoint).
    void checkpoint(StateArchive& a) {
      a.io(held);
      if (held) {
        a.io(tag);
        if (a.loading()) model = std::make_shared<Snapshot>();
        a.io(model->x64);  // a held job's snapshot has its doubles (assign)
        model->tag = tag;
        model->has64 = true;
      }
      a.io(lost);
      a.io(losses);
      a.io(rejoins);
      a.io(replies);
      a.io(drained);
      a.io(busy_time);
      a.io(compute_time);
      a.io(injected_time);
      a.io(round_trip);
      a.io(job_times);
      a.io(state);
      if (a.loading()) busy = was_held = held;
    }
  };

  Impl(Transport& t, const ClusterOptions& o, int n, int64_t d)
      : transport(t), options(o), workers(n), dim(d), slots(n), requests(2 * n) {
    for (Slot& s : slots) s.payload = Vec::Zero(d);
  }

  double now() const { return wall_seconds() - start; }

  // Runs master code, counting its time as the master's.
  template <typename F>
  void call_master(F&& code) {
    const double begin = wall_seconds();
    code();
    master_time += wall_seconds() - begin;
  }

  void post_header_receive(int w) {
    transport.irecv(slots[w].reply_buffer.data(), kReplyBufferBytes, w + 1, kTagReply, requests[w]);
  }
  // Room for a payload of doubles; one of floats fills its first half (wire.h).
  void post_payload_receive(int w) {
    transport.irecv(slots[w].payload.data(), 8 * dim, w + 1, kTagPayload, requests[workers + w]);
  }
  void post_receives();

  // Marks completed receives; returns how many completed.
  int poll();

  // Handles worker w's completed message, if any. Replies go to `master` unless it is null or
  // finished (then they are counted as drained); `cluster` is what the master is given. Returns
  // false if nothing was ready.
  bool handle(int w, Master* master, Cluster* cluster);

  // A job's reply, once its payload is in too. `master` is null when it is not to be delivered.
  bool handle_reply(int w, const ReplyHeader& h, const char* trailer, size_t trailer_bytes,
                    Master* master, Cluster* cluster) {
    Slot& s = slots[w];
    if (!s.payload_done) return false;
    s.header_done = s.payload_done = false;
    s.versions.resize(trailer_bytes / 8);
    std::memcpy(s.versions.data(), trailer, s.versions.size() * 8);
    post_header_receive(w);
    if (h.payload_size != dim || (h.payload_bytes != 4 && h.payload_bytes != 8) ||
        s.payload_received != h.payload_bytes * dim) {
      post_payload_receive(w);  // keep the worker reachable for the shutdown
      fail(
          "{}: worker {} (rank {}) answered job {} with a payload of {} values of {} bytes ({} "
          "bytes received); the model has {}",
          transport.name(), w, w + 1, h.tag, h.payload_size, h.payload_bytes, s.payload_received,
          dim);
    }
    // Decoded as it arrives: floats become the doubles the master reads.
    if (h.payload_bytes == 4) {
      widen_in_place(s.payload.data(), dim);
      ++float32_replies;
    }
    s.reads = h.model_bytes == 4 ? Precision::kFloat32 : Precision::kFloat64;
    const double round_trip = now() - s.assigned_at;
    longest_round_trip = std::max(longest_round_trip, round_trip);
    if (s.lost) {
      post_payload_receive(w);  // the late reply is dropped
      readmit(w, h.tag, round_trip, master, cluster);
      return true;
    }
    s.busy = false;
    if (master == nullptr) {
      ++s.drained;
      post_payload_receive(w);
      return true;
    }
    ++s.replies;
    s.busy_time += h.job_time;
    s.compute_time += h.compute_time;
    s.injected_time += h.injected_time;
    s.round_trip += round_trip;
    s.job_times.push_back(h.job_time);
    // The worker's span placed on rank 0's clock: the job and the reply are taken to have
    // travelled equally long (half of the round trip not spent on the worker).
    const double started = s.assigned_at + std::max(0.0, round_trip - h.job_time) / 2;
    Reply reply{.status = ReplyStatus::kOk,
                .error = {},
                .worker = w,
                .tag = h.tag,
                .payload = &s.payload,
                .loss = h.loss,
                .units = h.units,
                .compute_time = h.job_time,
                .versions = s.versions,
                .started = started,
                .finished = started + h.job_time,
                .sent = s.was_held ? s.assigned_at : std::numeric_limits<double>::quiet_NaN(),
                .injected_time = h.injected_time,
                .bytes = static_cast<int64_t>(sizeof(ReplyHeader)) + h.trailer_bytes +
                         h.payload_bytes * h.payload_size,
                .owned_payload = &s.payload};
    // The payload buffer is free again once the master is done with it, even if it throws (the
    // worker's next reply must always find a receive).
    try {
      call_master([&] { master->on_reply(reply, *cluster); });
    } catch (...) {
      try {
        post_payload_receive(w);
      } catch (const Error&) {
      }
      throw;
    }
    // A master that swapped the payload out gave a vector of the same size (method/protocol.h).
    PACER_CHECK(s.payload.size() == dim);
    post_payload_receive(w);
    return true;
  }

  // A worker's error report: delivered to the master as a kFailed reply (masters end the run
  // with it). The worker's rank drops every later job of the run.
  void handle_error(int w, const ReplyHeader& h, const std::string& text, Master* master,
                    Cluster* cluster) {
    slots[w].header_done = false;
    post_header_receive(w);
    report_error(w, h, text, master, cluster);
  }
  // The error report `h` + `text` of worker w, received: the worker is failed, and the error is
  // delivered to `master` (unless it is null or the run was interrupted).
  void report_error(int w, const ReplyHeader& h, const std::string& text, Master* master,
                    Cluster* cluster) {
    Slot& s = slots[w];
    s.failed = true;
    s.busy = false;
    s.held = false;
    s.error = fmt::format("rank {} (worker {}): {}", w + 1, w, text);
    // Under Ctrl-C every rank has the signal: rank 0 ends the run as interrupted, and a worker's
    // report of the same signal is no error of its own.
    if (master == nullptr || interrupt_requested()) {
      log_debug("{}: {}", transport.name(), s.error);
      return;
    }
    Reply reply{.status = ReplyStatus::kFailed,
                .error = s.error,
                .worker = w,
                .tag = h.tag >= 0 ? h.tag : s.tag,  // an interrupt report names no job
                .payload = nullptr,
                .loss = 0,
                .units = h.units,
                .compute_time = h.job_time,
                .versions = {}};
    call_master([&] { master->on_reply(reply, *cluster); });
  }

  // The deadline after which a busy worker without a reply is declared lost; infinite when off.
  double worker_deadline() const;
  const char* deadline_source() const;

  // Declares lost every busy worker whose job has been out past the deadline with no reply
  // header arrived (one whose header is in has answered; its payload is on the way).
  void declare_overdue_lost(Master& master, Cluster& cluster);

  void declare_lost(int w, double elapsed, double deadline, Master& master, Cluster& cluster);

  // A late reply from lost worker w: the worker is idle and alive again, the reply dropped.
  void readmit(int w, int64_t tag, double round_trip, Master* master, Cluster* cluster);

  // On an empty poll: fails when the run can make no progress. Stalled: no job out, no timer, no
  // lost worker that might still answer. Timed out: nothing arrived for timeout_s while jobs are
  // out or lost workers might answer.
  void check_progress(double last_activity) const;

  std::string describe_waiting() const;

  // Completes the sends of worker w's previous messages.
  void wait_sends(int w, double timeout_s);

  // Shutdown, step 1: stop to worker w. A lost worker's sends are not waited for (it may be
  // dead), and its stop says that it is lost, so that one alive after all leaves at once; a lost
  // worker whose process rank 0 can see is gone gets nothing (Transport::peer_known_dead).
  void send_stop(int w, StopStatus status, double limit);

  // Step 2: replies still in flight are counted, goodbyes collected (none from lost workers),
  // until `deadline` (wall seconds).
  void drain(double deadline);

  // A worker that died with no job out (idle at the end of the run, or after its last reply) was
  // never overdue: if rank 0 can see that its process has ended, it is lost now, and its goodbye
  // is not waited for. (One on another host makes the stop time out.)
  void lose_dead_at_shutdown();

  // Step 3: releases what the stopped workers no longer use. Returns the ranks (not lost) that
  // said no goodbye, comma-separated.
  std::string finish_stop(double limit);

  bool any_stopped_lost() const;

  // The snapshot for a job of model version `tag` (remote_cluster.h): the current one if it has
  // that tag, else one that no slot holds any more (or a new one), emptied.
  std::shared_ptr<Snapshot> snapshot_for(int64_t tag);

  // Lets go of the snapshots whose sends have completed (not those of held jobs).
  void release_sent_models();

  bool sends_complete(Slot& s);

  // Sends worker w's job (its tag and model are in the slot), in the precision it reads.
  void send_job(int w);

  // ----- Checkpoints (remote_cluster.h).

  // At a quiet point of run(): starts a drain when a checkpoint is due, and takes it once no
  // job is in flight.
  void quiet_point(Master& master, Cluster& cluster);

  // Starts a drain if a checkpoint is due; returns whether one is under way. Also asked by
  // assign(), so that the jobs a master hands out right after the update that made a checkpoint
  // due are held at once: a synchronous method's checkpoint then waits for no job at all.
  bool drain_if_due();

  // Every worker idle: fetches their states, writes the checkpoint (unless a worker reported an
  // error meanwhile), then sends the held jobs and delivers the deferred errors.
  void take_checkpoint(Master& master, Cluster& cluster);

  // Asks every worker that is not lost for its state and receives the answers, in worker order.
  // Returns false when one reported an error meanwhile (kept in deferred_error).
  bool fetch_worker_states();

  // Sends worker w a save request, or a load request with the state in its slot.
  void send_request(int w, JobHeader::Kind kind);

  // Waits (at most timeout_s) for worker w's answer to a save (`saving`, which fills its state)
  // or a load request. An error report that comes first (a signal that reached that rank alone)
  // is kept in deferred_error. Throws Error when the worker could not save or load its state.
  void await_state(int w, bool saving);

  // Receives `bytes` of worker w's state (tag state) into its slot.
  void receive_state_bytes(int w, int64_t bytes);

  // Sends the jobs held during a drain, in worker order.
  void release_held();

  // The error reports kept while the states were fetched, now that the held jobs are out: as if
  // they had arrived at this moment (a failed worker drops the job it was just sent).
  void deliver_deferred_errors(Master& master, Cluster& cluster);

  // The cluster's state and its workers' (remote_cluster.h). Saving only inside hook->write().
  void checkpoint(StateArchive& a);

  // Refuses a loaded worker slot that the saved run cannot have had.
  void check_loaded(const StateArchive& a, int w) const;

  // After a load: sends every worker that was not lost its state, and waits until each has
  // loaded it.
  void load_worker_states();

  // run() after a load: sends the held jobs, then re-admits the workers that were lost (they run
  // afresh on this job).
  void continue_saved_run(Master& master, Cluster& cluster);

  // engine_stats (remote_cluster.h, to_json): every worker's statistics as every engine writes them
  // (engine/worker_statistics.h), and the MPI engine's own keys on losses.
  EngineWorkerStatistics worker_statistics() const;
  void losses_to_json(nlohmann::json& out) const;

  Transport& transport;
  ClusterOptions options;
  int workers;
  int64_t dim;
  std::vector<Slot> slots;
  // Every model snapshot made (reused once no slot holds one), and the one of the latest tag.
  std::vector<std::shared_ptr<Snapshot>> snapshots;
  std::shared_ptr<Snapshot> current;
  std::vector<Request> requests;  // reply headers 0..n−1, payloads n..2n−1
  std::vector<int> completed;     // test_some's answer
  std::vector<Received> received;
  double start = 0;
  double end_time = 0;
  bool started = false;
  bool receives_posted = false;
  bool shut_down = false;
  bool have_reports = false;
  // The master's timer (Cluster::set_timer), checked once per poll.
  bool timer_armed = false;
  double timer_at = 0;
  // The longest job round trip (assign to reply arrival, run clock) of the run: the adaptive
  // worker deadline.
  double longest_round_trip = 0;
  std::string run_error;  // what ended run() with an exception
  int64_t messages_sent = 0, messages_received = 0;
  double bytes_sent = 0, bytes_received = 0;
  int64_t polls = 0, empty_polls = 0;
  // Jobs whose model was sent, and replies whose payload came, in float32 (this process's part of
  // the run: not in checkpoints).
  int64_t float32_jobs = 0, float32_replies = 0;
  // Rank 0's own time: inside test_some calls that received something (matching and copying
  // replies in) and calls that did not, inside assign() (copying x, starting sends), and inside
  // the master's start/on_reply/on_lost/on_rejoined/on_timer (assign included).
  double poll_time = 0, empty_poll_time = 0, assign_time = 0, master_time = 0;
  // Checkpoints: the hook (null = none), a drain in progress and when it began (wall seconds),
  // inside hook->write(), the run time of the last cut, a loaded checkpoint that run() continues
  // and the run time it was saved at (-1 = none), and the statistics: checkpoints written, the
  // drains' total and longest wall seconds (in the run's clock) and the fetches' and writes'
  // (taken out of it).
  CheckpointHook* hook = nullptr;
  bool draining = false;
  double drain_began = 0;
  bool writing = false;
  double cut_time = 0;
  bool resumed = false;
  double resumed_at = -1;
  int64_t checkpoints = 0;
  double drain_time = 0, max_drain_time = 0, write_time = 0;
};

}  // namespace pacer::cluster

#endif  // PACER_SRC_ENGINE_CLUSTER_MASTER_H_
