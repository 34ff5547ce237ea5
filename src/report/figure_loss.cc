// The curve figures of a comparison: loss (F and the reported loss against time and work) and
// tilde (F and F̃ of the asynchronous methods).
#include <fmt/format.h>

#include <algorithm>

#include "comparison_figures.h"

namespace pacer::figure {
namespace {

// One panel of a curve figure: a quantity of evals.csv against x, per method.
struct CurvePanel {
  std::string x, y;  // evals.csv columns
  std::string what;  // the quantity, for the data files' headers
  std::string xlabel, ylabel;
  std::string band_file, points_file, reported_file;  // reported_file "": no reported loss
  bool targets = false;                               // draw the target lines
};

// What a curve figure says in words.
struct CurveWords {
  std::string name, title;  // the figure's file name and the title's "what"
  std::string caption_head;
  std::string line_label;  // the legend's entry for the mean line: which quantity it is
};

// Each seed's evaluations of one method, drawn as markers where they are few enough to be told
// apart (at most kMarkedEvaluations per seed on average): x, y, seed.
constexpr size_t kMarkedEvaluations = 12;
struct Points {
  std::vector<double> x, y, seed;
  bool empty() const { return x.empty(); }
};

// One panel's curves, per method.
struct PanelCurves {
  std::vector<Band> bands, reported;  // evaluated (seed band), reported loss (seed mean)
  std::vector<Points> points;
  std::vector<double> x_values;
};

// A curve figure's curves, and what they draw on.
struct Curves {
  std::vector<PanelCurves> panels;
  std::vector<double> y_values;
  std::vector<std::vector<uint64_t>> seeds;  // per method, the seeds drawn
  // any_line: some method has a seed mean to draw (not only evaluations too few to make one).
  bool any = false, any_line = false, any_band = false, any_reported = false, any_points = false;
};

// The files of one panel; a file name "" (or block -1) leaves that layer out.
struct PanelFiles {
  std::string band, reported, points;
  std::vector<int> band_blocks, reported_blocks, points_blocks;
};

Band evals_band(const MethodFiles& files, const std::string& x, const std::string& y) {
  std::vector<Series> seeds;
  for (const SeedFiles& s : files.seeds) {
    if (!s.evals) continue;
    Series series = table_series(*s.evals, x, y);
    if (!series.empty()) seeds.push_back(std::move(series));
  }
  return seed_band(seeds, kGridPoints);
}

Band trace_band(const MethodFiles& files, const std::string& x) {
  std::vector<Series> seeds;
  for (const SeedFiles& s : files.seeds) {
    if (!s.trace) continue;
    Series series = table_series(*s.trace, x, "loss");
    if (series.empty()) continue;
    seeds.push_back(moving_average(series, smoothing_window(series.size())));
  }
  return seed_band(seeds, kGridPoints);
}

Points evals_points(const MethodFiles& files, const std::string& x, const std::string& y) {
  Points p;
  size_t seeds = 0;
  for (const SeedFiles& s : files.seeds) {
    if (!s.evals) continue;
    Series series = table_series(*s.evals, x, y);
    if (series.empty()) continue;
    ++seeds;
    p.x.insert(p.x.end(), series.x.begin(), series.x.end());
    p.y.insert(p.y.end(), series.y.begin(), series.y.end());
    p.seed.insert(p.seed.end(), series.size(), static_cast<double>(s.seed));
  }
  if (p.x.size() > kMarkedEvaluations * seeds) return Points{};
  return p;
}

// The seeds of a method that a panel draws: those with an evaluation or a reported loss.
void add_drawn_seeds(const MethodFiles& files, const CurvePanel& panel,
                     std::vector<uint64_t>& seeds) {
  for (const SeedFiles& s : files.seeds) {
    const bool evaluated = s.evals && !table_series(*s.evals, panel.x, panel.y).empty();
    const bool reported =
        !panel.reported_file.empty() && s.trace && !table_series(*s.trace, panel.x, "loss").empty();
    if ((evaluated || reported) && std::find(seeds.begin(), seeds.end(), s.seed) == seeds.end()) {
      seeds.push_back(s.seed);
    }
  }
}

void collect(std::vector<double>& values, const Band& b, bool with_band) {
  values.insert(values.end(), b.mean.begin(), b.mean.end());
  if (with_band) {
    values.insert(values.end(), b.low.begin(), b.low.end());
    values.insert(values.end(), b.high.begin(), b.high.end());
  }
}

Curves compute_curves(const ComparisonRuns& runs, const std::vector<bool>& shown,
                      const std::vector<CurvePanel>& panels) {
  const size_t methods = runs.methods.size();
  Curves out;
  out.seeds.resize(methods);
  for (const CurvePanel& panel : panels) {
    PanelCurves pc;
    pc.bands.resize(methods);
    pc.reported.resize(methods);
    pc.points.resize(methods);
    for (size_t m = 0; m < methods; ++m) {
      if (!shown[m]) continue;
      const MethodFiles& files = runs.methods[m];
      pc.bands[m] = evals_band(files, panel.x, panel.y);
      pc.points[m] = evals_points(files, panel.x, panel.y);
      if (!panel.reported_file.empty()) pc.reported[m] = trace_band(files, panel.x);
      collect(out.y_values, pc.bands[m], true);
      collect(out.y_values, pc.reported[m], false);
      out.y_values.insert(out.y_values.end(), pc.points[m].y.begin(), pc.points[m].y.end());
      for (const std::vector<double>* xs : {&pc.bands[m].x, &pc.reported[m].x, &pc.points[m].x}) {
        pc.x_values.insert(pc.x_values.end(), xs->begin(), xs->end());
      }
      out.any_line |= !pc.bands[m].empty();
      out.any_band |= pc.bands[m].seeds >= 2;
      out.any_reported |= !pc.reported[m].empty();
      out.any_points |= !pc.points[m].empty();
      out.any |= !pc.bands[m].empty() || !pc.points[m].empty() || !pc.reported[m].empty();
      add_drawn_seeds(files, panel, out.seeds[m]);
    }
    out.panels.push_back(std::move(pc));
  }
  return out;
}

// The data file of one quantity against one x: a block per method that has data.
// `blocks[m]` is the method's block index (-1: none).
DataFile band_file(const std::string& header, const Comparison& c, const std::vector<Band>& bands,
                   std::vector<int>& blocks, bool with_band) {
  DataFile file(header);
  blocks.assign(c.methods.size(), -1);
  for (size_t m = 0; m < c.methods.size(); ++m) {
    const Band& b = bands[m];
    if (b.empty()) continue;
    blocks[m] = file.block(
        fmt::format("{} ({} seed{})", c.methods[m].spec, b.seeds, b.seeds == 1 ? "" : "s"));
    for (size_t i = 0; i < b.size(); ++i) {
      if (with_band) {
        file.row({b.x[i], b.mean[i], b.low[i], b.high[i]});
      } else {
        file.row({b.x[i], b.mean[i]});
      }
    }
  }
  return file;
}

DataFile points_file(const std::string& header, const Comparison& c,
                     const std::vector<Points>& points, std::vector<int>& blocks) {
  DataFile file(header);
  blocks.assign(c.methods.size(), -1);
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (points[m].empty()) continue;
    blocks[m] = file.block(c.methods[m].spec);
    for (size_t i = 0; i < points[m].x.size(); ++i) {
      file.row({points[m].x[i], points[m].y[i], points[m].seed[i]});
    }
  }
  return file;
}

// Writes one panel's data files into `data` and their names and blocks into the result.
PanelFiles panel_data(const Comparison& c, const CurvePanel& panel, const PanelCurves& curves,
                      std::vector<std::pair<std::string, DataFile>>& data) {
  PanelFiles files;
  files.band = panel.band_file;
  data.emplace_back(panel.band_file,
                    band_file(fmt::format("{} against {}, one block per method.\nColumns: {}, "
                                          "mean over seeds, min over seeds, max over seeds. "
                                          "Each seed is a step function\n(its last evaluation "
                                          "at or before x) on {} points over the range every "
                                          "seed covers.",
                                          panel.what, panel.x, panel.x, kGridPoints),
                              c, curves.bands, files.band_blocks, true));
  const bool any_points = std::any_of(curves.points.begin(), curves.points.end(),
                                      [](const Points& p) { return !p.empty(); });
  if (any_points) {
    files.points = panel.points_file;
    data.emplace_back(panel.points_file,
                      points_file(fmt::format("{}: each seed's evaluations (evals.csv), one "
                                              "block per method.\nColumns: {}, {}, seed",
                                              panel.what, panel.x, panel.y),
                                  c, curves.points, files.points_blocks));
  }
  if (!panel.reported_file.empty()) {
    files.reported = panel.reported_file;
    data.emplace_back(
        panel.reported_file,
        band_file(fmt::format("The reported (minibatch) training loss against {}, one block "
                              "per method: each seed's\ntrace.csv smoothed by a centred moving "
                              "average of about 1/25 of its rows, then the mean\nover seeds as "
                              "a step function on {} points over the range every seed "
                              "covers.\nColumns: {}, mean over seeds.",
                              panel.x, kGridPoints, panel.x),
                  c, curves.reported, files.reported_blocks, false));
  }
  return files;
}

// The plot clauses of one panel: bands, then faint traces, then each seed's evaluations as open
// circles, then the mean lines on top, titled with the method when `titles`.
std::vector<std::string> band_clauses(const ComparisonRuns& runs, const PanelFiles& files,
                                      const std::vector<Band>& bands, bool titles) {
  const Comparison& c = *runs.c;
  std::vector<std::string> clauses;
  auto has = [](const std::string& file, const std::vector<int>& blocks, size_t m) {
    return !file.empty() && m < blocks.size() && blocks[m] >= 0;
  };
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (!has(files.band, files.band_blocks, m) || bands[m].seeds < 2) continue;
    clauses.push_back(
        fmt::format("{} index {} using 1:3:4 with filledcurves fs transparent solid 0.18 noborder "
                    "lc rgb '{}' notitle",
                    gp_string(files.band), files.band_blocks[m], runs.styles[m].colour));
  }
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (!has(files.reported, files.reported_blocks, m)) continue;
    clauses.push_back(
        fmt::format("{} index {} using 1:2 with lines lw 1.5 lc rgb '{}' dt {} notitle",
                    gp_string(files.reported), files.reported_blocks[m],
                    faint(runs.styles[m].colour), runs.styles[m].dash));
  }
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (!has(files.points, files.points_blocks, m)) continue;
    clauses.push_back(fmt::format(
        "{} index {} using 1:2 with points pt 6 ps 1.2*pscale lw 1.5 lc rgb '{}' notitle",
        gp_string(files.points), files.points_blocks[m], runs.styles[m].colour));
  }
  for (size_t m = 0; m < c.methods.size(); ++m) {
    const bool line = has(files.band, files.band_blocks, m);
    const bool any = line || has(files.points, files.points_blocks, m) ||
                     has(files.reported, files.reported_blocks, m);
    if (!any) continue;
    const std::string title = titles ? "title " + gp_string(c.methods[m].spec) : "notitle";
    if (!line) {  // markers or the reported loss only: a legend entry in the method's style
      if (titles) {
        clauses.push_back(
            fmt::format("keyentry with lines {} {}", line_style(runs, m, 2.5), title));
      }
      continue;
    }
    const bool single = bands[m].size() == 1;
    clauses.push_back(fmt::format(
        "{} index {} using 1:2 with {} {} {}", gp_string(files.band), files.band_blocks[m],
        single ? "points pt 7 ps 1.3*pscale" : "lines", line_style(runs, m, 2.5), title));
  }
  return clauses;
}

