// pacer: the command-line program. One function per subcommand; the table in main() wires them.
//
// Exit status: 0 on success, 1 when pacer reports an error (one line on stderr naming the key or
// file and what was expected), 2 on a command-line usage error, 130 (SIGINT) or 143 (SIGTERM)
// when `run` or `compare` was interrupted on either engine (core/interrupt.h): a run stops
// between two events (simulator) or in its poll loop (MPI) and writes its outputs with status
// "interrupted"; a comparison stops at that run and keeps the runs it completed. A signal that
// comes after the run's last update changes nothing: the run ends as it would have.
//
// MPI. `run` and `compare` with --engine mpi (or engine.name = "mpi" in the config) start MPI:
// rank 0 runs the command, ranks 1..n serve it (serve_mpi_worker_rank) and exit with the status
// rank 0 ends with. Errors are printed once, by rank 0. Start-up (MPI_Init and a first handshake
// with every rank) is bounded by engine.startup_timeout_s (mpi::start). A worker rank that alone
// receives SIGTERM or SIGINT stops, and the run ends with an error naming it (exit status 1).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/core/process.h"
#include "pacer/core/run_folder.h"
#include "pacer/data/loaders.h"
#include "pacer/experiment/advise.h"
#include "pacer/experiment/compare.h"
#include "pacer/experiment/experiment.h"
#include "pacer/experiment/fit_report.h"
#include "pacer/experiment/job_log.h"
#include "pacer/experiment/stragglers_report.h"
#include "pacer/experiment/sweep.h"
#include "pacer/experiment/timeline.h"

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

// The config file with the --set and --unset edits applied in command-line order (an --unset
// removes a key of the file or of an earlier --set), then --engine.
// The --set and --unset edits in command-line order, as command-line words: "--set", "k=v",
// "--unset", "k", ...
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
  if (!args.engine.empty()) config.set_string("engine.name", args.engine);
  return config;
}

// Whether the command runs on the MPI engine (--engine, else engine.name in the config). A config
// that cannot be loaded says no: the command then reports the error itself.
// The engine the command line or the config chooses; "" when the config cannot be loaded (the
// run then reports why).
std::string chosen_engine(const ConfigArgs& args) {
  if (!args.engine.empty()) return args.engine;
  try {
    return load_config(args).get_string("engine.name", "sim");
  } catch (const std::exception&) {
    return "";
  }
}

// This process's rank and the job's size when an MPI launcher (Open MPI's mpirun, or a PMI/PMIx
// launcher such as srun) started it, read from the environment the launcher sets; nullopt
// otherwise. Needs no MPI library, so a pacer built without the MPI engine detects it too; read
// before MPI starts (an MPI singleton's MPI_Init sets PMIX_RANK itself).
struct LaunchedRank {
  long rank, size;
};
std::optional<LaunchedRank> launched_rank() {
  const std::pair<const char*, const char*> variables[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMIX_RANK", "PMIX_SIZE"},
      {"PMI_RANK", "PMI_SIZE"}};
  for (const auto& [rank, size] : variables) {
    const char* r = std::getenv(rank);
    const char* n = std::getenv(size);
    if (r && n) return LaunchedRank{std::atol(r), std::atol(n)};
  }
  return std::nullopt;
}

// A simulator run started by mpirun on several processes would be n + 1 independent copies of the
// same run writing to one folder: refused (rank 0 says why, the others exit 1 in silence).
int refuse_simulator_under_mpirun(const LaunchedRank& launched) {
  if (launched.rank == 0) {
    std::fprintf(stderr,
                 "pacer: error: this pacer is one of %ld processes started by an MPI launcher, "
                 "but the run's engine is the simulator (engine.name = \"sim\"), so every "
                 "process would run the same simulation into one folder; add --engine mpi (or "
                 "engine.name = \"mpi\" in the config) to run it on the MPI engine, or run "
                 "pacer without mpirun for the simulator\n",
                 launched.size);
  }
  return 1;
}

