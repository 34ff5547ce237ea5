// pacer: the command-line program. One function per subcommand; the table in main() wires them.
//
// Exit status: 0 on success, 1 when pacer reports an error (one line on stderr naming the key or
// file and what was expected), 2 on a command-line usage error, 130 when an MPI run was
// interrupted (SIGINT/SIGTERM; its outputs are written with status "interrupted").
//
// MPI. `run` and `compare` with --engine mpi (or engine.name = "mpi" in the config) start MPI:
// rank 0 runs the command, ranks 1..n serve it (serve_mpi_worker_rank) and exit with the status
// rank 0 ends with. Errors are printed once, by rank 0.
#include <CLI/CLI.hpp>
#include <Eigen/Core>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/log.h"
#include "pacer/data/loaders.h"
#include "pacer/experiment/compare.h"
#include "pacer/experiment/experiment.h"

#ifdef PACER_HAVE_TORCH
#include "pacer/model/torch_models.h"
#endif
#ifdef PACER_HAVE_MPI
#include "pacer/engine/mpi/runtime.h"
#endif

namespace pacer {
namespace {

struct ConfigArgs {
  std::string path;
  std::vector<std::string> overrides;
  std::string out_dir;
  std::string engine;  // --engine: sets engine.name
};

Config load_config(const ConfigArgs& args) {
  Config config = Config::load(args.path);
  for (const std::string& assignment : args.overrides) config.set(assignment);
  if (!args.engine.empty()) config.set_string("engine.name", args.engine);
  return config;
}

// Whether the command runs on the MPI engine (--engine, else engine.name in the config). A config
// that cannot be loaded says no: the command then reports the error itself.
bool wants_mpi(const ConfigArgs& args) {
  if (!args.engine.empty()) return args.engine == "mpi";
  try {
    return load_config(args).get_string("engine.name", "sim") == "mpi";
  } catch (const std::exception&) {
    return false;
  }
}

std::string default_out_dir(const std::string& config_path) {
  return "runs/" + std::filesystem::path(config_path).stem().string();
}

std::string format_target(const nlohmann::json& summary) {
  const nlohmann::json& targets = summary["targets"];
  if (targets.empty()) return "no target set";
  const nlohmann::json& t = targets[0];
  if (!t["reached"].get<bool>()) {
    return fmt::format("target loss {} not reached", t["loss"].get<double>());
  }
  return fmt::format("target loss {} reached at step {} (t = {:.2f} s)", t["loss"].get<double>(),
                     t["steps"].get<int64_t>(), t["time"].get<double>());
}

int command_run(const ConfigArgs& args) {
  Config config = load_config(args);
  RunOptions options;
  options.out_dir = args.out_dir.empty() ? default_out_dir(args.path) : args.out_dir;
  RunOutcome outcome = run_experiment(config, options);
  const nlohmann::json& s = outcome.summary;
  if (outcome.status == "interrupted") {
    std::printf("%s: interrupted after %lld steps, t = %.2f s; log and summary: %s/\n",
                s["method"].get<std::string>().c_str(),
                static_cast<long long>(s["steps"].get<int64_t>()), s["time"].get<double>(),
                options.out_dir.c_str());
    return 130;
  }
  std::printf("%s: %s after %lld steps, t = %.2f s (mean step %.4f s); %s\n",
              s["method"].get<std::string>().c_str(), outcome.status.c_str(),
              static_cast<long long>(s["steps"].get<int64_t>()), s["time"].get<double>(),
              s["mean_step_time"].get<double>(), format_target(s).c_str());
  const nlohmann::json& fin = s["final"];
  if (fin.contains("test_accuracy")) {
    std::printf("final: full training loss F %.4f, test accuracy %.4f\n",
                fin["full_loss"].get<double>(), fin["test_accuracy"].get<double>());
  } else if (fin.contains("full_loss")) {
    std::printf("final: full training loss F %.6g, |grad F|^2 %.3g\n",
                fin["full_loss"].get<double>(), fin["grad_norm_sq"].get<double>());
  }
  std::printf("log, summary and resolved config: %s/\n", options.out_dir.c_str());
  return 0;
}

int command_compare(const ConfigArgs& args, const std::string& methods, int seeds) {
  Config config = load_config(args);
  CompareOptions options;
  options.methods = split_method_list(methods);
  options.seeds = seeds;
  options.out_dir = args.out_dir.empty() ? default_out_dir(args.path) : args.out_dir;
  CompareResult result = run_comparison(config, options);
  std::printf("%s", result.markdown.c_str());
  std::printf("\ntable: %s/compare.md, %s/compare.csv; per-run logs: %s/<method>/seed<k>/\n",
              options.out_dir.c_str(), options.out_dir.c_str(), options.out_dir.c_str());
  return 0;
}

int command_data_info(const std::string& path) {
  std::printf("%s", describe_data_file(path).c_str());
  return 0;
}

int command_version() {
  std::printf("pacer %s\n", PACER_VERSION);
  std::printf("eigen %d.%d.%d\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
#ifdef PACER_HAVE_MPI
  std::printf("mpi engine: built\n");
#else
  std::printf("mpi engine: not built\n");
#endif
#ifdef PACER_HAVE_TORCH
  std::printf("%s", torch_build_info().c_str());
#else
  std::printf("libtorch models: not built\n");
#endif
  return 0;
}

void add_config_args(CLI::App* command, ConfigArgs& args) {
  command->add_option("config", args.path, "run configuration (TOML)")->required();
  command->add_option("--set", args.overrides, "override a key: --set key=value (repeatable)")
      ->take_all();
  command->add_option("--out", args.out_dir, "output folder (default runs/<config name>)");
  command
      ->add_option("--engine", args.engine,
                   "sim (simulator) or mpi (under mpirun -np workers+1); sets engine.name")
      ->check(CLI::IsMember({"sim", "mpi"}));
}

}  // namespace
}  // namespace pacer

int main(int argc, char** argv) {
  using namespace pacer;
  CLI::App app{"pacer: straggler-resilient distributed training (simulator and MPI)"};
  app.require_subcommand(1);
  app.fallthrough();  // -q and -v are accepted after the subcommand too
  bool quiet = false, verbose = false;
  app.add_flag("-q,--quiet", quiet, "only warnings and errors on stderr");
  app.add_flag("-v,--verbose", verbose, "debug messages on stderr");

  ConfigArgs run_args;
  CLI::App* run = app.add_subcommand("run", "train with one method; writes log.csv, summary.json");
  add_config_args(run, run_args);

  ConfigArgs compare_args;
  std::string methods;
  int seeds = 1;
  CLI::App* compare = app.add_subcommand("compare", "run several methods and print one table");
  add_config_args(compare, compare_args);
  compare->add_option("--methods", methods, "comma-separated method specs, e.g. dgd,is-sgd:k=2")
      ->required();
  compare->add_option("--seeds", seeds, "number of seeds (seed, seed+1, ...)");

  std::string data_path;
  CLI::App* data = app.add_subcommand("data", "inspect data files");
  data->require_subcommand(1);
  CLI::App* info = data->add_subcommand("info", "print what a data file holds");
  info->add_option("file", data_path, "IDX (.gz), CIFAR-10 binary, LIBSVM or CSV file")->required();

  CLI::App* version = app.add_subcommand("version", "print version and build information");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help exits 0; any usage error 2
  }
  if (quiet) set_log_level(LogLevel::kWarning);
  if (verbose) set_log_level(LogLevel::kDebug);

