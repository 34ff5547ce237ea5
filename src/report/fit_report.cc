// pacer fit's outputs (fit_report.h): the printed summary, fit.md, fit.csv and the figure.

#include "pacer/report/fit_report.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"
#include "pacer/report/figure_data.h"
#include "pacer/timing/stragglers.h"

namespace pacer {
namespace {

// The figure shows at most this many workers in its per-worker panel.
constexpr int kFigureWorkers = 8;
// Points of a fitted curve, and the most points of a measured CDF (the largest rows all kept).
constexpr size_t kCurvePoints = 400;
constexpr size_t kMeasuredPoints = 2000;
constexpr size_t kTailPoints = 200;

// ---- Text. ----

// The workers persistent_stragglers gives a slow state, as "3 (3.01×, spells of 48.2 steps)".
std::vector<std::string> slow_states(const ModelFit& fit) {
  std::vector<std::string> out;
  if (fit.family != TimingFamily::kPersistentStragglers || !fit.fits) return out;
  for (size_t w = 0; w < fit.tau.size(); ++w) {
    if (fit.p_slow[w] == 0) continue;
    out.push_back(fmt::format("{} ({:.3g}×, slow {:.1f} % of the time in spells of {:.1f} steps)",
                              w, fit.slowdown[w], 100 * fit.straggle_probability(w),
                              1 / fit.p_recover[w]));
  }
  return out;
}

// A τ list in a ranking line: in full up to 6 workers, else its range; persistent_stragglers'
// chains by the workers that have a slow state.
std::string short_parameters(const ModelFit& fit) {
  if (fit.family == TimingFamily::kPersistentStragglers && fit.fits) {
    const auto [low, high] = std::minmax_element(fit.tau.begin(), fit.tau.end());
    std::vector<std::string> slow;
    for (size_t w = 0; w < fit.tau.size(); ++w) {
      if (fit.p_slow[w] > 0) slow.push_back(std::to_string(w));
    }
    return fmt::format(
        "tau {:.6g}{}; slow state on {}; jitter = {:.4g}", *low,
        *high > *low ? fmt::format(" to {:.6g}", *high) : "",
        slow.empty() ? "no worker" : "workers " + fmt::format("{}", fmt::join(slow, ", ")),
        fit.jitter);
  }
  if (fit.scope == TauScope::kShared || fit.tau.size() <= 6) return fit.describe();
  const auto [low, high] = std::minmax_element(fit.tau.begin(), fit.tau.end());
  std::string text = fit.describe();
  const size_t end = text.find(']');
  return fmt::format("tau = [{} values, {:.6g} to {:.6g}]{}", fit.tau.size(), *low, *high,
                     text.substr(end + 1));
}

std::string describe_test(const PersistenceTest& t) {
  // Below about 1e-300 the F distribution's tail underflows to 0.
  const std::string p = t.p_value < 1e-300 ? "p < 1e-300" : fmt::format("p = {:.2g}", t.p_value);
  return fmt::format(
      "one-way ANOVA of log durations: F({}, {}) = {:.4g}, {}; slowest/fastest worker mean {:.2f}",
      t.df_between, t.df_within, t.f_statistic, p, t.slowest_to_fastest);
}

std::string verdict(const DurationTrace& trace, const PersistenceTest& t) {
  if (trace.workers() < 2) return "one worker: no persistence test, one tau";
  if (t.persistent) {
    return fmt::format(
        "persistent slowness: the workers' mean durations differ ({}), so the table has a "
        "per-worker tau list",
        describe_test(t));
  }
  return fmt::format(
      "transient stragglers only: the workers' mean durations agree ({}), so one tau serves "
      "every worker",
      describe_test(t));
}

std::string describe_trace(const DurationTrace& trace) {
  size_t low = trace.rows.front().size(), high = low;
  for (const std::vector<double>& r : trace.rows) {
    low = std::min(low, r.size());
    high = std::max(high, r.size());
  }
  const std::string per_worker = low == high ? fmt::format("{} per worker", low)
                                             : fmt::format("{} to {} per worker", low, high);
  return fmt::format("{}: {} worker{}, {} rows ({})", trace.source, trace.workers(),
                     trace.workers() == 1 ? "" : "s", trace.size(), per_worker);
}

// The straggler analysis in a few lines: the slow workers named with how much slower they are,
// chronic or one-off, the workers slower throughout, co-occurrence and the block length.
std::string straggler_lines(const StragglerAnalysis& a, const TraceFit& fit) {
  std::vector<std::string> chronic, one_off, slower;
  for (const WorkerStragglers& w : a.workers) {
    if (w.kind == StragglerKind::kChronic) {
      chronic.push_back(fmt::format(
          "{} (slow on {:.1f} % of its rows at {:.2f} × M, in spells of {:.1f} rows, the longest "
          "{}; lag-1 autocorrelation {})",
          w.worker, 100 * w.slow_share, w.slowdown, w.mean_spell, w.longest_spell,
          std::isnan(w.autocorrelation) ? "-" : fmt::format("{:.2f}", w.autocorrelation)));
    } else if (w.kind == StragglerKind::kOneOff) {
      one_off.push_back(std::to_string(w.worker));
    }
    if (w.relative_median >= kSlowFactor) {
      slower.push_back(fmt::format("{} ({:.2f} × M)", w.worker, w.relative_median));
    }
  }
  std::string text = fmt::format(
      "slow workers (a row is slow above {} × M, M = {:.6g} the median row): chronic: {}; one-off: "
      "{}\n",
      kSlowFactor, a.median, chronic.empty() ? "none" : fmt::format("{}", fmt::join(chronic, "; ")),
      one_off.empty() ? "none" : "workers " + fmt::format("{}", fmt::join(one_off, ", ")));
  if (!slower.empty()) {
    text += fmt::format("slower throughout (median above {} × M): workers {}\n", kSlowFactor,
                        fmt::join(slower, ", "));
  }
  for (const ModelFit& m : fit.pooled) {
    if (m.family != TimingFamily::kPersistentStragglers || m.scope != fit.scope) continue;
    const std::vector<std::string> states = slow_states(m);
    if (!states.empty()) {
      text += fmt::format("persistent_stragglers gives a slow state to workers {}\n",
                          fmt::join(states, "; "));
    }
  }
  if (a.shared_steps > 0) {
    text += fmt::format(
        "co-occurrence: {:.1f} % of the {} steps have two or more slow workers ({:.1f} % if each "
        "straggled independently at its own rate)\n",
        100 * a.co_occurrence, a.shared_steps, 100 * a.co_occurrence_independent);
  }
  text +=
      fmt::format("a block replay of this trace (timing.replay = \"block\") uses blocks of {}\n",
                  a.block.describe());
  return text;
}

// The fits of `order` (indices into fits) as ranking lines.
std::string ranking_lines(const std::vector<ModelFit>& fits, const std::vector<size_t>& order) {
  std::string text;
  const double best = fits[order.front()].aic;
  int rank = 1;
  for (size_t i : order) {
    const ModelFit& m = fits[i];
    const std::string name(family_name(m.family));
    if (!m.fits) {
      text += fmt::format("   -  {:<20} does not fit: {}\n", name, m.note);
      continue;
    }
    text += fmt::format("  {:>2}. {:<20} k={:<3} AIC {:<12.1f} ΔAIC {:<9.1f} KS {:.4f}  {}{}\n",
                        rank++, name, m.parameters, m.aic, m.aic - best, m.ks, short_parameters(m),
                        m.note.empty() ? "" : " (" + m.note + ")");
  }
  return text;
}

// Whether the best fit describes the rows, by its KS distance (fit.h: kKsCritical).
std::string adequacy(const DurationTrace& trace, const TraceFit& fit) {
  const ModelFit& best = fit.best();
  if (fit.adequate()) {
    return fmt::format("{} describes the rows: KS {:.4f} <= {:.4f} = 1.95/√N",
                       family_name(best.family), best.ks, fit.ks_limit);
  }
  return fmt::format(
      "warning: no model describes these durations well: the best one's KS distance {:.4f} "
      "exceeds {:.4f} = 1.95/√N (the 0.1 % critical value; smaller still with fitted "
      "parameters); the table is a rough summary, and timing.model = \"trace\" with "
      "timing.file = \"{}\" replays the durations themselves",
      best.ks, fit.ks_limit, trace.source);
}

std::string scope_words(TauScope scope) {
  return scope == TauScope::kPerWorker ? "tau per worker, shape shared" : "one tau for all workers";
}

// The pooled fits of `scope`, ranked as TraceFit::ranking ranks the chosen one.
std::vector<size_t> pooled_order(const TraceFit& fit, TauScope scope) {
  if (scope == fit.scope) return fit.ranking;
  std::vector<size_t> order;
  for (size_t i = 0; i < fit.pooled.size(); ++i) {
    if (fit.pooled[i].scope == scope) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (fit.pooled[a].fits != fit.pooled[b].fits) return fit.pooled[a].fits;
    return fit.pooled[a].fits && fit.pooled[a].aic < fit.pooled[b].aic;
  });
  return order;
}

// Indices of `fits` by AIC, fitting ones first (for one worker's own fits).
std::vector<size_t> order_by_aic(const std::vector<ModelFit>& fits) {
  std::vector<size_t> order(fits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (fits[a].fits != fits[b].fits) return fits[a].fits;
    return fits[a].fits && fits[a].aic < fits[b].aic;
  });
  return order;
}

