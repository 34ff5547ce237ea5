// The MPI engine's side of the cluster protocol (cluster/remote_cluster.h): the transport over
// MPI_COMM_WORLD (rank r = endpoint r), and rank 0's cluster and a worker rank's job loop on it.
//
// What MPI adds to the protocol: a dead peer is seen only on this host (runtime.h,
// rank_known_dead), a rank declared lost is recorded for the session (runtime.h, set_rank_lost),
// a job survives a dead rank only when launched for it (runtime.h, survives_dead_worker), and
// abort_job is MPI_Abort. MPI counts a message's bytes in an int, hence cluster::kMaxDim.
#pragma once

#include <cstdint>

#include "pacer/core/config.h"
#include "pacer/engine/cluster/remote_cluster.h"
#include "pacer/engine/cluster/transport.h"

namespace pacer::mpi {

using cluster::Inject;
using cluster::inject_name;
using cluster::kMaxDim;
using cluster::StopStatus;
using cluster::WorkerStats;
using MpiOptions = cluster::ClusterOptions;

// The cluster options (cluster::read_cluster_options), and engine.startup_timeout_s (>= 0,
// finite, default 60; 0 = no bound), which is checked here although the pacer program reads it
// before MPI starts (runtime.h, start()).
MpiOptions read_mpi_options(const Config& config);

// The transport over MPI_COMM_WORLD. Requires active() (runtime.h); the same object for the whole
// process.
cluster::Transport& world_transport();

// Rank 0's side of a run on MPI. Requires active(), rank 0, a job of workers + 1 ranks, and a run
// started with begin_run (runtime.h) so that the worker ranks serve.
class MpiCluster : public cluster::RemoteCluster {
 public:
  MpiCluster(const MpiOptions& options, int workers, int64_t dim);
};

// A worker rank's job loop (cluster::serve_jobs) on world_transport(). Requires rank() ==
// index + 1.
StopStatus serve_jobs(Worker& worker, TimingModel& timing, int index, uint64_t seed,
                      const MpiOptions& options, int64_t dim);

}  // namespace pacer::mpi