// The legend entries (keyentry clauses) that say which quantity each kind of curve is.
std::vector<std::string> style_entries(const Curves& curves, const CurveWords& words) {
  std::vector<std::string> out;
  auto add = [&](const std::string& label, const std::string& style) {
    out.push_back(fmt::format("keyentry with {} title {}", style, gp_string(label)));
  };
  if (curves.any_line) add(words.line_label, fmt::format("lines lw 2.5 lc rgb '{}'", kStyleColour));
  if (curves.any_band) {
    add("min–max over seeds",
        fmt::format("filledcurves fs transparent solid 0.18 noborder lc rgb '{}'", kStyleColour));
  }
  if (curves.any_points) {
    add("one seed's evaluation",
        fmt::format("points pt 6 ps 1.2*pscale lw 1.5 lc rgb '{}'", kStyleColour));
  }
  if (curves.any_reported) {
    add("reported minibatch loss (smoothed)",
        fmt::format("lines lw 1.5 lc rgb '{}'", faint(kStyleColour)));
  }
  return out;
}

std::string curve_caption(const ComparisonRuns& runs, const Curves& curves,
                          const std::vector<bool>& shown, const CurveWords& words,
                          bool with_targets) {
  const Comparison& c = *runs.c;
  std::vector<uint64_t> all;
  for (const auto& s : curves.seeds) all.insert(all.end(), s.begin(), s.end());
  const std::string seeds = all.empty() ? "the seeds" : describe_seeds(all);
  std::string caption;
  if (curves.any_line) {
    caption = fmt::format(
        "{}: per method the mean over {} (line){}, each seed a step function of its last "
        "evaluation on a common grid over the range every seed covers{}",
        words.caption_head, seeds,
        curves.any_band ? " and the pointwise min–max over the seeds (band)" : "",
        curves.any_points ? "; open circles: each seed's evaluations" : "");
  } else if (curves.any_points) {
    caption = fmt::format(
        "{}: per method each seed's evaluations (open circles), {}; too few evaluations over a "
        "common range for a mean over the seeds",
        words.caption_head, seeds);
  } else {
    caption = fmt::format("{}: no evaluation to draw ({})", words.caption_head, seeds);
  }
  if (curves.any_reported) {
    caption += "; faint lines: the reported minibatch loss, smoothed (seed mean)";
  }
  if (with_targets && !c.targets.empty()) {
    std::vector<std::string> ts;
    for (double t : c.targets) ts.push_back(describe_target(t, c.target_on));
    caption += fmt::format("; dashed: the target {}", fmt::join(ts, ", "));
  }
  caption += fewer_seeds_note(c, curves.seeds);
  int left_out = 0;
  for (size_t m = 0; m < shown.size(); ++m)
    left_out += shown[m] ? runs.methods[m].diverged_left_out : 0;
  if (left_out) {
    caption += fmt::format(" ({} diverged run{} left out)", left_out, left_out == 1 ? "" : "s");
  }
  return caption + ".";
}

