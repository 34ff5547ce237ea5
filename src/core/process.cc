#include "pacer/core/process.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>

#include "pacer/core/error.h"
#include "pacer/core/interrupt.h"

namespace pacer {
namespace {

// Forks and execs one child with its output to `log`; returns its pid, or -1.
pid_t start_child(const ChildProcess& child) {
  const int fd = ::open(child.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("{}: cannot create the log file: {}", child.log, std::strerror(errno));
  std::vector<char*> argv;
  for (const std::string& a : child.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    static constexpr char kMessage[] = "pacer: error: the program could not be started (exec)\n";
    [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

int exit_status_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::vector<ChildOutcome> run_children(const std::vector<ChildProcess>& children, int parallel) {
  PACER_CHECK(parallel >= 1);
  std::vector<ChildOutcome> outcomes(children.size());
  std::map<pid_t, size_t> running;
  size_t next = 0;
  bool forwarded = false;
  while (next < children.size() || !running.empty()) {
    while (next < children.size() && static_cast<int>(running.size()) < parallel &&
           interrupt_signal() == 0) {
      const pid_t pid = start_child(children[next]);
      if (pid > 0) {
        running[pid] = next;
        outcomes[next].started = true;
      }
      ++next;
    }
    if (running.empty()) break;  // interrupted: nothing more starts
    // A signal sent to pacer alone (kill, timeout, a batch scheduler) is passed on once, so the
    // cells stop as a Ctrl-C at the terminal, which reaches them directly, stops them.
    if (interrupt_signal() != 0 && !forwarded) {
      for (const auto& [child_pid, index] : running) ::kill(child_pid, interrupt_signal());
      forwarded = true;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0) {  // none ended: look again shortly (a blocking wait would not see a signal)
      ::usleep(20000);
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left to wait for
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours (a gnuplot of this process)
    outcomes[it->second].exit_status = exit_status_of(status);
    running.erase(it);
  }
  return outcomes;
}

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) fail("/proc/self/exe: cannot find pacer's own executable: {}", ec.message());
  return path.string();
}

int available_processors() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace pacer
