// Waiting on transport requests with timeouts and liveness checks, shared by endpoint 0
// (master.h) and the worker endpoints (worker_loop.cc). Private to src/engine/cluster.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <thread>

#include "pacer/core/error.h"
#include "pacer/core/interrupt.h"
#include "pacer/engine/cluster/remote_cluster.h"
#include "pacer/engine/cluster/transport.h"
#include "wire.h"

namespace pacer::cluster {

// Room for the versions (8 bytes each), an error text or a WorkerStats after a ReplyHeader.
inline constexpr int64_t kTrailerBytes = 64 * 1024;
inline constexpr int kReplyBufferBytes = static_cast<int>(sizeof(ReplyHeader) + kTrailerBytes);
static_assert(sizeof(WorkerStats) <= static_cast<size_t>(kTrailerBytes));

// True once SIGINT or SIGTERM has reached this process (core/interrupt.h).
inline bool interrupt_requested() { return interrupt_signal() != 0; }

// Polls `request` until it completes, idling up to `sleep_us` between polls. timeout_s <= 0: no
// limit; on timeout returns false (the request is still pending).
inline bool wait_polling(Transport& transport, Request& request, const char* what, int sleep_us,
                         double timeout_s) {
  const double start = wall_seconds();
  while (true) {
    if (transport.test(request, what)) return true;
    if (timeout_s > 0 && wall_seconds() - start > timeout_s) return false;
    transport.idle(sleep_us);
  }
}

// Throws the Error for a wait on `peer` that cannot complete because its process has ended.
[[noreturn]] inline void fail_peer_gone(const Transport& transport, const char* what, int peer,
                                        int tag) {
  fail(
      "{}: rank {}: {} from/to rank {} ({} message, tag {}) cannot complete: the process of "
      "rank {} has ended",
      transport.name(), transport.rank(), what, peer, tag_name(tag), tag, peer);
}

// Polls `request` until it completes, idling up to `sleep_us` between polls. Throws an Error
// naming `what`, the peer and the tag if the transport fails, when the peer's process is seen to
// have ended (Transport::peer_known_dead) or (timeout_s > 0) when it has not completed after
// timeout_s seconds.
inline void wait_request(Transport& transport, Request& request, const char* what, int peer,
                         int tag, int sleep_us, double timeout_s) {
  const double deadline = timeout_s > 0 ? wall_seconds() + timeout_s : 0;
  while (true) {
    const double slice =
        timeout_s > 0 ? std::min(kLivenessCheckS, deadline - wall_seconds()) : kLivenessCheckS;
    if (wait_polling(transport, request, what, sleep_us, std::max(1e-6, slice))) return;
    if (transport.peer_known_dead(peer)) fail_peer_gone(transport, what, peer, tag);
    if (timeout_s > 0 && wall_seconds() >= deadline) break;
  }
  fail(
      "{}: rank {}: {} from/to rank {} ({} message, tag {}) did not complete within {} s "
      "(engine.timeout_s)",
      transport.name(), transport.rank(), what, peer, tag_name(tag), tag, timeout_s);
}

inline void sleep_until(double deadline) {
  const double left = deadline - wall_seconds();
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
}

// Throws unless `bytes` of state fit one message (MPI counts in an int).
inline void check_state_size(uint64_t bytes, int worker) {
  if (bytes > static_cast<uint64_t>(INT_MAX)) {
    fail(
        "cluster engine: worker {}'s state for a checkpoint is {} bytes; one message carries at "
        "most {}",
        worker, bytes, INT_MAX);
  }
}

}  // namespace pacer::cluster