  const ConfigArgs* config_args = *run ? &run_args : *compare ? &compare_args : nullptr;
  const bool mpi_job = config_args != nullptr && wants_mpi(*config_args);
#ifdef PACER_HAVE_MPI
  if (mpi_job) {
    try {
      mpi::init();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pacer: error: %s\n", e.what());
      return 1;
    }
    if (mpi::rank() != 0) {
      // A worker rank: serve rank 0's runs; rank 0 prints the errors.
      int status = 1;
      try {
        status = serve_mpi_worker_rank();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "pacer: error: rank %d: %s\n", mpi::rank(), e.what());
      }
      mpi::finalize();
      return status;
    }
  }
#endif

  int status = 0;
  try {
    if (*run) status = command_run(run_args);
    if (*compare) status = command_compare(compare_args, methods, seeds);
    if (*info) status = command_data_info(data_path);
    if (*version) status = command_version();
  } catch (const Error& e) {
    std::fprintf(stderr, "pacer: error: %s\n", e.what());
    status = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pacer: error: %s\n", e.what());
    status = 1;
  }
#ifndef PACER_HAVE_MPI
  (void)mpi_job;  // run_experiment reports that the MPI engine was not built
#endif
#ifdef PACER_HAVE_MPI
  if (mpi_job) {
    std::fflush(stdout);
    mpi::end_session(status);
    mpi::finalize();
  }
#endif
  return status;
}
