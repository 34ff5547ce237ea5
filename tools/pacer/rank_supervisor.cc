// `pacer mpi-rank COMMAND...` (cli.h): one rank of an MPI job run as a child process, so that
// the launcher sees a dead worker process as a rank that ended normally.
//
// Why: Open MPI 4.1's daemons count a rank killed by a signal as aborted, not as terminated. On
// mpirun's own host that is harmless under --enable-recovery, but a daemon on another host
// (orted) then never reports its ranks as all ended, and mpirun waits for it forever after the
// run is over (docs/mpi.md, "Across hosts"). The child here is the MPI process; this process,
// which the launcher started, survives the child's death and ends as the rank should:
//   * the child exited: with its exit status;
//   * a worker rank's child was killed by a signal this process did not forward: with status 0
//     and a warning, so that the launcher keeps the job (Open MPI needs
//     `--mca orte_allowed_exit_without_sync 1` to accept a rank that ended without
//     MPI_Finalize) while rank 0 declares the worker lost after engine.worker_timeout_s;
//   * rank 0's child was killed by a signal, or any child by a signal the launcher sent: with
//     128 + the signal, so that the launcher ends the whole job (rank 0 holds the run).
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to the child, for launchers
// that signal only the process they started. Open MPI 4.1's daemons signal its whole process
// group (the rank calls setpgid at its start, and the child stays in that group), so there the
// child gets such a signal twice; pacer acts on the first SIGINT or SIGTERM only. The child gets
// SIGKILL if this process dies first (PR_SET_PDEATHSIG), so no rank outlives the job.
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.h"
#include "pacer/engine/mpi/runtime.h"

namespace pacer::cli {
namespace {

constexpr std::array<int, 6> kForwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// This executable's path, so that the child runs the same pacer whatever PATH says.
std::string own_executable() {
  std::vector<char> buffer(4096);
  const ssize_t n = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (n <= 0)
    throw std::runtime_error(fmt::format("mpi-rank: /proc/self/exe: {}", std::strerror(errno)));
  return std::string(buffer.data(), static_cast<size_t>(n));
}

// In the child: back to the default signal mask, killed with the parent, then pacer COMMAND....
[[noreturn]] void exec_child(const std::string& program, const std::vector<std::string>& args,
                             const sigset_t& old_mask, pid_t parent) {
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
  setenv(mpi::kRankSupervisedVariable, "1", 1);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(program.c_str(), argv.data());
  std::fprintf(stderr, "pacer: error: mpi-rank: cannot run %s: %s\n", program.c_str(),
               std::strerror(errno));
  _exit(127);
}

// The exit status this rank ends with, given how its child ended (see the file's comment).
int rank_status(int wait_status, long rank, int last_forwarded) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  const int sig = WTERMSIG(wait_status);
  if (rank != 0 && sig != last_forwarded) {
    std::fprintf(stderr,
                 "pacer: warning: mpi-rank: the pacer process of rank %ld was killed by signal %d "
                 "(%s); rank %ld ends normally so that the job goes on, and rank 0 declares its "
                 "worker lost by the worker deadline (engine.worker_timeout_s)\n",
                 rank, sig, strsignal(sig), rank);
    return 0;
  }
  return 128 + sig;
}

}  // namespace

int command_mpi_rank(const std::vector<std::string>& args) {
  if (args.empty()) {
    throw std::runtime_error(
        "mpi-rank: expected a pacer command after it, e.g. `pacer mpi-rank "
        "run run.toml --engine mpi`");
  }
  if (args.front() == "mpi-rank") throw std::runtime_error("mpi-rank: cannot supervise itself");
  const std::optional<LaunchedRank> launched = launched_rank();
  if (!launched) {
    throw std::runtime_error(
        "mpi-rank: not started by an MPI launcher (no OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK "
        "in the environment); it runs one rank of a job, e.g. `mpirun --mca "
        "orte_allowed_exit_without_sync 1 -np 5 pacer mpi-rank run run.toml --engine mpi`");
  }
  const std::string program = own_executable();
  // The forwarded signals and SIGCHLD are blocked before the fork and then taken one at a time
  // with sigwaitinfo: none is lost between the fork and the wait.
  sigset_t waited, old_mask;
  sigemptyset(&waited);
  for (int sig : kForwarded) sigaddset(&waited, sig);
  sigaddset(&waited, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waited, &old_mask);
  // A SIGCHLD ignored by whatever started this process would make the kernel reap the child
  // unseen, and the wait below would never end.
  std::signal(SIGCHLD, SIG_DFL);
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(fmt::format("mpi-rank: fork: {}", std::strerror(errno)));
  if (child == 0) exec_child(program, args, old_mask, parent);
  int last_forwarded = 0;
  for (;;) {
    int wait_status = 0;
    const pid_t ended = waitpid(child, &wait_status, WNOHANG);
    if (ended == child) {
      // A launcher's signal may have reached the child (same process group) before this
      // process took its own copy: take what is pending before deciding where the signal came
      // from.
      sigset_t forwarded;
      sigemptyset(&forwarded);
      for (int sig : kForwarded) sigaddset(&forwarded, sig);
      const timespec now{0, 0};
      for (int sig; (sig = sigtimedwait(&forwarded, nullptr, &now)) > 0;) last_forwarded = sig;
      return rank_status(wait_status, launched->rank, last_forwarded);
    }
    if (ended < 0 && errno != EINTR) {
      throw std::runtime_error(fmt::format("mpi-rank: waitpid: {}", std::strerror(errno)));
    }
    siginfo_t info;
    const int sig = sigwaitinfo(&waited, &info);
    if (sig > 0 && sig != SIGCHLD) {
      last_forwarded = sig;
      kill(child, sig);
    }
  }
}

}  // namespace pacer::cli
