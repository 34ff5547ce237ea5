// The transport under the cluster protocol (remote_cluster.h): point-to-point byte messages
// between the endpoints of one job, endpoint 0 running the master and endpoints 1..n the workers.
//
// The protocol needs only what MPI's non-blocking point-to-point calls give, so the interface is
// that subset, with MPI's matching rules, which every implementation must keep:
//   * a message is addressed by (destination, tag) and matched by a receive posted for its source
//     (or kAnySource) and its tag;
//   * two messages from one source to one destination with one tag are received in the order they
//     were sent (non-overtaking); messages with different tags or sources are not ordered;
//   * posted receives match in the order they were posted.
// Implementations: MPI (engine/mpi, one process per endpoint) and in-process
// (in_process_transport.h, one thread per endpoint: the `local` engine and the protocol's tests).
//
// Errors. A call that fails throws Error naming the call, this endpoint, the peer and the tag. A
// receive whose message is longer than the receive's capacity fails (in test()).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pacer::cluster {

// One send in progress or one posted receive; empty once it has completed (or was cancelled). A
// request must not be copied or destroyed while it is pending.
struct Request {
  std::uintptr_t handle = 0;  // the implementation's; 0 = empty
  bool pending() const { return handle != 0; }
};

// What a completed receive got.
struct Received {
  int source = -1;
  int64_t bytes = 0;
};

inline constexpr int kAnySource = -1;

// Seconds on a monotonic clock (steady_clock): the protocol's clock, timeouts and statistics.
double wall_seconds();
// Sleeps `microseconds` (> 0).
void poll_sleep(int microseconds);
// How often an endpoint waiting for a peer checks whether the peer still runs
// (Transport::peer_known_dead).
inline constexpr double kLivenessCheckS = 0.5;

class Transport {
 public:
  virtual ~Transport() = default;

  // This endpoint's index (0 = the master's), and how many endpoints the job has.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // For messages: "MPI", "in-process".
  virtual const char* name() const = 0;

  // Starts sending `bytes` from `data` to `peer` with `tag` into the empty `request`. The bytes
  // must not change until the request has completed (test() returned true).
  virtual void isend(const void* data, int64_t bytes, int peer, int tag, Request& request) = 0;
  // Posts a receive of at most `capacity` bytes into `data` from `peer` (or kAnySource) with
  // `tag`, into the empty `request`. `data` must stay valid until the request has completed or
  // was cancelled.
  virtual void irecv(void* data, int64_t capacity, int peer, int tag, Request& request) = 0;
  // Whether `request` has completed (an empty one has). A completed request is empty afterwards;
  // for a receive, *received (if not null) says from whom and how many bytes. `what` names the
  // operation in an error.
  virtual bool test(Request& request, const char* what, Received* received = nullptr) = 0;
  // Tests every request; appends the index of each that completed (now empty) to `completed` and
  // what it received to `received`, both cleared first. Returns how many completed.
  virtual int test_some(std::span<Request> requests, std::vector<int>& completed,
                        std::vector<Received>& received) = 0;
  // Cancels a posted receive that no message will match any more (a message that matched it
  // meanwhile is dropped). The request is empty afterwards.
  virtual void cancel(Request& request) = 0;

  // Waits until a message may have arrived for this endpoint, for at most `microseconds`: the
  // back-off between two empty polls. MPI sleeps; in-process wakes up at the next delivery.
  virtual void idle(int microseconds) = 0;

  // True when the endpoint `peer` certainly no longer runs (its process is gone); false when it
  // runs or that cannot be told. Nothing is sent to such a peer, and waits for it are cut short.
  virtual bool peer_known_dead(int peer) const = 0;
  // Endpoint 0: records that worker endpoint `peer` was declared lost (`lost`) or came back.
  virtual void set_peer_lost(int peer, bool lost) = 0;
  // Whether every send has completed when isend returns (in-process: the bytes are copied at
  // once). Then no buffer of a stopped cluster is read after it is gone, and its posted receives
  // can be cancelled; otherwise (MPI) the buffers of a run with a lost worker are kept until the
  // process ends.
  virtual bool sends_complete_at_once() const { return false; }
  // Whether the job survives a dead worker endpoint (MPI: launched with --enable-recovery, or each
  // rank under `pacer mpi-rank`: runtime.h, survives_dead_worker).
  virtual bool survives_dead_worker() const = 0;
  // When !survives_dead_worker(): one sentence for the user naming the launcher that started the
  // job and how to launch it so that it does survive a dead worker.
  virtual std::string dead_worker_warning() const { return {}; }
  // Ends every endpoint of the job at once, with exit status `code`: for failures after which
  // the endpoints can no longer agree on a clean end.
  [[noreturn]] virtual void abort_job(int code) = 0;
};

}  // namespace pacer::cluster
