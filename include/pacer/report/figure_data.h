// The building blocks of the figures (plot.h): reading the small per-run CSV files, putting the
// seeds of a method on a common grid, smoothing, fitting an axis to the data, the palette.
//
// Everything here is deterministic: the same inputs give the same numbers, and the files the
// figures write from them are byte-identical.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pacer::figure {

// A CSV file with a header row (evals.csv, trace.csv). Column-major; a field that is empty or
// not a number is NaN.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> values;  // values[column][row]
  size_t rows() const { return values.empty() ? 0 : values[0].size(); }
  // The column named `name`, or nullptr when the file has none.
  const std::vector<double>* column(const std::string& name) const;
};

// Parses CSV text; `source` names it in errors. Throws Error on a row with more fields than
// the header.
Table parse_table(const std::string& text, const std::string& source);
// Reads and parses a CSV file; throws Error naming it when it cannot be read.
Table read_table(const std::string& path);

// A curve: points (x[i], y[i]) with x non-decreasing and both finite.
struct Series {
  std::vector<double> x, y;
  size_t size() const { return x.size(); }
  bool empty() const { return x.empty(); }
};

// The rows of `table` where columns `x` and `y` are both finite (empty when a column is absent),
// sorted by x (stable).
Series table_series(const Table& table, const std::string& x, const std::string& y);

// Centred moving average over `window` points; near the ends the window is cut at the first or
// last point (so the end points are averages too). window <= 1 returns `s` unchanged.
Series moving_average(const Series& s, size_t window);

// The window moving_average uses for a trace of `points` rows: about 1/25 of it, odd, at least 1.
size_t smoothing_window(size_t points);

// A method's seeds on a common grid.
//
// The grid is `points` equally spaced x values over the range every seed covers,
// [max over seeds of its first x, min over seeds of its last x] (one point when that range is a
// single value). A seed's value at a grid point g is a step function: its y at its last point with
// x <= g. mean is the mean over seeds, low/high the pointwise minimum and maximum over seeds.
// Empty when a seed is empty or the seeds' ranges do not overlap.
struct Band {
  std::vector<double> x, mean, low, high;
  int seeds = 0;
  size_t size() const { return x.size(); }
  bool empty() const { return x.empty(); }
};
Band seed_band(const std::vector<Series>& seeds, size_t points);

// The points of grids the figures use: enough for a smooth line at slide resolution.
inline constexpr size_t kGridPoints = 400;

// An axis fitted to the data drawn on it.
struct Axis {
  double low = 0, high = 1;
  bool log = false;
  // Tic positions: 4 to 8 round numbers on a linear axis; on a log axis 1-2-5 in each decade
  // when it spans less than about two decades (so that at least three are labelled), else empty
  // (gnuplot's decades).
  std::vector<double> tics;
};

// Fits an axis to the finite values: a log scale when all of them are positive and the largest
// exceeds 10 × the smallest, with a margin of `margin` × the span (in log space on a log axis) on
// each side; a single value gets ±10 % (or [v − 1, v + 1] at 0). No finite value: [0, 1].
Axis fit_axis(const std::vector<double>& values, double margin = 0.05);

// The x range of a time or work-units axis: [min, max] of the values, starting at 0 when the
// minimum is below 10 % of the maximum (or the data are a single point).
Axis fit_x_axis(const std::vector<double>& values);

// Round tic positions in [low, high]: multiples of 1, 2, 2.5 or 5 × 10^k, about `count` of them.
std::vector<double> linear_tics(double low, double high, int count = 5);

// A tic label: "%g", with k and M for thousands and millions from 10^4 on ("20k", "1.5M").
std::string tic_label(double v);

// A palette of numbered series (the run figure's F and F̃, the fit report's workers): the i-th
// series' colour, "#RRGGBB". The first kDistinctColours are distinct and colour-blind safe
// (Okabe–Ito without its yellow, then Paul Tol's muted set); from the (kDistinctColours+1)-th
// series on they repeat, and method_dash tells the repeats apart. The methods of a comparison
// are drawn in the family colours of figure_palette.h instead.
inline constexpr size_t kDistinctColours = 14;
std::string method_colour(size_t i);
// The gnuplot dash type of the i-th series' lines: 1 (solid) for the first kDistinctColours,
// then 2, 3, ... for each further round of the palette.
int method_dash(size_t i);

// "#RRGGBB" -> 0xRRGGBB, for gnuplot's `lc rgb variable`.
long colour_value(const std::string& colour);

// A number for a data file: shortest form that reads back the same up to 9 significant digits;
// "NaN" for a non-finite value (gnuplot skips it and breaks the line there).
std::string data_number(double v);

}  // namespace pacer::figure
