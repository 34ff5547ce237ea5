// The building blocks every figure of plot.h is written with (inside the experiment layer only):
// data files, gnuplot scripts, layouts, legends, axes, and the words for clocks, seeds and
// budgets. The figures themselves live in figure_*.cc; plot.cc runs gnuplot.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pacer/report/comparison.h"
#include "pacer/report/figure_data.h"
#include "pacer/report/plot.h"

namespace pacer::figure {

// Text sizes in points, readable on a slide at full width (the SVG canvas is 3/4 of the PNG's in
// pixels, so that its text has the same proportions: see Script).
inline constexpr int kFont = 15;
inline constexpr int kTitleFont = 17;
// Pixels per character of kFont text, generously (legend widths are computed from it).
inline constexpr double kCharPixels = 0.78 * kFont;
// Pixels from one legend line to the next (kFont at spacing 1.15, as pngcairo draws it).
inline constexpr double kLegendLinePixels = 28;
inline constexpr const char* kTargetColour = "#444444";
// Legend entries that explain a line style rather than name a method (no method is black or
// grey: figure_palette.h), and notes.
inline constexpr const char* kStyleColour = "#000000";
inline constexpr const char* kNeutralColour = "#777777";

// ---- Words -----------------------------------------------------------------------------------

// gnuplot single-quoted string: a quote is written twice.
std::string gp_string(const std::string& text);
// gnuplot double-quoted string: "\n" in `text` becomes a line break there.
std::string gp_lines(const std::string& text);
// A string field of a data file (gnuplot reads no escapes there: double quotes become single).
std::string data_string(const std::string& text);
// A script number: short and exact enough for an axis bound or a position.
std::string num(double v);
// The colour at about one third opacity (gnuplot's #AARRGGBB, AA = transparency).
std::string faint(const std::string& colour);
// A time or count for a label: three significant digits, no exponent ("6.99", "0.00412", "312",
// "30.0").
std::string short_number(double v);
// The same without trailing zeros, for a number that was set rather than measured ("30", "6.99",
// "1500").
std::string round_number(double v);
// "seeds 1–3", "seeds 1, 4, 7", "seeds 1–5, 8–32", "seed 2" (sorted, duplicates dropped,
// consecutive seeds as a range); "" for none.
std::string describe_seeds(std::vector<uint64_t> seeds);
// "0.55 on the train loss" / "0.55 on F".
std::string describe_target(double target, const std::string& target_on);
// The characters of the longest label (UTF-8 code points).
size_t longest(const std::vector<std::string>& labels);
// The pixels a title (lines separated by '\n') at kTitleFont takes: its longest line, at about
// 0.75 × 17 pixels per character.
double title_pixels(const std::string& title);

// The label of a time axis: "simulated time (s)", "wall-clock time (s)", "time (s)".
std::string time_axis_label(Clock clock);
// The unit of a time in a label: "simulated s", "wall-clock s", "s".
std::string time_unit(Clock clock);
// The budget of every run in words, numbers rounded: "100 steps", "6.99 s of simulated time",
// "6.99 s of wall-clock time", "3000 work units".
std::string describe_budget(const Budget& budget, Clock clock);

// ---- Data files and scripts ------------------------------------------------------------------

// A data file of whitespace-separated columns, in blocks (gnuplot's `index`) separated by two
// blank lines; '#' lines are comments.
class DataFile {
 public:
  explicit DataFile(const std::string& header);
  // Starts a block; returns its index.
  int block(const std::string& comment);
  void row(std::initializer_list<double> values);
  void raw(const std::string& line);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int blocks_ = 0;
};

// A gnuplot script that renders its body twice: to PNG (pngcairo) and to SVG.
class Script {
 public:
  Script(const std::string& name, const std::string& caption, int width, int height);
  // One command (or several lines) of the body, indented.
  Script& operator<<(const std::string& lines);
  // A plot command of several clauses, one per line.
  void plot(const std::vector<std::string>& clauses);
  std::string text() const;
  const std::string& name() const { return name_; }

