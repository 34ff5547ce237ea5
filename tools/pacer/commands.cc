// One function per pacer command (cli.h): each reads its configuration or inputs, calls the
// experiment layer and prints what the user reads.
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

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/core/process.h"
#include "pacer/core/run_folder.h"
#include "pacer/data/loaders.h"
#include "pacer/engine/registry.h"
#include "pacer/study/advise.h"
#include "pacer/study/compare.h"
#include "pacer/run/experiment.h"
#include "pacer/report/fit_report.h"
#include "pacer/report/job_log.h"
#include "pacer/report/stragglers_report.h"
#include "pacer/study/sweep.h"
#include "pacer/report/timeline.h"

#ifdef PACER_HAVE_TORCH
#include "pacer/model/torch_models.h"
#endif

#include "cli.h"

namespace pacer::cli {

// The config file with the --set and --unset edits applied in command-line order (an --unset
// removes a key of the file or of an earlier --set), then --engine.
// The --set and --unset edits in command-line order, as command-line words: "--set", "k=v",
// "--unset", "k", ...
static std::vector<std::string> ordered_edits(const ConfigArgs& args) {
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

static std::string default_out_dir(const std::string& config_path) {
  return "runs/" + std::filesystem::path(config_path).stem().string();
}

static std::string format_target(const nlohmann::json& summary) {
  const nlohmann::json& targets = summary["targets"];
  if (targets.empty()) return "no target set";
  const nlohmann::json& t = targets[0];
  if (!t["reached"].get<bool>()) {
    return fmt::format("target loss {} not reached", t["loss"].get<double>());
  }
  return fmt::format("target loss {} reached at step {} (t = {:.2f} s)", t["loss"].get<double>(),
                     t["steps"].get<int64_t>(), t["time"].get<double>());
}

// Whether the run's engine is multi-process, so that continuing it needs the launcher again.
static bool launched_by_launcher(const Config& config) {
  const EngineInfo* e = find_engine(config.get_string("engine.name", default_engine()));
  return e != nullptr && e->multi_process;
}

// `word` as a POSIX shell reads it back: as it is when it holds only characters no shell treats
// specially, else in single quotes.
static std::string shell_word(const std::string& word) {
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

// `program`: how pacer was started (argv[0]), for the command that continues an interrupted run.
int command_run(const ConfigArgs& args, const std::string& program) {
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
    std::printf("continue it with: %s%s run --resume %s\n",
                launched_by_launcher(config) ? "mpirun -np <workers + 1> " : "",
                shell_word(program).c_str(), shell_word(options.out_dir).c_str());
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

// The start of compare's line on what it continued; pacer sweep finds it in each cell's log.
constexpr const char* kContinuedComparison = "continued the earlier comparison in";

int command_compare(const ConfigArgs& args, const std::string& methods, CompareOptions options) {
  Config config = load_config(args);
  options.methods = split_method_list(methods);
  options.out_dir = args.out_dir.empty() ? default_out_dir(args.path) : args.out_dir;
  CompareResult result = run_comparison(config, options);
  std::printf("%s", result.markdown.c_str());
  if (result.earlier.any()) {
    std::printf("%s %s: %s\n", kContinuedComparison, options.out_dir.c_str(),
                result.earlier.describe().c_str());
  }
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

// The last "pacer: error:" line of a cell's log, else its last line.
static std::string cell_failure(const std::string& log) {
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

// The line in which a cell's comparison said what it continued of an earlier one (command_compare),
// without its newline; "" when there is none.
std::string cell_continued(const std::string& log) {
  std::string text;
  try {
    text = read_file(log);
  } catch (const Error&) {
    return "";
  }
  const size_t start = text.find(kContinuedComparison);
  if (start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

// The config's engine, which must have a simulated clock for `command` (sweep, advise): `why`
// says what the command does, `instead` (with {0} for the engine) what to do on another engine.
static std::string simulated_engine(const Config& config, const char* command, const char* why,
                                    const char* instead) {
  const std::string engine = config.get_string("engine.name", default_engine());
  if (const EngineInfo* e = find_engine(engine); e && !e->simulated) {
    fail("{}: engine.name: expected \"{}\" ({} on a simulated engine; {})", command,
         default_engine(), why, fmt::format(fmt::runtime(instead), engine));
  }
  return engine;
}

// `pacer sweep` (study/sweep.h): every cell is a `pacer compare` process of this executable
// with the cell's keys added as --set, run side by side, up to --jobs at once.
int command_sweep(const ConfigArgs& args, const std::string& methods, const CompareOptions& options,
                  const SweepArgs& sweep) {
  const Config config = load_config(args);  // the file and the edits are checked once, here
  const std::string engine =
      simulated_engine(config, "pacer sweep", "a sweep runs many comparisons side by side",
                       "compare {0} runs with pacer compare --engine {0}");
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
    child.argv = {self, "-q", "compare", args.path, "--engine", engine};
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
                    "in {}/cells/ (the same command again reuses their runs and resumes the "
                    "rest), sweep.csv and report.md were not written",
                    interrupt_signal_name(), out));
  }
  for (size_t k = 0; k < cells.size(); ++k) {
    if (outcomes[k].started && outcomes[k].exit_status == 0) continue;
    fail("sweep cell {} ({}) failed{}: {}; its log: {}", k,
         fmt::join(cells[k].assignments(axes), ", "),
         outcomes[k].started ? fmt::format(" (exit status {})", outcomes[k].exit_status) : "",
         cell_failure(children[k].log), children[k].log);
  }
  // The same sweep again: each cell's comparison reused and resumed what it could; say so.
  for (size_t k = 0; k < cells.size(); ++k) {
    const std::string continued = cell_continued(children[k].log);
    if (!continued.empty()) {
      std::printf("cell %zu (%s): %s\n", k,
                  fmt::format("{}", fmt::join(cells[k].assignments(axes), ", ")).c_str(),
                  continued.c_str());
    }
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

// `pacer stragglers INPUT` (report/stragglers_report.h): the per-worker straggler report of a
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
  const std::string engine = config.get_string("engine.name", default_engine());
  const EngineInfo* info = find_engine(engine);
  const bool in_process = !info || !info->multi_process;
  std::string trace;
  if (in_process) {
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
    // The default's drains would cost the profile time.
    config.set("checkpoint.every_s=0", "pacer profile");
    config.set("eval_final=false", "pacer profile");
    config.set("record.jobs=true", "pacer profile");
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
      jobs, engine.c_str(), in_process ? ", this process, one job at a time" : ", every rank",
      out.c_str(), out.c_str(), out.c_str(), args.path.c_str(), out.c_str());
  return 0;
}

int command_advise(const ConfigArgs& args, AdviseOptions options) {
  const Config config = load_config(args);
  simulated_engine(config, "pacer advise", "advise simulates every method on the measured trace",
                   "measure {0} runs with pacer profile --engine {0}");
  options.out_dir = args.out_dir.empty() ? default_out_dir(args.path) + "-advise" : args.out_dir;
  std::printf("%s", run_advise(config, options).c_str());
  return 0;
}

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
  for (const EngineInfo& e : engines()) {
    std::printf("%s engine: %s\n", e.name.c_str(), e.built ? "built" : "not built");
  }
#ifdef PACER_HAVE_TORCH
  std::printf("%s", torch_build_info().c_str());
#else
  std::printf("libtorch models: not built\n");
#endif
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
