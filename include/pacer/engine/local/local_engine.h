// The local engine (engine.name = "local"): the cluster protocol (cluster/remote_cluster.h) on the
// in-process transport (cluster/in_process_transport.h), with the master on the calling thread
// and each worker half on a thread of its own, in real wall-clock time. It runs any method for
// real on one many-core machine, without MPI, and behaves as the MPI engine does: the same
// engine.* keys (inject, poll_sleep_us, timeout_s, drain_timeout_s, worker_timeout_s), the same
// lost-worker deadline, drain and checkpoints, the same engine_stats. What differs: the worker
// halves are built in this process (the problem is shared, not rebuilt per worker), each worker
// thread draws its durations from its own timing model (built from the configuration as a worker
// rank builds its own), an idle endpoint wakes when a message arrives instead of sleeping out
// poll_sleep_us, and a worker cannot die on its own ([faults] is the simulator's and is refused).
#pragma once

#include <memory>

#include "pacer/core/config.h"
#include "pacer/engine/engine.h"

namespace pacer::local {

// Reads the local engine's keys (cluster::read_cluster_options) and refuses a [faults] table.
std::unique_ptr<Engine> make_local_engine(const Config& config, int workers);

}  // namespace pacer::local