#ifdef PACER_HAVE_MPI
// engine.startup_timeout_s, read before MPI starts since it bounds the start (mpi::start). A
// config that cannot be loaded, or a bad value, gets the default here; the run then reports the
// error (read_mpi_options checks the key).
double startup_timeout(const ConfigArgs& args) {
  try {
    const double seconds =
        load_config(args).get_double("engine.startup_timeout_s", mpi::kDefaultStartupTimeoutS);
    if (seconds >= 0 && seconds < 1e9) return seconds;
  } catch (const std::exception&) {
  }
  return mpi::kDefaultStartupTimeoutS;
}
#endif

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
  if (args.resume.empty() == args.path.empty()) {
    std::fprintf(stderr, "pacer run: give either CONFIG or --resume DIR\n");
    return 2;
  }
  if (!args.resume.empty() && !args.out_dir.empty() && args.out_dir != args.resume) {
    std::fprintf(stderr, "pacer run: --out: a resumed run continues in its own folder, DIR\n");
    return 2;
  }
  // A crash between the two renames of a folder swap (run_folder.h) is repaired before the
  // resumed run's files are read.
  if (!args.resume.empty()) RunFolder::reopen(args.resume);
  Config config = load_config(args);
  RunOptions options;
  options.timeline_figure = true;
  options.resume = !args.resume.empty();
  options.out_dir = options.resume         ? args.resume
                    : args.out_dir.empty() ? default_out_dir(args.path)
                                           : args.out_dir;
  RunOutcome outcome = run_experiment(config, options);
  const nlohmann::json& s = outcome.summary;
  if (outcome.status == "interrupted") {
    std::printf("%s: interrupted after %lld steps, t = %.2f s; log and summary: %s/\n",
                s["method"].get<std::string>().c_str(),
                static_cast<long long>(s["steps"].get<int64_t>()), s["time"].get<double>(),
                options.out_dir.c_str());
    return interrupt_exit_status();
  }
  if (outcome.status == "diverged") {
    fail(
        "training diverged at step {}: {} (try a smaller optimizer.lr); the log up to that "
        "point is in {}",
        s["steps"].get<int64_t>(), s.value("divergence", std::string()), options.out_dir);
  }
  if (outcome.status == "too_many_lost") {
    fail("{}; the log up to that point is in {}", s.value("error", std::string()), options.out_dir);
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

int command_compare(const ConfigArgs& args, const std::string& methods, CompareOptions options) {
  Config config = load_config(args);
  options.methods = split_method_list(methods);
  options.out_dir = args.out_dir.empty() ? default_out_dir(args.path) : args.out_dir;
  CompareResult result = run_comparison(config, options);
  std::printf("%s", result.markdown.c_str());
  for (const MethodResult& m : result.comparison.methods) {
    if (!m.tuned_value.empty()) {
      std::printf("tuned %s for %s: %s\n", result.comparison.tuned_key.c_str(), m.spec.c_str(),
                  m.tuned_value.c_str());
    }
  }
  const char* out = options.out_dir.c_str();
  std::printf(
      "\nreport: %s/report.md (verdict, table, figures, each method against the leader); table: "
      "%s/compare.md, %s/compare.csv, %s/runs.csv%s; per-run logs: %s/<method>/seed<k>/\n",
      out, out, out, out,
      options.baseline.empty() ? "" : fmt::format(", {}/against.csv", out).c_str(), out);
  return 0;
}

struct SweepArgs {
  std::vector<std::string> grids;
  int jobs = 0;  // 0: one per available processor
};

// The last "pacer: error:" line of a cell's log, else its last line.
std::string cell_failure(const std::string& log) {
  std::string text;
  try {
    text = read_file(log);
  } catch (const Error&) {
    return "(no log)";
  }
  std::string last;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.rfind("pacer: error: ", 0) == 0 || last.rfind("pacer: error: ", 0) != 0) {
      if (!line.empty()) last = line;
    }
    start = end + 1;
  }
  return last.empty() ? "(empty log)" : last;
}

