// The time_to_target figure of a comparison: a horizontal bar per method, methods top to bottom
// in the comparison's order. Horizontal, so that 30 method names stay level and readable.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "comparison_figures.h"

namespace pacer::figure {
namespace {

constexpr double kBarHalf = 0.35;  // half a bar's height, in rows

// The data file: one row per method (see its header); the method's row position is
// methods − 1 − its index, so that the first method is at the top.
DataFile bar_data(const Comparison& c, const std::string& target, Clock clock, double& top,
                  bool& any_censored) {
  DataFile data(fmt::format(
      "Time to the target {} ({}), one row per method, the first at the top.\nColumns: row, "
      "mean over seeds, 95 % t interval low and high (NaN with fewer than two values),\ncensored "
      "seeds (their end time counts: the mean is a lower bound), seeds that reached it, seeds,\n"
      "where the label starts, the label, the method.",
      target, time_unit(clock)));
  top = 0;
  any_censored = false;
  for (const MethodResult& m : c.methods) {
    const Estimate& e = m.time_to_target;
    const bool drawn_interval = e.censored == 0 && std::isfinite(e.high);
    if (!e.empty()) top = std::max({top, e.mean, drawn_interval ? e.high : 0.0});
  }
  if (!(top > 0)) top = 1;
  const size_t n = c.methods.size();
  for (size_t i = 0; i < n; ++i) {
    const MethodResult& m = c.methods[i];
    const Estimate& e = m.time_to_target;
    const int runs = static_cast<int>(m.runs.size());
    const bool censored = e.censored > 0;
    any_censored |= censored && !e.empty();
    const std::string reached = fmt::format("{}/{} reached", m.reached, runs);
    const std::string label =
        e.empty() ? fmt::format("{} ({})", m.diverged ? "diverged" : "no value", reached)
                  : fmt::format("{}{} s ({})", censored ? "≥ " : "", short_number(e.mean), reached);
    const double label_x =
        e.empty() ? 0 : std::max(e.mean, !censored && std::isfinite(e.high) ? e.high : e.mean);
    data.raw(fmt::format("{} {} {} {} {} {} {} {} {} {}", n - 1 - i, data_number(e.mean),
                         data_number(e.low), data_number(e.high), e.censored, m.reached, runs,
                         data_number(label_x), data_string(label), data_string(m.spec)));
  }
  return data;
}

// A bar per method: solid, or hatched and lighter when censored.
std::vector<std::string> bar_clauses(const ComparisonRuns& runs, const std::string& file) {
  const Comparison& c = *runs.c;
  std::vector<std::string> clauses;
  const std::string box =
      fmt::format("using (0):1:(0):2:($1-{0}):($1+{0}) with boxxyerror", num(kBarHalf));
  for (size_t i = 0; i < c.methods.size(); ++i) {
    const MethodResult& m = c.methods[i];
    if (m.time_to_target.empty()) continue;
    const std::string& colour = runs.styles[i].colour;
    if (m.time_to_target.censored > 0) {
      clauses.push_back(
          fmt::format("{} every ::{}::{} {} fs transparent solid 0.35 noborder lc rgb '{}' notitle",
                      file, i, i, box, colour));
      clauses.push_back(fmt::format(
          "{} every ::{}::{} {} fs transparent pattern 4 border lc rgb '{}' lc rgb '{}' notitle",
          file, i, i, box, colour, colour));
    } else {
      clauses.push_back(fmt::format(
          "{} every ::{}::{} {} fs solid 0.85 border lc rgb '#333333' lc rgb '{}' notitle", file, i,
          i, box, colour));
    }
  }
  return clauses;
}

// The 95 % interval as an error bar (drawn as vectors: gnuplot's errorbars leave a gap at the
// mean), for the means every seed of which reached the target. A censored mean has none, as in
// the tables: its seeds' end times are lower bounds, and an interval of them would reach past the
// budget, where no run went.
std::vector<std::string> interval_clauses(const std::string& file) {
  std::vector<std::string> clauses;
  const char* colour = "#222222";
  clauses.push_back(fmt::format(
      "{} using 3:($5 == 0 ? $1 : NaN):($4-$3):(0) with vectors nohead lw 1.5 lc rgb '{}' notitle",
      file, colour));
  for (int end : {3, 4}) {
    clauses.push_back(fmt::format(
        "{} using {}:($5 == 0 ? $1-0.12 : NaN):(0):(0.24) with vectors nohead lw 1.5 lc rgb '{}' "
        "notitle",
        file, end, colour));
  }
  return clauses;
}

std::vector<uint64_t> reported_seeds(const Comparison& c, size_t& methods) {
  std::vector<uint64_t> seeds;
  methods = 0;
  for (const MethodResult& m : c.methods) {
    if (m.time_to_target.empty()) continue;
    ++methods;
    for (const SeedRun& r : m.runs) seeds.push_back(r.seed);
  }
  return seeds;
}

}  // namespace

std::optional<Figure> time_to_target_figure(const std::string& dir, const ComparisonRuns& runs,
                                            Rendering& rendering) {
  const Comparison& c = *runs.c;
  if (c.targets.empty() || c.methods.empty()) return std::nullopt;
  const std::string target = describe_target(c.targets[0], c.target_on);
  double top = 0;
  bool any_censored = false;
  const DataFile data = bar_data(c, target, runs.clock, top, any_censored);
  size_t methods = 0;
  const std::vector<uint64_t> seeds = reported_seeds(c, methods);
  const int n = static_cast<int>(c.methods.size());
  std::vector<std::string> specs;
  for (const MethodResult& m : c.methods) specs.push_back(m.spec);
  const double names = 40 + kCharPixels * static_cast<double>(longest(specs));
  const std::string title = comparison_title(runs, "time to target " + target, methods, seeds);
  // gnuplot centres the title over the plot, right of the names: the plot is at least as wide as
  // the title's longer line.
  const int width = static_cast<int>(names + std::max(900.0, 60 + title_pixels(title))),
            height = std::max(380, 190 + 34 * n);
  std::string caption = fmt::format(
      "Time to the target {} per method ({}): the mean over {} (bar) with its 95 % t interval "
      "(error bar), labelled with the mean and how many seeds reached the target",
      target, time_unit(runs.clock), seeds.empty() ? "the seeds" : describe_seeds(seeds));
  if (any_censored) {
    caption +=
        "; hatched, lighter bars marked ≥ include seeds that missed it, counted at their end "
        "time, so the mean is a lower bound, without an interval";
  }
  caption += ".";
  Script s("time_to_target", caption, width, height);
  s << fmt::format("set title {} font ',{}'", gp_lines(title), kTitleFont);
  s << "set grid xtics lc rgb '#dddddd'\nset border 3 lc rgb '#444444'\nset tics nomirror";
  s << fmt::format(
      "set lmargin at screen {}\nset rmargin at screen {}\nset bmargin at screen {}\n"
      "set tmargin at screen {}",
      num(names / width), num(1 - 40.0 / width), num((any_censored ? 110.0 : 80.0) / height),
      num(1 - 90.0 / height));
  // Room right of the longest bar for its label.
  s << axis_commands('x', linear_axis(0, top * 1.45));
  s << fmt::format("set yrange [-0.6:{}]", num(n - 0.4));
  std::vector<std::string> tics;
  for (int i = 0; i < n; ++i) tics.push_back(fmt::format("{} {}", gp_string(specs[i]), n - 1 - i));
  s << fmt::format("set ytics ({}) scale 0", fmt::join(tics, ", "));
  s << fmt::format("set xlabel {}",
                   gp_string(fmt::format("time to target ({})", time_unit(runs.clock))));
  s << "unset key";
  if (any_censored) {
    s << fmt::format("set label 1 {} at screen 0.5, screen {} center tc rgb '{}' font ',13'",
                     gp_string("hatched: some seeds missed the target and count their end "
                               "time (≥: a lower bound)"),
                     num(22.0 / height), kNeutralColour);
  }
  const std::string file = gp_string("figures/time_to_target.dat");
  std::vector<std::string> clauses = bar_clauses(runs, file);
  for (std::string& clause : interval_clauses(file)) clauses.push_back(clause);
  clauses.push_back(fmt::format("{} using 8:1:9 with labels left offset 0.8,0 notitle", file));
  s.plot(clauses);
  return write_figure(dir, s, {{"figures/time_to_target.dat", &data}}, caption, rendering);
}

}  // namespace pacer::figure