// The script of a curve figure: a multiplot of the panels side by side sharing the y axis.
void curve_script(Script& s, const ComparisonRuns& runs, const Curves& curves,
                  const std::vector<CurvePanel>& panels, const std::vector<PanelFiles>& files,
                  const std::vector<std::string>& styles, const Layout& layout, const Axis& y,
                  const std::string& title, int width, int height) {
  const Comparison& c = *runs.c;
  s << fmt::format("set multiplot title {} font ',{}'", gp_lines(title), kTitleFont);
  s << "set grid lc rgb '#dddddd'\nset border lc rgb '#444444'";
  s << axis_commands('y', y);
  for (size_t p = 0; p < panels.size(); ++p) {
    const CurvePanel& panel = panels[p];
    s << layout.panels[p].margins();
    s << axis_commands('x', fit_x_axis(curves.panels[p].x_values));
    s << "unset arrow\nunset label";
    if (panel.targets) s << target_lines(c.targets, c.target_on);
    s << layout.panels[p].axis_labels(panel.xlabel, panel.ylabel, width, height);
    const bool last = p + 1 == panels.size();
    s << (last ? key_at(layout) : std::string("unset key"));
    std::vector<std::string> clauses = band_clauses(runs, files[p], curves.panels[p].bands, last);
    if (clauses.empty()) clauses.push_back("keyentry notitle");
    s.plot(clauses);
  }
  // Colours and dashes name methods (the legend on the right); line kinds name quantities (this
  // strip under the plots), so that neither legend's entries widen the other's.
  s << legend_plot(styles, layout.panels[0].left, (kStyleStripPixels - 2.0) / height,
                   "horizontal maxrows 2");
  s << "unset multiplot";
}

