// A transport (transport.h) between threads of one process: the `local` engine's, and the one the
// protocol's tests run N workers on.
//
// An InProcessHub is one job of `endpoints` endpoints; endpoint(r) is endpoint r's Transport, to
// be used by one thread at a time. A send copies its bytes at once, into a matching posted
// receive or into the destination's queue of unexpected messages, so every send has completed
// when isend returns. Matching follows transport.h (per-destination queues in send order, posted
// receives in post order). idle() waits on the endpoint's condition variable, so an endpoint that
// waits wakes as soon as a message for it arrives instead of sleeping out its back-off.
//
// Faults, for tests: kill(r) makes endpoint r dead, as a process that ended: messages to it are
// dropped, peer_known_dead(r) is true everywhere, and every later call on endpoint r itself throws
// Error (so the thread serving it leaves its loop). lost(r) says what endpoint 0 recorded with
// set_peer_lost. abort_job prints the error and ends the process (std::_Exit), as MPI_Abort does.
#pragma once

#include <memory>
#include <string>

#include "pacer/engine/cluster/transport.h"

namespace pacer::cluster {

class InProcessHub {
 public:
  // `name` is the transport's name in messages ("local" for the local engine).
  explicit InProcessHub(int endpoints, std::string name = "in-process");
  ~InProcessHub();
  InProcessHub(const InProcessHub&) = delete;
  InProcessHub& operator=(const InProcessHub&) = delete;

  int size() const;
  // Endpoint r's transport (0 <= r < size()); lives as long as the hub.
  Transport& endpoint(int r);
  // Makes endpoint r dead (file comment) and wakes every endpoint.
  void kill(int r);
  // Whether endpoint 0 recorded endpoint r as lost (set_peer_lost) and not back.
  bool lost(int r) const;

 private:
  struct State;
  class Endpoint;
  std::unique_ptr<State> state_;
};

}  // namespace pacer::cluster
