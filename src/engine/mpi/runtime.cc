#include "pacer/engine/mpi/runtime.h"

#include <mpi.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "pacer/core/interrupt.h"
#include "session_wire.h"

namespace pacer::mpi {
namespace {

bool g_active = false;
int g_rank = 0;
int g_size = 1;
std::vector<bool> g_lost;  // rank 0: by rank, declared lost and not back (set_rank_lost)

// Where a process runs, as the start-up hello tells rank 0: its pid, and a hash of the host and
// pid namespace it belongs to (rank_known_dead checks a pid only within rank 0's own).
struct Hello {
  int64_t pid = 0;
  uint64_t place = 0;  // 0 = unknown
};
std::vector<Hello> g_peers;  // rank 0: by rank, from the hello (empty without the handshake)
// Set when the session ends: its exit status, and whether a rank of the job was lost then.
int g_exit_status = 0;
bool g_peers_lost = false;

// Sends `bytes` to `peer` and polls until the send completes.
void send_polling(const void* data, int bytes, int peer, int tag, int sleep_us) {
  MPI_Request request;
  check(MPI_Isend(data, bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &request), "MPI_Isend", peer,
        tag);
  wait_polling(request, "MPI_Isend", peer, tag, sleep_us, 0);
}

}  // namespace

void check(int rc, const char* what, int peer, int tag) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  fail("MPI: {} failed on rank {} (peer rank {}, {} message, tag {}): {}", what, g_rank, peer,
       tag_name(tag), tag, std::string(text, static_cast<size_t>(length)));
}

bool wait_polling(MPI_Request& request, const char* what, int peer, int tag, int sleep_us,
                  double timeout_s) {
  const double start = wall_seconds();
  while (true) {
    int flag = 0;
    MPI_Status status;
    check(MPI_Test(&request, &flag, &status), what, peer, tag);
    if (flag) return true;
    if (timeout_s > 0 && wall_seconds() - start > timeout_s) return false;
    poll_sleep(sleep_us);
  }
}

void init() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) fail("MPI: cannot start the MPI engine again after MPI_Finalize");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      fail("MPI: MPI_Init_thread failed (is this an MPI launch? try mpirun -np N pacer ...)");
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (!g_active) install_interrupt_handlers();  // the process-wide flag (core/interrupt.h)
  g_active = true;
}

namespace {

// This process's rank as the launcher (Open MPI, or a PMI-based one) announces it before
// MPI_Init; -1 when none does.
int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return -1;
}

