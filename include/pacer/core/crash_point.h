// Named points at which a test can kill the process, to check what a crash leaves behind.
//
// A test sets PACER_TEST_CRASH_AT="name" (or "name:k") in a child's environment: the k-th time
// (default the first) the child passes crash_point("name"), it sends itself SIGKILL, so nothing
// after that point runs, no destructor included, exactly as when the machine loses power or the
// scheduler kills the job. Without the variable crash_point costs one branch. Names are dotted and
// stable ("checkpoint.renamed", "outputs.swap"); every crash point is listed where it is called
// and exercised by a test. With PACER_TEST_CRASH_SIGNAL=INT (or TERM) the process sends itself
// that signal instead and goes on, as when a user presses Ctrl-C at that moment.
#pragma once

#include <string_view>

namespace pacer {

void crash_point(std::string_view name);

}  // namespace pacer
