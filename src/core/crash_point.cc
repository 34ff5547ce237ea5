#include "pacer/core/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

namespace pacer {
namespace {

struct CrashPlan {
  std::string name;  // empty: no crash planned
  long hits_left = 1;
  int signal = SIGKILL;
};

CrashPlan read_plan() {
  CrashPlan plan;
  const char* text = std::getenv("PACER_TEST_CRASH_AT");
  if (!text || !*text) return plan;
  plan.name = text;
  const char* signal = std::getenv("PACER_TEST_CRASH_SIGNAL");
  if (signal && std::string(signal) == "INT") plan.signal = SIGINT;
  if (signal && std::string(signal) == "TERM") plan.signal = SIGTERM;
  const size_t colon = plan.name.rfind(':');
  if (colon != std::string::npos) {
    plan.hits_left = std::max(1L, std::strtol(plan.name.c_str() + colon + 1, nullptr, 10));
    plan.name.resize(colon);
  }
  return plan;
}

}  // namespace

void crash_point(std::string_view name) {
  static CrashPlan plan = read_plan();
  static std::mutex mutex;
  if (plan.name.empty()) return;
  std::lock_guard<std::mutex> lock(mutex);
  if (name != plan.name || --plan.hits_left > 0) return;
  ::kill(::getpid(), plan.signal);
  if (plan.signal != SIGKILL) return;
  ::pause();  // SIGKILL cannot be caught: nothing after this runs
}

}  // namespace pacer
