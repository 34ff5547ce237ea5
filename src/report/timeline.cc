#include "pacer/report/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/report/figure_data.h"
#include "pacer/report/job_log.h"
#include "timeline_phases.h"

namespace pacer {
namespace {

using timeline::JobPhases;
using timeline::kFateCount;
using timeline::kPhaseKinds;
using timeline::kPhaseNames;
using timeline::PhaseKind;
using timeline::Span;

// The box colour of each fate, in JobFate order (job_log.h), which is also the drawing and legend
// order.
constexpr const char* kFateColours[] = {"#2CA02C", "#E69F00", "#999999",
                                        "#D62728", "#7B3294", "#9ECAE1"};
static_assert(std::size(kFateColours) == kFateCount);
// The phases drawn as lines, in legend order, each with its colour, width and dash type (gnuplot
// dt: 1 solid, 2 dashed, 3 dotted). Transfer and reply share a style and a legend entry.
struct LineStyle {
  PhaseKind kind;
  const char* legend;
  const char* colour;
  double width;
  int dash;
};
constexpr LineStyle kLines[] = {
    {timeline::kTransfer, "transfer, reply", "#333333", 1.5, 1},
    {timeline::kReply, "transfer, reply", "#333333", 1.5, 1},
    {timeline::kTransferOrWait, "transfer or wait", "#333333", 1.5, 2},
    {timeline::kHeld, "held", "#CC79A7", 3, 1},
    {timeline::kOut, "out (phases unknown)", "#777777", 1.5, 3},
};
// Injected delay: the fate's colour this far towards white.
constexpr double kInjectedLightening = 0.6;

// Canvas: fixed width, a fixed part for the title, axis and legend plus a strip per row.
constexpr int kWidth = 1400;
constexpr int kFixedHeight = 200;
constexpr int kRowHeight = 28;
constexpr int kTitleFont = 17;
// Half the height of a compute box, in rows.
constexpr double kBoxHalf = 0.32;

const char* fate_name(size_t f) { return job_fate_name(static_cast<JobFate>(f)); }

// ---------------------------------------------------------------------------------------------
// What is drawn.

// A drawn interval of a job: its row and tag and the clipped span.
struct Piece {
  int worker;
  int64_t tag;
  Span span;
};

// The drawn pieces by phase and fate, each list by worker, then assigned time.
struct Pieces {
  std::vector<Piece> by[kPhaseKinds][kFateCount];
  const std::vector<Piece>& of(PhaseKind kind, size_t fate) const { return by[kind][fate]; }
  bool any(PhaseKind kind) const {
    for (const auto& p : by[kind])
      if (!p.empty()) return true;
    return false;
  }
  // Every fate's pieces of `kind`, by worker, then start.
  std::vector<Piece> merged(PhaseKind kind) const {
    std::vector<Piece> all;
    for (const auto& p : by[kind]) all.insert(all.end(), p.begin(), p.end());
    std::stable_sort(all.begin(), all.end(), [](const Piece& a, const Piece& b) {
      return a.worker != b.worker ? a.worker < b.worker : a.span.from < b.span.from;
    });
    return all;
  }
};

Pieces cut(const std::vector<JobPhases>& jobs, int rows) {
  Pieces out;
  for (const JobPhases& in : jobs) {
    if (in.job->worker >= rows) continue;
    for (const timeline::Phase& p : in.phases) {
      out.by[p.kind][static_cast<size_t>(in.job->fate)].push_back(
          {in.job->worker, in.job->tag, p.span});
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The data files.

// A data file: '#' comment lines, then one block per non-empty list (gnuplot's `index`, two
// blank lines apart), each headed by a comment naming it. Columns: worker, tag, from, to.
std::string data_text(const std::string& header, const std::vector<std::string>& names,
                      const std::vector<std::vector<Piece>>& lists) {
  std::string text = header;
  bool first = true;
  for (size_t b = 0; b < lists.size(); ++b) {
    if (lists[b].empty()) continue;
    text += fmt::format("{}# {}\n", first ? "" : "\n\n", names[b]);
    first = false;
    for (const Piece& p : lists[b]) {
      text += fmt::format("{} {} {} {}\n", p.worker, p.tag, figure::data_number(p.span.from),
                          figure::data_number(p.span.to));
    }
  }
  return text;
}

std::string window_header(Span w) {
  return fmt::format(
      "# clipped to the window [{}, {}] s; intervals with no positive length inside it are left "
      "out.\n# Columns: worker, tag, from (s), to (s).\n",
      figure::data_number(w.from), figure::data_number(w.to));
}

// The phases of `kind` of jobs.csv's jobs, a block per fate.
std::string fate_data(const Pieces& p, PhaseKind kind, Span w) {
  std::vector<std::string> names;
  std::vector<std::vector<Piece>> lists;
  for (size_t f = 0; f < kFateCount; ++f) {
    names.push_back(fate_name(f));
    lists.push_back(p.of(kind, f));
  }
  return data_text(fmt::format("# The {} phases of jobs.csv's jobs (timeline.h), one block per "
                               "fate,\n",
                               kPhaseNames[kind]) +
                       window_header(w),
                   names, lists);
}

// The phases drawn as lines, a block per kind (kLines order).
std::string line_data(const Pieces& p, Span w) {
  std::vector<std::string> names;
  std::vector<std::vector<Piece>> lists;
  for (const LineStyle& line : kLines) {
    names.push_back(kPhaseNames[line.kind]);
    lists.push_back(p.merged(line.kind));
  }
  return data_text(
      "# The phases of jobs.csv's jobs drawn as lines (timeline.h), one block per kind,\n" +
          window_header(w),
      names, lists);
}

// ---------------------------------------------------------------------------------------------
// The script.

// gnuplot single-quoted string: a quote is written twice.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// "#RRGGBB" moved `amount` of the way to white.
std::string lighter(const char* colour, double amount) {
  const unsigned rgb = static_cast<unsigned>(std::stoul(std::string(colour + 1), nullptr, 16));
  auto mix = [&](int shift) {
    const double c = static_cast<double>((rgb >> shift) & 0xFF);
    return static_cast<unsigned>(std::lround(c + (255 - c) * amount));
  };
  return fmt::format("#{:02X}{:02X}{:02X}", mix(16), mix(8), mix(0));
}

// ("w0" 0, "w1" 1, ...)
std::string worker_tics(int rows) {
  std::vector<std::string> tics;
  for (int w = 0; w < rows; ++w) tics.push_back(fmt::format("'w{}' {}", w, w));
  return fmt::format("({})", fmt::join(tics, ", "));
}

// One legend entry: a box sample of `colour`, or a line sample of `line`.
struct LegendEntry {
  std::string name, colour;
  const LineStyle* line = nullptr;
};

std::vector<LegendEntry> legend_entries(const Pieces& p) {
  std::vector<LegendEntry> entries;
  for (size_t f = 0; f < kFateCount; ++f) {
    if (!p.of(timeline::kCompute, f).empty()) entries.push_back({fate_name(f), kFateColours[f]});
  }
  if (p.any(timeline::kInjected)) {
    entries.push_back(
        {kPhaseNames[timeline::kInjected], lighter(kFateColours[0], kInjectedLightening)});
  }
  for (const LineStyle& line : kLines) {
    const bool listed = std::any_of(entries.begin(), entries.end(),
                                    [&](const LegendEntry& e) { return e.name == line.legend; });
    if (p.any(line.kind) && !listed) entries.push_back({line.legend, "", &line});
  }
  return entries;
}

// The legend, centred under the x label in rows of at most kPerRow entries: a sample and a name
// per kind drawn. Drawn as objects and labels at fixed pixel places rather than with gnuplot's
// key, which wraps a horizontal key into several rows at its own discretion.
std::string legend(const Pieces& p, double height) {
  const std::vector<LegendEntry> entries = legend_entries(p);
  constexpr size_t kPerRow = 6;
  constexpr double kSlot = 215, kSample = 34, kHalf = 7;
  auto sx = [](double px) { return fmt::format("{:.6g}", px / kWidth); };
  auto sy = [&](double px) { return fmt::format("{:.6g}", px / height); };
  const size_t rows = (entries.size() + kPerRow - 1) / kPerRow;
  std::string out = "unset key\n";
  for (size_t i = 0; i < entries.size(); ++i) {
    const size_t row = i / kPerRow, in_row = std::min(kPerRow, entries.size() - row * kPerRow);
    const double x = (kWidth - kSlot * static_cast<double>(in_row)) / 2 +
                     kSlot * static_cast<double>(i % kPerRow);
    const double y = rows == 1 ? 24 : 36 - 22 * static_cast<double>(row);
    const LegendEntry& e = entries[i];
    if (e.line == nullptr) {
      out += fmt::format(
          "set object {} rectangle from screen {}, screen {} to screen {}, screen {} "
          "fc rgb '{}' fs solid 1.0 noborder\n",
          101 + i, sx(x), sy(y - kHalf), sx(x + kSample), sy(y + kHalf), e.colour);
    } else {
      out += fmt::format(
          "set arrow {} from screen {}, screen {} to screen {}, screen {} nohead "
          "lw {}*pscale dt {} lc rgb '{}'\n",
          101 + i, sx(x), sy(y), sx(x + kSample), sy(y), e.line->width, e.line->dash,
          e.line->colour);
    }
    out += fmt::format("set label {} {} at screen {}, screen {} left\n", 101 + i, quoted(e.name),
                       sx(x + kSample + 10), sy(y));
  }
  return out;
}

// The box clauses of one data file of fate blocks (`file`), in `colour` per fate.
void box_clauses(std::vector<std::string>& clauses, const Pieces& p, PhaseKind kind,
                 const std::string& file, bool light) {
  int block = 0;
  for (size_t f = 0; f < kFateCount; ++f) {
    if (p.of(kind, f).empty()) continue;
    clauses.push_back(
        fmt::format("'{}' index {} using (($3+$4)/2):1:3:4:($1-{}):($1+{}) "
                    "with boxxyerror fs solid 1.0 noborder fc rgb '{}' notitle",
                    file, block++, kBoxHalf, kBoxHalf,
                    light ? lighter(kFateColours[f], kInjectedLightening) : kFateColours[f]));
  }
}

// The plot clauses: the compute boxes per fate, the injected delays, then the lines on top.
std::vector<std::string> plot_clauses(const Pieces& p, const std::string& name) {
  std::vector<std::string> clauses;
  box_clauses(clauses, p, timeline::kCompute, "figures/" + name + "-compute.dat", false);
  box_clauses(clauses, p, timeline::kInjected, "figures/" + name + "-injected.dat", true);
  int block = 0;
  for (const LineStyle& line : kLines) {
    if (!p.any(line.kind)) continue;
    clauses.push_back(
        fmt::format("'figures/{}-lines.dat' index {} using 3:1:($4-$3):(0) with vectors nohead "
                    "lw {}*pscale dt {} lc rgb '{}' notitle",
                    name, block++, line.width, line.dash, line.colour));
  }
  return clauses;
}

std::string script_body(const std::string& title, Span w, int rows, const Pieces& p,
                        const std::string& name) {
  const double h = kFixedHeight + kRowHeight * rows;
  std::string body = fmt::format("set title {} font ',{}'\n", quoted(title), kTitleFont);
  body += fmt::format(
      "set lmargin at screen {:.6g}\nset rmargin at screen {:.6g}\n"
      "set bmargin at screen {:.6g}\nset tmargin at screen {:.6g}\n",
      80.0 / kWidth, 1 - 30.0 / kWidth, 110 / h, 1 - 56 / h);
  body += fmt::format("set xrange [{}:{}]\nset format x '%g'\n", figure::data_number(w.from),
                      figure::data_number(w.to));
  body += fmt::format("set label 91 'time (s)' at screen 0.5, screen {:.6g} center\n", 62 / h);
  // Reversed: worker 0 at the top.
  body +=
      fmt::format("set yrange [{}:-0.5]\nset ytics {} scale 0\n", rows - 0.5, worker_tics(rows));
  body += "set grid xtics lc rgb '#dddddd'\nset border lc rgb '#444444'\n";
  body += legend(p, h);
  std::vector<std::string> clauses = plot_clauses(p, name);
  std::string plot = "plot ";
  for (size_t i = 0; i < clauses.size(); ++i) plot += (i ? ", \\\n     " : "") + clauses[i];
  return body + plot;
}

// A time for a caption: four significant digits.
std::string seconds(double v) { return fmt::format("{:.4g} s", v); }

std::string caption_text(Span w, int workers, int rows, size_t automatic_jobs, const Pieces& p) {
  std::vector<std::string> drawn;
  for (size_t f = 0; f < kFateCount; ++f) {
    if (!p.of(timeline::kCompute, f).empty()) drawn.push_back(fate_name(f));
  }
  const std::string fates =
      drawn.empty() ? "none drawn" : fmt::format("{}", fmt::join(drawn, ", "));
  std::string window = fmt::format("from {} to {}", seconds(w.from), seconds(w.to));
  if (automatic_jobs > 0) {
    window += fmt::format(" (automatic: until the first {} jobs to end, {} per worker, had ended)",
                          automatic_jobs, kTimelineJobsPerWorker);
  }
  return fmt::format(
      "What each of {} {} did {}: each job's compute as a box coloured by its fate ({}), injected "
      "delay lighter, its transfers to and from the worker as thin lines (held by the master, or "
      "waiting not told apart from transfer, dashed), idle time blank.",
      rows < workers ? fmt::format("the first {} of {}", rows, workers)
                     : fmt::format("the {}", workers),
      workers == 1 ? "worker" : "workers", window, fates);
}

std::string title_text(const std::string& title, Span w, int workers, int rows) {
  std::string out =
      fmt::format("{}{}timeline, {}", title, title.empty() ? "" : ": ", timeline::window_text(w));
  if (rows < workers) out += fmt::format(" (the first {} of {} workers)", rows, workers);
  return out;
}

Figure write_figure(const std::string& dir, const Pieces& pieces, int workers, int rows, Span w,
                    const std::string& caption, const TimelineOptions& options) {
  const std::string& name = options.name;
  return figure::write_single_figure(
      dir, name, caption, kWidth, kFixedHeight + kRowHeight * rows,
      script_body(title_text(options.title, w, workers, rows), w, rows, pieces, name),
      {{"figures/" + name + "-compute.dat", fate_data(pieces, timeline::kCompute, w)},
       {"figures/" + name + "-injected.dat", fate_data(pieces, timeline::kInjected, w)},
       {"figures/" + name + "-lines.dat", line_data(pieces, w)}});
}

// Removes what write_timeline writes under `name` (and the data file older pacer wrote), not
// the files of other timelines named "<name>-...".
void remove_timeline_files(const std::string& dir, const std::string& name) {
  std::error_code ec;
  for (const char* ext : {".gp", ".png", ".svg", ".json"}) {
    std::filesystem::remove(dir + "/" + name + ext, ec);
  }
  for (const char* data : {"-compute.dat", "-injected.dat", "-lines.dat", "-transfers.dat"}) {
    std::filesystem::remove(dir + "/figures/" + name + data, ec);
  }
}

}  // namespace

std::optional<Timeline> write_timeline(const std::string& dir, const std::string& jobs_csv,
                                       const TimelineOptions& options) {
  const std::vector<JobRecord> jobs = read_jobs_csv(jobs_csv);
  int workers = 0;
  for (const JobRecord& j : jobs) workers = std::max(workers, j.worker + 1);
  size_t automatic_jobs = 0;
  const Span w = timeline::choose_window(jobs, workers, options.window, automatic_jobs);
  const std::vector<JobPhases> in_window = timeline::phases_in_window(jobs, w);
  if (in_window.empty()) {
    remove_timeline_files(dir, options.name);
    return std::nullopt;
  }
  Timeline out;
  const int rows = std::min(workers, kTimelineMaxWorkers);
  const Pieces pieces = cut(in_window, rows);
  out.caption = caption_text(w, workers, rows, automatic_jobs, pieces);
  if (options.figure)
    out.figure = write_figure(dir, pieces, workers, rows, w, out.caption, options);
  if (options.chrome) {
    out.chrome = options.name + ".json";
    write_file_atomic(dir + "/" + out.chrome,
                      timeline::chrome_trace(in_window, workers, w, options.title,
                                             std::filesystem::path(jobs_csv).filename().string()));
  }
  return out;
}

TimelineOptions timeline_options_for_run(const std::string& dir,
                                         const std::optional<TimelineWindow>& window) {
  TimelineOptions options;
  if (window) {
    options.window = *window;
    options.name = timeline_window_name(*window);
  } else if (std::filesystem::exists(dir + "/config.toml")) {
    options.window = read_timeline_window(Config::load(dir + "/config.toml"));
  }
  options.title = timeline_run_title(dir);
  return options;
}

std::string timeline_run_title(const std::string& dir) {
  try {
    const nlohmann::json summary = nlohmann::json::parse(read_file(dir + "/summary.json"));
    if (summary.contains("method") && summary["method"].is_string() && summary.contains("seed") &&
        summary["seed"].is_number_integer()) {
      return fmt::format("{}, seed {}", summary["method"].get<std::string>(),
                         summary["seed"].get<int64_t>());
    }
  } catch (const std::exception&) {
    // No summary (a run still going, or killed): the configuration says as much.
  }
  try {
    const Config config = Config::load(dir + "/config.toml");
    return fmt::format("{}, seed {}", config.get_string("method.name", "run"),
                       config.get_int("seed", 1));
  } catch (const std::exception&) {
  }
  return std::filesystem::path(dir).filename().string();
}

}  // namespace pacer
