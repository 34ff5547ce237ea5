// SIGINT and SIGTERM as a request to stop cleanly (DESIGN.md section 6: an interrupted run ends
// with "status": "interrupted").
//
// install_interrupt_handlers() makes the first SIGINT or SIGTERM set a process-wide flag instead
// of ending the process. The loops that run for long read it with interrupt_signal() and stop
// where they are (the simulator between two events, the MPI engine in its poll loop), so that the
// run writes its outputs and pacer exits with interrupt_exit_status() (130 for SIGINT, 143 for
// SIGTERM, as a shell reports a process those signals ended). The first signal is kept: a later
// one changes nothing, so a second Ctrl-C (or mpirun's SIGTERM after the terminal's SIGINT)
// cannot end the process half-way through writing its files; SIGKILL or SIGQUIT still do. The
// handlers use SA_RESTART, so no system call fails with EINTR. `pacer run` and `pacer compare`
// install them, and so does the MPI runtime (mpi::init); a program that never installs them keeps
// the default actions and interrupt_signal() stays 0.
#pragma once

#include <memory>

#include "pacer/core/error.h"

namespace pacer {

// Installs the handlers (idempotent, not thread-safe: call it from main before starting threads).
void install_interrupt_handlers();

// The handlers for the lifetime of the object, for a host program that has its own (the Python
// package, whose interpreter turns SIGINT into KeyboardInterrupt): the constructor forgets any
// earlier signal (clear_interrupt) and installs the handlers, the destructor puts back the actions
// that were there before. The host then decides what the received signal means for it. Not
// thread-safe and not nestable: one scope at a time, its lifetime that of one call.
class InterruptHandlersScope {
 public:
  InterruptHandlersScope();
  ~InterruptHandlersScope();
  InterruptHandlersScope(const InterruptHandlersScope&) = delete;
  InterruptHandlersScope& operator=(const InterruptHandlersScope&) = delete;

 private:
  struct SavedActions;
  std::unique_ptr<SavedActions> saved_;
};

// The first SIGINT or SIGTERM received since the handlers were installed, 0 before any. A single
// load of a volatile sig_atomic_t: cheap enough for every iteration of an event loop.
int interrupt_signal();

// "SIGINT", "SIGTERM", or "" while interrupt_signal() is 0.
const char* interrupt_signal_name();

// 128 + interrupt_signal() (130 for SIGINT, 143 for SIGTERM); 130 when no signal was received
// (a caller that saw an "interrupted" run some other way).
int interrupt_exit_status();

// Forgets the signal received (tests that raise one in-process).
void clear_interrupt();

// Thrown where a command gives up because of an interrupt between two runs (pacer compare): its
// message says what was kept. The caller exits with interrupt_exit_status().
class Interrupted : public Error {
 public:
  using Error::Error;
};

}  // namespace pacer
