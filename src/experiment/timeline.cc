#include "pacer/experiment/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/experiment/figure_data.h"
#include "pacer/experiment/job_log.h"

namespace pacer {
namespace {

// The box colour of each fate, in JobFate order (job_log.h), which is also the drawing and legend
// order.
constexpr const char* kFateColours[] = {"#2CA02C", "#E69F00", "#999999",
                                        "#D62728", "#7B3294", "#9ECAE1"};
constexpr size_t kFateCount = std::size(kFateColours);
static_assert(kFateCount == static_cast<size_t>(JobFate::kUnfinished) + 1);
constexpr const char* kTransferColour = "#333333";

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

struct Span {
  double from = 0, to = 0;
};

// The window asked for, or the automatic one (timeline.h); `automatic_jobs` is set to the number
// of jobs whose end closes an automatic window (0 for a window asked for).
Span choose_window(const std::vector<JobRecord>& jobs, int workers, TimelineWindow asked,
                   size_t& automatic_jobs) {
  automatic_jobs = 0;
  if (asked.to > asked.from) return {asked.from, asked.to};
  if (jobs.empty()) return {};
  std::vector<double> ends;
  double from = jobs[0].assigned;
  for (const JobRecord& j : jobs) {
    ends.push_back(j.end());
    from = std::min(from, j.assigned);
  }
  std::sort(ends.begin(), ends.end());
  automatic_jobs = std::min(
      ends.size(), static_cast<size_t>(kTimelineJobsPerWorker) * static_cast<size_t>(workers));
  return {from, ends[automatic_jobs - 1]};
}

// [a, b] clipped to the window; nullopt unless the part inside has a positive length.
std::optional<Span> clip(double a, double b, Span window) {
  const double lo = std::max(a, window.from), hi = std::min(b, window.to);
  if (!(lo < hi)) return std::nullopt;
  return Span{lo, hi};
}

// A drawn interval of a job: its row and tag and the clipped span.
struct Piece {
  int worker;
  int64_t tag;
  Span span;
};

// The kinds of transfer line, in data-file block order.
enum Transfer { kToWorker, kToMaster, kWholeJob, kTransferKinds };
constexpr const char* kTransferBlocks[] = {
    "to the worker: [assigned, started]", "back to the master: [finished, delivered]",
    "jobs whose started or finished is unknown: [assigned, end] (timeline.h)"};

struct Pieces {
  std::vector<Piece> compute[kFateCount];
  std::vector<Piece> transfer[kTransferKinds];
  bool empty() const {
    for (const auto& p : compute)
      if (!p.empty()) return false;
    for (const auto& p : transfer)
      if (!p.empty()) return false;
    return true;
  }
};

void add(std::vector<Piece>& to, const JobRecord& j, std::optional<Span> span) {
  if (span) to.push_back({j.worker, j.tag, *span});
}

// The clipped intervals of the jobs of workers below `rows`, each list sorted by worker, then
// start (stable).
Pieces cut(const std::vector<JobRecord>& jobs, Span window, int rows) {
  Pieces out;
  for (const JobRecord& j : jobs) {
    if (j.worker >= rows) continue;
    if (j.started && j.finished) {
      add(out.compute[static_cast<size_t>(j.fate)], j, clip(*j.started, *j.finished, window));
      add(out.transfer[kToWorker], j, clip(j.assigned, *j.started, window));
      if (j.delivered) add(out.transfer[kToMaster], j, clip(*j.finished, *j.delivered, window));
    } else {
      add(out.transfer[kWholeJob], j, clip(j.assigned, j.end(), window));
    }
  }
  auto order = [](const Piece& a, const Piece& b) {
    return a.worker != b.worker ? a.worker < b.worker : a.span.from < b.span.from;
  };
  for (auto& p : out.compute) std::stable_sort(p.begin(), p.end(), order);
  for (auto& p : out.transfer) std::stable_sort(p.begin(), p.end(), order);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The files.

// A data file: '#' comment lines, then one block per non-empty list (gnuplot's `index`, two
// blank lines apart), each headed by a comment naming it. Columns: worker, tag, from, to.
std::string data_text(const std::string& header, const std::vector<const char*>& names,
                      const std::vector<const std::vector<Piece>*>& lists) {
  std::string text = header;
  bool first = true;
  for (size_t b = 0; b < lists.size(); ++b) {
    if (lists[b]->empty()) continue;
    text += fmt::format("{}# {}\n", first ? "" : "\n\n", names[b]);
    first = false;
    for (const Piece& p : *lists[b]) {
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

std::string compute_data(const Pieces& p, Span w) {
  std::vector<const char*> names;
  std::vector<const std::vector<Piece>*> lists;
  for (size_t f = 0; f < kFateCount; ++f) {
    names.push_back(fate_name(f));
    lists.push_back(&p.compute[f]);
  }
  const std::string header =
      "# The compute intervals [started, finished] of jobs.csv's jobs, one block per fate,\n";
  return data_text(header + window_header(w), names, lists);
}

std::string transfer_data(const Pieces& p, Span w) {
  std::vector<const char*> names(std::begin(kTransferBlocks), std::end(kTransferBlocks));
  std::vector<const std::vector<Piece>*> lists;
  for (const auto& t : p.transfer) lists.push_back(&t);
  return data_text(
      "# The transfer intervals of jobs.csv's jobs, one block per kind,\n" + window_header(w),
      names, lists);
}

// gnuplot single-quoted string: a quote is written twice.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A time for a title or caption: four significant digits.
std::string seconds(double v) { return fmt::format("{:.4g} s", v); }

// ("w0" 0, "w1" 1, ...)
std::string worker_tics(int rows) {
  std::vector<std::string> tics;
  for (int w = 0; w < rows; ++w) tics.push_back(fmt::format("'w{}' {}", w, w));
  return fmt::format("({})", fmt::join(tics, ", "));
}

bool has_transfers(const Pieces& p) {
  for (const auto& t : p.transfer)
    if (!t.empty()) return true;
  return false;
}

// The legend, one row centred under the x label: a sample and a name per fate drawn, then the
// transfer line. Drawn as objects and labels at fixed pixel places rather than with gnuplot's
// key, which wraps a horizontal key into several rows at its own discretion.
std::string legend(const Pieces& p, double height) {
  std::vector<std::pair<std::string, const char*>> entries;  // name, box colour ("" = line)
  for (size_t f = 0; f < kFateCount; ++f) {
    if (!p.compute[f].empty()) entries.push_back({fate_name(f), kFateColours[f]});
  }
  if (has_transfers(p)) entries.push_back({"transfer", nullptr});
  constexpr double kSlot = 175, kSample = 34, kY = 24, kHalf = 7;
  const double x0 = (kWidth - kSlot * static_cast<double>(entries.size())) / 2;
  auto sx = [](double px) { return fmt::format("{:.6g}", px / kWidth); };
  auto sy = [&](double px) { return fmt::format("{:.6g}", px / height); };
  std::string out = "unset key\n";
  for (size_t i = 0; i < entries.size(); ++i) {
    const double x = x0 + kSlot * static_cast<double>(i);
    const auto& [name, colour] = entries[i];
    if (colour) {
      out += fmt::format(
          "set object {} rectangle from screen {}, screen {} to screen {}, screen {} "
          "fc rgb '{}' fs solid 1.0 noborder\n",
          101 + i, sx(x), sy(kY - kHalf), sx(x + kSample), sy(kY + kHalf), colour);
    } else {
      out += fmt::format(
          "set arrow 101 from screen {}, screen {} to screen {}, screen {} nohead "
          "lw 1.5*pscale lc rgb '{}'\n",
          sx(x), sy(kY), sx(x + kSample), sy(kY), kTransferColour);
    }
    out += fmt::format("set label {} {} at screen {}, screen {} left\n", 101 + i, quoted(name),
                       sx(x + kSample + 10), sy(kY));
  }
  return out;
}

// The plot clauses: the boxes per fate drawn, then the transfer lines on top.
std::vector<std::string> plot_clauses(const Pieces& p) {
  std::vector<std::string> clauses;
  int block = 0;
  for (size_t f = 0; f < kFateCount; ++f) {
    if (p.compute[f].empty()) continue;
    clauses.push_back(fmt::format(
        "'figures/timeline-compute.dat' index {} using (($3+$4)/2):1:3:4:($1-{}):($1+{}) "
        "with boxxyerror fs solid 1.0 noborder fc rgb '{}' notitle",
        block++, kBoxHalf, kBoxHalf, kFateColours[f]));
  }
  if (has_transfers(p)) {
    clauses.push_back(
        fmt::format("'figures/timeline-transfers.dat' using 3:1:($4-$3):(0) with vectors nohead "
                    "lw 1.5*pscale lc rgb '{}' notitle",
                    kTransferColour));
  }
  return clauses;
}

std::string script_body(const std::string& title, Span w, int rows, const Pieces& p) {
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
  std::vector<std::string> clauses = plot_clauses(p);
  std::string plot = "plot ";
  for (size_t i = 0; i < clauses.size(); ++i) plot += (i ? ", \\\n     " : "") + clauses[i];
  return body + plot;
}

std::string caption_text(Span w, int workers, int rows, size_t automatic_jobs, const Pieces& p) {
  std::vector<std::string> drawn;
  for (size_t f = 0; f < kFateCount; ++f) {
    if (!p.compute[f].empty()) drawn.push_back(fate_name(f));
  }
  const std::string fates =
      drawn.empty() ? "none drawn" : fmt::format("{}", fmt::join(drawn, ", "));
  std::string window = fmt::format("from {} to {}", seconds(w.from), seconds(w.to));
  if (automatic_jobs > 0) {
    window += fmt::format(" (automatic: until the first {} jobs to end, {} per worker, had ended)",
                          automatic_jobs, kTimelineJobsPerWorker);
  }
  return fmt::format(
      "What each of {} {} did {}: each job's compute interval as a box coloured by its fate ({}), "
      "its transfers to and from the worker as thin lines, idle time blank.",
      rows < workers ? fmt::format("the first {} of {}", rows, workers)
                     : fmt::format("the {}", workers),
      workers == 1 ? "worker" : "workers", window, fates);
}

std::string title_text(const std::string& title, Span w, int workers, int rows) {
  std::string out = fmt::format("{}{}timeline, {} – {}", title, title.empty() ? "" : ": ",
                                seconds(w.from), seconds(w.to));
  if (rows < workers) out += fmt::format(" (the first {} of {} workers)", rows, workers);
  return out;
}

}  // namespace

std::optional<Figure> write_timeline_figure(const std::string& dir, const std::string& jobs_csv,
                                            TimelineWindow window, const std::string& title) {
  const std::vector<JobRecord> jobs = read_jobs_csv(jobs_csv);
  int workers = 0;
  for (const JobRecord& j : jobs) workers = std::max(workers, j.worker + 1);
  const int rows = std::min(workers, kTimelineMaxWorkers);
  size_t automatic_jobs = 0;
  const Span w = choose_window(jobs, workers, window, automatic_jobs);
  const Pieces pieces = cut(jobs, w, rows);
  if (pieces.empty()) {
    figure::remove_figure_files(dir, "timeline");
    return std::nullopt;
  }
  return figure::write_single_figure(
      dir, "timeline", caption_text(w, workers, rows, automatic_jobs, pieces), kWidth,
      kFixedHeight + kRowHeight * rows,
      script_body(title_text(title, w, workers, rows), w, rows, pieces),
      {{"figures/timeline-compute.dat", compute_data(pieces, w)},
       {"figures/timeline-transfers.dat", transfer_data(pieces, w)}});
}

}  // namespace pacer
