// _pacer: the extension module under the Python package `pacer` (python/pacer/__init__.py,
// docs/python.md). One function per command of the command-line program (tools/pacer/main.cc),
// each calling the same experiment-layer function in this process: the command writes its folder
// as `pacer <command> --out DIR` does and returns what the program would print; the Python layer
// reads the folder's CSV and JSON files into DataFrames and dicts.
//
// Every call
//   * releases the GIL and holds a process-wide lock: pacer keeps process-wide state (the
//     interrupt flag, the log level), so calls from several Python threads run one at a time;
//   * for the commands that run training (run, compare, sweep, advise) installs pacer's SIGINT
//     and SIGTERM handlers for its duration (core/interrupt.h, InterruptHandlersScope), so that
//     Ctrl-C stops the run where it is, as on the command line, and the run writes its outputs.
//     Afterwards the signal goes to the interpreter's own handler: SIGINT raises
//     KeyboardInterrupt (with pacer's message when the call was cut short), SIGTERM ends the
//     process unless the program handles it. fit only reads a file: Python's handlers stay.
// pacer::Error becomes pacer.Error with the same one-line message (what `pacer: error:` prints).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <csignal>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/engine/registry.h"
#include "pacer/report/fit_report.h"
#include "pacer/run/experiment.h"
#include "pacer/study/advise.h"
#include "pacer/study/compare.h"
#include "pacer/study/sweep.h"

namespace py = pybind11;

