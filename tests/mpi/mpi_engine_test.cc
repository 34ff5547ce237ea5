// The cluster protocol's scenarios (tests/cluster/protocol_scenarios.h) on MPI, under mpirun
// -np 4 (rank 0 + 3 workers): the same toy masters and workers as the in-process tests, on real
// processes and Open MPI. Exits 0 when every rank saw what it expected; prints what differed
// otherwise.
#include <cstdio>
#include <string>

#include "../cluster/protocol_scenarios.h"
#include "pacer/engine/mpi/mpi_cluster.h"
#include "pacer/engine/mpi/runtime.h"

int main(int argc, char** argv) {
  using namespace pacer;
  const std::string scenario = argc > 1 ? argv[1] : "";
  bool known = false;
  for (const char* s : scenarios::kScenarios) known = known || scenario == s;
  if (!known) {
    std::fprintf(stderr,
                 "usage: mpirun -np 4 pacer_mpi_engine_test "
                 "worker_error|drain|lost_rejoin|checkpoint|float32\n");
    return 2;
  }
  int status = 1;
  try {
    mpi::init();
    const int workers = mpi::size() - 1;
    if (workers != 3) fail("run with mpirun -np 4 (got {} ranks)", mpi::size());
    // No worker deadline outside lost_rejoin, and so no warning about --enable-recovery.
    const cluster::ClusterOptions options = scenarios::options_for(scenario);
    cluster::Transport& transport = mpi::world_transport();
    status = mpi::rank() == 0 ? scenarios::run_rank0(transport, scenario, options, workers)
                              : scenarios::run_worker(transport, scenario, options, workers);
    if (status == 0 && mpi::rank() == 0 && !mpi::lost_ranks().empty()) {
      std::fprintf(stderr, "FAIL (%s, rank 0): a rank is still recorded as lost\n",
                   scenario.c_str());
      status = 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL (%s, rank %d): %s\n", scenario.c_str(), mpi::rank(), e.what());
    status = 1;
  }
  mpi::finalize();
  return status;
}
