// Logging to standard error, and the progress line of long runs.
//
// Messages go to stderr so that standard output carries only results (tables, JSON). The level
// is process-wide: pacer's --quiet sets kWarning, --verbose sets kDebug.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <limits>
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

// Seconds on the steady clock (since an arbitrary epoch): for wall-time intervals (progress,
// flushes), never for what a run computes.
double steady_seconds();

// The same clock read cheaply, at its kernel tick (Linux CLOCK_MONOTONIC_COARSE: a resolution of
// a few milliseconds, it lags steady_seconds() by at most that, and a read costs a few
// nanoseconds where steady_seconds() may cost tens): for checks made at every event of a fast loop
// (is a flush or a progress line due?). Falls back to steady_seconds() where there is no such
// clock.
double coarse_steady_seconds();

// The progress of a long run on stderr, at log level kInfo or lower (not under --quiet).
//   * On a terminal: one self-overwriting line, drawn once the run has lasted one second,
//     redrawn at most five times a second, cleared by clear() and on destruction.
//   * Elsewhere (a batch job's log file, nohup): a plain log line "pacer: info: LABEL  STATUS  ..."
//     every PACER_PROGRESS_S seconds of wall time (default 10; 0 = none), never more often, the
//     first one interval after the start: a batch log grows by one line per interval whatever
//     the run's speed.
// Both show the wall time so far and, when the caller says how much of its budget is done, the
// estimated time left (ETA) at the rate so far.
class ProgressLine {
 public:
  struct Options {
    bool terminal = false;          // draw the self-overwriting line
    double interval_s = 10;         // not a terminal: seconds between plain lines (0 = none)
    std::function<double()> clock;  // wall seconds (default: coarse_steady_seconds)
    std::function<void(std::string_view)> write;  // default: stderr
  };
  // This process's: terminal = isatty(stderr), interval_s from PACER_PROGRESS_S (a number of
  // seconds >= 0; default 10, also for a value that is not one); nothing at all when the log
  // level is above kInfo.
  static Options from_environment();

  explicit ProgressLine(std::string label) : ProgressLine(std::move(label), from_environment()) {}
  ProgressLine(std::string label, Options options);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Whether update() would print now: cheap, for callers whose status costs to build.
  bool due() const;
  // Prints `status` if due(). `done`: the part of the run's budget done so far, in (0, 1], for
  // the ETA; NaN (or <= 0) when unknown.
  void update(const std::string& status, double done = std::numeric_limits<double>::quiet_NaN());
  void clear();

 private:
  double now() const;

  std::string label_;
  Options options_;
  double start_ = 0;
  double last_ = 0;     // when the last line was drawn or printed
  bool drawn_ = false;  // the terminal line is on screen
};

// "42 s", "12 min 5 s", "3 h 20 min": a duration for people.
std::string format_duration(double seconds);

}  // namespace pacer
