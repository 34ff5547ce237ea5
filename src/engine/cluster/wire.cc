// The tag names and float32 wire conversions (wire.h), and the cluster options
// (remote_cluster.h).
#include "wire.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "pacer/engine/cluster/remote_cluster.h"

namespace pacer::cluster {

const char* tag_name(int tag) {
  switch (tag) {
    case kTagCommand:
      return "command";
    case kTagSetup:
      return "setup";
    case kTagGo:
      return "go";
    case kTagHello:
      return "hello";
    case kTagJob:
      return "job";
    case kTagModel:
      return "model";
    case kTagReply:
      return "reply";
    case kTagPayload:
      return "payload";
    case kTagState:
      return "state";
    default:
      return "?";
  }
}

bool narrow_exact(const double* from, int64_t n, float* to) {
  for (int64_t i = 0; i < n; ++i) {
    to[i] = static_cast<float>(from[i]);
    if (static_cast<double>(to[i]) != from[i]) return false;
  }
  return true;
}

void narrow(const double* from, int64_t n, float* to) {
  for (int64_t i = 0; i < n; ++i) to[i] = static_cast<float>(from[i]);
}

void widen_in_place(double* data, int64_t n) {
  // Block by block from the end: a block's floats are copied out before its doubles are written,
  // and the doubles of a block [k, k + b) cover floats [2k, 2k + 2b), none of which is still
  // unread (the floats below k are; 2k >= k). Large blocks keep it near the speed of a
  // conversion between two buffers (measured: 1024-value blocks took twice as long).
  constexpr int64_t kBlock = 64 * 1024;
  static thread_local std::vector<float> block(kBlock);
  const char* bytes = reinterpret_cast<const char*>(data);
  for (int64_t end = n; end > 0;) {
    const int64_t begin = std::max<int64_t>(0, end - kBlock);
    const int64_t count = end - begin;
    std::memcpy(block.data(), bytes + 4 * begin, static_cast<size_t>(4 * count));
    for (int64_t i = 0; i < count; ++i) data[begin + i] = block[static_cast<size_t>(i)];
    end = begin;
  }
}

const char* inject_name(Inject inject) {
  switch (inject) {
    case Inject::kDelay:
      return "delay";
    case Inject::kPace:
      return "pace";
    default:
      return "none";
  }
}

ClusterOptions read_cluster_options(const Config& config) {
  ClusterOptions o;
  const std::string inject = config.get_choice("engine.inject", "none", {"none", "delay", "pace"});
  o.inject = inject == "pace" ? Inject::kPace : inject == "delay" ? Inject::kDelay : Inject::kNone;
  const int64_t sleep = config.get_int("engine.poll_sleep_us", o.poll_sleep_us);
  if (sleep < 1 || sleep > 1000000) {
    config.fail_key("engine.poll_sleep_us", "an integer in [1, 1000000] (microseconds)");
  }
  o.poll_sleep_us = static_cast<int>(sleep);
  o.timeout_s = config.get_double("engine.timeout_s", o.timeout_s);
  if (!(o.timeout_s >= 0))
    config.fail_key("engine.timeout_s", "a number of seconds >= 0 (0 = none)");
  o.drain_timeout_s = config.get_double("engine.drain_timeout_s", o.drain_timeout_s);
  if (!(o.drain_timeout_s > 0))
    config.fail_key("engine.drain_timeout_s", "a number of seconds > 0");
  // Unset means adaptive; no fallback is recorded, so the resolved configuration (config.toml,
  // and what the worker ranks receive) leaves the key out and stays adaptive when run again.
  if (config.has("engine.worker_timeout_s")) {
    o.worker_timeout_s = config.get_double("engine.worker_timeout_s", 0);
    if (!(o.worker_timeout_s >= 0) || !std::isfinite(o.worker_timeout_s)) {
      config.fail_key("engine.worker_timeout_s",
                      "a finite number of seconds >= 0 (0 = never declare a worker lost; leave "
                      "the key out for the adaptive deadline)");
    }
  }
  return o;
}

}  // namespace pacer::cluster
