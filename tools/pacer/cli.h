// The command line of pacer (tools/pacer): what the commands share. commands.cc holds what they
// share, commands_run.cc, commands_study.cc and commands_traces.cc one function per command by
// family, command_table.cc the table that wires each to its CLI11 subcommand and
// options (as Ninja's kTools[]), main.cc the program: parse, start the engine's job processes
// when the command's engine has them, run the command.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/study/advise.h"
#include "pacer/study/compare.h"
#include "pacer/study/validate.h"

namespace pacer::cli {

struct ConfigArgs {
  std::string path;
  std::vector<std::string> overrides;  // --set, in command-line order
  std::vector<std::string> unsets;     // --unset, in command-line order
  std::string out_dir;
  std::string engine;  // --engine: sets engine.name
  std::string resume;  // run --resume DIR: the run in DIR, its config DIR/config.toml
  // The subcommand and its --set / --unset options: their interleaving (parse_order) is the
  // order the edits apply in.
  const CLI::App* command = nullptr;
  const CLI::Option* set_option = nullptr;
  const CLI::Option* unset_option = nullptr;
};

struct SweepArgs {
  std::vector<std::string> grids;
  int jobs = 0;  // 0: one per available processor
};

// This process's rank and the job's size when an MPI launcher (Open MPI's mpirun, or a PMI/PMIx
// launcher such as srun) started it, read from the environment the launcher sets; nullopt
// otherwise. Needs no MPI library, so a pacer built without the MPI engine detects it too; read
// before MPI starts (an MPI singleton's MPI_Init sets PMIX_RANK itself).
struct LaunchedRank {
  long rank, size;
};

// A parsed command: the function that runs it, and its configuration arguments when it takes a
// configuration (its engine decides whether the job's processes start first).
struct Parsed {
  std::function<int(int argc, char** argv)> run;
  const ConfigArgs* config = nullptr;
};

struct CommandDef {
  const char* name;
  const char* help;
  Parsed (*define)(CLI::App& sub);
};

// The commands, in the order `pacer --help` lists them (command_table.cc).
const std::vector<CommandDef>& command_table();

// The config file with the --set and --unset edits applied in command-line order (an --unset
// removes a key of the file or of an earlier --set), then --engine.
Config load_config(const ConfigArgs& args);
// The --set and --unset edits in command-line order, as command-line words: "--set", "k=v",
// "--unset", "k", ...
std::vector<std::string> ordered_edits(const ConfigArgs& args);
// A command's default output folder for `config_path`: runs/<its file name without extension>.
std::string default_out_dir(const std::string& config_path);
// `word` as a POSIX shell reads it back: as it is when it holds only characters no shell treats
// specially, else in single quotes.
std::string shell_word(const std::string& word);

// Whether the command runs on the MPI engine (--engine, else engine.name in the config). A config
// that cannot be loaded says no: the command then reports the error itself.
// The engine the command line or the config chooses; "" when the config cannot be loaded (the
// run then reports why).
std::string chosen_engine(const ConfigArgs& args);

std::optional<LaunchedRank> launched_rank();

// A run of an in-process engine started by mpirun on several processes would be n + 1
// independent copies of the same run writing to one folder: refused (rank 0 says why, the others
// exit 1 in silence).
int refuse_in_process_engine_under_launcher(const LaunchedRank& launched,
                                            const std::string& engine);

// The configuration the command line names, for start_job_processes (its startup timeout);
// nullopt when it cannot be loaded (the run then reports why).
std::optional<Config> loadable_config(const ConfigArgs& args);

// `program`: how pacer was started (argv[0]), for the command that continues an interrupted run.
int command_run(const ConfigArgs& args, const std::string& program);

// The command line this process was started with, as a shell command: what continues an
// interrupted compare, sweep or advise (each reuses what it finished and resumes the rest).
std::string command_line(int argc, char** argv);

int command_compare(const ConfigArgs& args, const std::string& methods, CompareOptions options);

// `pacer sweep` (study/sweep.h): every cell is a `pacer compare` process of this executable
// with the cell's keys added as --set, run side by side, up to --jobs at once.
int command_sweep(const ConfigArgs& args, const std::string& methods, const CompareOptions& options,
                  const SweepArgs& sweep);

int command_data_info(const std::string& path);

int command_fit(const std::string& trace, const std::string& out_dir);

// `pacer stragglers INPUT` (report/stragglers_report.h): the per-worker straggler report of a
// run folder, a jobs.csv or a trace.
int command_stragglers(const std::string& input, const std::string& out_dir, int top);

// `pacer profile` (DESIGN.md section 9): `jobs` jobs of the config's model on every worker, as a
// trace. On the simulator in this process (experiment.h, profile_jobs); on MPI a DGD run of
// `jobs` steps on the real ranks, whose jobs.csv gives the durations (job_log.h).
int command_profile(const ConfigArgs& args, int jobs);

int command_advise(const ConfigArgs& args, AdviseOptions options);

// `pacer validate CONFIG` (study/validate.h): every method run for real on the config's engine
// and predicted by replaying the measured logs; prints measured / predicted.
int command_validate(const ConfigArgs& args, ValidateOptions options);

// `pacer claims CLAIMS OUT` (study/claims.h): judges a paper's claims file on the comparisons
// under OUT and writes OUT/report.md and OUT/claims.csv; prints the verdicts. `mode` and
// `command` describe how the runs were made (the reproduction scripts pass them); the runs' wall
// time is read from OUT/wall_seconds where the scripts recorded it.
int command_claims(const std::string& claims, const std::string& out_dir, const std::string& mode,
                   const std::string& command);

// `pacer mpi-rank COMMAND...` (rank_supervisor.cc): runs `pacer COMMAND...` as a child process
// for one rank of an MPI job and ends as that rank should: with the child's exit status; 0 when a
// worker rank's child was killed by a signal (the job goes on without it, on every host); 128 +
// the signal when rank 0's was, or when the signal came from the launcher. Forwards SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to the child. Throws when `args` is empty or the
// process was not started by an MPI launcher.
int command_mpi_rank(const std::vector<std::string>& args);

// `pacer timeline DIR`'s arguments.
struct TimelineArgs {
  std::string dir;
  double from = 0, to = 0;
  bool window = false;  // --from or --to given
  bool all = false;
  std::string format = "both";
};

// `pacer timeline DIR`: the timeline figure and Chrome trace of a run folder's jobs.csv
// (timeline.h, timeline_options_for_run).
int command_timeline(const TimelineArgs& args);

int command_version();
// Every method of method_infos() (method/method.h), one line each.
int command_methods();

// `resumable`: the command also takes --resume DIR instead of a config (run).
void add_config_args(CLI::App* command, ConfigArgs& args, bool resumable = false);

// CLI11 answers an unknown command word with "A subcommand is required", without naming it. The
// first word that is not a flag must name one of the program's commands, and the next one a
// command of that command when it has its own (data info). Returns the error to print, or ""
// when every command word is known (CLI11's own message then stands).
std::string unknown_command(const CLI::App& app, int argc, char** argv);

}  // namespace pacer::cli