// Ends this process with `exit_status`, after printing `message` (if not empty) as one line,
// unless disarm() is called within `seconds`. For MPI calls that may not return: MPI cannot be
// aborted before MPI_Init has returned (mpirun then ends the rest of the job), and MPI_Finalize
// may wait forever for a dead peer.
class Watchdog {
 public:
  Watchdog(double seconds, std::string message, int exit_status = 1)
      : message_(std::move(message)),
        exit_status_(exit_status),
        thread_([this, seconds] { watch(seconds); }) {}
  ~Watchdog() { disarm(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void disarm() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      disarmed_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void watch(double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_for(lock, std::chrono::duration<double>(seconds),
                       [this] { return disarmed_; })) {
      return;
    }
    if (!message_.empty()) std::fprintf(stderr, "%s\n", message_.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(exit_status_);
  }

  std::string message_;
  int exit_status_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  std::thread thread_;
};

// The first line of `path`, "" if it cannot be read.
std::string first_line(const char* path) {
  std::FILE* file = std::fopen(path, "r");
  if (!file) return "";
  char line[256] = {};
  const bool read = std::fgets(line, sizeof line, file) != nullptr;
  std::fclose(file);
  return read ? std::string(line) : "";
}

// This process's host and pid namespace, hashed (FNV-1a, the same in every build): equal for two
// processes whose pids name processes of one and the same kernel namespace. 0 if unknown.
uint64_t this_place() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return 0;
  char ns[128] = {};
  const ssize_t ns_length = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  const std::string boot = first_line("/proc/sys/kernel/random/boot_id");
  if (ns_length <= 0 || boot.empty()) return 0;
  const std::string text = std::string(host) + "/" + boot + "/" + std::string(ns, ns_length);
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash == 0 ? 1 : hash;
}

// Rank 0's half of the start-up handshake: a hello from every worker rank within `seconds`, then
// an answer to each. Names the silent ranks and aborts the job otherwise.
void hello_from_workers(double seconds, int poll_sleep_us) {
  std::vector<Hello> hellos(g_size);
  std::vector<MPI_Request> receives(g_size, MPI_REQUEST_NULL);
  for (int r = 1; r < g_size; ++r) {
    check(
        MPI_Irecv(&hellos[r], sizeof(Hello), MPI_BYTE, r, kTagHello, MPI_COMM_WORLD, &receives[r]),
        "MPI_Irecv", r, kTagHello);
  }
  const double deadline = wall_seconds() + seconds;
  std::string missing;
  for (int r = 1; r < g_size; ++r) {
    if (wait_polling(receives[r], "MPI_Irecv", r, kTagHello, poll_sleep_us,
                     std::max(1e-6, deadline - wall_seconds()))) {
      continue;
    }
    missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!missing.empty()) {
    std::fprintf(stderr,
                 "pacer: error: MPI start-up: ranks %s did not answer within %g s "
                 "(engine.startup_timeout_s); aborting the job\n",
                 missing.c_str(), seconds);
    abort_job(1);
  }
  g_peers = std::move(hellos);
  const Hello answer{.pid = static_cast<int64_t>(getpid()), .place = this_place()};
  for (int r = 1; r < g_size; ++r) {
    send_polling(&answer, sizeof answer, r, kTagHello, poll_sleep_us);
  }
}

// A worker rank's half: says hello and waits for rank 0's answer. Rank 0 names a silent worker
// within `seconds`, so a worker waits twice as long before it reports rank 0 as silent.
void hello_to_rank0(double seconds, int poll_sleep_us) {
  const Hello hello{.pid = static_cast<int64_t>(getpid()), .place = this_place()};
  Hello answer;
  MPI_Request requests[2];
  check(MPI_Isend(&hello, sizeof hello, MPI_BYTE, 0, kTagHello, MPI_COMM_WORLD, &requests[0]),
        "MPI_Isend", 0, kTagHello);
  check(MPI_Irecv(&answer, sizeof answer, MPI_BYTE, 0, kTagHello, MPI_COMM_WORLD, &requests[1]),
        "MPI_Irecv", 0, kTagHello);
  const double deadline = wall_seconds() + 2 * seconds;
  for (MPI_Request& request : requests) {
    if (wait_polling(request, "the start-up handshake", 0, kTagHello, poll_sleep_us,
                     std::max(1e-6, deadline - wall_seconds()))) {
      continue;
    }
    std::fprintf(stderr,
                 "pacer: error: MPI start-up: rank 0 did not answer rank %d within %g s "
                 "(engine.startup_timeout_s); aborting the job\n",
                 g_rank, 2 * seconds);
    abort_job(1);
  }
  g_peers.assign(1, answer);  // rank 0, for rank_known_dead(0)
}

}  // namespace

void start(double timeout_s, int poll_sleep_us) {
  if (timeout_s <= 0 || active()) {
    init();
    return;
  }
  {
    // Rank 0 reports first; a worker rank only when rank 0 itself is what hangs, one after
    // another (by rank) so that the first report ends the job before the next.
    const int rank = launcher_rank();
    const double seconds = rank <= 0 ? timeout_s : 2 * timeout_s + 0.2 * rank;
    Watchdog watchdog(
        seconds,
        fmt::format("pacer: error: MPI start-up: MPI_Init did not return within {:g} s on rank {} "
                    "(engine.startup_timeout_s): another rank of the job is stopped, has not "
                    "started or cannot be reached; ending the job",
                    seconds, rank < 0 ? std::string("?") : std::to_string(rank)));
    init();
  }
  if (g_rank == 0) {
    hello_from_workers(timeout_s, poll_sleep_us);
  } else {
    hello_to_rank0(timeout_s, poll_sleep_us);
  }
}

bool active() { return g_active; }
int rank() { return g_rank; }
int size() { return g_size; }

