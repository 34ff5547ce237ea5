// The timeline of a run: workers × time over a window, in the manner of Horovod's timeline.
//
// Its input is a run folder's jobs.csv (job_log.h), one row per job, with the header
//   worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate
// in the order the jobs ended. worker is an integer >= 0 and tag an integer; assigned is a
// number; started, finished and delivered are numbers or empty (unknown; delivered is empty for a
// job never delivered); units, compute_time and bytes are numbers (bytes an integer) or empty;
// fate is one of used, late, cancelled, lost, failed, unfinished. Times are engine seconds.
//
// The figure is written like every pacer figure (plot.h): <dir>/timeline.gp, the data files
// <dir>/figures/timeline-compute.dat and <dir>/figures/timeline-transfers.dat, and, when gnuplot
// is on the PATH, <dir>/timeline.png and <dir>/timeline.svg, each file atomically; without
// gnuplot the script and data are still written and one warning says so. The same jobs.csv,
// window and title give byte-identical script and data files.
//
// What it draws. One row per worker, worker 0 at the top, labelled "w0", "w1", ...; x is time in
// seconds over the window. For each job whose intervals overlap the window:
//   - the compute interval [started, finished] as a filled box coloured by the job's fate
//     (used green, late orange, cancelled grey, lost red, failed purple, unfinished light blue),
//     with a legend entry for each fate drawn;
//   - the transfers [assigned, started] (to the worker) and [finished, delivered] (back to the
//     master) as thin dark lines at the row's centre;
//   - a job whose started or finished is unknown: one thin line from assigned to its end (below).
// Idle time is the blank background. Every interval is clipped to the window, and only an
// interval that overlaps the window for a positive length is drawn or written to a data file.
// The rows are the workers 0 .. n-1, n = 1 + the largest worker in the file; of more than
// kTimelineMaxWorkers workers only the first kTimelineMaxWorkers are drawn (the title says so).
// The PNG is 1400 × (200 + 28 · rows) pixels, the SVG the same at 3/4 scale.
#pragma once

#include <optional>
#include <string>

#include "pacer/experiment/plot.h"

namespace pacer {

// The most worker rows a timeline draws: beyond it bars get too thin to read.
inline constexpr int kTimelineMaxWorkers = 64;
// The automatic window shows the first kTimelineJobsPerWorker · n jobs to end.
inline constexpr int kTimelineJobsPerWorker = 20;

// The time span shown, in engine seconds. to <= from asks for the automatic window: from the
// first assigned time in the file to the moment the (kTimelineJobsPerWorker · n)-th job ended
// (the last job's end when there are fewer), where n is the number of workers and a job's end is
// its delivered time, else its finished time, else its started time, else its assigned time.
// That keeps a long run's bars readable: about 20 jobs per worker on average.
struct TimelineWindow {
  double from = 0;
  double to = 0;
};

// Writes <dir>/timeline.{gp,png,svg} and <dir>/figures/timeline-*.dat from the jobs.csv at
// `jobs_csv` over `window`, with `title` as the title's first part. Returns the Figure (its
// caption says in one sentence what it shows, window included), or nullopt when no interval of
// any job overlaps the window: then an earlier call's timeline files in `dir` are removed and
// nothing is written. A missing or unreadable file, a bad header and a bad row (a wrong number of
// fields, a field that is not a number of the column's kind, a fate not in the list) are Errors
// naming the file, the line and, for a field, the column; they are thrown before anything is
// written or removed. Throws Error naming a file that cannot be written.
std::optional<Figure> write_timeline_figure(const std::string& dir, const std::string& jobs_csv,
                                            TimelineWindow window, const std::string& title);

}  // namespace pacer
