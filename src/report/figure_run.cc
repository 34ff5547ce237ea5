// The figure of one run folder (plot.h: write_run_figure, RunFigureJob).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "figure_script.h"
#include "pacer/core/error.h"
#include "pacer/core/log.h"

namespace pacer::figure {
namespace {

// The run's curves against time (0) and work units (1).
struct RunCurves {
  Series f[2], tilde[2], reported[2];
  std::vector<double> y_values, x_values[2];
  bool has_f() const { return !f[0].empty(); }
  bool has_tilde() const { return !tilde[0].empty(); }
  // F̃ equal to F at every evaluation, to rounding (the frequency weights of equal partitions):
  // drawn once, as F, with the legend saying so, not as a second curve hidden under the first.
  bool tilde_is_f() const {
    if (!has_f() || !has_tilde() || tilde[0].size() != f[0].size()) return false;
    for (size_t i = 0; i < f[0].size(); ++i) {
      if (tilde[0].x[i] != f[0].x[i]) return false;
      if (!(std::abs(tilde[0].y[i] - f[0].y[i]) <= 1e-12 * std::abs(f[0].y[i]))) return false;
    }
    return true;
  }
  bool has_trace() const { return !reported[0].empty(); }
};

constexpr const char* kXColumns[2] = {"time", "work_units"};

RunCurves run_curves(const std::optional<Table>& evals, const std::optional<Table>& trace,
                     const std::vector<double>& targets) {
  RunCurves c;
  c.y_values.assign(targets.begin(), targets.end());
  for (int a = 0; a < 2; ++a) {
    if (evals) {
      c.f[a] = table_series(*evals, kXColumns[a], "full_loss");
      c.tilde[a] = table_series(*evals, kXColumns[a], "tilde_loss");
    }
    if (trace) {
      Series raw = table_series(*trace, kXColumns[a], "loss");
      c.reported[a] = moving_average(raw, smoothing_window(raw.size()));
    }
    for (const Series* s : {&c.f[a], &c.tilde[a], &c.reported[a]}) {
      c.y_values.insert(c.y_values.end(), s->y.begin(), s->y.end());
      c.x_values[a].insert(c.x_values[a].end(), s->x.begin(), s->x.end());
    }
  }
  return c;
}

// Evaluations: time, work units, F, F̃ (NaN when absent).
DataFile evals_file(const std::optional<Table>& evals) {
  DataFile file(
      "The run's evaluations (evals.csv).\nColumns: time, work_units, F (full training loss), "
      "F̃ (frequency-weighted loss; NaN for synchronous runs)");
  file.block("one row per evaluation");
  if (!evals) return file;
  const std::vector<double>* t = evals->column("time");
  const std::vector<double>* w = evals->column("work_units");
  const std::vector<double>* fl = evals->column("full_loss");
  const std::vector<double>* tl = evals->column("tilde_loss");
  for (size_t i = 0; i < evals->rows(); ++i) {
    auto at = [&](const std::vector<double>* col) { return col ? (*col)[i] : std::nan(""); };
    file.row({at(t), at(w), at(fl), at(tl)});
  }
  return file;
}

// The reported loss smoothed against the row order, the same for both x columns.
DataFile trace_file(const std::optional<Table>& trace, size_t rows) {
  DataFile file(fmt::format(
      "The reported (minibatch) training loss: trace.csv's block means smoothed by a centred "
      "moving\naverage of {} rows.\nColumns: time, work_units, smoothed loss",
      smoothing_window(rows)));
  file.block("one row per trace row");
  if (!trace) return file;
  const std::vector<double>* t = trace->column("time");
  const std::vector<double>* w = trace->column("work_units");
  const std::vector<double>* l = trace->column("loss");
  Series by_row;
  for (size_t i = 0; l && i < trace->rows(); ++i) {
    if (!std::isfinite((*l)[i])) continue;
    by_row.x.push_back(static_cast<double>(i));
    by_row.y.push_back((*l)[i]);
  }
  Series smooth = moving_average(by_row, smoothing_window(by_row.size()));
  for (size_t k = 0; k < smooth.size(); ++k) {
    const size_t i = static_cast<size_t>(smooth.x[k]);
    file.row({t ? (*t)[i] : std::nan(""), w ? (*w)[i] : std::nan(""), smooth.y[k]});
  }
  return file;
}

// The drawn quantities: their legend labels and line styles, bottom to top of the drawing.
struct RunLines {
  std::vector<std::string> labels, styles;
  std::vector<std::pair<const char*, int>> data;  // the data file and its y column
};

RunLines run_lines(const RunCurves& c) {
  RunLines out;
  const std::string f_colour = method_colour(0), tilde_colour = method_colour(1);
  const std::string points = c.f[0].size() <= 60 ? "linespoints pt 7 ps 0.9*pscale" : "lines";
  // Drawn bottom to top: the faint reported loss, F̃, F.
  if (c.has_trace()) {
    out.labels.push_back("reported minibatch loss (smoothed)");
    out.styles.push_back(fmt::format("lines lw {} lc rgb '{}'", c.has_f() ? "1.5" : "2",
                                     c.has_f() ? faint(f_colour) : f_colour));
    out.data.emplace_back("figures/loss-reported.dat", 3);
  }
  if (c.has_tilde() && !c.tilde_is_f()) {
    out.labels.push_back("F̃ (frequency-weighted, evaluated)");
    out.styles.push_back(fmt::format("{} lw 2.5 dt (8,4) lc rgb '{}'", points, tilde_colour));
    out.data.emplace_back("figures/loss-evals.dat", 4);
  }
  if (c.has_f()) {
    out.labels.push_back(c.tilde_is_f() ? "F (evaluated; F̃ equals it here)" : "F (evaluated)");
    out.styles.push_back(fmt::format("{} lw 2.5 lc rgb '{}'", points, f_colour));
    out.data.emplace_back("figures/loss-evals.dat", 3);
  }
  return out;
}

std::string run_caption(const RunCurves& c, Clock clock, const std::vector<double>& targets,
                        const std::string& target_on) {
  std::string caption = c.has_f() ? "F, the full training loss of the evaluated model"
                                  : "The reported minibatch training loss";
  if (c.has_f() && c.has_tilde()) {
    caption += c.tilde_is_f() ? ", equal here at every evaluation to F̃ = Σ w_i F_i (w_i ∝ 1/τ_i)"
                              : ", and F̃ = Σ w_i F_i (w_i ∝ 1/τ_i)";
  }
  const std::string time = time_axis_label(clock);
  caption +=
      fmt::format(" against {} (left) and work units (right)", time.substr(0, time.find(" (s)")));
  if (c.has_f() && c.has_trace()) caption += "; faint: the reported minibatch loss, smoothed";
  if (!targets.empty()) {
    std::vector<std::string> ts;
    for (double t : targets) ts.push_back(describe_target(t, target_on));
    caption += fmt::format("; dashed: the target {}", fmt::join(ts, ", "));
  }
  return caption + ".";
}

std::string run_ylabel(const RunCurves& c) {
  if (!c.has_f()) return "reported minibatch loss";
  return c.has_trace() || c.has_tilde() ? "loss" : "F (full training loss)";
}

void run_script(Script& s, const RunCurves& c, const std::string& title, Clock clock,
                const std::vector<double>& targets, const std::string& target_on, int width,
                int height, const Legend& legend) {
  Axis y = fit_axis(c.y_values);
  make_room_below(y, targets);
  const Layout layout = side_by_side(2, width, height, legend, tic_chars(y), false, 1);
  const RunLines lines = run_lines(c);
  s << fmt::format("set multiplot title {} font ',{}'", gp_string(title), kTitleFont);
  s << "set grid lc rgb '#dddddd'\nset border lc rgb '#444444'";
  s << axis_commands('y', y);
  s << target_lines(targets, target_on);
  const std::string xlabels[2] = {time_axis_label(clock), "work units (partition gradients)"};
  for (int a = 0; a < 2; ++a) {
    s << layout.panels[a].margins();
    s << axis_commands('x', fit_x_axis(c.x_values[a]));
    s << layout.panels[a].axis_labels(xlabels[a], a == 0 ? run_ylabel(c) : "", width, height);
    s << (a == 0 ? std::string("unset key") : key_at(layout));
    std::vector<std::string> clauses;
    for (size_t i = 0; i < lines.data.size(); ++i) {
      clauses.push_back(fmt::format("{} using {}:{} with {} notitle",
                                    gp_string(lines.data[i].first), a + 1, lines.data[i].second,
                                    lines.styles[i]));
    }
    // The legend lists the lines top to bottom as drawn: F first.
    for (size_t i = lines.labels.size(); a == 1 && i-- > 0;) {
      clauses.push_back(
          fmt::format("keyentry with {} title {}", lines.styles[i], gp_string(lines.labels[i])));
    }
    s.plot(clauses);
  }
  s << "unset multiplot";
}

}  // namespace

std::optional<Figure> start_run_figure(const std::string& dir, const std::string& title,
                                       const std::vector<double>& targets,
                                       const std::string& target_on, Clock clock,
                                       Rendering& rendering) {
  std::optional<Table> evals, trace;
  try {
    if (std::filesystem::exists(dir + "/evals.csv")) evals = read_table(dir + "/evals.csv");
    if (std::filesystem::exists(dir + "/trace.csv")) trace = read_table(dir + "/trace.csv");
  } catch (const Error& e) {
    log_warning("no figure for {}: {}", dir, e.what());
    return std::nullopt;
  }
  const RunCurves c = run_curves(evals, trace, targets);
  if (!c.has_f() && !c.has_trace()) {
    remove_figure_files(dir, "loss");
    return std::nullopt;
  }
  const DataFile eval_data = evals_file(evals);
  const DataFile trace_data = trace_file(trace, c.reported[0].size());
  int height = 540;
  const Legend legend = fit_legend(run_lines(c).labels, height);
  const int width = width_with_legend(1100, legend);
  const std::string caption = run_caption(c, clock, targets, target_on);
  Script s("loss", caption, width, height);
  run_script(s, c, title, clock, targets, target_on, width, height, legend);
  return write_figure(
      dir, s, {{"figures/loss-evals.dat", &eval_data}, {"figures/loss-reported.dat", &trace_data}},
      caption, rendering);
}

}  // namespace pacer::figure
