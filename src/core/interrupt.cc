#include "pacer/core/interrupt.h"

#include <signal.h>

#include <csignal>

namespace pacer {
namespace {

volatile std::sig_atomic_t g_signal = 0;  // the first signal received, 0 before any
bool g_installed = false;

extern "C" void on_interrupt_signal(int signal) {
  if (g_signal == 0) g_signal = signal;  // the first one is kept
}

// Installs on_interrupt_signal for SIGINT and SIGTERM; the actions found are stored in
// `previous` (two entries) unless it is null.
void set_handlers(struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = on_interrupt_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, previous ? &previous[0] : nullptr);
  sigaction(SIGTERM, &action, previous ? &previous[1] : nullptr);
}

}  // namespace

void install_interrupt_handlers() {
  if (g_installed) return;
  set_handlers(nullptr);
  g_installed = true;
}

struct InterruptHandlersScope::SavedActions {
  struct sigaction actions[2];  // SIGINT's, SIGTERM's
};

InterruptHandlersScope::InterruptHandlersScope() : saved_(std::make_unique<SavedActions>()) {
  clear_interrupt();
  set_handlers(saved_->actions);
}

InterruptHandlersScope::~InterruptHandlersScope() {
  sigaction(SIGINT, &saved_->actions[0], nullptr);
  sigaction(SIGTERM, &saved_->actions[1], nullptr);
}

int interrupt_signal() { return g_signal; }

const char* interrupt_signal_name() {
  switch (g_signal) {
    case 0:
      return "";
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

int interrupt_exit_status() { return 128 + (g_signal != 0 ? g_signal : SIGINT); }

void clear_interrupt() { g_signal = 0; }

}  // namespace pacer
