#include "pacer/core/log.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double coarse_steady_seconds() {
#ifdef CLOCK_MONOTONIC_COARSE
  timespec now{};
  if (clock_gettime(CLOCK_MONOTONIC_COARSE, &now) == 0) {
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  }
#endif
  return steady_seconds();
}

namespace {

void write_stderr(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

// PACER_PROGRESS_S: seconds >= 0, default 10.
double progress_interval() {
  const char* text = std::getenv("PACER_PROGRESS_S");
  if (!text || !*text) return 10;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return *end == '\0' && seconds >= 0 && std::isfinite(seconds) ? seconds : 10;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  const long s = std::lround(seconds);
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
}

ProgressLine::Options ProgressLine::from_environment() {
  Options options;
  const bool shown = log_level() <= LogLevel::kInfo;
  options.terminal = shown && isatty(STDERR_FILENO);
  options.interval_s = shown ? progress_interval() : 0;
  return options;
}

ProgressLine::ProgressLine(std::string label, Options options)
    : label_(std::move(label)), options_(std::move(options)) {
  if (!options_.clock) options_.clock = coarse_steady_seconds;
  if (!options_.write) options_.write = write_stderr;
  start_ = last_ = now();
}

ProgressLine::~ProgressLine() { clear(); }

double ProgressLine::now() const { return options_.clock(); }

bool ProgressLine::due() const {
  const double t = now();
  if (options_.terminal) return t - start_ >= 1 && (!drawn_ || t - last_ >= 0.2);
  return options_.interval_s > 0 && t - last_ >= options_.interval_s;
}

void ProgressLine::update(const std::string& status, double done) {
  if (!due()) return;
  const double t = now();
  last_ = t;
  const double elapsed = t - start_;
  std::string eta;
  if (done > 0 && done <= 1) {
    eta =
        fmt::format("  {:.0f}%, ETA {}", 100 * done, format_duration(elapsed * (1 - done) / done));
  }
  if (options_.terminal) {
    options_.write(
        fmt::format("\r\033[K{}  {}{}  [{}]", label_, status, eta, format_duration(elapsed)));
    drawn_ = true;
  } else {
    options_.write(fmt::format("pacer: info: {}  {}{}  [{} so far]\n", label_, status, eta,
                               format_duration(elapsed)));
  }
}

void ProgressLine::clear() {
  if (drawn_) {
    options_.write("\r\033[K");
    drawn_ = false;
  }
}

}  // namespace pacer