 private:
  std::string name_, head_, body_;
};

// ---- Layout ----------------------------------------------------------------------------------

// Where the plot area of a panel lies, in screen coordinates.
struct Panel {
  double left, right, bottom, top;
  double ylabel_offset = 0;  // from the plot's left edge to the y label's centre
  double xlabel_y = 0;       // the x label's centre, screen coordinates
  // The axis labels at fixed places under and left of the plot area ("" = none): gnuplot's
  // xlabel and ylabel sit so many character heights away, which the svg terminal spaces wider
  // than it draws its text.
  std::string axis_labels(const std::string& x, const std::string& y, int width, int height) const;
  std::string margins() const;
};

// A legend right of the plots: `entries` lines in `columns` columns of at most `rows` lines each
// (gnuplot fills them column by column), each column as wide as the longest entry.
struct Legend {
  size_t entries = 0, chars = 0;
  int columns = 1, rows = 1;
  double column_pixels() const;
};

// The legend of `labels` beside plots in a figure `height` pixels high at the least, of which
// `around` are not the plots' (titles, tics, axis labels: 170 with a two-line title; more with a
// style strip): one column while that fits in up to kTallestFigure pixels of height, else as few
// columns as keep it within that. `height` is raised to what the legend's rows need. (gnuplot
// fits a key's rows in the height of its plot, so a legend that is taller is cut.)
inline constexpr int kTallestFigure = 860;
inline constexpr int kAroundPlots = 170;
Legend fit_legend(const std::vector<std::string>& labels, int& height, int around = kAroundPlots);

// `panels` side by side with `legend` to their right, in a canvas `width` × `height` pixels (of
// which the legend's columns take their share), with room left of each plot for y tic labels
// of `tic_chars` characters (and a y label left of the first, and of every panel when
// `ylabel_each`). `title_lines`: lines of the title above the plots; `extra_bottom`: pixels
// below the x labels kept free (for a style strip: kStyleStripPixels).
struct Layout {
  std::vector<Panel> panels;
  double key_x = 0, key_y = 0;  // the legend's top left corner, screen coordinates
  int key_rows = 0;             // gnuplot's maxrows
};
Layout side_by_side(int panels, int width, int height, const Legend& legend, size_t tic_chars,
                    bool ylabel_each = false, int title_lines = 2, int extra_bottom = 0);

// A plot that is nothing but a legend: `entries` (keyentry clauses) in a key whose top left
// corner is at screen (x, y), with `key_options` ("horizontal maxrows 2"). Its plot spans the
// canvas, so that gnuplot lays the key out by `key_options` alone, whatever the panels' sizes.
// Draw it last in a multiplot (it resets the margins, border, tics and labels).
std::string legend_plot(const std::vector<std::string>& entries, double x, double y,
                        const std::string& key_options);
// The pixels under the x labels a style strip of two rows takes (legend_plot, "horizontal
// maxrows 2").
inline constexpr int kStyleStripPixels = 64;

// The pixels a canvas of `plots_width` pixels for its plots needs with `legend` beside them.
int width_with_legend(int plots_width, const Legend& legend);

// The characters of an axis's longest tic label (5 when gnuplot chooses the tics).
size_t tic_chars(const Axis& a);
// `set key` at the layout's legend place, in its columns.
std::string key_at(const Layout& layout);
// Axis commands for axis 'x' or 'y' from a fitted Axis.
std::string axis_commands(char axis, const Axis& a);
Axis linear_axis(double low, double high);
// A horizontal dashed line at each target, labelled at its left end.
std::string target_lines(const std::vector<double>& targets, const std::string& target_on);
// Lowers the axis so that the label under each target line (at the left end) fits in the plot.
void make_room_below(Axis& y, const std::vector<double>& targets);

// ---- Writing ---------------------------------------------------------------------------------

// The gnuplot processes of one call (plot.cc).
class Rendering;

// Writes the data files and the script under `dir`, and starts rendering it. Figure::rendered is
// set when the rendering is finished (plot.cc).
Figure write_figure(const std::string& dir, const Script& script,
                    const std::vector<std::pair<std::string, const DataFile*>>& data,
                    const std::string& caption, Rendering& rendering);

// write_figure, then renders it at once (when gnuplot is on the PATH), waits for it, and warns
// once when gnuplot is missing or failed (plot.cc).
Figure render_now(const std::string& dir, const Script& script,
                  const std::vector<std::pair<std::string, const DataFile*>>& data,
                  const std::string& caption);

// The run figure's files (plot.h: RunFigureJob), its rendering started; nothing when the run
// has nothing to draw (an earlier figure is then removed) or its files cannot be read (warned).
std::optional<Figure> start_run_figure(const std::string& dir, const std::string& title,
                                       const std::vector<double>& targets,
                                       const std::string& target_on, Clock clock,
                                       Rendering& rendering);

}  // namespace pacer::figure