void finalize() {
  if (!g_active) return;
  g_active = false;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (!(g_peers_lost && survives_dead_worker())) {
    MPI_Finalize();
    return;
  }
  // A dead rank: MPI_Finalize usually returns within 0.1 s, but sometimes it waits forever
  // (runtime.h), so it gets a bound. The outputs are written by now; only the end of the
  // process is left.
  Watchdog watchdog(kLostFinalizeTimeoutS,
                    g_rank == 0 ? fmt::format("pacer: warning: MPI_Finalize did not return within "
                                              "{:g} s after a rank was lost; exiting without it",
                                              kLostFinalizeTimeoutS)
                                : std::string(),
                    g_exit_status);
  MPI_Finalize();
}

namespace {

// Whether environment variable `name` holds an Open MPI boolean MCA value that is true.
bool mca_true(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return false;
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  // Open MPI's boolean MCA values (ompi_info): a non-zero integer, t|true|enabled|yes|y.
  if (v == "t" || v == "true" || v == "enabled" || v == "yes" || v == "y") return true;
  char* end = nullptr;
  const long number = std::strtol(v.c_str(), &end, 10);
  return end != v.c_str() && *end == '\0' && number != 0;
}

}  // namespace

bool launched_with_recovery() { return mca_true("OMPI_MCA_orte_enable_recovery"); }

bool supervised_with_exit_allowed() {
  return rank_supervised() && mca_true("OMPI_MCA_orte_allowed_exit_without_sync");
}

namespace {
bool slurm_pmix() {
  const char* ns = std::getenv("PMIX_NAMESPACE");
  return ns != nullptr && std::string(ns).rfind("slurm", 0) == 0;
}
}  // namespace

bool survives_dead_worker() {
  // Under pacer mpi-rank a dead worker's rank ends without MPI_Finalize: without
  // orte_allowed_exit_without_sync a remote daemon takes that for an abnormal end, whatever
  // --enable-recovery says.
  if (rank_supervised()) return supervised_with_exit_allowed();
  return launched_with_recovery();
}

std::string launcher_name() {
  if (std::getenv("OMPI_MCA_orte_hnp_uri") != nullptr) return "mpirun";
  // Not SLURM_STEP_ID alone: every process a launcher's daemon started by srun starts inherits it.
  if (slurm_pmix()) return "srun";
  return "an unknown launcher";
}

std::string dead_worker_warning() {
  const std::string launcher = launcher_name();
  if (launcher == "mpirun" && rank_supervised()) {
    return "MPI engine: this rank runs under pacer mpi-rank, but mpirun was not given `--mca "
           "orte_allowed_exit_without_sync 1` on its command line (or in the environment, "
           "OMPI_MCA_orte_allowed_exit_without_sync=1), so if a worker process dies Open MPI "
           "ends the whole job, or never returns across hosts; add it (docs/mpi.md)";
  }
  if (launcher == "srun") {
    return "MPI engine: this job was launched by srun, and Slurm's PMIx plugin cancels the whole "
           "job step when a rank's process dies (--kill-on-bad-exit=0 and --no-kill do not "
           "prevent it), the run with it; to go on with the surviving workers, run mpirun inside "
           "the allocation: `salloc -n <workers + 1> mpirun --mca orte_allowed_exit_without_sync "
           "1 pacer mpi-rank run ...` (docs/mpi.md, Slurm)";
  }
  return fmt::format(
      "MPI engine: this job was launched by {} neither as `mpirun --mca "
      "orte_allowed_exit_without_sync 1 ... pacer mpi-rank run ...` nor with `mpirun "
      "--enable-recovery`, so if a worker process dies Open MPI ends the whole job, and the run "
      "with it; launch it one of these ways to go on with the surviving workers (the first on any "
      "number of hosts, the second on one host only: docs/mpi.md)",
      launcher);
}

void set_rank_lost(int rank, bool lost) {
  PACER_CHECK(g_active && g_rank == 0 && rank >= 1 && rank < g_size);
  if (g_lost.size() != static_cast<size_t>(g_size)) g_lost.assign(g_size, false);
  g_lost[rank] = lost;
}

bool rank_known_dead(int rank) {
  if (rank < 0 || rank == g_rank || static_cast<size_t>(rank) >= g_peers.size()) return false;
  const Hello& peer = g_peers[rank];
  static const uint64_t here = this_place();
  if (peer.place == 0 || peer.place != here || peer.pid <= 0) return false;
  if (kill(static_cast<pid_t>(peer.pid), 0) != 0) return errno == ESRCH;
  // Not reaped yet: "pid (name) Z ..." in its stat line.
  const std::string stat = first_line(fmt::format("/proc/{}/stat", peer.pid).c_str());
  const size_t name_end = stat.rfind(')');
  return name_end != std::string::npos && stat.compare(name_end, 3, ") Z") == 0;
}