std::string markdown_table(const std::vector<ModelFit>& fits, const std::vector<size_t>& order) {
  std::string text =
      "| rank | model | k | log L | AIC | ΔAIC | KS | parameters |\n"
      "|---:|---|---:|---:|---:|---:|---:|---|\n";
  const double best = fits[order.front()].aic;
  int rank = 1;
  for (size_t i : order) {
    const ModelFit& m = fits[i];
    if (!m.fits) {
      text += fmt::format("| – | {} | {} | – | – | – | – | does not fit: {} |\n",
                          family_name(m.family), m.parameters, m.note);
      continue;
    }
    text += fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.4f} | {}{} |\n", rank++,
                        family_name(m.family), m.parameters, m.log_likelihood, m.aic, m.aic - best,
                        m.ks, short_parameters(m), m.note.empty() ? "" : " (" + m.note + ")");
  }
  return text;
}

std::string per_worker_table(const DurationTrace& trace, const TraceFit& fit) {
  const ModelFit& best = fit.best();
  std::string text = fmt::format(
      "| worker | rows | mean (s) | best family alone (AIC) | its parameters | KS of {} |\n"
      "|---:|---:|---:|---|---|---:|\n",
      family_name(best.family));
  for (int i = 0; i < trace.workers(); ++i) {
    const std::vector<ModelFit>& own = fit.per_worker[i];
    const ModelFit& top = own[order_by_aic(own).front()];
    text += fmt::format("| {} | {} | {:.6g} | {} | {} | {:.4f} |\n", i, trace.rows[i].size(),
                        fit.persistence.worker_means[i], family_name(top.family), top.describe(),
                        ks_distance(best, i, trace.rows[i]));
  }
  return text;
}