namespace pacer {
namespace {

// A configuration as the Python layer passes it: a TOML file (`path`) or TOML text made from a
// dict (`text`, with `path` empty), then the edits in order: ("set", "key=value") or
// ("unset", "key"), as `--set` and `--unset` apply them on the command line.
using Edits = std::vector<std::pair<std::string, std::string>>;

Config load_config(const std::string& path, const std::string& text, const Edits& edits) {
  Config config = path.empty() ? Config::parse(text, "the config dict") : Config::load(path);
  for (const auto& [verb, argument] : edits) {
    if (verb == "set") {
      config.set(argument);
    } else if (verb == "unset") {
      config.unset(argument);
    } else {
      fail("config edit '{}': expected \"set\" or \"unset\"", verb);
    }
  }
  return config;
}

// From Python every command runs on an engine whose workers live in this process: a
// multi-process engine is refused before anything runs (MPI needs this process to be rank 0 of an
// mpirun job, and starting MPI in an interpreter would leave MPI's state and handlers there).
void require_simulator(const Config& config, const char* command) {
  const std::string engine = config.get_string("engine.name", default_engine());
  const EngineInfo* info = find_engine(engine);
  if (info != nullptr && info->multi_process) {
    fail(
        "pacer.{}: engine.name: expected \"{}\" (from Python pacer runs in this process; run "
        "{} jobs with the pacer program under its launcher)",
        command, default_engine(), engine);
  }
}

std::mutex g_call_mutex;  // one call at a time (see the file comment)

// After a call during which pacer's handlers received `signal`: hands it to the interpreter's own
// handler (back in place now), which may raise (KeyboardInterrupt for SIGINT; then with
// `message`, pacer's, when the call was cut short) or end the process (SIGTERM by default).
// Returns when the handler let the program go on.
void deliver_to_interpreter(int signal, const std::string& message) {
  std::raise(signal);
  if (PyErr_CheckSignals() == 0) return;
  if (!message.empty() && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
    PyErr_Clear();
    PyErr_SetString(PyExc_KeyboardInterrupt, message.c_str());
  }
  throw py::error_already_set();
}

// Runs `body` (a command) as the file comment says: without the GIL, one at a time, and, when
// `interruptible`, under pacer's signal handlers. A call cut short by a signal (body threw
// Interrupted) raises KeyboardInterrupt with Interrupted's message when the interpreter's own
// handler does not raise first.
template <typename Body>
auto call_command(bool interruptible, Body body) -> decltype(body()) {
  std::optional<decltype(body())> result;
  std::string interrupted;  // Interrupted's message, "" when the call completed
  int signal = 0;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(g_call_mutex);
    std::optional<InterruptHandlersScope> handlers;
    if (interruptible) handlers.emplace();
    try {
      result.emplace(body());
    } catch (const Interrupted& e) {
      interrupted = e.what();
    }
    signal = interruptible ? interrupt_signal() : 0;
  }
  if (signal != 0) deliver_to_interpreter(signal, interrupted);
  if (!interrupted.empty()) {
    PyErr_SetString(PyExc_KeyboardInterrupt, interrupted.c_str());
    throw py::error_already_set();
  }
  return std::move(*result);
}

// pacer run: the run's status ("target_reached", "max_steps", ...). Like the program, a diverged
// run and one that lost too many workers are errors (their outputs written), and an interrupted
// one is Interrupted.
std::string run(const Config& config, const std::string& out_dir) {
  require_simulator(config, "run");
  RunOptions options;
  options.out_dir = out_dir;
  options.timeline_figure = true;
  const RunOutcome outcome = run_experiment(config, options);
  const nlohmann::json& s = outcome.summary;
  if (outcome.status == "interrupted") {
    throw Interrupted(fmt::format(
        "interrupted ({}): {} stopped after {} steps, t = {:.2f} s; log and summary: {}/",
        interrupt_signal_name(), s["method"].get<std::string>(), s["steps"].get<int64_t>(),
        s["time"].get<double>(), out_dir));
  }
  if (outcome.status == "diverged") {
    fail(
        "training diverged at step {}: {} (try a smaller optimizer.lr); the log up to that "
        "point is in {}",
        s["steps"].get<int64_t>(), s.value("divergence", std::string()), out_dir);
  }
  if (outcome.status == "too_many_lost") {
    fail("{}; the log up to that point is in {}", s.value("error", std::string()), out_dir);
  }
  return outcome.status;
}

// The settings compare and sweep share, as the program's options name them.
CompareOptions compare_options(const std::string& methods, int seeds, const std::string& budget,
                               const std::string& tune, int tuning_seeds,
                               const std::string& baseline, const std::string& out_dir) {
  CompareOptions options;
  options.methods = split_method_list(methods);
  options.seeds = seeds;
  options.budget = budget;
  options.tune = tune;
  options.tuning_seeds = tuning_seeds;
  options.baseline = baseline;
  options.out_dir = out_dir;
  return options;
}

// pacer sweep, its cells one after the other in this process (the program runs them as
// processes side by side; each cell is deterministic, so the outputs are the same): every cell's
// comparison in <out>/cells/<k>/, then sweep.csv, report.md and the regime map. Returns the
// winners' table.
std::string sweep(const Config& config, const std::vector<std::string>& grids,
                  const CompareOptions& options, const std::string& name) {
  require_simulator(config, "sweep");
  check_baseline(options.methods, options.baseline);
  std::vector<SweepAxis> axes;
  for (const std::string& grid : grids) axes.push_back(parse_sweep_axis(grid));
  const std::vector<SweepCell> cells = sweep_cells(axes);
  for (const SweepCell& cell : cells) {
    Config cell_config = config;
    for (const std::string& assignment : cell.assignments(axes)) cell_config.set(assignment);
    CompareOptions cell_options = options;
    cell_options.out_dir = options.out_dir + "/" + cell.folder;
    log_info("sweep cell {} of {}: {}", cell.index + 1, cells.size(),
             fmt::join(cell.assignments(axes), ", "));
    run_comparison(cell_config, cell_options);
  }
  return write_sweep(options.out_dir, name, axes, cells).markdown;
}

void set_log_level_by_name(const std::string& level) {
  if (level == "debug") return set_log_level(LogLevel::kDebug);
  if (level == "info") return set_log_level(LogLevel::kInfo);
  if (level == "warning") return set_log_level(LogLevel::kWarning);
  if (level == "error") return set_log_level(LogLevel::kError);
  fail("log level '{}': expected debug, info, warning or error", level);
}

void define_commands(py::module_& m) {
  m.def(
      "run",
      [](const std::string& path, const std::string& text, const Edits& edits,
         const std::string& out) {
        return call_command(true, [&] { return run(load_config(path, text, edits), out); });
      },
      py::arg("path"), py::arg("text"), py::arg("edits"), py::arg("out"));
  m.def(
      "compare",
      [](const std::string& path, const std::string& text, const Edits& edits,
         const std::string& methods, int seeds, const std::string& budget, const std::string& tune,
         int tuning_seeds, const std::string& baseline, const std::string& out) {
        return call_command(true, [&] {
          const Config config = load_config(path, text, edits);
          require_simulator(config, "compare");
          return run_comparison(config, compare_options(methods, seeds, budget, tune, tuning_seeds,
                                                        baseline, out))
              .markdown;
        });
      },
      py::arg("path"), py::arg("text"), py::arg("edits"), py::arg("methods"), py::arg("seeds"),
      py::arg("budget"), py::arg("tune"), py::arg("tuning_seeds"), py::arg("baseline"),
      py::arg("out"));
  m.def(
      "sweep",
      [](const std::string& path, const std::string& text, const Edits& edits,
         const std::vector<std::string>& grids, const std::string& methods, int seeds,
         const std::string& budget, const std::string& tune, int tuning_seeds,
         const std::string& baseline, const std::string& out, const std::string& name) {
        return call_command(true, [&] {
          const Config config = load_config(path, text, edits);
          return sweep(config, grids,
                       compare_options(methods, seeds, budget, tune, tuning_seeds, baseline, out),
                       name);
        });
      },
      py::arg("path"), py::arg("text"), py::arg("edits"), py::arg("grids"), py::arg("methods"),
      py::arg("seeds"), py::arg("budget"), py::arg("tune"), py::arg("tuning_seeds"),
      py::arg("baseline"), py::arg("out"), py::arg("name"));
  m.def(
      "advise",
      [](const std::string& path, const std::string& text, const Edits& edits,
         AdviseOptions options) {
        return call_command(true, [&] {
          const Config config = load_config(path, text, edits);
          require_simulator(config, "advise");
          return run_advise(config, options);
        });
      },
      py::arg("path"), py::arg("text"), py::arg("edits"), py::arg("options"));
  m.def(
      "fit",
      [](const std::string& trace, const std::string& out) {
        return call_command(false, [&] { return run_fit(trace, out); });
      },
      py::arg("trace"), py::arg("out"));
}

}  // namespace
}  // namespace pacer

PYBIND11_MODULE(_pacer, m) {
  using namespace pacer;
  m.doc() = "pacer's commands in this process; use the package `pacer`, not this module";
  py::register_exception<Error>(m, "Error");  // Interrupted never gets here: call_command
  py::class_<AdviseOptions>(m, "AdviseOptions")
      .def(py::init<>())
      .def_readwrite("trace", &AdviseOptions::trace)
      .def_readwrite("seeds", &AdviseOptions::seeds)
      .def_readwrite("budget", &AdviseOptions::budget)
      .def_readwrite("budget_multiple", &AdviseOptions::budget_multiple)
      .def_readwrite("tune", &AdviseOptions::tune)
      .def_readwrite("tuning_seeds", &AdviseOptions::tuning_seeds)
      .def_readwrite("max_seeds", &AdviseOptions::max_seeds)
      .def_readwrite("methods", &AdviseOptions::methods)
      .def_readwrite("s_values", &AdviseOptions::s_values)
      .def_readwrite("out_dir", &AdviseOptions::out_dir);
  define_commands(m);
  m.def("set_log_level", &set_log_level_by_name, py::arg("level"));
  m.attr("version") = PACER_VERSION;
}
