// Internal to the MPI engine: the session's command header and MPI error checking. The message
// tags are the cluster protocol's (engine/cluster/message_tags.h), so that no two messages share
// one.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <type_traits>

#include "pacer/core/error.h"
#include "pacer/engine/cluster/message_tags.h"

namespace pacer::mpi {

using cluster::kTagCommand;
using cluster::kTagGo;
using cluster::kTagHello;
using cluster::kTagSetup;
using cluster::tag_name;

struct CommandHeader {
  int64_t kind = 0;  // Command::Kind
  int64_t exit_status = 0;
  // Exit: 1 when a rank of the job was lost (runtime.h, finalize() is then bounded in time).
  int64_t peers_lost = 0;
};
static_assert(std::is_trivially_copyable_v<CommandHeader> && sizeof(CommandHeader) == 24);

// Throws Error "<what> failed on rank R (peer P, tag T): <MPI message>" unless rc is MPI_SUCCESS.
void check(int rc, const char* what, int peer, int tag);

// Polls `request` until it completes, sleeping `sleep_us` between polls, so a waiting rank does
// not spin. timeout_s <= 0: no limit; on timeout returns false (the request is still pending).
bool wait_polling(MPI_Request& request, const char* what, int peer, int tag, int sleep_us,
                  double timeout_s);

}  // namespace pacer::mpi