// Panels side by side with a shared y axis, a legend on the right: per method the seed mean
// (line), the min–max band, each seed's evaluations where they are few, and the faint reported
// loss. `shown[m]`: whether method m is drawn. Returns nullopt when there is nothing to draw.
std::optional<Figure> curve_figure(const std::string& dir, const ComparisonRuns& runs,
                                   const std::vector<bool>& shown, const CurveWords& words,
                                   const std::vector<CurvePanel>& panels, Rendering& rendering) {
  const Comparison& c = *runs.c;
  const Curves curves = compute_curves(runs, shown, panels);
  if (!curves.any) return std::nullopt;
  bool with_targets = false;
  for (const CurvePanel& panel : panels) with_targets |= panel.targets;
  std::vector<double> y_values = curves.y_values;
  if (with_targets) y_values.insert(y_values.end(), c.targets.begin(), c.targets.end());
  Axis y = fit_axis(y_values);
  if (with_targets) make_room_below(y, c.targets);

  std::vector<PanelFiles> files;
  std::vector<std::pair<std::string, DataFile>> data;
  for (size_t p = 0; p < panels.size(); ++p) {
    files.push_back(panel_data(c, panels[p], curves.panels[p], data));
  }
  const std::vector<std::string> styles = style_entries(curves, words);
  std::vector<std::string> labels;
  size_t methods = 0;
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (shown[m] && !curves.seeds[m].empty()) labels.push_back(c.methods[m].spec), ++methods;
  }
  int height = 540;
  const Legend legend = fit_legend(labels, height, kAroundPlots + kStyleStripPixels);
  const int width = width_with_legend(panels.size() == 1 ? 700 : 1100, legend);
  bool ylabel_each = false;
  for (size_t p = 1; p < panels.size(); ++p) ylabel_each |= !panels[p].ylabel.empty();
  const Layout layout = side_by_side(static_cast<int>(panels.size()), width, height, legend,
                                     tic_chars(y), ylabel_each, 2, kStyleStripPixels);
  const std::string caption = curve_caption(runs, curves, shown, words, with_targets);
  std::vector<uint64_t> all;
  for (const auto& seeds : curves.seeds) all.insert(all.end(), seeds.begin(), seeds.end());
  Script s(words.name, caption, width, height);
  curve_script(s, runs, curves, panels, files, styles, layout, y,
               comparison_title(runs, words.title, methods, all), width, height);
  std::vector<std::pair<std::string, const DataFile*>> written;
  for (const auto& [file, content] : data) written.emplace_back(file, &content);
  return write_figure(dir, s, written, caption, rendering);
}

}  // namespace

