#include "pacer/engine/mpi/runtime.h"

#include <mpi.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "wire.h"

namespace pacer::mpi {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
bool g_active = false;
int g_rank = 0;
int g_size = 1;

extern "C" void on_interrupt(int /*signal*/) { g_interrupted = 1; }

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
