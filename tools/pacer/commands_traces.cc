// pacer data-info, fit, stragglers and timeline (cli.h): the commands that read data files,
// traces and run folders, and run nothing.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "cli.h"
#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/log.h"
#include "pacer/data/loaders.h"
#include "pacer/report/fit_report.h"
#include "pacer/report/stragglers_report.h"
#include "pacer/report/timeline.h"

namespace pacer::cli {

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

}  // namespace pacer::cli