std::optional<Figure> loss_figure(const std::string& dir, const ComparisonRuns& runs,
                                  Rendering& rendering) {
  const std::string what = "F (full training loss of the evaluated model)";
  // With the reported loss drawn too, the y axis holds two quantities: the legend says which
  // line is which.
  bool any_trace = false;
  for (const MethodFiles& m : runs.methods) {
    for (const SeedFiles& s : m.seeds) any_trace |= s.trace && s.trace->rows() > 0;
  }
  const std::string ylabel = any_trace ? "loss" : "F (full training loss)";
  const std::string time = time_axis_label(runs.clock);
  std::vector<CurvePanel> panels = {
      {"time", "full_loss", what, time, ylabel, "figures/loss-F-time.dat",
       "figures/loss-F-time-evals.dat", "figures/loss-reported-time.dat", true},
      {"work_units", "full_loss", what, "work units (partition gradients)", "",
       "figures/loss-F-work.dat", "figures/loss-F-work-evals.dat", "figures/loss-reported-work.dat",
       true}};
  const CurveWords words{
      "loss", "training loss",
      fmt::format("F, the full training loss of the evaluated model, against {} (left) and work "
                  "units (right)",
                  time.substr(0, time.find(" (s)"))),
      "F (evaluated), mean over seeds"};
  return curve_figure(dir, runs, std::vector<bool>(runs.methods.size(), true), words, panels,
                      rendering);
}

std::optional<Figure> tilde_figure(const std::string& dir, const ComparisonRuns& runs,
                                   Rendering& rendering) {
  const Comparison& c = *runs.c;
  std::vector<bool> shown;
  for (const MethodResult& m : c.methods) shown.push_back(m.asynchronous);
  if (std::none_of(shown.begin(), shown.end(), [](bool b) { return b; })) return std::nullopt;
  const bool on_f = c.target_on == "full";
  const std::string time = time_axis_label(runs.clock);
  std::vector<CurvePanel> panels = {
      {"time", "full_loss", "F (full training loss) of the asynchronous methods", time,
       "F (full training loss)", "figures/tilde-F.dat", "figures/tilde-F-evals.dat", "", on_f},
      {"time", "tilde_loss",
       "F̃ = Σ w_i F_i with w_i ∝ 1/τ_i (the objective vanilla ASGD minimises)", time,
       "F̃ (frequency-weighted loss)", "figures/tilde-Ftilde.dat", "figures/tilde-Ftilde-evals.dat",
       "", false}};
  const CurveWords words{
      "tilde", "F and F̃ of the asynchronous methods",
      fmt::format("The full training loss F (left) and the frequency-weighted loss F̃ = Σ w_i "
                  "F_i, w_i ∝ 1/τ_i (right: the objective vanilla ASGD minimises) of the "
                  "asynchronous methods against {}, on one y axis",
                  time.substr(0, time.find(" (s)"))),
      "evaluated (F left, F̃ right), mean over seeds"};
  return curve_figure(dir, runs, shown, words, panels, rendering);
}

}  // namespace pacer::figure
