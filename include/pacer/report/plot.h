// Figures of runs and comparisons, drawn with gnuplot (DESIGN.md section 6).
//
// A figure is three things written next to the runs it shows: the small data files it plots
// (<dir>/figures/<figure>-*.dat, aggregated and decimated by pacer, never a run's full log.csv),
// a gnuplot script <dir>/<figure>.gp that reads only those (edit it and re-run it in <dir> with
// `gnuplot <figure>.gp`), and, when a `gnuplot` program is on the PATH, the <figure>.png and
// <figure>.svg it renders. Figures are a convenience: when gnuplot is missing or fails, the
// scripts and data are still written, one warning says so, and nothing else about the run
// changes. Every file is written atomically (gnuplot renders to a temporary name that is then
// renamed), and the same inputs give byte-identical scripts and data files.
//
// The inputs are the files every run folder holds: evals.csv (one row per evaluation of the
// model: time, step, work_units, full_loss, grad_norm_sq, tilde_loss, test_loss, test_accuracy),
// trace.csv (the reported minibatch loss as block means, at most about 2000 rows) and
// summary.json (clock, engine_stats.busy_time_per_worker / idle_time_per_worker,
// method_stats.staleness_histogram or, for asynchronous methods, method_stats.delay_histogram).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pacer/report/comparison.h"

