// Errors that reach the user.
//
// pacer reports every user-facing failure (a bad config value, an unreadable or malformed data
// file, an impossible combination of parameters, a run that diverges) by throwing pacer::Error.
// Its what() is ONE line that names the offending key or file and says what was expected, so the
// command-line tool can print it as it is and exit non-zero. Programming errors (violated
// preconditions inside pacer) are not Errors; they are checked with PACER_CHECK and abort.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace pacer {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws pacer::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// Aborts with file:line when an internal invariant does not hold. For bugs, not for user input.
[[noreturn]] void check_failed(const char* expr, const char* file, int line);

}  // namespace pacer

#define PACER_CHECK(expr) ((expr) ? (void)0 : ::pacer::check_failed(#expr, __FILE__, __LINE__))
