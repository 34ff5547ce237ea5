// pacer: the command-line program. The commands are a table (command_table.cc, cli.h); this file
// parses the command line, starts the job's processes when the command's engine has them, and
// runs the command.
//
// Exit status: 0 on success, 1 when pacer reports an error (one line on stderr naming the key or
// file and what was expected), 2 on a command-line usage error, 130 (SIGINT) or 143 (SIGTERM)
// when `run` or `compare` was interrupted on either engine (core/interrupt.h): a run stops
// between two events (simulator) or in its poll loop (MPI) and writes its outputs with status
// "interrupted"; a comparison stops at that run and keeps the runs it completed. Either prints the
// command that continues it: `pacer run --resume DIR`, or for compare, sweep and advise the same
// command line, which reuses the finished runs and resumes the interrupted one. A signal that
// comes after the run's last update changes nothing: the run ends as it would have.
//
// Engines come from the registry (engine/registry.h); this file names none. A command whose
// engine is multi-process (MPI: --engine mpi or engine.name in the config) starts the job's
// processes first (start_job_processes): rank 0 runs the command, the others serve it
// (serve_job_worker) and exit with the status rank 0 ends with. Errors are printed once, by
// rank 0. Start-up is bounded by engine.startup_timeout_s. A worker process that alone receives
// SIGTERM or SIGINT stops, and the run ends with an error naming it (exit status 1).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "pacer/core/error.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/engine/registry.h"
#include "pacer/run/experiment.h"

namespace pacer::cli {
namespace {

// Starts the job's processes when the command's engine is multi-process (engine/registry.h) and
// the command runs on it (run, compare, profile, validate: sweep and advise only simulate, and
// refuse other engines themselves). In a worker process, serves rank 0's runs and sets
// `worker_status`.
// Refuses an in-process engine started by a launcher on several processes. Returns null when no
// job was started; throws on a start that failed.
std::unique_ptr<JobProcesses> start_job(const std::string& command, const ConfigArgs& args,
                                        std::optional<int>& worker_status) {
  const std::string engine = chosen_engine(args);
  const EngineInfo* info = find_engine(engine);
  if (!info) return nullptr;  // the command reports the unknown name
  if (!info->multi_process) {
    const std::optional<LaunchedRank> launched = launched_rank();
    if (launched && launched->size > 1) {
      worker_status = refuse_in_process_engine_under_launcher(*launched, engine);
    }
    return nullptr;
  }
  if (command == "sweep" || command == "advise") return nullptr;
  const std::optional<Config> config = loadable_config(args);
  std::unique_ptr<JobProcesses> job = start_job_processes(engine, config ? &*config : nullptr);
  if (job && job->is_worker()) {
    worker_status = 1;
    try {
      worker_status = serve_job_worker(*job);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pacer: error: worker process: %s\n", e.what());
    }
  }
  return job;
}

// Runs the parsed command and returns its exit status; pacer's errors are one line on stderr. An
// interrupted command says how to continue it: for compare, sweep and advise the same command
// line (which reuses the finished runs and resumes the rest); `run` prints its own.
int run_command(const Parsed& parsed, bool under_launcher, int argc, char** argv) {
  try {
    return parsed.run(argc, argv);
  } catch (const Interrupted& e) {
    std::fprintf(stderr, "pacer: %s\n", e.what());
    std::fprintf(stderr, "pacer: continue it with the same command%s: %s\n",
                 under_launcher ? " (under the same launcher)" : "",
                 command_line(argc, argv).c_str());
    return interrupt_exit_status();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pacer: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace pacer::cli

int main(int argc, char** argv) {
  using namespace pacer;
  using namespace pacer::cli;
  // `pacer [-q|-v] mpi-rank COMMAND...`: every other word is the child's command line, the global
  // flags before mpi-rank included.
  int first = 1;
  while (first < argc && argv[first][0] == '-') ++first;
  if (first < argc && std::string(argv[first]) == "mpi-rank") {
    std::vector<std::string> child(argv + 1, argv + first);
    child.insert(child.end(), argv + first + 1, argv + argc);
    try {
      return command_mpi_rank(child);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pacer: error: %s\n", e.what());
      return 1;
    }
  }
  CLI::App app{"pacer: straggler-resilient distributed training (simulator and MPI)"};
  app.require_subcommand(1);
  app.fallthrough();  // -q and -v are accepted after the subcommand too
  bool quiet = false, verbose = false;
  app.add_flag("-q,--quiet", quiet, "only warnings and errors on stderr");
  app.add_flag("-v,--verbose", verbose, "debug messages on stderr");
  std::vector<std::pair<CLI::App*, Parsed>> commands;
  for (const CommandDef& c : command_table()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    commands.emplace_back(sub, c.define(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = e.get_exit_code() == 0 ? "" : unknown_command(app, argc, argv);
    if (!unknown.empty()) {
      std::fprintf(stderr, "pacer: error: %s\n", unknown.c_str());
      return 2;
    }
    return app.exit(e) == 0 ? 0 : 2;  // --help exits 0; any usage error 2
  }
  if (quiet) set_log_level(LogLevel::kWarning);
  if (verbose) set_log_level(LogLevel::kDebug);
  const auto chosen = std::find_if(commands.begin(), commands.end(),
                                   [](const auto& c) { return c.first->parsed(); });
  const Parsed& parsed = chosen->second;

  std::unique_ptr<JobProcesses> job;
  if (parsed.config != nullptr) {
    std::optional<int> worker_status;
    try {
      job = start_job(chosen->first->get_name(), *parsed.config, worker_status);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pacer: error: %s\n", e.what());
      return 1;
    }
    if (worker_status) return *worker_status;  // `job` ends this process's part of the job
    // After the job's processes have started (MPI installs the same handlers): SIGINT and
    // SIGTERM stop a run cleanly instead of ending the process.
    install_interrupt_handlers();
  }
  const int status = run_command(parsed, job != nullptr, argc, argv);
  if (job) {
    std::fflush(stdout);
    job->finish(status);
  }
  return status;
}
