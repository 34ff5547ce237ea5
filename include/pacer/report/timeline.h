// The timeline of a run: workers × time over a window, in the manner of Horovod's timeline, as a
// figure and as a Chrome trace (the trace-event JSON that Perfetto and chrome://tracing open).
//
// Its input is a run folder's jobs.csv (job_log.h), one row per job, with the header
//   worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate,sent,injected_time
// (or the older one without the last two columns) in the order the jobs ended. worker is an
// integer >= 0 and tag an integer; assigned is a number; started, finished, delivered, sent and
// injected_time are numbers or empty (unknown); units, compute_time and bytes are numbers (bytes
// an integer) or empty; fate is one of used, late, cancelled, lost, failed, unfinished. Times are
// engine seconds.
//
// Phases. Each job is cut into the phases its row tells apart (job_log.h), in this order, each a
// time interval on the job's worker:
//   held              [assigned, sent]   the master held the job before sending it (MPI, during
//                                        a checkpoint's drain);
//   transfer          [sent, started]    the job on its way to the worker;
//   transfer or wait  [assigned, started] instead of the two above when the row does not say when
//                                        the job was sent (a job never delivered, or a file
//                                        without the sent column): the log cannot tell waiting
//                                        from transfer there;
//   compute           [started, finished − injected_time] (injected_time unknown: 0);
//   injected delay    [finished − injected_time, finished] the worker's sleep under engine.inject;
//   reply             [finished, delivered] the reply on its way back.
// A job whose started or finished is unknown is one phase, out (phases unknown) [assigned, end],
// end as JobRecord::end. Each boundary is taken as at least the one before it (on MPI started
// may precede assigned by microseconds: assigned is read just after the send), so the phases of
// a job follow each other without overlap. Every phase is clipped to the window, and only one
// with a positive length inside it is drawn, written to a data file or exported.
//
// The figure is written like every pacer figure (plot.h): <dir>/<name>.gp, the data files
// <dir>/figures/<name>-compute.dat (compute phases, a block per fate),
// <dir>/figures/<name>-injected.dat (injected delays, a block per fate) and
// <dir>/figures/<name>-lines.dat (the other phases, a block per kind), and, when gnuplot is on the
// PATH, <dir>/<name>.png and <dir>/<name>.svg, each file atomically; without gnuplot the script
// and data are still written and one warning says so. What it draws: one row per worker, worker
// 0 at the top, labelled "w0", "w1", ...; x is time in seconds over the window; compute as a
// filled box coloured by the job's fate (used green, late orange, cancelled grey, lost red,
// failed purple, unfinished light blue), injected delay as the same box in a lighter shade of
// that colour; transfer and reply as thin dark lines at the row's centre, transfer or wait as a
// dashed dark line, held as a thick pink line, out as a dotted grey line; a legend entry
// for each kind drawn. Idle time is the blank background. The rows are the workers 0 .. n-1, n =
// 1 + the largest worker in the file; of more than kTimelineMaxWorkers workers only the first
// kTimelineMaxWorkers are drawn (the title says so). The PNG is 1400 × (200 + 28 · rows) pixels,
// the SVG the same at 3/4 scale. The title: "<run title>: timeline, t = <from>–<to> <unit>", the
// window rounded to three significant digits of its width, in s, ms or µs by its magnitude.
//
// The Chrome trace <dir>/<name>.json is a JSON object {"traceEvents": [...], "displayTimeUnit":
// "ms", "otherData": {...}}, one event per line. Process 1 is the run: a metadata event ("ph":
// "M") process_name names it ("<run title>: jobs of <jobs.csv>"). Each worker w of the file
// (all of them, not only the first kTimelineMaxWorkers) is one track, tid w + 1 (0 is avoided:
// to trace readers pid and tid 0 are Linux's idle task, and the Perfetto UI merged tid 0 into tid
// 1 until google/perfetto#2278), named by a metadata event thread_name "worker w"
// and ordered by thread_sort_index w. Each job with a phase in the window is a complete event
// ("ph": "X") named "job <tag>", category "job", from its first phase's start to its last
// phase's end, with each of its phases as a complete event nested in it, named by the phase
// (above) and of category "phase". ts and dur are microseconds of engine time (the engine's
// seconds × 10^6), each boundary rounded to a multiple of 1/1024 µs so that adjacent phases meet
// exactly; dur >= 0. Every event's args hold the job's worker, tag and fate, and its units,
// compute_time and bytes where known. otherData holds the run title, the window in seconds and
// the file read. The same jobs.csv, window and title give byte-identical files.
#pragma once

