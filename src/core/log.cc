#include "pacer/core/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace pacer {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    default:
      return "error";
  }
}
}  // namespace

void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }

void log_message(LogLevel level, std::string_view message) {
  if (level < log_level()) return;
  std::fprintf(stderr, "pacer: %s: %.*s\n", level_name(level), static_cast<int>(message.size()),
               message.data());
}

ProgressLine::ProgressLine(std::string label)
    : label_(std::move(label)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_),
      enabled_(isatty(STDERR_FILENO) && log_level() <= LogLevel::kInfo) {}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::update(const std::string& status) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r\033[K%s  %s  [%.0fs]", label_.c_str(), status.c_str(), elapsed);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace pacer