// The other scope's best, when the AIC alone would prefer it.
std::string aic_disagreement(const TraceFit& fit) {
  const TauScope other = fit.scope == TauScope::kShared ? TauScope::kPerWorker : TauScope::kShared;
  const ModelFit& theirs = fit.pooled[pooled_order(fit, other).front()];
  if (!theirs.fits || !(theirs.aic < fit.best().aic)) return "";
  return fmt::format(
      "By AIC alone the fit with {} ({}) would be preferred, by ΔAIC {:.1f}; the persistence test "
      "decides the scope because a τ per worker sits on the boundary of the support (the "
      "worker's minimum) for the shifted families, where the AIC undercounts what it gains.\n\n",
      scope_words(other), family_name(theirs.family), fit.best().aic - theirs.aic);
}

// ---- CSV. ----

std::string csv_number(double v) {
  if (std::isnan(v)) return "";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.9g}", v);
}

std::string csv_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Numbers separated by spaces (a per-worker list in one cell).
std::string spaced(const std::vector<double>& values) {
  std::vector<std::string> cells;
  for (double v : values) cells.push_back(fmt::format("{:.9g}", v));
  return fmt::format("{}", fmt::join(cells, " "));
}

std::string shape_cell(const ModelFit& m, TimingFamily family, double value) {
  return m.family == family ? csv_number(value) : "";
}

