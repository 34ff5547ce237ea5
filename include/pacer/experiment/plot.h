// Plots of runs, drawn with gnuplot (DESIGN.md section 6).
//
// A plot is a gnuplot script written next to the runs it reads (so it can be edited and re-run)
// and, when a `gnuplot` program is on the PATH, the PNG it renders. Plots are a convenience: when
// gnuplot is missing or fails, the script is still written, a warning says so, and nothing else
// about the run changes. Both files are written atomically.
#pragma once

#include <string>
#include <vector>

namespace pacer {

struct PlotSeries {
  std::string label;     // legend entry
  std::string log_path;  // a run's log.csv, relative to the plot's folder
};

// Writes <dir>/<name>.gp and renders <dir>/<name>.png: the training loss reported at each update
// against time (left) and against the update count (right), one line per series.
// Returns true when the PNG was rendered.
bool write_loss_plot(const std::string& dir, const std::string& name, const std::string& title,
                     const std::vector<PlotSeries>& series);

}  // namespace pacer