// `pacer sweep` (experiment/sweep.h): every cell is a `pacer compare` process of this executable
// with the cell's keys added as --set, run side by side, up to --jobs at once.
int command_sweep(const ConfigArgs& args, const std::string& methods, const CompareOptions& options,
                  const SweepArgs& sweep) {
  const Config config = load_config(args);  // the file and the edits are checked once, here
  if (config.get_string("engine.name", "sim") != "sim") {
    fail(
        "pacer sweep: engine.name: expected \"sim\" (a sweep runs many comparisons side by side "
        "on the simulator; compare MPI runs with pacer compare --engine mpi)");
  }
  if (sweep.jobs < 0) fail("--jobs {}: expected 0 (one per processor) or more", sweep.jobs);
  // An empty spec or a baseline that is not compared is refused before anything runs.
  check_baseline(split_method_list(methods), options.baseline);
  std::vector<SweepAxis> axes;
  for (const std::string& grid : sweep.grids) axes.push_back(parse_sweep_axis(grid));
  const std::vector<SweepCell> cells = sweep_cells(axes);
  const std::string out =
      args.out_dir.empty() ? default_out_dir(args.path) + "-sweep" : args.out_dir;
  make_directories(out + "/logs");
  std::vector<ChildProcess> children;
  const std::string self = self_executable();
  for (const SweepCell& cell : cells) {
    ChildProcess& child = children.emplace_back();
    child.argv = {self, "-q", "compare", args.path, "--engine", "sim"};
    const std::vector<std::string> edits = ordered_edits(args);
    child.argv.insert(child.argv.end(), edits.begin(), edits.end());
    for (const std::string& a : cell.assignments(axes))
      child.argv.insert(child.argv.end(), {"--set", a});
    child.argv.insert(child.argv.end(),
                      {"--methods", methods, "--seeds", std::to_string(options.seeds), "--out",
                       out + "/" + cell.folder});
    if (!options.budget.empty()) child.argv.insert(child.argv.end(), {"--budget", options.budget});
    if (!options.baseline.empty()) {
      child.argv.insert(child.argv.end(), {"--baseline", options.baseline});
    }
    if (!options.tune.empty()) {
      child.argv.insert(child.argv.end(), {"--tune", options.tune, "--tune-seeds",
                                           std::to_string(options.tuning_seeds)});
    }
    child.log = fmt::format("{}/logs/cell-{}.log", out, cell.index);
  }
  const int parallel = std::min<int>(sweep.jobs > 0 ? sweep.jobs : available_processors(),
                                     static_cast<int>(cells.size()));
  // The cores are shared between the cells that run at once: each cell's simulator computes on
  // cores / parallel threads (engine.threads' default), unless PACER_ENGINE_THREADS says otherwise.
  const int cell_threads = std::max(1, available_processors() / parallel);
  setenv("PACER_ENGINE_THREADS", std::to_string(cell_threads).c_str(), /*overwrite=*/0);
  std::printf("sweep: %zu cells, %d at a time, %s threads each; logs in %s/logs/\n", cells.size(),
              parallel, std::getenv("PACER_ENGINE_THREADS"), out.c_str());
  std::fflush(stdout);
  const std::vector<ChildOutcome> outcomes = run_children(children, parallel);
  if (interrupt_signal() != 0) {
    throw Interrupted(
        fmt::format("interrupted ({}): the sweep stopped; the cells it completed are "
                    "in {}/cells/, sweep.csv and report.md were not written",
                    interrupt_signal_name(), out));
  }
  for (size_t k = 0; k < cells.size(); ++k) {
    if (outcomes[k].started && outcomes[k].exit_status == 0) continue;
    fail("sweep cell {} ({}) failed{}: {}; its log: {}", k,
         fmt::join(cells[k].assignments(axes), ", "),
         outcomes[k].started ? fmt::format(" (exit status {})", outcomes[k].exit_status) : "",
         cell_failure(children[k].log), children[k].log);
  }
  const SweepResult result =
      write_sweep(out, std::filesystem::path(args.path).stem().string(), axes, cells);
  std::printf(
      "%s\nreport: %s/report.md (regime map: %s/regime_map.png); every cell and method: "
      "%s/sweep.csv; each cell's comparison: %s/cells/<k>/\n",
      result.markdown.c_str(), out.c_str(), out.c_str(), out.c_str(), out.c_str());
  return 0;
}

