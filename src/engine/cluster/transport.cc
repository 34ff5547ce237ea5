// The protocol's clock (transport.h).
#include "pacer/engine/cluster/transport.h"

#include <chrono>
#include <thread>

namespace pacer::cluster {

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void poll_sleep(int microseconds) {
  std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
}

}  // namespace pacer::cluster
