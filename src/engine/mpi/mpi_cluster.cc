#include "pacer/engine/mpi/mpi_cluster.h"

#include <mpi.h>

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
#include "pacer/engine/mpi/runtime.h"
#include "wire.h"

namespace pacer::mpi {
namespace {

// Room for the versions (8 bytes each), an error text or a WorkerStats after a ReplyHeader.
constexpr int64_t kTrailerBytes = 64 * 1024;
constexpr int kReplyBufferBytes = static_cast<int>(sizeof(ReplyHeader) + kTrailerBytes);
static_assert(sizeof(WorkerStats) <= static_cast<size_t>(kTrailerBytes));

// Throws the Error for a wait on `peer` that cannot complete because its process has ended.
[[noreturn]] void fail_peer_gone(const char* what, int peer, int tag) {
  fail(
      "MPI: rank {}: {} from/to rank {} ({} message, tag {}) cannot complete: the process of "
      "rank {} has ended",
      rank(), what, peer, tag_name(tag), tag, peer);
}

// Polls `request` until it completes, sleeping `sleep_us` between polls. Throws an Error naming
// `what`, the peer and the tag if MPI fails, when the peer's process is seen to have ended
// (runtime.h, rank_known_dead) or (timeout_s > 0) when it has not completed after timeout_s
// seconds.
void wait_request(MPI_Request& request, const char* what, int peer, int tag, int sleep_us,
                  double timeout_s) {
  const double deadline = timeout_s > 0 ? wall_seconds() + timeout_s : 0;
  while (true) {
    const double slice =
        timeout_s > 0 ? std::min(kLivenessCheckS, deadline - wall_seconds()) : kLivenessCheckS;
    if (wait_polling(request, what, peer, tag, sleep_us, std::max(1e-6, slice))) return;
    if (rank_known_dead(peer)) fail_peer_gone(what, peer, tag);
    if (timeout_s > 0 && wall_seconds() >= deadline) break;
  }
  fail(
      "MPI: rank {}: {} from/to rank {} ({} message, tag {}) did not complete within {} s "
      "(engine.timeout_s)",
      rank(), what, peer, tag_name(tag), tag, timeout_s);
}

void sleep_until(double deadline) {
  const double left = deadline - wall_seconds();
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
}

// Throws unless `bytes` of state fit one MPI message (an int count).
void check_state_size(uint64_t bytes, int worker) {
  if (bytes > static_cast<uint64_t>(INT_MAX)) {
    fail(
        "MPI engine: worker {}'s state for a checkpoint is {} bytes; one MPI message carries at "
        "most {}",
        worker, bytes, INT_MAX);
  }
}

// Cancels a posted receive that no message will match any more.
void cancel_receive(MPI_Request& request) {
  if (request == MPI_REQUEST_NULL) return;
  MPI_Cancel(&request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

}  // namespace

bool narrow_exact(const double* from, int64_t n, float* to) {
  for (int64_t i = 0; i < n; ++i) {
    to[i] = static_cast<float>(from[i]);
    if (static_cast<double>(to[i]) != from[i]) return false;
  }
  return true;
}

void narrow(const double* from, int64_t n, float* to) {
  for (int64_t i = 0; i < n; ++i) to[i] = static_cast<float>(from[i]);
}

void widen_in_place(double* data, int64_t n) {
  // Block by block from the end: a block's floats are copied out before its doubles are written,
  // and the doubles of a block [k, k + b) cover floats [2k, 2k + 2b), none of which is still
  // unread (the floats below k are; 2k >= k). Large blocks keep it near the speed of a
  // conversion between two buffers (measured: 1024-value blocks took twice as long).
  constexpr int64_t kBlock = 64 * 1024;
  static thread_local std::vector<float> block(kBlock);
  const char* bytes = reinterpret_cast<const char*>(data);
  for (int64_t end = n; end > 0;) {
    const int64_t begin = std::max<int64_t>(0, end - kBlock);
    const int64_t count = end - begin;
    std::memcpy(block.data(), bytes + 4 * begin, static_cast<size_t>(4 * count));
    for (int64_t i = 0; i < count; ++i) data[begin + i] = block[static_cast<size_t>(i)];
    end = begin;
  }
}

const char* inject_name(Inject inject) {
  switch (inject) {
    case Inject::kDelay:
      return "delay";
    case Inject::kPace:
      return "pace";
    default:
      return "none";
  }
}

MpiOptions read_mpi_options(const Config& config) {
  MpiOptions o;
  const std::string inject = config.get_choice("engine.inject", "none", {"none", "delay", "pace"});
  o.inject = inject == "pace" ? Inject::kPace : inject == "delay" ? Inject::kDelay : Inject::kNone;
  const int64_t sleep = config.get_int("engine.poll_sleep_us", o.poll_sleep_us);
  if (sleep < 1 || sleep > 1000000) {
    config.fail_key("engine.poll_sleep_us", "an integer in [1, 1000000] (microseconds)");
  }
  o.poll_sleep_us = static_cast<int>(sleep);
  o.timeout_s = config.get_double("engine.timeout_s", o.timeout_s);
  if (!(o.timeout_s >= 0))
    config.fail_key("engine.timeout_s", "a number of seconds >= 0 (0 = none)");
  o.drain_timeout_s = config.get_double("engine.drain_timeout_s", o.drain_timeout_s);
  if (!(o.drain_timeout_s > 0))
    config.fail_key("engine.drain_timeout_s", "a number of seconds > 0");
  o.startup_timeout_s = config.get_double("engine.startup_timeout_s", o.startup_timeout_s);
  if (!(o.startup_timeout_s >= 0) || !std::isfinite(o.startup_timeout_s)) {
    config.fail_key("engine.startup_timeout_s", "a finite number of seconds >= 0 (0 = no bound)");
  }
  // Unset means adaptive; no fallback is recorded, so the resolved configuration (config.toml,
  // and what the worker ranks receive) leaves the key out and stays adaptive when run again.
  if (config.has("engine.worker_timeout_s")) {
    o.worker_timeout_s = config.get_double("engine.worker_timeout_s", 0);
    if (!(o.worker_timeout_s >= 0) || !std::isfinite(o.worker_timeout_s)) {
      config.fail_key("engine.worker_timeout_s",
                      "a finite number of seconds >= 0 (0 = never declare a worker lost; leave "
                      "the key out for the adaptive deadline)");
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Rank 0.

struct MpiCluster::Impl {
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
  // One model version as sent (mpi_cluster.h): the x of one job tag, in each precision a worker
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
    MPI_Request sends[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    // The stop message has its own buffer and request: a lost worker's job sends may never
    // complete, and their buffers must not change meanwhile.
    JobHeader stop_header;
    MPI_Request stop_send = MPI_REQUEST_NULL;
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
    // Checkpoints (mpi_cluster.h): the job assign() held during a drain (busy, tag and model are
    // set; it is sent once the checkpoint is written), and the worker's state (fetched for a
    // save; to be sent after a load).
    bool held = false;
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
      if (a.loading()) busy = held;
    }
  };

  Impl(const MpiOptions& o, int n, int64_t d)
      : options(o),
        workers(n),
        dim(d),
        slots(n),
        requests(2 * n, MPI_REQUEST_NULL),
        indices(2 * n),
        statuses(2 * n) {
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
    check(MPI_Irecv(slots[w].reply_buffer.data(), kReplyBufferBytes, MPI_BYTE, w + 1, kTagReply,
                    MPI_COMM_WORLD, &requests[w]),
          "MPI_Irecv", w + 1, kTagReply);
  }
  // Room for a payload of doubles; one of floats fills its first half (wire.h).
  void post_payload_receive(int w) {
    check(MPI_Irecv(slots[w].payload.data(), static_cast<int>(8 * dim), MPI_BYTE, w + 1,
                    kTagPayload, MPI_COMM_WORLD, &requests[workers + w]),
          "MPI_Irecv", w + 1, kTagPayload);
  }
  void post_receives() {
    for (int w = 0; w < workers; ++w) {
      post_header_receive(w);
      post_payload_receive(w);
    }
    receives_posted = true;
  }

  // Marks completed receives; returns how many completed.
  int poll() {
    ++polls;
    int count = 0;
    const int rc =
        MPI_Testsome(2 * workers, requests.data(), &count, indices.data(), statuses.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) check(rc, "MPI_Testsome", -1, kTagReply);
    if (count == MPI_UNDEFINED || count == 0) {
      ++empty_polls;
      return 0;
    }
    for (int k = 0; k < count; ++k) {
      const int i = indices[k];
      const int w = i % workers;
      const bool header = i < workers;
      if (rc == MPI_ERR_IN_STATUS) {
        check(statuses[k].MPI_ERROR, "receive", w + 1, header ? kTagReply : kTagPayload);
      }
      int bytes = 0;
      MPI_Get_count(&statuses[k], MPI_BYTE, &bytes);
      bytes_received += bytes;
      ++messages_received;
      (header ? slots[w].header_done : slots[w].payload_done) = true;
      if (!header) slots[w].payload_received = bytes;
    }
    return count;
  }

  // Handles worker w's completed message, if any. Replies go to `master` unless it is null or
  // finished (then they are counted as drained); `cluster` is what the master is given. Returns
  // false if nothing was ready.
  bool handle(int w, Master* master, Cluster* cluster) {
    Slot& s = slots[w];
    if (!s.header_done) return false;
    ReplyHeader h;
    std::memcpy(&h, s.reply_buffer.data(), sizeof h);
    const char* trailer = s.reply_buffer.data() + sizeof h;
    const size_t trailer_bytes =
        static_cast<size_t>(std::clamp<int64_t>(h.trailer_bytes, 0, kTrailerBytes));
    const bool deliver = master != nullptr && !master->finished();
    switch (h.kind) {
      case ReplyHeader::kReply:
        return handle_reply(w, h, trailer, trailer_bytes, deliver ? master : nullptr, cluster);
      case ReplyHeader::kError:
        handle_error(w, h, std::string(trailer, trailer_bytes), deliver ? master : nullptr,
                     cluster);
        return true;
      case ReplyHeader::kBye:
        s.header_done = false;
        s.said_bye = true;
        std::memcpy(&s.reported, trailer, std::min(sizeof s.reported, trailer_bytes));
        return true;
      case ReplyHeader::kState:
        // An answer to a save or load request that is no longer awaited (a checkpoint that
        // failed on another worker): its bytes are received and dropped.
        s.header_done = false;
        if (h.trailer_bytes == 0 && h.payload_size > 0) receive_state_bytes(w, h.payload_size);
        s.state.clear();
        post_header_receive(w);
        return true;
      default:
        fail("MPI: malformed reply (kind {}) from rank {}", h.kind, w + 1);
    }
  }

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
          "MPI: worker {} (rank {}) answered job {} with a payload of {} values of {} bytes ({} "
          "bytes received); the model has {}",
          w, w + 1, h.tag, h.payload_size, h.payload_bytes, s.payload_received, dim);
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
      log_debug("MPI: {}", s.error);
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
  double worker_deadline() const {
    if (options.worker_timeout_s > 0) return options.worker_timeout_s;
    if (options.worker_timeout_s == 0) return std::numeric_limits<double>::infinity();
    return std::max(kWorkerTimeoutFloorS, kWorkerTimeoutFactor * longest_round_trip);
  }
  const char* deadline_source() const {
    return options.worker_timeout_s > 0 ? "engine.worker_timeout_s"
                                        : "adaptive, as engine.worker_timeout_s is unset";
  }

  // Declares lost every busy worker whose job has been out past the deadline with no reply
  // header arrived (one whose header is in has answered; its payload is on the way).
  void declare_overdue_lost(Master& master, Cluster& cluster) {
    if (options.worker_timeout_s == 0) return;
    const double deadline = worker_deadline();
    for (int w = 0; w < workers && !master.finished(); ++w) {
      const Slot& s = slots[w];
      if (!s.busy || s.held || s.header_done) continue;
      const double elapsed = now() - s.assigned_at;
      if (elapsed > deadline) declare_lost(w, elapsed, deadline, master, cluster);
    }
  }

  void declare_lost(int w, double elapsed, double deadline, Master& master, Cluster& cluster) {
    Slot& s = slots[w];
    s.lost = true;
    s.busy = false;
    s.losses.push_back(Loss{.time = now(), .tag = s.tag, .elapsed = elapsed});
    set_rank_lost(w + 1, true);
    log_warning(
        "MPI engine: worker {} (rank {}) has not answered its job (tag {}) for {:.3g} s, past the "
        "worker deadline of {:.3g} s ({}): declared lost at t = {:.3f} s; the run goes on without "
        "it, and it comes back if it answers after all",
        w, w + 1, s.tag, elapsed, deadline, deadline_source(), now());
    call_master([&] { master.on_lost(w, cluster); });
  }

  // A late reply from lost worker w: the worker is idle and alive again, the reply dropped.
  void readmit(int w, int64_t tag, double round_trip, Master* master, Cluster* cluster) {
    Slot& s = slots[w];
    s.lost = false;
    s.busy = false;
    ++s.rejoins;
    if (!s.losses.empty()) s.losses.back().rejoined = now();
    set_rank_lost(w + 1, false);
    if (master == nullptr) {
      ++s.drained;
      return;
    }
    log_warning(
        "MPI engine: worker {} (rank {}) answered its job (tag {}) after {:.3g} s, after it had "
        "been declared lost: it is back (that reply is dropped)",
        w, w + 1, tag, round_trip);
    call_master([&] { master->on_rejoined(w, *cluster); });
  }

  // On an empty poll: fails when the run can make no progress. Stalled: no job out, no timer, no
  // lost worker that might still answer. Timed out: nothing arrived for timeout_s while jobs are
  // out or lost workers might answer.
  void check_progress(double last_activity) const {
    bool any_busy = false, any_lost = false;
    for (const Slot& s : slots) {
      any_busy = any_busy || s.busy;
      any_lost = any_lost || s.lost;
    }
    if (!any_busy && !any_lost && !timer_armed) {
      fail(
          "MPI engine: the method stalled at t = {:.3f} s: no job is running and the method "
          "has not finished",
          now());
    }
    if (options.timeout_s > 0 && (any_busy || any_lost) &&
        wall_seconds() - last_activity > options.timeout_s) {
      fail("MPI engine: no reply for {} s (engine.timeout_s); {}", options.timeout_s,
           describe_waiting());
    }
  }

  std::string describe_waiting() const {
    std::string busy, lost;
    for (int w = 0; w < workers; ++w) {
      const Slot& s = slots[w];
      if (s.busy) {
        busy += fmt::format("{}worker {} (rank {}, job tag {}{})", busy.empty() ? "" : ", ", w,
                            w + 1, s.tag, s.held ? ", held for a checkpoint" : "");
      } else if (s.lost) {
        lost += fmt::format("{}worker {} (rank {}, lost at t = {:.3f} s)", lost.empty() ? "" : ", ",
                            w, w + 1, s.losses.back().time);
      }
    }
    std::string out = busy.empty() ? "no job is out" : "still waiting for " + busy;
    if (!lost.empty()) out += "; lost, and may still answer: " + lost;
    return out;
  }

  // Completes the sends of worker w's previous messages.
  void wait_sends(int w, double timeout_s) {
    Slot& s = slots[w];
    for (MPI_Request& r : s.sends) {
      wait_request(r, "MPI_Isend of a job", w + 1, kTagJob, options.poll_sleep_us, timeout_s);
    }
    wait_request(s.stop_send, "MPI_Isend of a stop", w + 1, kTagJob, options.poll_sleep_us,
                 timeout_s);
  }

  // Shutdown, step 1: stop to worker w. A lost worker's sends are not waited for (it may be
  // dead), and its stop says that it is lost, so that one alive after all leaves at once; a lost
  // worker whose process rank 0 can see is gone gets nothing (runtime.h, rank_known_dead).
  void send_stop(int w, StopStatus status, double limit) {
    Slot& s = slots[w];
    s.stopped_lost = s.lost;
    if (s.lost && rank_known_dead(w + 1)) return;
    if (!s.lost) wait_sends(w, limit);
    s.stop_header = JobHeader{.kind = JobHeader::kStop,
                              .stop_status = static_cast<int64_t>(status),
                              .lost = s.lost ? 1 : 0};
    check(MPI_Isend(&s.stop_header, sizeof s.stop_header, MPI_BYTE, w + 1, kTagJob, MPI_COMM_WORLD,
                    &s.stop_send),
          "MPI_Isend", w + 1, kTagJob);
    ++messages_sent;
    bytes_sent += sizeof s.stop_header;
  }

  // Step 2: replies still in flight are counted, goodbyes collected (none from lost workers),
  // until `deadline` (wall seconds).
  void drain(double deadline) {
    double next_check = wall_seconds() + kLivenessCheckS;
    while (true) {
      bool done = true;
      for (const Slot& s : slots) done = done && (s.said_bye || s.stopped_lost);
      if (done) return;
      if (poll() == 0) {
        if (wall_seconds() > deadline) return;
        if (wall_seconds() >= next_check) {
          next_check = wall_seconds() + kLivenessCheckS;
          lose_dead_at_shutdown();
        }
        poll_sleep(options.poll_sleep_us);
        continue;
      }
      for (int w = 0; w < workers; ++w) {
        while (handle(w, nullptr, nullptr)) {
        }
      }
    }
  }

  // A worker that died with no job out (idle at the end of the run, or after its last reply) was
  // never overdue: if rank 0 can see that its process has ended, it is lost now, and its goodbye
  // is not waited for. (One on another host makes the stop time out.)
  void lose_dead_at_shutdown() {
    for (int w = 0; w < workers; ++w) {
      Slot& s = slots[w];
      if (s.said_bye || s.stopped_lost || !rank_known_dead(w + 1)) continue;
      s.lost = s.stopped_lost = true;
      s.losses.push_back(Loss{.time = now(), .tag = -1, .elapsed = 0});
      set_rank_lost(w + 1, true);
      log_warning(
          "MPI engine: the process of worker {} (rank {}) ended before it acknowledged the stop: "
          "declared lost",
          w, w + 1);
    }
  }

  // Step 3: releases what the stopped workers no longer use. Returns the ranks (not lost) that
  // said no goodbye, comma-separated.
  std::string finish_stop(double limit) {
    std::string missing;
    for (int w = 0; w < workers; ++w) {
      Slot& s = slots[w];
      if (s.stopped_lost) {
        // Back during the drain: its stop says lost, so it sends nothing more. Still lost: its
        // receives stay posted and its buffers kept (~MpiCluster).
        if (!s.lost) {
          cancel_receive(requests[w]);
          cancel_receive(requests[workers + w]);
        }
        continue;
      }
      if (!s.said_bye) {
        missing += fmt::format("{}{}", missing.empty() ? "" : ", ", w + 1);
        continue;
      }
      cancel_receive(requests[workers + w]);  // no message follows a goodbye
      wait_sends(w, limit);
    }
    return missing;
  }

  bool any_stopped_lost() const {
    for (const Slot& s : slots) {
      if (s.stopped_lost) return true;
    }
    return false;
  }

  // The snapshot for a job of model version `tag` (mpi_cluster.h): the current one if it has that
  // tag, else one that no slot holds any more (or a new one), emptied.
  std::shared_ptr<Snapshot> snapshot_for(int64_t tag) {
    if (current && current->tag == tag) return current;
    current.reset();
    release_sent_models();
    for (const std::shared_ptr<Snapshot>& s : snapshots) {
      if (s.use_count() == 1) current = s;  // only the pool holds it
    }
    if (!current) current = snapshots.emplace_back(std::make_shared<Snapshot>());
    current->tag = tag;
    current->has64 = current->has32 = false;
    return current;
  }

  // Lets go of the snapshots whose sends have completed (not those of held jobs).
  void release_sent_models() {
    for (Slot& s : slots) {
      if (s.model && !s.held && sends_complete(s)) s.model.reset();
    }
  }

  bool sends_complete(Slot& s) {
    for (MPI_Request& r : s.sends) {
      int done = 1;
      if (r != MPI_REQUEST_NULL)
        check(MPI_Test(&r, &done, MPI_STATUS_IGNORE), "MPI_Test", -1, kTagJob);
      if (!done) return false;
    }
    return true;
  }

  // Sends worker w's job (its tag and model are in the slot), in the precision it reads.
  void send_job(int w) {
    Slot& s = slots[w];
    wait_sends(w, options.timeout_s);  // a save request's header may still be out
    if (!s.model->has(s.reads))
      s.model->fill(s.reads, s.model->x64);  // a held job: from its doubles
    const int64_t value_bytes = s.reads == Precision::kFloat32 ? 4 : 8;
    s.job_header = JobHeader{
        .kind = JobHeader::kJob, .tag = s.tag, .model_size = dim, .model_bytes = value_bytes};
    check(MPI_Isend(&s.job_header, sizeof s.job_header, MPI_BYTE, w + 1, kTagJob, MPI_COMM_WORLD,
                    &s.sends[0]),
          "MPI_Isend", w + 1, kTagJob);
    check(MPI_Isend(s.model->data(s.reads), static_cast<int>(value_bytes * dim), MPI_BYTE, w + 1,
                    kTagModel, MPI_COMM_WORLD, &s.sends[1]),
          "MPI_Isend", w + 1, kTagModel);
    messages_sent += 2;
    bytes_sent += static_cast<double>(sizeof s.job_header + value_bytes * dim);
    if (value_bytes == 4) ++float32_jobs;
    s.assigned_at = now();
  }

  // ----- Checkpoints (mpi_cluster.h).

  // At a quiet point of run(): starts a drain when a checkpoint is due, and takes it once no
  // job is in flight.
  void quiet_point(Master& master, Cluster& cluster) {
    if (!drain_if_due()) return;
    for (const Slot& s : slots) {
      if (s.busy && !s.held) return;
    }
    take_checkpoint(master, cluster);
  }

  // Starts a drain if a checkpoint is due; returns whether one is under way. Also asked by
  // assign(), so that the jobs a master hands out right after the update that made a checkpoint
  // due are held at once: a synchronous method's checkpoint then waits for no job at all.
  bool drain_if_due() {
    if (hook == nullptr) return false;
    if (!draining && hook->due()) {
      draining = true;
      drain_began = wall_seconds();
    }
    return draining;
  }

  // Every worker idle: fetches their states, writes the checkpoint (unless a worker reported an
  // error meanwhile), then sends the held jobs and delivers the deferred errors.
  void take_checkpoint(Master& master, Cluster& cluster) {
    const double idle_at = wall_seconds();
    cut_time = now();
    if (fetch_worker_states()) {
      ++checkpoints;
      const double drain = idle_at - drain_began;
      drain_time += drain;
      max_drain_time = std::max(max_drain_time, drain);
      writing = true;
      try {
        hook->write();
      } catch (...) {
        writing = false;
        throw;
      }
      writing = false;
    }
    for (Slot& s : slots) std::string().swap(s.state);
    // The fetch and the write are no part of the run: they leave its clock, like evaluations.
    const double spent = wall_seconds() - idle_at;
    write_time += spent;
    start += spent;
    draining = false;
    release_held();
    deliver_deferred_errors(master, cluster);
  }

  // Asks every worker that is not lost for its state and receives the answers, in worker order.
  // Returns false when one reported an error meanwhile (kept in deferred_error).
  bool fetch_worker_states() {
    for (int w = 0; w < workers; ++w) {
      if (!slots[w].lost) send_request(w, JobHeader::kSave);
    }
    bool complete = true;
    for (int w = 0; w < workers; ++w) {
      if (slots[w].lost) continue;
      await_state(w, true);
      complete = complete && !slots[w].deferred_error;
    }
    return complete;
  }

  // Sends worker w a save request, or a load request with the state in its slot.
  void send_request(int w, JobHeader::Kind kind) {
    Slot& s = slots[w];
    PACER_CHECK((!s.busy || s.held) && !s.lost && !s.header_done);  // the worker is idle
    wait_sends(w, options.timeout_s);
    const bool load = kind == JobHeader::kLoad;
    if (load) check_state_size(s.state.size(), w);
    s.job_header =
        JobHeader{.kind = kind, .model_size = load ? static_cast<int64_t>(s.state.size()) : 0};
    check(MPI_Isend(&s.job_header, sizeof s.job_header, MPI_BYTE, w + 1, kTagJob, MPI_COMM_WORLD,
                    &s.sends[0]),
          "MPI_Isend", w + 1, kTagJob);
    ++messages_sent;
    bytes_sent += sizeof s.job_header;
    if (!load) return;
    check(MPI_Isend(s.state.data(), static_cast<int>(s.state.size()), MPI_BYTE, w + 1, kTagState,
                    MPI_COMM_WORLD, &s.sends[1]),
          "MPI_Isend", w + 1, kTagState);
    ++messages_sent;
    bytes_sent += static_cast<double>(s.state.size());
  }

  // Waits (at most timeout_s) for worker w's answer to a save (`saving`, which fills its state)
  // or a load request. An error report that comes first (a signal that reached that rank alone)
  // is kept in deferred_error. Throws Error when the worker could not save or load its state.
  void await_state(int w, bool saving) {
    Slot& s = slots[w];
    const char* what = saving ? "MPI_Irecv of a worker's state" : "MPI_Irecv of a load's answer";
    while (true) {
      wait_request(requests[w], what, w + 1, kTagReply, options.poll_sleep_us, options.timeout_s);
      ReplyHeader h;
      std::memcpy(&h, s.reply_buffer.data(), sizeof h);
      const size_t trailer_bytes =
          static_cast<size_t>(std::clamp<int64_t>(h.trailer_bytes, 0, kTrailerBytes));
      std::string trailer(s.reply_buffer.data() + sizeof h, trailer_bytes);
      ++messages_received;
      bytes_received += static_cast<double>(sizeof h + trailer_bytes);
      post_header_receive(w);
      if (h.kind == ReplyHeader::kError) {
        s.deferred_error.emplace(h, std::move(trailer));
        continue;
      }
      if (h.kind != ReplyHeader::kState) {
        fail("MPI: rank {} answered a {} request with a message of kind {}", w + 1,
             saving ? "save" : "load", h.kind);
      }
      if (!trailer.empty()) {
        fail("MPI engine: worker {} (rank {}) could not {} its state: {}", w, w + 1,
             saving ? "save" : "load", trailer);
      }
      if (saving) receive_state_bytes(w, h.payload_size);
      return;
    }
  }

  // Receives `bytes` of worker w's state (tag state) into its slot.
  void receive_state_bytes(int w, int64_t bytes) {
    if (bytes < 0) fail("MPI: rank {} announced a state of {} bytes", w + 1, bytes);
    check_state_size(static_cast<uint64_t>(bytes), w);
    Slot& s = slots[w];
    s.state.resize(static_cast<size_t>(bytes));
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Irecv(s.state.data(), static_cast<int>(bytes), MPI_BYTE, w + 1, kTagState,
                    MPI_COMM_WORLD, &request),
          "MPI_Irecv", w + 1, kTagState);
    wait_request(request, "MPI_Irecv of a worker's state", w + 1, kTagState, options.poll_sleep_us,
                 options.timeout_s);
    ++messages_received;
    bytes_received += static_cast<double>(bytes);
  }

  // Sends the jobs held during a drain, in worker order.
  void release_held() {
    for (int w = 0; w < workers; ++w) {
      if (!slots[w].held) continue;
      slots[w].held = false;
      send_job(w);
    }
  }

  // The error reports kept while the states were fetched, now that the held jobs are out: as if
  // they had arrived at this moment (a failed worker drops the job it was just sent).
  void deliver_deferred_errors(Master& master, Cluster& cluster) {
    for (int w = 0; w < workers; ++w) {
      std::optional<std::pair<ReplyHeader, std::string>>& d = slots[w].deferred_error;
      if (!d) continue;
      const std::pair<ReplyHeader, std::string> error = std::move(*d);
      d.reset();
      report_error(w, error.first, error.second, master.finished() ? nullptr : &master, &cluster);
    }
  }

  // The cluster's state and its workers' (mpi_cluster.h). Saving only inside hook->write().
  void checkpoint(StateArchive& a) {
    if (!a.loading() && !writing) {
      fail(
          "MPI engine: a run is checkpointed only at the engine's own drain, when every worker "
          "is idle (EngineRun::can_checkpoint_now is false now)");
    }
    PACER_CHECK(!a.loading() || !started);
    a.section("mpi_engine");
    a.expect(workers, "workers");
    a.expect(dim, "model parameters");
    a.io(cut_time);
    a.io(timer_armed);
    a.io(timer_at);
    a.io(longest_round_trip);
    a.io(messages_sent);
    a.io(messages_received);
    a.io(bytes_sent);
    a.io(bytes_received);
    a.io(polls);
    a.io(empty_polls);
    a.io(poll_time);
    a.io(empty_poll_time);
    a.io(assign_time);
    a.io(master_time);
    a.io(checkpoints);
    a.io(drain_time);
    a.io(max_drain_time);
    a.io(write_time);
    for (Slot& s : slots) s.checkpoint(a);
    if (!a.loading()) return;
    for (int w = 0; w < workers; ++w) check_loaded(a, w);
    resumed = true;
    resumed_at = cut_time;
    load_worker_states();
  }

  // Refuses a loaded worker slot that the saved run cannot have had.
  void check_loaded(const StateArchive& a, int w) const {
    const Slot& s = slots[w];
    if (s.held && (s.lost || s.model->x64.size() != dim)) {
      a.mismatch(fmt::format("worker {}'s held job", w));
    }
    // A worker not lost has a state (at least its section name); a lost one has none.
    if (s.lost != s.state.empty() || (s.lost && s.losses.empty())) {
      a.mismatch(fmt::format("worker {}'s state", w));
    }
  }

  // After a load: sends every worker that was not lost its state, and waits until each has
  // loaded it.
  void load_worker_states() {
    if (!receives_posted) post_receives();
    for (int w = 0; w < workers; ++w) {
      if (!slots[w].lost) send_request(w, JobHeader::kLoad);
    }
    for (int w = 0; w < workers; ++w) {
      if (!slots[w].lost) await_state(w, false);
    }
    for (int w = 0; w < workers; ++w) {
      Slot& s = slots[w];
      if (s.deferred_error) {
        fail("MPI engine: while the run was resumed, rank {} (worker {}): {}", w + 1, w,
             s.deferred_error->second);
      }
      if (!s.lost) wait_sends(w, options.timeout_s);  // the state's buffer is free after
      std::string().swap(s.state);
    }
  }

  // run() after a load: sends the held jobs, then re-admits the workers that were lost (they run
  // afresh on this job).
  void continue_saved_run(Master& master, Cluster& cluster) {
    release_held();
    for (int w = 0; w < workers; ++w) {
      Slot& s = slots[w];
      if (!s.lost) continue;
      s.lost = false;
      ++s.rejoins;
      s.losses.back().rejoined = now();
      log_warning(
          "MPI engine: worker {} (rank {}) was lost when the checkpoint was written; it is back "
          "on this job, with its worker half as the configuration builds it (its state at the "
          "loss was not saved)",
          w, w + 1);
      call_master([&] { master.on_rejoined(w, cluster); });
    }
  }

  void losses_to_json(nlohmann::json& out) const;

  MpiOptions options;
  int workers;
  int64_t dim;
  std::vector<Slot> slots;
  // Every model snapshot made (reused once no slot holds one), and the one of the latest tag.
  std::vector<std::shared_ptr<Snapshot>> snapshots;
  std::shared_ptr<Snapshot> current;
  std::vector<MPI_Request> requests;  // reply headers 0..n−1, payloads n..2n−1
  std::vector<int> indices;
  std::vector<MPI_Status> statuses;
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
  // Rank 0's own time: inside MPI_Testsome calls that received something (matching and copying
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

void MpiCluster::Impl::losses_to_json(nlohmann::json& out) const {
  std::vector<bool> lost;
  std::vector<int64_t> losses, rejoins;
  nlohmann::json last_loss = nlohmann::json::array(), list = nlohmann::json::array();
  for (int w = 0; w < workers; ++w) {
    const Slot& s = slots[w];
    lost.push_back(s.lost);
    losses.push_back(static_cast<int64_t>(s.losses.size()));
    rejoins.push_back(s.rejoins);
    last_loss.push_back(s.losses.empty() ? nlohmann::json() : nlohmann::json(s.losses.back().time));
    for (const Loss& loss : s.losses) {
      nlohmann::json entry{{"worker", w},
                           {"rank", w + 1},
                           {"time", loss.time},
                           {"tag", loss.tag},
                           {"elapsed", loss.elapsed}};
      if (loss.rejoined >= 0) entry["rejoined_time"] = loss.rejoined;
      list.push_back(entry);
    }
  }
  out["worker_timeout"] = options.worker_timeout_s > 0    ? "fixed"
                          : options.worker_timeout_s == 0 ? "off"
                                                          : "adaptive";
  out["worker_deadline_s"] = options.worker_timeout_s == 0 ? 0.0 : worker_deadline();
  out["launched_with_recovery"] = launched_with_recovery();
  out["lost_per_worker"] = lost;
  out["losses_per_worker"] = losses;
  out["rejoins_per_worker"] = rejoins;
  out["lost_time_per_worker"] = last_loss;
  out["losses"] = list;
}

MpiCluster::MpiCluster(const MpiOptions& options, int workers, int64_t dim)
    : impl_(std::make_unique<Impl>(options, workers, dim)) {
  PACER_CHECK(active() && rank() == 0 && workers > 0 && dim > 0);
  PACER_CHECK(dim <= kMaxDim);
  impl_->start = wall_seconds();
}

MpiCluster::~MpiCluster() {
  if (!impl_->shut_down) {
    try {
      shutdown(StopStatus::kError);
    } catch (const std::exception& e) {
      log_warning("{}", e.what());
    }
  }
  // A worker lost at shutdown may still be sent to and may still send: MPI may read the stop and
  // job buffers and write into the posted receives until the process ends, so they are kept.
  static std::vector<std::unique_ptr<Impl>> kept;
  if (impl_->any_stopped_lost()) kept.push_back(std::move(impl_));
}

int MpiCluster::num_workers() const { return impl_->workers; }
double MpiCluster::now() const { return impl_->now(); }

void MpiCluster::exclude_time(double seconds) {
  PACER_CHECK(seconds >= 0);
  impl_->start += seconds;
}
// Inside hook->write(), the run's clock at the cut (what the checkpoint records).
double MpiCluster::end_time() const { return impl_->writing ? impl_->cut_time : impl_->end_time; }
bool MpiCluster::busy(int worker) const { return impl_->slots[worker].busy; }
bool MpiCluster::alive(int worker) const { return !impl_->slots[worker].lost; }

void MpiCluster::set_timer(double time) {
  impl_->timer_at = time;
  impl_->timer_armed = true;
}

void MpiCluster::cancel(int /*worker*/) {
  PACER_CHECK(!"the MPI engine cannot cancel jobs (can_cancel() is false)");
}

void MpiCluster::assign(int worker, const Job& job, const Vec& x) {
  Impl& m = *impl_;
  PACER_CHECK(worker >= 0 && worker < m.workers);
  Impl::Slot& s = m.slots[worker];
  PACER_CHECK(m.started && !s.busy && !s.lost && !m.shut_down);
  PACER_CHECK(x.size() == m.dim);
  if (s.failed) {
    fail("MPI engine: worker {} (rank {}) failed earlier in this run ({}) and takes no more jobs",
         worker, worker + 1, s.error);
  }
  const double begin = wall_seconds();
  // The previous job's sends have long been matched (the worker has replied since).
  m.wait_sends(worker, m.options.timeout_s);
  s.busy = true;
  s.tag = job.tag;
  s.model = m.snapshot_for(job.tag);
  if (m.drain_if_due()) {
    s.model->fill(Precision::kFloat64, x);  // a held job is checkpointed in double
    s.held = true;                          // sent once the checkpoint is written (mpi_cluster.h)
  } else {
    s.model->fill(s.reads, x);
    m.send_job(worker);
  }
  m.assign_time += wall_seconds() - begin;
}

void MpiCluster::set_checkpoint_hook(CheckpointHook* hook) {
  PACER_CHECK(!impl_->started);
  impl_->hook = hook;
}
bool MpiCluster::can_checkpoint_now() const { return impl_->writing; }
void MpiCluster::checkpoint(StateArchive& a) { impl_->checkpoint(a); }

MpiCluster::Outcome MpiCluster::run(Master& master, double max_time) {
  // Every worker rank has set up its run by now (begin_run waited for their reports).
  log_debug("MPI: the run starts on {} workers", num_workers());
  static bool warned = false;
  if (!warned && impl_->options.worker_timeout_s != 0 && !launched_with_recovery()) {
    warned = true;
    log_warning(
        "MPI engine: this job was not launched with `mpirun --enable-recovery`, so if a worker "
        "process dies Open MPI ends the whole job, and the run with it; add --enable-recovery to "
        "mpirun's options to go on with the surviving workers (engine.worker_timeout_s = 0 "
        "silences this warning)");
  }
  try {
    return run_loop(master, max_time);
  } catch (const std::exception& e) {
    impl_->run_error = e.what();  // for shutdown, should it have to abort the job
    throw;
  }
}

MpiCluster::Outcome MpiCluster::run_loop(Master& master, double max_time) {
  Impl& m = *impl_;
  PACER_CHECK(!m.started && !m.shut_down);
  m.started = true;
  if (!m.receives_posted) m.post_receives();  // a loaded checkpoint posted them
  // A resumed run's clock continues from the saved time.
  m.start = wall_seconds() - (m.resumed ? m.cut_time : 0);
  if (m.resumed) {
    m.continue_saved_run(master, *this);
  } else {
    m.call_master([&] { master.start(*this); });
  }
  double last_activity = wall_seconds();
  Outcome outcome = Outcome::kFinished;
  while (!master.finished()) {
    if (interrupt_requested()) {
      outcome = Outcome::kInterrupted;
      break;
    }
    if (m.timer_armed && m.now() >= m.timer_at) {
      m.timer_armed = false;
      m.call_master([&] { master.on_timer(*this); });
      continue;
    }
    if (max_time > 0 && m.now() >= max_time) {
      outcome = Outcome::kMaxTime;
      break;
    }
    m.quiet_point(master, *this);
    if (master.finished()) break;  // a deferred error delivered after a checkpoint
    const double poll_begin = wall_seconds();
    const int arrived = m.poll();
    (arrived ? m.poll_time : m.empty_poll_time) += wall_seconds() - poll_begin;
    if (arrived > 0) {
      // Deliver in worker-index order; a worker whose header and payload both arrived is ready.
      for (int w = 0; w < m.workers && !master.finished(); ++w) m.handle(w, &master, this);
      last_activity = wall_seconds();  // after the master's code: its time is no silence
    }
    m.declare_overdue_lost(master, *this);
    if (arrived == 0 && !master.finished()) {
      m.check_progress(last_activity);
      poll_sleep(m.options.poll_sleep_us);
    }
  }
  m.end_time = m.now();
  return outcome;
}

void MpiCluster::shutdown(StopStatus status, double timeout_s) {
  Impl& m = *impl_;
  if (m.shut_down) return;
  m.shut_down = true;
  if (!m.receives_posted) m.post_receives();
  if (!m.started) m.end_time = m.now();
  const double limit = timeout_s > 0 ? timeout_s : m.options.drain_timeout_s;
  const double deadline = wall_seconds() + limit;
  std::string problem;
  try {
    for (int w = 0; w < m.workers; ++w) m.send_stop(w, status, limit);
    m.drain(deadline);
    const std::string missing = m.finish_stop(limit);
    m.have_reports = missing.empty();
    if (!missing.empty()) {
      problem = fmt::format(
          "MPI engine: ranks {} did not acknowledge the stop within {} s (engine.drain_timeout_s)",
          missing, limit);
    }
  } catch (const Error& e) {
    problem = e.what();
  }
  if (!problem.empty()) {
    // Ranks that cannot be stopped cleanly would hang MPI_Finalize: end the whole job.
    if (m.run_error.empty()) {
      std::fprintf(stderr, "pacer: error: %s; aborting the job\n", problem.c_str());
    } else {
      std::fprintf(stderr, "pacer: error: %s; then, stopping the workers: %s; aborting the job\n",
                   m.run_error.c_str(), problem.c_str());
    }
    abort_job(1);
  }
}

void MpiCluster::to_json(nlohmann::json& out) const {
  const Impl& m = *impl_;
  out["engine"] = "mpi";
  out["ranks"] = m.workers + 1;
  out["inject"] = inject_name(m.options.inject);
  out["poll_sleep_us"] = m.options.poll_sleep_us;
  out["timeout_s"] = m.options.timeout_s;
  out["end_time"] = m.end_time;
  std::vector<int64_t> jobs, drained;
  std::vector<double> busy, idle, utilisation, compute, injected, round_trip, comm, median_job;
  for (const Impl::Slot& s : m.slots) {
    jobs.push_back(s.replies);
    drained.push_back(s.drained);
    busy.push_back(s.busy_time);
    idle.push_back(std::max(0.0, m.end_time - s.busy_time));
    utilisation.push_back(m.end_time > 0 ? s.busy_time / m.end_time : 0.0);
    compute.push_back(s.compute_time);
    injected.push_back(s.injected_time);
    const double r = s.replies ? static_cast<double>(s.replies) : 1.0;
    round_trip.push_back(s.round_trip / r);
    comm.push_back((s.round_trip - s.busy_time) / r);
    median_job.push_back(median(s.job_times));
  }
  out["jobs_completed_per_worker"] = jobs;
  out["busy_time_per_worker"] = busy;
  out["idle_time_per_worker"] = idle;
  out["utilisation_per_worker"] = utilisation;
  out["compute_time_per_worker"] = compute;
  out["injected_time_per_worker"] = injected;
  out["median_job_time_per_worker"] = median_job;
  out["mean_round_trip_per_worker"] = round_trip;
  out["mean_message_overhead_per_worker"] = comm;
  out["late_replies_drained_per_worker"] = drained;
  int64_t drained_total = 0;
  for (int64_t d : drained) drained_total += d;
  out["late_replies_drained"] = drained_total;
  out["messages_sent"] = m.messages_sent;
  out["messages_received"] = m.messages_received;
  out["float32_jobs"] = m.float32_jobs;
  out["float32_replies"] = m.float32_replies;
  out["bytes_sent"] = m.bytes_sent;
  out["bytes_received"] = m.bytes_received;
  out["polls"] = m.polls;
  out["empty_polls"] = m.empty_polls;
  out["master_receive_time"] = m.poll_time;
  out["master_empty_poll_time"] = m.empty_poll_time;
  out["master_assign_time"] = m.assign_time;
  out["master_method_time"] = m.master_time - m.assign_time;
  out["checkpoints"] = m.checkpoints;
  out["checkpoint_drain_time"] = m.drain_time;
  out["checkpoint_max_drain_time"] = m.max_drain_time;
  out["checkpoint_write_time"] = m.write_time;
  out["resumed_at"] = m.resumed_at >= 0 ? nlohmann::json(m.resumed_at) : nlohmann::json();
  m.losses_to_json(out);
  if (m.have_reports) {
    // A worker lost at shutdown said no goodbye: null.
    auto reported_json = [&](auto field) {
      nlohmann::json values = nlohmann::json::array();
      for (const Impl::Slot& s : m.slots) {
        values.push_back(s.said_bye ? nlohmann::json(field(s.reported)) : nlohmann::json());
      }
      return values;
    };
    nlohmann::json reported;
    reported["jobs"] = reported_json([](const WorkerStats& r) { return r.jobs; });
    reported["lifetime"] = reported_json([](const WorkerStats& r) { return r.lifetime; });
    reported["wait_time"] =
        reported_json([](const WorkerStats& r) { return std::max(0.0, r.lifetime - r.busy_time); });
    reported["pace_overruns"] = reported_json([](const WorkerStats& r) { return r.overruns; });
    reported["max_pace_overrun"] =
        reported_json([](const WorkerStats& r) { return r.max_overrun; });
    reported["dropped_jobs"] = reported_json([](const WorkerStats& r) { return r.dropped_jobs; });
    out["worker_reported"] = reported;
  }
}

// ---------------------------------------------------------------------------------------------
// Worker ranks.

namespace {

// A worker declared lost leaves without waiting for its last reply's sends: rank 0 may never
// receive them (it may have ended). Until the process ends MPI may still read their buffers, so
// those of sends not yet complete are kept.
void keep_unfinished_sends(MPI_Request (&sends)[2], std::vector<char> reply, Vec payload,
                           std::vector<float> narrowed) {
  static std::vector<std::vector<char>> kept_replies;
  static std::vector<Vec> kept_payloads;
  static std::vector<std::vector<float>> kept_narrowed;
  for (int i = 0; i < 2; ++i) {
    int done = 1;
    if (sends[i] != MPI_REQUEST_NULL) MPI_Test(&sends[i], &done, MPI_STATUS_IGNORE);
    if (done) continue;
    if (i == 0) kept_replies.push_back(std::move(reply));
    if (i == 1) {
      kept_payloads.push_back(std::move(payload));
      kept_narrowed.push_back(std::move(narrowed));
    }
  }
}

// A worker rank's side of one run (serve_jobs): one receive posted for the next job header and
// one for its model; replies, error reports, state answers and the goodbye go out as a header
// (+ trailer) in `reply_` and, for a reply or a saved state, a second message.
class WorkerLoop {
 public:
  WorkerLoop(Worker& worker, TimingModel& timing, int index, uint64_t seed,
             const MpiOptions& options, int64_t dim)
      : worker_(worker),
        timing_(timing),
        index_(index),
        options_(options),
        dim_(dim),
        // Waiting for a job includes waiting for the other workers; rank 0 detects a silent
        // worker after timeout_s and then waits up to drain_timeout_s for the goodbyes, so it
        // reports first.
        job_timeout_(options.timeout_s > 0 ? 2 * options.timeout_s + options.drain_timeout_s : 0),
        rng_(seed, "duration", static_cast<uint64_t>(index)),
        x_(Vec::Zero(dim)),
        reads_float32_(worker.model_precision() == Precision::kFloat32),
        reply_(kReplyBufferBytes),
        born_(wall_seconds()) {}

  StopStatus serve() {
    post_job_header();
    post_model();
    while (true) {
      wait_job();
      switch (job_header_.kind) {
        case JobHeader::kStop:
          return stop();
        case JobHeader::kSave:
          save_state();
          break;
        case JobHeader::kLoad:
          load_state();
          break;
        case JobHeader::kJob:
          run_job();
          break;
        default:
          fail("MPI: rank {}: a job header of kind {} from rank 0", rank(), job_header_.kind);
      }
    }
  }

 private:
  // The wall times of one job: received, computed, done (after the injected time).
  struct JobTimes {
    double start = 0, computed = 0, done = 0;
    double units = 0;
  };

  void post_job_header() {
    check(MPI_Irecv(&job_header_, sizeof job_header_, MPI_BYTE, 0, kTagJob, MPI_COMM_WORLD,
                    &job_request_),
          "MPI_Irecv", 0, kTagJob);
  }
  // Room for a model of doubles; one of floats fills its first half (wire.h).
  void post_model() {
    check(MPI_Irecv(x_.data(), static_cast<int>(8 * dim_), MPI_BYTE, 0, kTagModel, MPI_COMM_WORLD,
                    &model_request_),
          "MPI_Irecv", 0, kTagModel);
  }
  void wait_replies_sent() {
    for (MPI_Request& r : sends_) {
      wait_request(r, "MPI_Isend of a reply", 0, kTagReply, options_.poll_sleep_us,
                   options_.timeout_s);
    }
  }
  // Sends a header + trailer (the previous sends must be complete).
  void send(const ReplyHeader& h, const void* trailer) {
    std::memcpy(reply_.data(), &h, sizeof h);
    if (h.trailer_bytes > 0) {
      std::memcpy(reply_.data() + sizeof h, trailer, static_cast<size_t>(h.trailer_bytes));
    }
    check(MPI_Isend(reply_.data(), static_cast<int>(sizeof h + h.trailer_bytes), MPI_BYTE, 0,
                    kTagReply, MPI_COMM_WORLD, &sends_[0]),
          "MPI_Isend", 0, kTagReply);
  }
  // Sends `count` elements of `type` at `data` after a header (second message, tag `tag`).
  void send_data(const void* data, int count, MPI_Datatype type, int tag) {
    check(MPI_Isend(data, count, type, 0, tag, MPI_COMM_WORLD, &sends_[1]), "MPI_Isend", 0, tag);
  }
  // Sends an error report (kError) or a failed state answer (kState) with `text`.
  void send_text(ReplyHeader::Kind kind, int64_t tag, std::string text) {
    if (text.size() > static_cast<size_t>(kTrailerBytes)) text.resize(kTrailerBytes);
    ReplyHeader h{.kind = kind, .tag = tag, .trailer_bytes = static_cast<int64_t>(text.size())};
    send(h, text.data());
  }

  // A SIGINT or SIGTERM that reaches this rank alone is reported to rank 0 as this worker's
  // error (rank 0 then ends the run naming this rank; under Ctrl-C rank 0 has it too and ends
  // the run as interrupted); this worker then drops its jobs until stop, like after any error.
  void report_interrupt() {
    wait_replies_sent();
    send_text(
        ReplyHeader::kError, -1,
        fmt::format("received {}: the worker stopped, so the run ends", interrupt_signal_name()));
    failed_ = true;
  }

  // Waits for the next job header (polling, as wait_request), watching for an interrupt and for
  // the end of rank 0's process.
  void wait_job() {
    const double start = wall_seconds();
    double next_check = start + kLivenessCheckS;
    while (true) {
      if (!failed_ && interrupt_requested()) report_interrupt();
      if (wait_polling(job_request_, "MPI_Irecv of a job", 0, kTagJob, options_.poll_sleep_us,
                       0.05)) {
        return;
      }
      if (wall_seconds() >= next_check) {
        next_check = wall_seconds() + kLivenessCheckS;
        if (rank_known_dead(0)) fail_peer_gone("MPI_Irecv of a job", 0, kTagJob);
      }
      if (job_timeout_ > 0 && wall_seconds() - start > job_timeout_) {
        fail(
            "MPI: rank {}: MPI_Irecv of a job from rank 0 ({} message, tag {}) did not complete "
            "within {} s (2 x engine.timeout_s + engine.drain_timeout_s)",
            rank(), tag_name(kTagJob), kTagJob, job_timeout_);
      }
    }
  }

  // Stop: says goodbye with the statistics, unless rank 0 declared this worker lost.
  StopStatus stop() {
    const auto status = static_cast<StopStatus>(job_header_.stop_status);
    // Rank 0 sends no model after a stop.
    MPI_Cancel(&model_request_);
    MPI_Wait(&model_request_, MPI_STATUS_IGNORE);
    if (job_header_.lost) {
      keep_unfinished_sends(sends_, std::move(reply_), std::move(out_.payload),
                            std::move(narrowed_));
      return status;
    }
    wait_replies_sent();
    stats_.lifetime = wall_seconds() - born_;
    ReplyHeader bye{.kind = ReplyHeader::kBye, .trailer_bytes = sizeof stats_};
    send(bye, &stats_);
    wait_replies_sent();
    return status;
  }

  // A job: computes it (unless this worker failed earlier) and replies.
  void run_job() {
    wait_request(model_request_, "MPI_Irecv of a model", 0, kTagModel, options_.poll_sleep_us,
                 options_.timeout_s);
    if (failed_) {
      stats_.dropped_jobs += 1;
      post_job_header();
      post_model();
      return;
    }
    JobTimes t{.start = wall_seconds()};
    wait_replies_sent();  // out_.payload is about to be overwritten
    const Job job{.tag = job_header_.tag};
    std::string error = compute(job, t);
    // x_ and the header are free again: the next job may arrive while the reply travels.
    post_job_header();
    post_model();
    if (!error.empty()) {
      failed_ = true;
      send_text(ReplyHeader::kError, job.tag, fmt::format("job {}: {}", job.tag, error));
      return;
    }
    const bool as_float = narrow_payload();
    const int64_t value_bytes = as_float ? 4 : 8;
    ReplyHeader h{.kind = ReplyHeader::kReply,
                  .tag = job.tag,
                  .payload_size = dim_,
                  .trailer_bytes = static_cast<int64_t>(out_.versions.size() * 8),
                  .payload_bytes = value_bytes,
                  .model_bytes = reads_float32_ ? 4 : 8,
                  .loss = out_.loss,
                  .units = t.units,
                  .job_time = t.done - t.start,
                  .compute_time = t.computed - t.start,
                  .injected_time = t.done - t.computed};
    send(h, out_.versions.data());
    send_data(as_float ? static_cast<const void*>(narrowed_.data()) : out_.payload.data(),
              static_cast<int>(value_bytes * dim_), MPI_BYTE, kTagPayload);
    stats_.jobs += 1;
    stats_.compute_time += t.computed - t.start;
    stats_.injected_time += t.done - t.computed;
    stats_.busy_time += wall_seconds() - t.start;
  }

  // Whether the payload goes in float32: when this worker reads its model in float32 and every
  // value is exactly a float (then in narrowed_; wire.h). A float32 model's own gradients are;
  // sums and coded combinations of them mostly are not, and go in double.
  bool narrow_payload() {
    if (!reads_float32_) return false;
    narrowed_.resize(static_cast<size_t>(dim_));
    return narrow_exact(out_.payload.data(), dim_, narrowed_.data());
  }

  // Computes `job` into out_ and imposes the modelled time (engine.inject); returns the error of
  // the worker half, empty if none.
  std::string compute(const Job& job, JobTimes& t) {
    t.computed = t.done = t.start;
    try {
      if (job_header_.model_size != dim_ ||
          (job_header_.model_bytes != 4 && job_header_.model_bytes != 8)) {
        fail("a job for a model of {} values of {} bytes; this worker's model has {}",
             job_header_.model_size, job_header_.model_bytes, dim_);
      }
      if (job_header_.model_bytes == 4) widen_in_place(x_.data(), dim_);
      t.units = worker_.units(job);
      const Duration modelled = timing_.compute_time(index_, t.units, job.tag, rng_);
      worker_.compute(job, x_, out_);
      t.computed = wall_seconds();
      if (options_.inject == Inject::kDelay) {
        sleep_until(t.computed + modelled.extra);
      } else if (options_.inject == Inject::kPace) {
        const double target = modelled.total();
        if (t.computed - t.start > target) {
          stats_.overruns += 1;
          stats_.max_overrun = std::max(stats_.max_overrun, t.computed - t.start - target);
        } else {
          sleep_until(t.start + target);
        }
      }
      t.done = wall_seconds();
      if (out_.payload.size() != dim_) {
        fail("the worker half produced a payload of {} values for a model of {}",
             out_.payload.size(), dim_);
      }
      if (static_cast<int64_t>(out_.versions.size()) * 8 > kTrailerBytes) {
        fail("the reply lists {} versions; the MPI engine carries at most {}", out_.versions.size(),
             kTrailerBytes / 8);
      }
    } catch (const std::exception& e) {
      return e.what()[0] ? e.what() : "unknown error";
    }
    return {};
  }

  // What a checkpoint records of this rank (mpi_cluster.h): the duration stream, the timing
  // model's own state (a trace's replay position: this rank's copy is the one that advances), the
  // statistics and the worker half's own state.
  void checkpoint(StateArchive& a) {
    a.section("mpi_worker");
    a.expect(index_, "worker index");
    rng_.checkpoint(a);
    timing_.checkpoint(a);
    a.io(stats_.jobs);
    a.io(stats_.compute_time);
    a.io(stats_.injected_time);
    a.io(stats_.busy_time);
    a.io(stats_.overruns);
    a.io(stats_.max_overrun);
    a.io(stats_.dropped_jobs);
    double lifetime = wall_seconds() - born_;
    a.io(lifetime);
    if (a.loading()) born_ = wall_seconds() - lifetime;
    worker_.checkpoint(a);
  }

  // A save request: answers with the state's size, then sends its bytes (or says why it could
  // not save it), and waits until both have gone, so that the state's buffer is free again.
  void save_state() {
    post_job_header();  // the model's receive stays posted: no model follows a request
    wait_replies_sent();
    std::string error;
    try {
      StateArchive a = StateArchive::for_saving();
      checkpoint(a);
      check_state_size(a.bytes().size(), index_);
      state_ = a.bytes();
    } catch (const std::exception& e) {
      error = e.what()[0] ? e.what() : "unknown error";
    }
    if (!error.empty()) {
      send_text(ReplyHeader::kState, -1, error);
    } else {
      ReplyHeader h{.kind = ReplyHeader::kState,
                    .tag = -1,
                    .payload_size = static_cast<int64_t>(state_.size())};
      send(h, nullptr);
      send_data(state_.data(), static_cast<int>(state_.size()), MPI_BYTE, kTagState);
    }
    wait_replies_sent();
    std::string().swap(state_);
  }

  // A load request: receives the state, loads it, and answers (saying why, if it does not fit).
  void load_state() {
    const int64_t bytes = job_header_.model_size;
    post_job_header();
    if (bytes < 0 || bytes > INT_MAX) fail("MPI: rank {}: a state of {} bytes", rank(), bytes);
    state_.resize(static_cast<size_t>(bytes));
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Irecv(state_.data(), static_cast<int>(bytes), MPI_BYTE, 0, kTagState, MPI_COMM_WORLD,
                    &request),
          "MPI_Irecv", 0, kTagState);
    wait_request(request, "MPI_Irecv of a state", 0, kTagState, options_.poll_sleep_us,
                 options_.timeout_s);
    std::string error;
    try {
      StateArchive a = StateArchive::for_loading(
          std::move(state_), fmt::format("the checkpoint's state of worker {}", index_));
      checkpoint(a);
      a.expect_end();
    } catch (const std::exception& e) {
      error = e.what()[0] ? e.what() : "unknown error";
    }
    std::string().swap(state_);
    wait_replies_sent();
    if (error.empty()) {
      send(ReplyHeader{.kind = ReplyHeader::kState, .tag = -1}, nullptr);
    } else {
      send_text(ReplyHeader::kState, -1, error);
    }
  }

  Worker& worker_;
  TimingModel& timing_;  // a trace model's replay position is checkpointed
  const int index_;
  const MpiOptions& options_;
  const int64_t dim_;
  const double job_timeout_;
  Rng rng_;  // the modelled durations, Rng(seed, "duration", index)
  JobHeader job_header_;
  Vec x_;                     // receives doubles, or floats widened in place (wire.h)
  const bool reads_float32_;  // Worker::model_precision(): rank 0 may send x in float32
  WorkerOutput out_;
  std::vector<float> narrowed_;  // the payload in float32, when it fits exactly
  std::vector<char> reply_;
  std::string state_;  // a state being sent or received
  MPI_Request job_request_ = MPI_REQUEST_NULL, model_request_ = MPI_REQUEST_NULL;
  MPI_Request sends_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  WorkerStats stats_;
  double born_;
  bool failed_ = false;  // reported an error: drops its jobs until stop
};

}  // namespace

StopStatus serve_jobs(Worker& worker, TimingModel& timing, int index, uint64_t seed,
                      const MpiOptions& options, int64_t dim) {
  PACER_CHECK(active() && rank() == index + 1 && dim > 0 && dim <= kMaxDim);
  return WorkerLoop(worker, timing, index, seed, options, dim).serve();
}

}  // namespace pacer::mpi
