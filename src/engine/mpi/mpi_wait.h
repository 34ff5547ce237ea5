// Waiting on MPI requests with timeouts and liveness checks, shared by rank 0 (master.h) and
// the worker ranks (worker_loop.cc). Private to src/engine/mpi.
#ifndef PACER_SRC_ENGINE_MPI_MPI_WAIT_H_
#define PACER_SRC_ENGINE_MPI_MPI_WAIT_H_

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <thread>

#include "pacer/core/error.h"
#include "pacer/engine/mpi/mpi_cluster.h"
#include "pacer/engine/mpi/runtime.h"
#include "wire.h"

namespace pacer::mpi {

// Room for the versions (8 bytes each), an error text or a WorkerStats after a ReplyHeader.
inline constexpr int64_t kTrailerBytes = 64 * 1024;
inline constexpr int kReplyBufferBytes = static_cast<int>(sizeof(ReplyHeader) + kTrailerBytes);
static_assert(sizeof(WorkerStats) <= static_cast<size_t>(kTrailerBytes));

// Throws the Error for a wait on `peer` that cannot complete because its process has ended.
[[noreturn]] inline void fail_peer_gone(const char* what, int peer, int tag) {
  fail(
      "MPI: rank {}: {} from/to rank {} ({} message, tag {}) cannot complete: the process of "
      "rank {} has ended",
      rank(), what, peer, tag_name(tag), tag, peer);
}

// Polls `request` until it completes, sleeping `sleep_us` between polls. Throws an Error naming
// `what`, the peer and the tag if MPI fails, when the peer's process is seen to have ended
// (runtime.h, rank_known_dead) or (timeout_s > 0) when it has not completed after timeout_s
// seconds.
inline void wait_request(MPI_Request& request, const char* what, int peer, int tag, int sleep_us,
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

inline void sleep_until(double deadline) {
  const double left = deadline - wall_seconds();
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
}

// Throws unless `bytes` of state fit one MPI message (an int count).
inline void check_state_size(uint64_t bytes, int worker) {
  if (bytes > static_cast<uint64_t>(INT_MAX)) {
    fail(
        "MPI engine: worker {}'s state for a checkpoint is {} bytes; one MPI message carries at "
        "most {}",
        worker, bytes, INT_MAX);
  }
}

// Cancels a posted receive that no message will match any more.
inline void cancel_receive(MPI_Request& request) {
  if (request == MPI_REQUEST_NULL) return;
  MPI_Cancel(&request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

}  // namespace pacer::mpi

#endif  // PACER_SRC_ENGINE_MPI_MPI_WAIT_H_
