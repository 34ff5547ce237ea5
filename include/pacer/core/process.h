// Child processes run side by side, a bounded number at a time (pacer sweep's cells).
//
// Each child is a program with its arguments (no shell), its stdout and stderr sent to a log
// file, and is killed (SIGKILL) if pacer dies first (PR_SET_PDEATHSIG), so that no cell keeps
// writing into a folder nobody is waiting for. A Ctrl-C at the terminal reaches the children too
// (they share pacer's process group); after SIGINT or SIGTERM (core/interrupt.h) no further child
// is started, the signal is passed on to the running ones (in case it was sent to pacer alone)
// and they are waited for.
#pragma once

#include <string>
#include <vector>

namespace pacer {

struct ChildProcess {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::string log;                // stdout and stderr go here (created or truncated)
};

struct ChildOutcome {
  bool started = false;  // false: an interrupt came before its turn, or fork failed
  int exit_status = -1;  // the exit code, 128 + signal when a signal ended it, 127 when exec
                         // failed (its log then says so)
};

// Runs `children` with at most `parallel` (>= 1) of them alive at once, in order of the list (the
// next starts as soon as one ends), and returns each one's outcome in the list's order. The caller
// has no other child process running meanwhile (any child that ends is reaped here). Throws
// pacer::Error naming the log file when it cannot be created.
std::vector<ChildOutcome> run_children(const std::vector<ChildProcess>& children, int parallel);

// The path of the running executable (/proc/self/exe resolved).
std::string self_executable();

// The number of processors this process may run on (sched_getaffinity), at least 1.
int available_processors();

}  // namespace pacer
