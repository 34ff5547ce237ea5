// What the pacer commands share (cli.h): loading a configuration with its edits, the engine and
// the launcher, the output folder, the command line; and pacer version. The commands themselves
// are in one file per family: commands_run.cc (run, profile), commands_study.cc (compare, sweep,
// advise) and commands_traces.cc (data-info, fit, stragglers, timeline).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"
#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/core/process.h"
#include "pacer/core/run_folder.h"
#include "pacer/data/loaders.h"
#include "pacer/engine/registry.h"
#include "pacer/method/method.h"
#include "pacer/model/torch_plugin.h"
#include "pacer/report/fit_report.h"
#include "pacer/report/job_log.h"
#include "pacer/report/stragglers_report.h"
#include "pacer/report/timeline.h"
#include "pacer/run/experiment.h"
#include "pacer/study/advise.h"
#include "pacer/study/compare.h"
#include "pacer/study/sweep.h"

namespace pacer::cli {

std::vector<std::string> ordered_edits(const ConfigArgs& args) {
  std::vector<std::string> words;
  size_t next_set = 0, next_unset = 0;
  if (args.command) {
    for (const CLI::Option* option : args.command->parse_order()) {
      if (option == args.set_option && next_set < args.overrides.size()) {
        words.insert(words.end(), {"--set", args.overrides[next_set++]});
      } else if (option == args.unset_option && next_unset < args.unsets.size()) {
        words.insert(words.end(), {"--unset", args.unsets[next_unset++]});
      }
    }
  }
  for (; next_set < args.overrides.size(); ++next_set) {
    words.insert(words.end(), {"--set", args.overrides[next_set]});
  }
  for (; next_unset < args.unsets.size(); ++next_unset) {
    words.insert(words.end(), {"--unset", args.unsets[next_unset]});
  }
  return words;
}

Config load_config(const ConfigArgs& args) {
  Config config = Config::load(args.resume.empty() ? args.path : args.resume + "/config.toml");
  const std::vector<std::string> edits = ordered_edits(args);
  for (size_t i = 0; i + 1 < edits.size(); i += 2) {
    if (edits[i] == "--set") {
      config.set(edits[i + 1]);
    } else {
      config.unset(edits[i + 1]);
    }
  }
  if (!args.engine.empty()) {
    config.set_string("engine.name", args.engine, "--engine " + args.engine);
  }
  return config;
}

// Whether the command runs on the MPI engine (--engine, else engine.name in the config). A config
// that cannot be loaded says no: the command then reports the error itself.
// The engine the command line or the config chooses; "" when the config cannot be loaded (the
// run then reports why).
std::string chosen_engine(const ConfigArgs& args) {
  if (!args.engine.empty()) return args.engine;
  try {
    return load_config(args).get_string("engine.name", default_engine());
  } catch (const std::exception&) {
    return "";
  }
}

std::optional<LaunchedRank> launched_rank() {
  const std::pair<const char*, const char*> variables[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMIX_RANK", "PMIX_SIZE"},
      // srun --mpi=pmix sets PMIX_RANK but not PMIX_SIZE (Slurm 22.05). SLURM_NTASKS alone would
      // not do: an salloc or sbatch shell sets it too, with SLURM_PROCID = 0, for every command.
      {"PMIX_RANK", "SLURM_NTASKS"},
      {"PMI_RANK", "PMI_SIZE"}};
  for (const auto& [rank, size] : variables) {
    const char* r = std::getenv(rank);
    const char* n = std::getenv(size);
    if (r && n) return LaunchedRank{std::atol(r), std::atol(n)};
  }
  return std::nullopt;
}

// The names of the multi-process engines, for messages.
static std::string multi_process_engines() {
  std::vector<std::string> names;
  for (const EngineInfo& e : engines()) {
    if (e.multi_process) names.push_back(e.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// A run of an in-process engine started by mpirun on several processes would be n + 1
// independent copies of the same run writing to one folder: refused (rank 0 says why, the others
// exit 1 in silence).
int refuse_in_process_engine_under_launcher(const LaunchedRank& launched,
                                            const std::string& engine) {
  if (launched.rank == 0) {
    std::fprintf(stderr,
                 "pacer: error: this pacer is one of %ld processes started by an MPI launcher, "
                 "but the run's engine runs in one process (engine.name = \"%s\"), so every "
                 "process would run the same run into one folder; add --engine %s (or set "
                 "engine.name in the config) to run it on a multi-process engine, or run pacer "
                 "without the launcher\n",
                 launched.size, engine.c_str(), multi_process_engines().c_str());
  }
  return 1;
}

// The configuration the command line names, for start_job_processes (its startup timeout);
// nullopt when it cannot be loaded (the run then reports why).
std::optional<Config> loadable_config(const ConfigArgs& args) {
  try {
    return load_config(args);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string default_out_dir(const std::string& config_path) {
  return "runs/" + std::filesystem::path(config_path).stem().string();
}

// `word` as a POSIX shell reads it back: as it is when it holds only characters no shell treats
// specially, else in single quotes.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_./=:,@%+-") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The command line this process was started with, as a shell command: what continues an
// interrupted compare, sweep or advise (each reuses what it finished and resumes the rest).
std::string command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + shell_word(argv[i]);
  return line;
}

int command_methods() {
  std::printf("%-20s %-13s %-10s %s\n", "method", "kind", "parameter", "what it does");
  for (const MethodInfo& m : method_infos()) {
    std::printf("%-20s %-13s %-10s %s\n", m.name.c_str(),
                m.synchronous ? "synchronous" : "asynchronous",
                m.parameter.empty() ? "-" : m.parameter.c_str(), m.summary.c_str());
  }
  std::printf(
      "\nA spec sets a method's keys: pgc-cr:s=2, is-sgd:k=3, asgd:optimizer.lr=0.01 "
      "(--methods of compare, sweep, advise, validate). Each method's update rule opens its file "
      "in src/method/; minibatches, the reported loss and stragglers: docs/methods.md.\n");
  return 0;
}

int command_version() {
  std::printf("pacer %s\n", PACER_VERSION);
  std::printf("eigen %d.%d.%d\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
  for (const EngineInfo& e : engines()) {
    std::printf("%s engine: %s\n", e.name.c_str(), e.built ? "built" : "not built");
  }
  std::printf("%s", torch_models_info().c_str());
  return 0;
}

// `resumable`: the command also takes --resume DIR instead of a config (run).
void add_config_args(CLI::App* command, ConfigArgs& args, bool resumable) {
  args.command = command;
  CLI::Option* config = command->add_option("config", args.path, "run configuration (TOML)");
  if (resumable) {
    command
        ->add_option("--resume", args.resume,
                     "continue the run in DIR from its last checkpoint (written every 60 s by "
                     "default, checkpoint.every_s; from step 0 when it wrote none); --set may "
                     "change only max_steps, max_time, max_work, target.* and checkpoint.*")
        ->excludes(config);
  } else {
    config->required();
  }
  args.set_option =
      command
          ->add_option("--set", args.overrides,
                       "override a key: --set key=value (repeatable); changing method.name, "
                       "timing.model, model.name, data.source or partition.scheme drops the "
                       "file's keys of that table that nothing then reads")
          ->take_all();
  args.unset_option =
      command
          ->add_option("--unset", args.unsets,
                       "remove a key (or table) of the file or of an earlier --set (repeatable)")
          ->take_all();
  command->add_option("--out", args.out_dir, "output folder (default runs/<config name>)");
  std::vector<std::string> names;
  std::string described;
  for (const EngineInfo& e : engines()) {
    names.push_back(e.name);
    described += fmt::format("{}{} ({}{}{})", described.empty() ? "" : ", ", e.name,
                             e.simulated ? "simulated clock" : "wall clock",
                             e.multi_process ? ", under a launcher: mpirun -np workers+1" : "",
                             e.built ? "" : ", not in this build");
  }
  command->add_option("--engine", args.engine, "the engine, sets engine.name: " + described)
      ->check(CLI::IsMember(names));
}

// CLI11 answers an unknown command word with "A subcommand is required", without naming it. The
// first word that is not a flag must name one of the program's commands, and the next one a
// command of that command when it has its own (data info). Returns the error to print, or ""
// when every command word is known (CLI11's own message then stands).
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* level = &app;
  std::string path;  // the known words so far, each followed by a space
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    std::vector<std::string> names;
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : level->get_subcommands(std::function<bool(const CLI::App*)>())) {
      names.push_back(sub->get_name());
      if (sub->get_name() == word) next = sub;
    }
    if (names.empty()) return "";  // a command's own arguments follow
    if (!next) {
      return fmt::format("unknown command '{}{}' (expected one of: {})", path, word,
                         fmt::join(names, ", "));
    }
    level = next;
    path += word + " ";
  }
  return "";
}

}  // namespace pacer::cli
