// pacer compare, sweep and advise (cli.h): the commands that run many runs and judge them.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/core/process.h"
#include "pacer/engine/registry.h"
#include "pacer/study/advise.h"
#include "pacer/study/claims.h"
#include "pacer/study/compare.h"
#include "pacer/study/sweep.h"

namespace pacer::cli {

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

int command_advise(const ConfigArgs& args, AdviseOptions options) {
  const Config config = load_config(args);
  simulated_engine(config, "pacer advise", "advise simulates every method on the measured trace",
                   "measure {0} runs with pacer profile --engine {0}");
  options.out_dir = args.out_dir.empty() ? default_out_dir(args.path) + "-advise" : args.out_dir;
  std::printf("%s", run_advise(config, options).c_str());
  return 0;
}

int command_validate(const ConfigArgs& args, ValidateOptions options) {
  const Config config = load_config(args);
  options.out_dir = args.out_dir.empty() ? default_out_dir(args.path) + "-validate" : args.out_dir;
  std::printf("%s", run_validate(config, options).c_str());
  return 0;
}

int command_claims(const std::string& claims, const std::string& out_dir, const std::string& mode,
                   const std::string& command) {
  const ClaimsResult result = evaluate_claims(claims, out_dir);
  ClaimsRunInfo info;
  info.mode = mode;
  info.command = command.empty() ? "(not given)" : command;
  info.cores = static_cast<int>(std::thread::hardware_concurrency());
  const std::string wall = out_dir + "/wall_seconds";
  if (std::filesystem::exists(wall)) {
    try {
      info.wall_seconds = std::stod(read_file(wall));
    } catch (const std::exception&) {
      fail("{}: expected a number of seconds", wall);
    }
  }
  // report.md last: a report beside the claims.csv it was made with.
  write_file_atomic(out_dir + "/claims.csv", claims_csv(result));
  write_file_atomic(out_dir + "/report.md", claims_report(result, info));
  std::printf("%s\nreport: %s/report.md; every case: %s/claims.csv\n",
              claims_verdicts_markdown(result).c_str(), out_dir.c_str(), out_dir.c_str());
  return 0;
}

}  // namespace pacer::cli
