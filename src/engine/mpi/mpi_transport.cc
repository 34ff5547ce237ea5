// The cluster protocol's transport over MPI (mpi_cluster.h).
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "pacer/engine/mpi/mpi_cluster.h"
#include "pacer/engine/mpi/runtime.h"
#include "session_wire.h"

namespace pacer::mpi {
namespace {

using cluster::Received;
using cluster::Request;

// A Request holds the MPI_Request's bytes; MPI_REQUEST_NULL is the empty Request.
static_assert(sizeof(MPI_Request) <= sizeof(std::uintptr_t));

MPI_Request to_mpi(const Request& r) {
  if (!r.pending()) return MPI_REQUEST_NULL;
  MPI_Request m;
  std::memcpy(&m, &r.handle, sizeof m);
  return m;
}

void store(MPI_Request m, Request& r) {
  r.handle = 0;
  if (m == MPI_REQUEST_NULL) return;
  std::memcpy(&r.handle, &m, sizeof m);
  PACER_CHECK(r.handle != 0);
}

int byte_count(int64_t bytes, const char* what, int peer, int tag) {
  if (bytes < 0 || bytes > std::numeric_limits<int>::max()) {
    fail("MPI: {} of {} bytes to/from rank {} (tag {}): one MPI message carries at most {}", what,
         bytes, peer, tag, std::numeric_limits<int>::max());
  }
  return static_cast<int>(bytes);
}

Received received_of(MPI_Status& status) {
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return Received{.source = status.MPI_SOURCE, .bytes = count};
}

class MpiTransport : public cluster::Transport {
 public:
  int rank() const override { return mpi::rank(); }
  int size() const override { return mpi::size(); }
  const char* name() const override { return "MPI"; }

  void isend(const void* data, int64_t bytes, int peer, int tag, Request& request) override {
    MPI_Request m;
    check(MPI_Isend(data, byte_count(bytes, "MPI_Isend", peer, tag), MPI_BYTE, peer, tag,
                    MPI_COMM_WORLD, &m),
          "MPI_Isend", peer, tag);
    store(m, request);
  }
  void irecv(void* data, int64_t capacity, int peer, int tag, Request& request) override {
    MPI_Request m;
    check(MPI_Irecv(data, byte_count(capacity, "MPI_Irecv", peer, tag), MPI_BYTE,
                    peer == cluster::kAnySource ? MPI_ANY_SOURCE : peer, tag, MPI_COMM_WORLD, &m),
          "MPI_Irecv", peer, tag);
    store(m, request);
  }
  bool test(Request& request, const char* what, Received* received) override {
    if (!request.pending()) return true;
    MPI_Request m = to_mpi(request);
    int flag = 0;
    MPI_Status status;
    check(MPI_Test(&m, &flag, &status), what, -1, -1);
    store(m, request);
    if (flag && received) *received = received_of(status);
    return flag != 0;
  }
  int test_some(std::span<Request> requests, std::vector<int>& completed,
                std::vector<Received>& received) override {
    const int n = static_cast<int>(requests.size());
    mpi_requests_.resize(requests.size());
    indices_.resize(requests.size());
    statuses_.resize(requests.size());
    for (int i = 0; i < n; ++i) mpi_requests_[i] = to_mpi(requests[i]);
    int count = 0;
    const int rc = MPI_Testsome(n, mpi_requests_.data(), &count, indices_.data(), statuses_.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) check(rc, "MPI_Testsome", -1, -1);
    completed.clear();
    received.clear();
    if (count == MPI_UNDEFINED) return 0;
    for (int k = 0; k < count; ++k) {
      const int i = indices_[k];
      if (rc == MPI_ERR_IN_STATUS) check(statuses_[k].MPI_ERROR, "a receive", -1, -1);
      store(mpi_requests_[i], requests[i]);
      completed.push_back(i);
      received.push_back(received_of(statuses_[k]));
    }
    return count;
  }
  void cancel(Request& request) override {
    if (!request.pending()) return;
    MPI_Request m = to_mpi(request);
    MPI_Cancel(&m);
    MPI_Wait(&m, MPI_STATUS_IGNORE);
    request.handle = 0;
  }
  void idle(int microseconds) override { poll_sleep(microseconds); }
  bool peer_known_dead(int peer) const override { return rank_known_dead(peer); }
  void set_peer_lost(int peer, bool lost) override { set_rank_lost(peer, lost); }
  bool survives_dead_worker() const override { return mpi::survives_dead_worker(); }
  std::string dead_worker_warning() const override { return mpi::dead_worker_warning(); }
  [[noreturn]] void abort_job(int code) override { mpi::abort_job(code); }

 private:
  std::vector<MPI_Request> mpi_requests_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace

cluster::Transport& world_transport() {
  PACER_CHECK(active());
  static MpiTransport transport;
  return transport;
}

MpiOptions read_mpi_options(const Config& config) {
  MpiOptions options = cluster::read_cluster_options(config);
  const double startup = config.get_double("engine.startup_timeout_s", kDefaultStartupTimeoutS);
  if (!(startup >= 0) || !std::isfinite(startup)) {
    config.fail_key("engine.startup_timeout_s", "a finite number of seconds >= 0 (0 = no bound)");
  }
  return options;
}

MpiCluster::MpiCluster(const MpiOptions& options, int workers, int64_t dim)
    : RemoteCluster(world_transport(), options, workers, dim) {}

StopStatus serve_jobs(Worker& worker, TimingModel& timing, int index, uint64_t seed,
                      const MpiOptions& options, int64_t dim) {
  return cluster::serve_jobs(world_transport(), worker, timing, index, seed, options, dim);
}

}  // namespace pacer::mpi
