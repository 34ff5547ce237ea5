#include "pacer/engine/mpi/runtime.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "wire.h"

namespace pacer::mpi {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;  // the signal number, 0 before any
bool g_active = false;
int g_rank = 0;
int g_size = 1;

extern "C" void on_interrupt(int signal) { g_interrupted = signal; }

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Sends `bytes` to `peer` and polls until the send completes.
void send_polling(const void* data, int bytes, int peer, int tag, int sleep_us) {
  MPI_Request request;
  check(MPI_Isend(data, bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &request), "MPI_Isend", peer,
        tag);
  wait_polling(request, "MPI_Isend", peer, tag, sleep_us, 0);
}

}  // namespace

const char* tag_name(int tag) {
  switch (tag) {
    case kTagCommand:
      return "command";
    case kTagSetup:
      return "setup";
    case kTagGo:
      return "go";
    case kTagHello:
      return "hello";
    case kTagJob:
      return "job";
    case kTagModel:
      return "model";
    case kTagReply:
      return "reply";
    case kTagPayload:
      return "payload";
    default:
      return "?";
  }
}

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
  if (!g_active) install_interrupt_handlers();
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

// Ends this process with status 1, after printing `message` as one error line, unless disarm()
// is called within `seconds`. MPI cannot be aborted before MPI_Init has returned, so ending the
// process is what is left: mpirun then ends the rest of the job.
class Watchdog {
 public:
  Watchdog(double seconds, std::string message)
      : message_(std::move(message)), thread_([this, seconds] { watch(seconds); }) {}
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
    std::fprintf(stderr, "pacer: error: %s\n", message_.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }

  std::string message_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  std::thread thread_;
};

// Rank 0's half of the start-up handshake: a hello from every worker rank within `seconds`, then
// an answer to each. Names the silent ranks and aborts the job otherwise.
void hello_from_workers(double seconds, int poll_sleep_us) {
  std::vector<int64_t> hellos(g_size, 0);
  std::vector<MPI_Request> receives(g_size, MPI_REQUEST_NULL);
  for (int r = 1; r < g_size; ++r) {
    check(MPI_Irecv(&hellos[r], sizeof(int64_t), MPI_BYTE, r, kTagHello, MPI_COMM_WORLD,
                    &receives[r]),
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
  const int64_t answer = 1;
  for (int r = 1; r < g_size; ++r) {
    send_polling(&answer, sizeof answer, r, kTagHello, poll_sleep_us);
  }
}

// A worker rank's half: says hello and waits for rank 0's answer. Rank 0 names a silent worker
// within `seconds`, so a worker waits twice as long before it reports rank 0 as silent.
void hello_to_rank0(double seconds, int poll_sleep_us) {
  const int64_t hello = 1;
  int64_t answer = 0;
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
        fmt::format("MPI start-up: MPI_Init did not return within {:g} s on rank {} "
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
  if (!finalized) MPI_Finalize();
}

void abort_job(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

bool interrupt_requested() { return g_interrupted != 0; }

const char* interrupt_signal_name() {
  switch (g_interrupted) {
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

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void poll_sleep(int microseconds) {
  std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
}

void begin_run(const std::string& config_toml, int workers, const SessionOptions& options) {
  PACER_CHECK(g_active && g_rank == 0);
  if (g_size != workers + 1) {
    fail(
        "engine.name = \"mpi\" needs workers + 1 = {} MPI processes (rank 0 runs the master, "
        "ranks 1..{} the workers) but this job has {}: launch it as mpirun -np {} pacer ...",
        workers + 1, workers, g_size, workers + 1);
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

  // Setup reports, in whatever order they come.
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
  CommandHeader header{.kind = Command::kExit, .exit_status = exit_status};
  std::vector<MPI_Request> sends(std::max(0, g_size - 1));
  for (int r = 1; r < g_size; ++r) {
    check(
        MPI_Isend(&header, sizeof header, MPI_BYTE, r, kTagCommand, MPI_COMM_WORLD, &sends[r - 1]),
        "MPI_Isend", r, kTagCommand);
  }
  for (int r = 1; r < g_size; ++r) {
    if (!wait_polling(sends[r - 1], "MPI_Isend", r, kTagCommand, 200, 60)) {
      std::fprintf(stderr,
                   "pacer: error: MPI: rank %d did not take the exit command within 60 s; "
                   "aborting the job\n",
                   r);
      abort_job(exit_status ? exit_status : 1);
    }
  }
}

Command wait_command(int poll_sleep_us) {
  MPI_Status status;
  while (true) {
    int flag = 0;
    check(MPI_Iprobe(0, kTagCommand, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe", 0, kTagCommand);
    if (flag) break;
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
  command.config_toml.assign(buffer.data() + sizeof header, buffer.size() - sizeof header);
  return command;
}

bool report_setup(const std::string& error, int poll_sleep_us) {
  int64_t go = 0;
  MPI_Request receive;
  check(MPI_Irecv(&go, sizeof go, MPI_BYTE, 0, kTagGo, MPI_COMM_WORLD, &receive), "MPI_Irecv", 0,
        kTagGo);
  send_polling(error.data(), static_cast<int>(error.size()), 0, kTagSetup, poll_sleep_us);
  wait_polling(receive, "MPI_Irecv", 0, kTagGo, poll_sleep_us, 0);
  return go == 1;
}

}  // namespace pacer::mpi