int command_data_info(const std::string& path) {
  std::printf("%s", describe_data_file(path).c_str());
  return 0;
}

int command_fit(const std::string& trace, const std::string& out_dir) {
  const std::string out =
      out_dir.empty() ? "runs/fit-" + std::filesystem::path(trace).stem().string() : out_dir;
  std::printf("%s", run_fit(trace, out).c_str());
  return 0;
}

// `pacer stragglers INPUT` (experiment/stragglers_report.h): the per-worker straggler report of a
// run folder, a jobs.csv or a trace.
int command_stragglers(const std::string& input, const std::string& out_dir, int top) {
  if (top < 1) fail("--top {}: expected at least 1 worker", top);
  const std::filesystem::path path(input);
  const std::string name =
      path.filename().empty() ? path.parent_path().filename().string() : path.stem().string();
  const std::string out = out_dir.empty() ? "runs/stragglers-" + name : out_dir;
  std::printf("%s", run_stragglers(input, out, static_cast<size_t>(top)).c_str());
  return 0;
}

// `pacer profile` (DESIGN.md section 9): `jobs` jobs of the config's model on every worker, as a
// trace. On the simulator in this process (experiment.h, profile_jobs); on MPI a DGD run of
// `jobs` steps on the real ranks, whose jobs.csv gives the durations (job_log.h).
int command_profile(const ConfigArgs& args, int jobs) {
  Config config = load_config(args);
  const std::string out = args.out_dir.empty()
                              ? "runs/profile-" + std::filesystem::path(args.path).stem().string()
                              : args.out_dir;
  const std::string engine = config.get_string("engine.name", "sim");
  std::string trace;
  if (engine == "sim") {
    trace = profile_jobs(config, jobs);
    make_directories(out);
  } else {
    if (jobs < 1) fail("--jobs {}: expected at least 1 job per worker", jobs);
    // K steps of DGD and nothing else: no target, limit, evaluation or checkpoint of the
    // config's own run stops it early or costs time, and every job is recorded.
    for (const char* key : {"method", "target", "max_time", "max_work", "eval_every_s",
                            "checkpoint", "record.jobs_limit"}) {
      if (config.has(key)) config.unset(key);
    }
    config.set_string("method.name", "dgd");
    config.set_int("max_steps", jobs);
    config.set_int("eval_every", 0);
    config.set("eval_final=false");
    config.set("record.jobs=true");
    RunOptions options;
    options.out_dir = out + "/run";
    run_experiment(config, options);
    trace = trace_from_jobs_csv(out + "/run/jobs.csv").csv;
  }
  write_file_atomic(out + "/trace.csv", trace);
  std::printf(
      "profile: %d jobs on each worker (%s engine%s); trace: %s/trace.csv\n"
      "fit the timing models: pacer fit %s/trace.csv\n"
      "replay it: --set timing.model=trace --set timing.file=%s/trace.csv, or pacer advise %s "
      "--trace %s/trace.csv\n",
      jobs, engine.c_str(), engine == "sim" ? ", this process, one job at a time" : ", every rank",
      out.c_str(), out.c_str(), out.c_str(), args.path.c_str(), out.c_str());
  return 0;
}

int command_advise(const ConfigArgs& args, AdviseOptions options) {
  const Config config = load_config(args);
  if (config.get_string("engine.name", "sim") != "sim") {
    fail(
        "pacer advise: engine.name: expected \"sim\" (advise simulates every method on the "
        "measured trace; measure MPI runs with pacer profile --engine mpi)");
  }
  options.out_dir = args.out_dir.empty() ? default_out_dir(args.path) + "-advise" : args.out_dir;
  std::printf("%s", run_advise(config, options).c_str());
  return 0;
}