// The rows of one group (one scope, worker and tau scope) of fits.
std::string csv_rows(const std::vector<ModelFit>& fits, const std::string& scope,
                     const std::string& worker) {
  const std::vector<size_t> order = order_by_aic(fits);
  std::vector<int> rank(fits.size(), 0);
  for (size_t r = 0; r < order.size(); ++r) rank[order[r]] = static_cast<int>(r) + 1;
  const double best = fits[order.front()].aic;
  std::string text;
  for (size_t i = 0; i < fits.size(); ++i) {
    const ModelFit& m = fits[i];
    std::vector<std::string> tau;
    for (double t : m.tau) tau.push_back(fmt::format("{:.9g}", t));
    const bool delays =
        m.family == TimingFamily::kRandomStragglers || m.family == TimingFamily::kCommonShock;
    const bool chains = m.family == TimingFamily::kPersistentStragglers;
    text += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", scope, worker,
        family_name(m.family), scope_name(m.scope), m.fits ? "yes" : "no", m.parameters,
        csv_number(m.log_likelihood), csv_number(m.aic), m.fits ? csv_number(m.aic - best) : "",
        m.fits ? std::to_string(rank[i]) : "", m.fits ? csv_number(m.ks) : "", fmt::join(tau, " "),
        shape_cell(m, TimingFamily::kShiftedExponential, m.lambda),
        shape_cell(m, TimingFamily::kPareto, m.alpha), delays ? csv_number(m.q) : "",
        delays ? csv_number(m.delay_mean) : "", csv_quoted(m.note),
        delays || chains ? csv_number(m.jitter) : "",
        shape_cell(m, TimingFamily::kCommonShock, m.shock_probability),
        shape_cell(m, TimingFamily::kCommonShock, m.shock_share), spaced(m.slowdown),
        spaced(m.p_slow), spaced(m.p_recover));
  }
  return text;
}

// ---- The figure. ----