std::vector<int> lost_ranks() {
  std::vector<int> out;
  for (size_t r = 0; r < g_lost.size(); ++r) {
    if (g_lost[r]) out.push_back(static_cast<int>(r));
  }
  return out;
}

void abort_job(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

bool interrupt_requested() { return interrupt_signal() != 0; }

const char* interrupt_signal_name() { return pacer::interrupt_signal_name(); }

namespace {

// Receives every worker rank's setup report (an empty text = ready, else its error), in whatever
// order they come; ends the job if some rank is silent for engine.timeout_s (they cannot be
// told anything reliable then). Index r holds rank r's report.
std::vector<std::string> collect_setup_reports(int workers, const SessionOptions& options) {
  std::vector<bool> reported(workers + 1, false);
  std::vector<std::string> errors(workers + 1);
  int pending = workers;
  const double start = wall_seconds();
  while (pending > 0) {
    int flag = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, kTagSetup, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe", -1,
          kTagSetup);
    if (!flag) {
      if (options.timeout_s > 0 && wall_seconds() - start > options.timeout_s) {
        std::string missing;
        for (int r = 1; r <= workers; ++r) {
          if (!reported[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        }
        // The silent ranks cannot be told anything reliable: end the job.
        std::fprintf(stderr,
                     "pacer: error: MPI: ranks %s did not report their setup within %g s "
                     "(engine.timeout_s); aborting the job\n",
                     missing.c_str(), options.timeout_s);
        abort_job(1);
      }
      poll_sleep(options.poll_sleep_us);
      continue;
    }
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::string text(static_cast<size_t>(count), '\0');
    check(MPI_Recv(text.data(), count, MPI_BYTE, status.MPI_SOURCE, kTagSetup, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE),
          "MPI_Recv", status.MPI_SOURCE, kTagSetup);
    const int r = status.MPI_SOURCE;
    if (r < 1 || r > workers || reported[r]) {
      fail("MPI: unexpected setup report from rank {}", r);
    }
    reported[r] = true;
    errors[r] = std::move(text);
    --pending;
  }
  return errors;
}

}  // namespace

void begin_run(const std::string& config_toml, int workers, const SessionOptions& options) {
  PACER_CHECK(g_active && g_rank == 0);
  if (g_size != workers + 1) {
    fail(
        "engine.name = \"mpi\" needs workers + 1 = {} MPI processes (rank 0 runs the master, "
        "ranks 1..{} the workers) but this job has {}: launch it as mpirun -np {} pacer ...",
        workers + 1, workers, g_size, workers + 1);
  }
  if (const std::vector<int> lost = lost_ranks(); !lost.empty()) {
    fail(
        "MPI: rank {} (worker {}) was lost in an earlier run of this job (engine.worker_timeout_s) "
        "and every run needs all {} worker ranks: start the remaining runs in a new mpirun job",
        lost.front(), lost.front() - 1, workers);
  }
  // Run command: header + the configuration text, one message per worker rank.
  std::vector<char> command(sizeof(CommandHeader) + config_toml.size());
  CommandHeader header{.kind = Command::kRun, .exit_status = 0};
  std::memcpy(command.data(), &header, sizeof header);
  std::memcpy(command.data() + sizeof header, config_toml.data(), config_toml.size());
  std::vector<MPI_Request> sends(workers);
  for (int r = 1; r <= workers; ++r) {
    check(MPI_Isend(command.data(), static_cast<int>(command.size()), MPI_BYTE, r, kTagCommand,
                    MPI_COMM_WORLD, &sends[r - 1]),
          "MPI_Isend", r, kTagCommand);
  }

  const std::vector<std::string> errors = collect_setup_reports(workers, options);
  for (int r = 1; r <= workers; ++r) {
    wait_polling(sends[r - 1], "MPI_Isend", r, kTagCommand, options.poll_sleep_us, 0);
  }

  int first_failed = 0, failed = 0;
  for (int r = 1; r <= workers; ++r) {
    if (!errors[r].empty()) {
      if (!first_failed) first_failed = r;
      ++failed;
    }
  }
  const int64_t go = failed == 0 ? 1 : 0;
  for (int r = 1; r <= workers; ++r) {
    send_polling(&go, sizeof go, r, kTagGo, options.poll_sleep_us);
  }
  if (failed) {
    fail("rank {} (worker {}) could not set up the run: {}{}", first_failed, first_failed - 1,
         errors[first_failed],
         failed > 1 ? fmt::format(" ({} other worker ranks failed too)", failed - 1) : "");
  }
}

void end_session(int exit_status) {
  PACER_CHECK(g_active && g_rank == 0);
  const std::vector<int> lost = lost_ranks();
  g_exit_status = exit_status;
  g_peers_lost = !lost.empty();
  // Static: a send to a lost rank may never complete, and MPI may read the buffer until then.
  static CommandHeader header;
  header = CommandHeader{
      .kind = Command::kExit, .exit_status = exit_status, .peers_lost = g_peers_lost ? 1 : 0};
  std::vector<MPI_Request> sends(std::max(0, g_size - 1));
  for (int r = 1; r < g_size; ++r) {
    // A send to a dead peer never completes, and over TCP it makes Open MPI print a warning.
    if (rank_known_dead(r)) continue;
    check(
        MPI_Isend(&header, sizeof header, MPI_BYTE, r, kTagCommand, MPI_COMM_WORLD, &sends[r - 1]),
        "MPI_Isend", r, kTagCommand);
  }
  for (int r = 1; r < g_size; ++r) {
    if (std::find(lost.begin(), lost.end(), r) != lost.end()) continue;
    if (!wait_polling(sends[r - 1], "MPI_Isend", r, kTagCommand, 200, 60)) {
      std::fprintf(stderr,
                   "pacer: error: MPI: rank %d did not take the exit command within 60 s; "
                   "aborting the job\n",
                   r);
      abort_job(exit_status ? exit_status : 1);
    }
  }
}

namespace {

// Worker ranks, waiting for rank 0 without a timeout: ends the job with one error once rank 0's
// process is seen to be gone (under --enable-recovery mpirun does not end the job for it).
void check_rank0_alive(double& next_check) {
  if (wall_seconds() < next_check) return;
  next_check = wall_seconds() + kLivenessCheckS;
  if (!rank_known_dead(0)) return;
  std::fprintf(stderr,
               "pacer: error: rank %d: rank 0 (the master) has ended: its process is gone; "
               "aborting the job\n",
               g_rank);
  abort_job(1);
}

}  // namespace

Command wait_command(int poll_sleep_us) {
  MPI_Status status;
  double next_check = 0;
  while (true) {
    int flag = 0;
    check(MPI_Iprobe(0, kTagCommand, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe", 0, kTagCommand);
    if (flag) break;
    check_rank0_alive(next_check);
    poll_sleep(poll_sleep_us);
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<char> buffer(static_cast<size_t>(count));
  check(MPI_Recv(buffer.data(), count, MPI_BYTE, 0, kTagCommand, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv", 0, kTagCommand);
  if (buffer.size() < sizeof(CommandHeader)) fail("MPI: malformed command from rank 0");
  CommandHeader header;
  std::memcpy(&header, buffer.data(), sizeof header);
  Command command;
  command.kind = header.kind == Command::kRun ? Command::kRun : Command::kExit;
  command.exit_status = static_cast<int>(header.exit_status);
  command.peers_lost = header.peers_lost != 0;
  if (command.kind == Command::kExit) {
    g_exit_status = command.exit_status;
    g_peers_lost = command.peers_lost;
  }
  command.config_toml.assign(buffer.data() + sizeof header, buffer.size() - sizeof header);
  return command;
}

bool report_setup(const std::string& error, int poll_sleep_us) {
  int64_t go = 0;
  MPI_Request receive;
  check(MPI_Irecv(&go, sizeof go, MPI_BYTE, 0, kTagGo, MPI_COMM_WORLD, &receive), "MPI_Irecv", 0,
        kTagGo);
  send_polling(error.data(), static_cast<int>(error.size()), 0, kTagSetup, poll_sleep_us);
  double next_check = 0;
  while (!wait_polling(receive, "MPI_Irecv", 0, kTagGo, poll_sleep_us, kLivenessCheckS)) {
    check_rank0_alive(next_check);
  }
  return go == 1;
}

}  // namespace pacer::mpi