namespace pacer {

struct Figure {
  std::string png, svg;   // file names relative to the folder the figure was written to
  std::string caption;    // one sentence: what it shows
  std::string script;     // the gnuplot script, relative to the same folder
  bool rendered = false;  // png and svg were drawn (false: gnuplot missing or failed)
};

// The clock a run's times are on, as its summary.json says under "clock" (written from the
// engine's own answer, EngineRun::wall_clock): the simulator's simulated seconds, or wall-clock
// seconds of a real run. kUnknown: a summary that does not say (written before pacer recorded
// it), or runs that disagree; the figures then say only "time (s)".
enum class Clock { kSimulated, kWall, kUnknown };
// summary.json's "clock" value: "simulated", "wall"; "" for kUnknown.
std::string clock_name(Clock clock);
// The Clock of a "clock" value; kUnknown for anything but "simulated" and "wall".
Clock parse_clock(const std::string& name);

// How long a run ran, for a title: "300 steps, 237 s of simulated time" ("... of wall-clock
// time"; "... 237 s" for Clock::kUnknown), the time to three significant digits.
std::string describe_run_length(int64_t steps, double time, Clock clock);

// Writes the figures of a comparison into `dir` (the comparison's folder, the one
// SeedRun::folder is relative to), each as <name>.gp, figures/<name>-*.dat and, rendered,
// <name>.png and <name>.svg:
//   loss            F (evaluated full training loss) vs time (left) and work units (right): per
//                   method the mean over seeds (line) and the pointwise min–max over seeds
//                   (band), each seed a step function of its last evaluation on a common grid of
//                   400 points over the range every seed covers; each seed's evaluations as open
//                   circles where there are at most 12 per seed; the reported minibatch loss as a
//                   faint smoothed line of the same colour and dash (seed mean); the target(s) as
//                   dashed lines labelled with the value and "F" or "the train loss". The y axis
//                   says "loss" when both F and the reported loss are drawn, and a legend says
//                   which line is which ("F (evaluated), mean over seeds", "reported minibatch
//                   loss (smoothed)").
//   time_to_target  (only with a target) a horizontal bar per method, the first at the top: mean
//                   time to the first target over seeds with its 95 % t interval; censored
//                   methods hatched and lighter, "≥".
//   tilde           (only with asynchronous methods) F and F̃ of the asynchronous methods side
//                   by side vs time, on one y axis, bands as for loss.
//   workers         per method and worker the busy fraction busy/(busy+idle): the mean over
//                   every seed whose summary has it (bar) and the min–max over them (whisker);
//                   up to 4 methods as clustered bars per worker, more as a small bar chart per
//                   method on one y scale.
//   staleness       per method a horizontal bar of the fractions of gradients by age (0, 1, 2, 3,
//                   4–7, 8–15, ..., binned), pooled over every seed whose summary has it, with
//                   the mean age: synchronous methods (age in steps of each partition gradient
//                   used) and asynchronous ones (delay in updates of each arrival) in panels of
//                   their own.
// Time axes and time labels follow the runs' clock (summary.json "clock": "simulated time (s)",
// "wall-clock time (s)"). Titles say what ran: Comparison::name and the figure, then the number
// of methods drawn, the seeds drawn ("seed 1", "seeds 1–3", "seeds 1, 4"), the budget per run
// with its numbers rounded to three significant digits and whether runs stop at the target;
// captions name methods drawn from fewer seeds. Axes are fitted to the data drawn
// (figure::fit_axis: log only beyond a decade). Legends sit right of the plots, one entry per
// method drawn, in as many columns as keep them within the figure (the figure grows taller up to
// 860 pixels first); in loss and tilde the line kinds (F, band, circles, reported loss) have a
// legend of their own under the plots. The PNG is about 1400 × 540 pixels for two panels, the SVG
// the same at 3/4 scale. Each method has the same style in every figure: figure::method_styles
// (colour by family and method, dash by spec; figure_palette.h), so that every method of the
// comparison has its own (colour, dash) pair. gnuplot draws the figures in parallel processes.
// Returns the figures whose scripts were written, in this order; a figure with nothing to show is
// left out. Never throws for a missing or unreadable run file: that run is left out of the figure,
// with a warning.
std::vector<Figure> write_comparison_figures(const std::string& dir, const Comparison& c);

// The regime map of a sweep (sweep.h): <dir>/regime_map.{gp,png,svg}, a tile per cell of a grid
// of y_values (rows, bottom to top) × x_values (columns; none: one column), coloured by the
// winning method (its colour of figure::method_styles(methods), as in the cells' figures; a
// method whose colour an earlier one of `methods` has is hatched) and labelled with `labels`
// (lines separated by '\n'); a legend lists the methods that win somewhere.
struct RegimeMap {
  std::string title, caption;
  std::string y_key, x_key;  // x_key "" with one axis
  std::vector<std::string> y_values, x_values;
  std::vector<std::string> methods;
  // Per cell, row-major from the first y value: a method index, or -1 where no method wins
  // (undecided, or none reached the target): a grey tile.
  std::vector<int> winner;
  std::vector<std::string> labels;  // per cell, same order
};
std::optional<Figure> write_regime_map(const std::string& dir, const RegimeMap& map);

// The figure of one run folder (pacer run): <dir>/loss.{gp,png,svg} from <dir>/evals.csv and
// <dir>/trace.csv: F (and F̃ for asynchronous runs) with the reported minibatch loss as a faint
// smoothed line, each named in the legend, against time on `clock` (left) and work units
// (right), with a dashed line per target (`target_on`: "train" or "full"). Returns true when the
// PNG and SVG were rendered.
bool write_run_figure(const std::string& dir, const std::string& title,
                      const std::vector<double>& targets, const std::string& target_on,
                      Clock clock);

// write_run_figure in two halves, for a caller with other files to write meanwhile (pacer run
// writes log.csv while gnuplot draws): the constructor reads evals.csv and trace.csv, writes the
// data and the script and starts gnuplot; finish() waits for it, moves the PNG and SVG into
// place and warns once when they could not be drawn, and returns whether they were. The
// destructor finishes an unfinished job.
class RunFigureJob {
 public:
  RunFigureJob(const std::string& dir, const std::string& title, const std::vector<double>& targets,
               const std::string& target_on, Clock clock);
  ~RunFigureJob();
  RunFigureJob(const RunFigureJob&) = delete;
  RunFigureJob& operator=(const RunFigureJob&) = delete;
  bool finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// For figure writers outside plot.cc (timeline.h): one figure written the way all of the above
// are.
namespace figure {

// A data file of a figure: its path relative to the figure's folder ("figures/<name>-x.dat") and
// its whole text.
struct DataText {
  std::string path, text;
};

// Writes `data` under `dir` and the script <dir>/<name>.gp: pacer's script head (the PNG `width`
// × `height` pixels, the SVG at 3/4 of that, `pscale` 1 or 0.75 for the body to scale line widths
// with), then `body` (gnuplot commands, run once per terminal). Then renders it when gnuplot is
// on the PATH, waits for it, and warns once when gnuplot is missing or failed. Every file is
// written atomically. Throws Error naming a file that cannot be written.
Figure write_single_figure(const std::string& dir, const std::string& name,
                           const std::string& caption, int width, int height,
                           const std::string& body, const std::vector<DataText>& data);

// Removes what an earlier call wrote for figure `name` in `dir`: <name>.{gp,png,svg} and
// figures/<name>.dat, figures/<name>-*.dat. Missing files are no error.
void remove_figure_files(const std::string& dir, const std::string& name);

}  // namespace figure
}  // namespace pacer