// gnuplot single-quoted string: a quote is written twice.
std::string gp_string(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string data_row(double x, double f, double survival) {
  return fmt::format("{} {} {}\n", figure::data_number(x), figure::data_number(f),
                     figure::data_number(survival > 0 ? survival : NAN));
}

// The measured CDF of `rows` as "x F P(X > x)" rows: every order statistic up to
// kMeasuredPoints, else an even subset and the kTailPoints largest.
std::string measured_block(std::vector<double> rows) {
  std::sort(rows.begin(), rows.end());
  const size_t n = rows.size();
  const size_t step = std::max<size_t>(1, n / kMeasuredPoints);
  std::string text;
  for (size_t j = 1; j <= n; ++j) {
    if (j % step != 0 && j + kTailPoints <= n && j != 1) continue;
    const double f = static_cast<double>(j) / static_cast<double>(n);
    text += data_row(rows[j - 1], f, 1 - f);
  }
  return text;
}

// x values for the fitted curves: kCurvePoints over the axis (geometric on a log axis), plus
// each atom's location and a point just below it, so that jumps are drawn upright.
std::vector<double> curve_grid(const figure::Axis& axis, const ModelFit& fit) {
  std::vector<double> grid;
  for (size_t k = 0; k < kCurvePoints; ++k) {
    const double s = static_cast<double>(k) / (kCurvePoints - 1);
    grid.push_back(axis.log ? axis.low * std::pow(axis.high / axis.low, s)
                            : axis.low + s * (axis.high - axis.low));
  }
  if (fit.family == TimingFamily::kFixed || fit.family == TimingFamily::kRandomStragglers) {
    for (double t : fit.tau) {
      grid.push_back(t * (1 - 1e-9));
      grid.push_back(t);
    }
  }
  std::sort(grid.begin(), grid.end());
  return grid;
}

// The pooled (mixture) fitted CDF at x: Σ_w (m_w / N)·F_w(x).
double pooled_cdf(const ModelFit& fit, const DurationTrace& trace, double x) {
  double f = 0;
  for (int w = 0; w < trace.workers(); ++w) {
    f += static_cast<double>(trace.rows[w].size()) / static_cast<double>(trace.size()) *
         fit.cdf(w, x);
  }
  return f;
}

struct FigureFiles {
  std::string measured, models, workers, script;
};

// One figure panel's data file and the gnuplot plot clauses that draw it.
struct Curves {
  std::string data;
  std::vector<std::string> cdf, tail;  // clauses for the CDF panel and the tail panel
};

// The measured CDF of all rows and every fitted (pooled) model's CDF and tail, best first.
Curves model_curves(const DurationTrace& trace, const TraceFit& fit, const figure::Axis& axis,
                    const std::string& source) {
  Curves c;
  c.cdf = {
      "'figures/fit-measured.dat' using 1:2 with steps lw 3 lc rgb '#000000' title 'measured'"};
  c.tail = {
      "'figures/fit-measured.dat' using 1:3 with steps lw 3 lc rgb '#000000' title 'measured'"};
  c.data = source + "# x F(x) P(X > x) of each fitted model (pooled), one block each\n";
  int block = 0;
  const double best_aic = fit.best().aic;
  for (size_t i : fit.ranking) {
    const ModelFit& m = fit.pooled[i];
    if (!m.fits) continue;
    c.data += fmt::format("{}# {}: {}\n", block ? "\n\n" : "", family_name(m.family), m.describe());
    for (double x : curve_grid(axis, m)) {
      const double f = pooled_cdf(m, trace, x);
      c.data += data_row(x, f, 1 - f);
    }
    const std::string style =
        fmt::format("with lines lw 2 lc rgb '{}' dt {}", figure::method_colour(block), block + 1);
    const std::string title =
        fmt::format("{} (ΔAIC {:.1f})", family_name(m.family), m.aic - best_aic);
    c.cdf.push_back(fmt::format("'figures/fit-models.dat' index {} using 1:2 {} title {}", block,
                                style, gp_string(title)));
    c.tail.push_back(fmt::format("'figures/fit-models.dat' index {} using 1:3 {} title {}", block,
                                 style, gp_string(title)));
    ++block;
  }
  return c;
}

// Per worker (the first kFigureWorkers): the measured CDF and the best model's fitted one.
Curves worker_curves(const DurationTrace& trace, const TraceFit& fit, const figure::Axis& axis,
                     const std::string& source) {
  Curves c;
  const ModelFit& best = fit.best();
  const int shown = std::min(trace.workers(), kFigureWorkers);
  c.data = source + "# per worker: block 2w the measured CDF (x F), 2w + 1 the fitted\n";
  for (int w = 0; w < shown; ++w) {
    c.data += fmt::format("{}# worker {} measured\n", w ? "\n\n" : "", w);
    c.data += measured_block(trace.rows[w]);
    c.data += fmt::format("\n\n# worker {} fitted: {}\n", w, family_name(best.family));
    for (double x : curve_grid(axis, best)) c.data += data_row(x, best.cdf(w, x), NAN);
    const std::string colour = figure::method_colour(w);
    c.cdf.push_back(fmt::format(
        "'figures/fit-workers.dat' index {} using 1:2 with steps lw 2 lc rgb '{}' title 'worker "
        "{}'",
        2 * w, colour, w));
    c.cdf.push_back(fmt::format(
        "'figures/fit-workers.dat' index {} using 1:2 with lines lw 2 lc rgb '{}' dt 2 notitle",
        2 * w + 1, colour));
  }
  return c;
}

// fit.gp: three panels (CDF, tail, per worker) drawing the curves' clauses.
std::string fit_script(const DurationTrace& trace, const TraceFit& fit, const figure::Axis& axis,
                       const Curves& models, const Curves& workers) {
  auto plot = [](const std::vector<std::string>& c) {
    return "plot " + fmt::format("{}", fmt::join(c, ", \\\n     ")) + "\n";
  };
  const int shown = std::min(trace.workers(), kFigureWorkers);
  const std::string title = fmt::format("{}: measured durations and the fitted timing models ({})",
                                        trace.source, scope_words(fit.scope));
  const std::string worker_title =
      fmt::format("per worker: measured (solid), {} (dashed){}", family_name(fit.best().family),
                  shown < trace.workers() ? fmt::format(", workers 0-{}", shown - 1) : "");
  return fmt::format(
      "# fit.gp: the timing models pacer fit fitted to {}, against the measured durations.\n"
      "# It reads only the files in figures/. Re-run it in this folder with\n"
      "#   gnuplot fit.gp\n"
      "# to write fit.png (pacer sets `png` to a temporary name).\n"
      "if (!exists(\"png\")) png = 'fit.png'\n"
      "set encoding utf8\n"
      "set terminal pngcairo size 1800,560 font 'Sans,12' noenhanced\n"
      "set output png\n"
      "set multiplot layout 1,3 title {}\n"
      "set grid lc rgb '#dddddd'\n"
      "set xlabel 'seconds per work unit'\n"
      "{}set xrange [{}:{}]\n"
      "set format x '%g'\n"
      "set title 'CDF, all workers'\n"
      "set ylabel 'P(duration <= x)'\n"
      "set yrange [0:1]\n"
      "set key bottom right\n"
      "{}"
      "set title 'tail, all workers'\n"
      "set ylabel 'P(duration > x)'\n"
      "set logscale y\n"
      "set yrange [{}:1]\n"
      "set format y '%g'\n"
      "set key bottom left\n"
      "{}"
      "unset logscale y\n"
      "set yrange [0:1]\n"
      "set title {}\n"
      "set ylabel 'P(duration <= x)'\n"
      "set key bottom right\n"
      "{}"
      "unset multiplot\n"
      "set output\n",
      trace.source, gp_string(title), axis.log ? "set logscale x\n" : "",
      figure::data_number(axis.low), figure::data_number(axis.high), plot(models.cdf),
      figure::data_number(0.5 / static_cast<double>(trace.size())), plot(models.tail),
      gp_string(worker_title), plot(workers.cdf));
}

FigureFiles figure_files(const DurationTrace& trace, const TraceFit& fit) {
  std::vector<double> all;
  for (const std::vector<double>& r : trace.rows) all.insert(all.end(), r.begin(), r.end());
  const auto [low, high] = std::minmax_element(all.begin(), all.end());
  const figure::Axis axis = figure::fit_axis({*low, *high});
  const std::string source = "# written by pacer fit from " + trace.source + "\n";
  const Curves models = model_curves(trace, fit, axis, source);
  const Curves workers = worker_curves(trace, fit, axis, source);
  FigureFiles files;
  files.measured =
      source + "# x F(x) P(X > x): the measured CDF of all rows\n" + measured_block(all);
  files.models = models.data;
  files.workers = workers.data;
  files.script = fit_script(trace, fit, axis, models, workers);
  return files;
}

// Runs gnuplot on <dir>/fit.gp into a temporary name and renames it to fit.png. Warns once and
// returns false when gnuplot is missing or fails.
bool render_figure(const std::string& dir) {
  const std::string temp = fmt::format("fit.png.tmp.{}", static_cast<long>(::getpid()));
  const std::string command = fmt::format("cd {} && gnuplot -e {} fit.gp 2>&1", shell_quoted(dir),
                                          shell_quoted(fmt::format("png={}", gp_string(temp))));
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    log_warning("gnuplot could not be started: wrote {}/fit.gp and its data but no fit.png", dir);
    return false;
  }
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  std::error_code ec;
  const std::string temp_path = dir + "/" + temp;
  if (status != 0 || !std::filesystem::exists(temp_path)) {
    std::filesystem::remove(temp_path, ec);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
      log_warning(
          "gnuplot not found: wrote {}/fit.gp and its data in figures/ but no fit.png "
          "(apt-get install gnuplot-nox, then run gnuplot fit.gp there)",
          dir);
    } else {
      log_warning("gnuplot could not draw {}/fit.gp: {}; the script and data are kept", dir,
                  output.substr(0, output.find('\n')));
    }
    return false;
  }
  std::filesystem::rename(temp_path, dir + "/fit.png", ec);
  if (ec) log_warning("{}/fit.png: {}", dir, ec.message());
  return !ec;
}

}  // namespace

