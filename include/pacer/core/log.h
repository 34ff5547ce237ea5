// Logging to standard error, and the progress line of long runs.
//
// Messages go to stderr so that standard output carries only results (tables, JSON). The level
// is process-wide: pacer's --quiet sets kWarning, --verbose sets kDebug.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <string_view>

namespace pacer {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log_message(LogLevel level, std::string_view message);

template <typename... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::kInfo)
    log_message(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warning(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::kWarning)
    log_message(LogLevel::kWarning, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::kDebug)
    log_message(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
}

// A single self-overwriting status line on stderr for long runs. It prints only when stderr is a
// terminal, the log level is kInfo or lower, and the run has lasted more than one second; it
// redraws at most five times a second, and clears itself on destruction.
class ProgressLine {
 public:
  explicit ProgressLine(std::string label);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Cheap to call on every step: it returns at once unless a redraw is due.
  void update(const std::string& status);
  void clear();

 private:
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace pacer