struct TimelineArgs {
  std::string dir;
  double from = 0, to = 0;
  bool window = false;  // --from or --to given
  bool all = false;
  std::string format = "both";
};

// `pacer timeline DIR`: the timeline figure and Chrome trace of a run folder's jobs.csv
// (timeline.h, timeline_options_for_run).
int command_timeline(const TimelineArgs& a) {
  if (a.window && a.all) fail("--all with --from/--to: give one or the other");
  if (a.window && !(a.to > a.from && a.from >= 0)) {
    fail("--from {} --to {}: expected both, with 0 <= from < to (neither: the run's window)",
         a.from, a.to);
  }
  std::optional<TimelineWindow> window;
  if (a.window || a.all) window = TimelineWindow{a.from, a.to, a.all};
  TimelineOptions options = timeline_options_for_run(a.dir, window);
  options.figure = a.format != "chrome";
  options.chrome = a.format != "figure";
  const std::optional<Timeline> t = write_timeline(a.dir, a.dir + "/jobs.csv", options);
  if (!t) fail("{}/jobs.csv: no job in the window [{}, {}] s", a.dir, a.from, a.to);
  std::printf("%s\n", t->caption.c_str());
  if (t->figure) {
    const Figure& f = *t->figure;
    std::printf("%s/%s%s\n", a.dir.c_str(), f.rendered ? f.png.c_str() : f.script.c_str(),
                f.rendered ? "" : " (gnuplot not found: the script only)");
  }
  if (!t->chrome.empty()) {
    std::printf("%s/%s (Chrome trace: open it in https://ui.perfetto.dev or chrome://tracing)\n",
                a.dir.c_str(), t->chrome.c_str());
  }
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

// `resumable`: the command also takes --resume DIR instead of a config (run).
void add_config_args(CLI::App* command, ConfigArgs& args, bool resumable = false) {
  args.command = command;
  CLI::Option* config = command->add_option("config", args.path, "run configuration (TOML)");
  if (resumable) {
    command
        ->add_option("--resume", args.resume,
                     "continue the run in DIR from its last checkpoint (checkpoint.every_steps "
                     "or checkpoint.every_s); --set may change only max_steps, max_time, "
                     "max_work, target.* and checkpoint.*")
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
  command
      ->add_option("--engine", args.engine,
                   "sim (simulator) or mpi (under mpirun -np workers+1); sets engine.name")
      ->check(CLI::IsMember({"sim", "mpi"}));
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
  add_config_args(run, run_args, /*resumable=*/true);

  ConfigArgs compare_args;
  std::string methods;
  CompareOptions compare_options;
  CLI::App* compare = app.add_subcommand("compare", "run several methods and print one table");
  add_config_args(compare, compare_args);
  compare->add_option("--methods", methods, "comma-separated method specs, e.g. dgd,is-sgd:k=2")
      ->required();
  compare->add_option("--seeds", compare_options.seeds, "number of seeds (seed, seed+1, ...)");
  compare->add_option("--budget", compare_options.budget,
                      "time=SECONDS, work=UNITS or steps=UPDATES for every method (default: equal "
                      "simulated time with asynchronous methods, else max_steps)");
  compare->add_option("--tune", compare_options.tune,
                      "KEY=v1,v2,...: choose each method's value on tuning seeds after the "
                      "reported ones, e.g. optimizer.lr=0.01,0.03,0.1,0.3");
  compare->add_option("--tune-seeds", compare_options.tuning_seeds,
                      "seeds per tuning value (default 2)");
  compare->add_option("--baseline", compare_options.baseline,
                      "a spec of --methods to hold every method against, seed by seed "
                      "(against.csv, report.md)");

  ConfigArgs sweep_args;
  std::string sweep_methods;
  CompareOptions sweep_options;
  SweepArgs sweep_grid;
  CLI::App* sweep =
      app.add_subcommand("sweep", "run a comparison in every cell of a grid of keys; regime map");
  add_config_args(sweep, sweep_args);
  sweep->add_option("--methods", sweep_methods, "comma-separated method specs, as for compare")
      ->required();
  sweep
      ->add_option("--grid", sweep_grid.grids,
                   "KEY=v1,v2,...: a grid axis (repeat for up to three; the first varies slowest)")
      ->required();
  sweep->add_option("--seeds", sweep_options.seeds, "seeds per cell (seed, seed+1, ...)");
  sweep->add_option("--budget", sweep_options.budget, "as for compare, in every cell");
  sweep->add_option("--tune", sweep_options.tune, "as for compare, in every cell");
  sweep->add_option("--tune-seeds", sweep_options.tuning_seeds, "as for compare");
  sweep->add_option("--baseline", sweep_options.baseline,
                    "as for compare: every cell's against.csv holds each method against it");
  sweep->add_option("--jobs", sweep_grid.jobs,
                    "cells run at once (default 0: one per available processor)");

  std::string data_path;
  CLI::App* data = app.add_subcommand("data", "inspect data files");
  data->require_subcommand(1);
  CLI::App* info = data->add_subcommand("info", "print what a data file holds");
  info->add_option("file", data_path, "IDX (.gz), CIFAR-10 binary, LIBSVM or CSV file")->required();

  std::string fit_path, fit_out;
  CLI::App* fit = app.add_subcommand("fit", "fit the timing models to a measured trace");
  fit->add_option("trace", fit_path,
                  "a trace: CSV worker,duration (seconds per work unit), optionally with step and "
                  "units columns")
      ->required();
  fit->add_option("--out", fit_out, "output folder (default runs/fit-<trace name>)");

  std::string stragglers_input, stragglers_out;
  int stragglers_top = 5;
  CLI::App* stragglers = app.add_subcommand(
      "stragglers", "per-worker straggler report of a run folder, a jobs.csv or a trace");
  stragglers
      ->add_option("input", stragglers_input,
                   "a run folder (with jobs.csv), a jobs.csv, or a trace (worker,duration[,step]"
                   "[,units])")
      ->required();
  stragglers->add_option("--out", stragglers_out,
                         "output folder (default runs/stragglers-<input name>)");
  stragglers->add_option("--top", stragglers_top, "how many of the slowest workers to list (5)");

  ConfigArgs profile_args;
  int profile_jobs_per_worker = 50;
  CLI::App* profile = app.add_subcommand(
      "profile", "time jobs of the config's model on every worker; writes a trace for fit/advise");
  add_config_args(profile, profile_args);
  profile->add_option("--jobs", profile_jobs_per_worker, "jobs per worker (default 50)");

  ConfigArgs advise_args;
  AdviseOptions advise_options;
  std::string advise_s = "1,2,3";
  CLI::App* advise =
      app.add_subcommand("advise", "simulate every method on a measured trace and recommend one");
  add_config_args(advise, advise_args);
  advise
      ->add_option("--trace", advise_options.trace,
                   "measured job times: a worker,duration CSV (pacer profile) or a run's "
                   "jobs.csv")
      ->required();
  advise->add_option("--seeds", advise_options.seeds, "bootstrap seeds per method (default 5)");
  advise->add_option("--budget", advise_options.budget,
                     "as for compare; default: found from the runs (see pacer advise's report)");
  advise->add_option("--budget-multiple", advise_options.budget_multiple,
                     "the budget is this many times the tuning leader's slowest time (default 3)");
  advise->add_option("--tune", advise_options.tune,
                     "KEY=v1,v2,... each method's value chosen on the tuning seeds (default "
                     "optimizer.lr at lr/3, lr, 3 lr; none: no tuning)");
  advise->add_option("--tune-seeds", advise_options.tuning_seeds,
                     "tuning seeds after the reported ones (default 2)");
  advise->add_option("--max-seeds", advise_options.max_seeds,
                     "seeds at most for methods tied with the leader (default 30)");
  advise->add_option("--methods", advise_options.methods,
                     "method specs to rank (default: every applicable method)");
  advise->add_option("--s", advise_s, "s (IS-SGD: k) values tried by default (default 1,2,3)");

  TimelineArgs timeline_args;
  CLI::App* timeline = app.add_subcommand(
      "timeline", "draw workers x time from a run folder's jobs.csv, and its Chrome trace");
  timeline->add_option("dir", timeline_args.dir, "a run folder (with jobs.csv)")->required();
  CLI::Option* timeline_from = timeline->add_option(
      "--from", timeline_args.from,
      "window start, seconds (with --to; written to timeline-FROM-TO.*; default: the run's "
      "window, record.timeline or from the start until 20 jobs per worker have ended)");
  CLI::Option* timeline_to =
      timeline->add_option("--to", timeline_args.to, "window end, seconds (see --from)");
  timeline->add_flag("--all", timeline_args.all, "every job of the run (timeline-all.*)");
  timeline
      ->add_option("--format", timeline_args.format,
                   "figure (.gp, .png, .svg), chrome (the Chrome trace .json), or both (default)")
      ->check(CLI::IsMember({"figure", "chrome", "both"}));

  CLI::App* version = app.add_subcommand("version", "print version and build information");

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

  const ConfigArgs* config_args = *run       ? &run_args
                                  : *compare ? &compare_args
                                  : *sweep   ? &sweep_args
                                  : *profile ? &profile_args
                                  : *advise  ? &advise_args
                                             : nullptr;
  const std::string engine = config_args != nullptr ? chosen_engine(*config_args) : "";
  if (*advise && engine == "mpi") {  // before MPI starts: advise simulates
    std::fprintf(stderr,
                 "pacer: error: pacer advise: engine.name: expected \"sim\" (advise simulates "
                 "every method on the measured trace; measure MPI runs with pacer profile "
                 "--engine mpi)\n");
    return 1;
  }
  if (*sweep && engine == "mpi") {  // before MPI starts: a sweep never runs on it
    std::fprintf(stderr,
                 "pacer: error: pacer sweep: engine.name: expected \"sim\" (a sweep runs many "
                 "comparisons side by side on the simulator; compare MPI runs with pacer compare "
                 "--engine mpi)\n");
    return 1;
  }
  const bool mpi_job = engine == "mpi";
  if (engine == "sim") {
    const std::optional<LaunchedRank> launched = launched_rank();
    if (launched && launched->size > 1) return refuse_simulator_under_mpirun(*launched);
  }
#ifdef PACER_HAVE_MPI
  if (mpi_job) {
    try {
      mpi::start(startup_timeout(*config_args));
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

  // After MPI has started (mpi::init installs the same handlers): SIGINT and SIGTERM stop a run
  // cleanly instead of ending the process.
  if (config_args != nullptr) install_interrupt_handlers();
  int status = 0;
  try {
    if (*run) status = command_run(run_args);
    if (*compare) status = command_compare(compare_args, methods, compare_options);
    if (*sweep) status = command_sweep(sweep_args, sweep_methods, sweep_options, sweep_grid);
    if (*info) status = command_data_info(data_path);
    if (*fit) status = command_fit(fit_path, fit_out);
    if (*stragglers) status = command_stragglers(stragglers_input, stragglers_out, stragglers_top);
    if (*timeline) {
      timeline_args.window = timeline_from->count() > 0 || timeline_to->count() > 0;
      status = command_timeline(timeline_args);
    }
    if (*profile) status = command_profile(profile_args, profile_jobs_per_worker);
    if (*advise) {
      advise_options.s_values.clear();
      for (const std::string& s : split_method_list(advise_s)) {
        char* end = nullptr;
        const long value = std::strtol(s.c_str(), &end, 10);
        if (*end != '\0' || value < 1) fail("--s {}: expected positive integers, e.g. 1,2,3", s);
        advise_options.s_values.push_back(static_cast<int>(value));
      }
      status = command_advise(advise_args, advise_options);
    }
    if (*version) status = command_version();
  } catch (const Interrupted& e) {
    std::fprintf(stderr, "pacer: %s\n", e.what());
    status = interrupt_exit_status();
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