std::string fit_summary(const DurationTrace& trace, const TraceFit& fit) {
  return fmt::format(
      "trace {}\n{}\n{}ranking ({}; by AIC = 2k - 2 log L, lower is better; KS = distance of the "
      "fitted to the measured CDF):\n{}{}\n\n{}",
      describe_trace(trace), verdict(trace, fit.persistence),
      straggler_lines(analyze_stragglers(trace), fit), scope_words(fit.scope),
      ranking_lines(fit.pooled, fit.ranking), adequacy(trace, fit), timing_table(fit.best()));
}

std::string fit_markdown(const DurationTrace& trace, const TraceFit& fit,
                         const std::string& figure) {
  const TauScope other = fit.scope == TauScope::kShared ? TauScope::kPerWorker : TauScope::kShared;
  std::string text =
      fmt::format("# Timing models fitted to {}\n\n{}.\n\n", trace.source, describe_trace(trace));
  text += fmt::format("**Verdict.** {}.\n\n**Fit.** {}.\n\n", verdict(trace, fit.persistence),
                      adequacy(trace, fit));
  text += fmt::format(
      "**Stragglers.**\n\n```\n{}```\n\n(pacer stragglers {} gives the full "
      "per-worker report.)\n\n",
      straggler_lines(analyze_stragglers(trace), fit), trace.source);
  text +=
      fmt::format("**Recommended:** {} with {}. Paste into a config:\n\n```toml\n{}```\n\n",
                  family_name(fit.best().family), scope_words(fit.scope), timing_table(fit.best()));
  text += fmt::format("## Ranking ({})\n\n{}\n", scope_words(fit.scope),
                      markdown_table(fit.pooled, fit.ranking));
  text += aic_disagreement(fit);
  text += fmt::format("## The other scope ({})\n\n{}\n", scope_words(other),
                      markdown_table(fit.pooled, pooled_order(fit, other)));
  text += fmt::format(
      "## Per worker\n\nEach worker's rows fitted alone, and the KS distance of "
      "the recommended model on them.\n\n{}\n",
      per_worker_table(trace, fit));
  if (!figure.empty()) {
    text += fmt::format(
        "## Figure\n\n![measured and fitted distributions]({})\n\nLeft: the measured CDF of all "
        "rows (black) and each fitting model's; middle: the same as tails P(X > x) on a log "
        "scale; right: per worker, measured (solid) and the recommended model (dashed).\n\n",
        figure);
  }
  text +=
      "## How\n\nMaximum-likelihood fits of each family (estimators in "
      "include/pacer/timing/fit.h); rows on an atom (fixed, random_stragglers) count as their "
      "probability over the resolution of a measured duration. Ranked by AIC = 2k − 2 log L: it "
      "weighs the whole distribution, tails included, charges for parameters and compares "
      "non-nested families. KS = sup |F_measured − F_fitted| is reported beside it, without a "
      "p-value (parameters are fitted). The scope (one τ or a τ per worker) follows the one-way "
      "ANOVA of log durations at level 0.01.\n";
  return text;
}