#include <optional>
#include <string>

#include "pacer/core/config.h"
#include "pacer/report/plot.h"

namespace pacer {

// The most worker rows a timeline figure draws: beyond it bars get too thin to read.
inline constexpr int kTimelineMaxWorkers = 64;
// The automatic window shows the first kTimelineJobsPerWorker · n jobs to end.
inline constexpr int kTimelineJobsPerWorker = 20;

// The time span shown, in engine seconds. `all`: every job, from the first assigned time in the
// file to the last end. Else to <= from asks for the automatic window: from the first assigned
// time in the file to the moment the (kTimelineJobsPerWorker · n)-th job ended (the last job's
// end when there are fewer), where n is the number of workers and a job's end is
// JobRecord::end. That keeps a long run's bars readable: about 20 jobs per worker on average.
struct TimelineWindow {
  double from = 0;
  double to = 0;
  bool all = false;
};

// A run's own window: record.timeline = [from, to] (engine seconds, 0 <= from < to); absent: the
// automatic window. A bad value is an Error naming the key.
TimelineWindow read_timeline_window(const Config& config);

// The file name (without extension) of a timeline over `window` other than the run's own, so
// that it does not replace the run's timeline.*: "timeline-all" for `all`, else
// "timeline-<from>-<to>" with each number in its shortest form ("timeline-10-20",
// "timeline-5.385-5.584"); "timeline" for the automatic window.
std::string timeline_window_name(const TimelineWindow& window);

// What the run in folder `dir` is, for titles: "<method>, seed <seed>" from its summary.json (its
// "method" and "seed"), else from its config.toml (method.name and seed), else the folder's name.
// Never throws: a file that is missing or cannot be read is passed over.
std::string timeline_run_title(const std::string& dir);

struct TimelineOptions {
  TimelineWindow window;
  std::string title;              // the run (timeline_run_title); "" for none
  std::string name = "timeline";  // the files' name without extension
  bool figure = true;             // write the figure (<name>.gp, its data, .png and .svg)
  bool chrome = true;             // write the Chrome trace <name>.json
};

// The options with which pacer timeline writes the timeline of the run folder `dir`: without a
// window, the run's own (record.timeline in its config.toml, else automatic) into timeline.*, as
// pacer run wrote it; with one, into timeline_window_name(*window).*, so that the run's files
// stay. Titled timeline_run_title(dir). Throws Error for a config.toml that cannot be read or a
// bad record.timeline in it.
TimelineOptions timeline_options_for_run(const std::string& dir,
                                         const std::optional<TimelineWindow>& window);

// What write_timeline wrote, paths relative to the folder.
struct Timeline {
  std::string caption;           // one sentence: what the figure and the trace show
  std::optional<Figure> figure;  // when options.figure
  std::string chrome;            // "<name>.json" when options.chrome, else ""
};

// Writes what `options` asks for of the jobs.csv at `jobs_csv` into `dir` over the window (see
// the file comment). Returns nullopt when no phase of any job overlaps the window: then every
// file an earlier call wrote under that name in `dir` is removed and nothing is written. A missing
// or unreadable file, a bad header and a bad row (a wrong number of fields, a field that is not a
// number of the column's kind, a fate not in the list) are Errors naming the file, the line and,
// for a field, the column; they are thrown before anything is written or removed. Throws Error
// naming a file that cannot be written.
std::optional<Timeline> write_timeline(const std::string& dir, const std::string& jobs_csv,
                                       const TimelineOptions& options);

}  // namespace pacer