std::string fit_csv(const TraceFit& fit) {
  std::string text =
      "scope,worker,model,tau_scope,fits,k,log_likelihood,aic,delta_aic,rank,ks,tau,lambda,alpha,"
      "q,delay_mean,note,jitter,shock_probability,shock_share,slowdown,p_slow,p_recover\n";
  for (TauScope scope : {TauScope::kShared, TauScope::kPerWorker}) {
    std::vector<ModelFit> fits;
    for (const ModelFit& m : fit.pooled) {
      if (m.scope == scope) fits.push_back(m);
    }
    text += csv_rows(fits, "pooled", "");
  }
  for (size_t w = 0; w < fit.per_worker.size(); ++w) {
    text += csv_rows(fit.per_worker[w], "worker", std::to_string(w));
  }
  return text;
}

std::string run_fit(const std::string& trace_path, const std::string& out_dir) {
  const DurationTrace trace = read_duration_trace(trace_path);
  const TraceFit fit = fit_trace(trace);
  make_directories(out_dir + "/figures");
  const FigureFiles figure = figure_files(trace, fit);
  write_file_atomic(out_dir + "/figures/fit-measured.dat", figure.measured);
  write_file_atomic(out_dir + "/figures/fit-models.dat", figure.models);
  write_file_atomic(out_dir + "/figures/fit-workers.dat", figure.workers);
  write_file_atomic(out_dir + "/fit.gp", figure.script);
  const bool drawn = render_figure(out_dir);
  std::error_code ec;
  if (!drawn) std::filesystem::remove(out_dir + "/fit.png", ec);  // no stale figure
  write_file_atomic(out_dir + "/fit.csv", fit_csv(fit));
  write_file_atomic(out_dir + "/fit.md", fit_markdown(trace, fit, drawn ? "fit.png" : ""));
  return fit_summary(trace, fit) +
         fmt::format("\nreport: {0}/fit.md; table: {0}/fit.csv; figure: {0}/fit.{1}\n", out_dir,
                     drawn ? "png" : "gp (gnuplot did not draw it)");
}

}  // namespace pacer
