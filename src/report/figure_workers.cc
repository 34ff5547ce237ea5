// The workers figure of a comparison: each worker's busy fraction busy / (busy + idle) over the
// run, per method, as bars (mean over the seeds) with whiskers (min–max over the seeds).
//
// Up to kClusteredMethods methods share one chart, a cluster of bars per worker; more get a
// small chart each (small multiples, on one y scale), because a cluster of 29 bars per worker is
// a few pixels per bar and cannot be read, while 29 small charts of 12 bars each can.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "comparison_figures.h"

namespace pacer::figure {
namespace {

constexpr size_t kClusteredMethods = 4;

// A method's busy fractions per worker over its seeds.
struct Busy {
  std::vector<double> mean, low, high;  // per worker; NaN where no seed has the worker
  std::vector<uint64_t> seeds;
  double mean_over_workers = 0;
};

// One seed's busy fractions, or empty when its summary lacks them.
std::vector<double> seed_busy(const SeedFiles& s) {
  if (!s.summary || !s.summary->contains("engine_stats")) return {};
  const nlohmann::json& stats = (*s.summary)["engine_stats"];
  if (!stats.contains("busy_time_per_worker") || !stats.contains("idle_time_per_worker")) return {};
  std::vector<double> busy = json_doubles(stats["busy_time_per_worker"]);
  const std::vector<double> idle = json_doubles(stats["idle_time_per_worker"]);
  if (busy.size() != idle.size()) return {};
  for (size_t w = 0; w < busy.size(); ++w) {
    const double total = busy[w] + idle[w];
    busy[w] = total > 0 ? busy[w] / total : std::nan("");
  }
  return busy;
}

Busy method_busy(const MethodFiles& files) {
  Busy b;
  std::vector<std::vector<double>> per_seed;
  for (const SeedFiles& s : files.seeds) {
    std::vector<double> busy = seed_busy(s);
    if (busy.empty()) continue;
    per_seed.push_back(std::move(busy));
    b.seeds.push_back(s.seed);
  }
  size_t workers = 0;
  for (const auto& v : per_seed) workers = std::max(workers, v.size());
  double sum = 0;
  int count = 0;
  for (size_t w = 0; w < workers; ++w) {
    double total = 0, low = INFINITY, high = -INFINITY;
    int n = 0;
    for (const auto& v : per_seed) {
      if (w >= v.size() || !std::isfinite(v[w])) continue;
      total += v[w], ++n;
      low = std::min(low, v[w]), high = std::max(high, v[w]);
    }
    b.mean.push_back(n ? total / n : std::nan(""));
    b.low.push_back(n ? low : std::nan(""));
    b.high.push_back(n ? high : std::nan(""));
    if (n) sum += total / n, ++count;
  }
  b.mean_over_workers = count ? sum / count : 0.0;
  return b;
}

// The figure's methods: those with the statistics, and what they show.
struct WorkersData {
  std::vector<size_t> shown;        // method indices
  std::vector<Busy> busy;           // per shown method
  std::vector<std::string> labels;  // per shown method: "spec (mean 0.93)"
  std::vector<uint64_t> seeds;      // every seed drawn
  size_t workers = 0;
  bool any_spread = false;  // a method has two seeds or more: whiskers are drawn
};

WorkersData workers_data(const ComparisonRuns& runs) {
  WorkersData d;
  for (size_t m = 0; m < runs.methods.size(); ++m) {
    Busy b = method_busy(runs.methods[m]);
    if (b.seeds.empty() || b.mean.empty()) continue;
    d.workers = std::max(d.workers, b.mean.size());
    d.seeds.insert(d.seeds.end(), b.seeds.begin(), b.seeds.end());
    d.any_spread |= b.seeds.size() >= 2;
    d.labels.push_back(
        fmt::format("{} (mean {:.2f})", runs.c->methods[m].spec, b.mean_over_workers));
    d.shown.push_back(m);
    d.busy.push_back(std::move(b));
  }
  return d;
}

DataFile busy_file(const ComparisonRuns& runs, const WorkersData& d) {
  DataFile data(
      "Busy fraction busy / (busy + idle) of each worker over the run, one block per method.\n"
      "Columns: worker, mean over seeds, min over seeds, max over seeds");
  for (size_t k = 0; k < d.shown.size(); ++k) {
    const Busy& b = d.busy[k];
    data.block(fmt::format("{} ({})", runs.c->methods[d.shown[k]].spec, describe_seeds(b.seeds)));
    for (size_t w = 0; w < b.mean.size(); ++w) {
      data.row({static_cast<double>(w), b.mean[w], b.low[w], b.high[w]});
    }
  }
  return data;
}

// The whiskers of block `block` at x offset `offset`: a vertical line from min to max, with caps.
std::string whisker_clause(size_t block, double offset, double cap) {
  return fmt::format(
      "'figures/workers.dat' index {0} using ($1+({1})):3:(0):($4-$3) with vectors nohead lw "
      "1.2 lc rgb '#333333' notitle, \\\n     'figures/workers.dat' index {0} using "
      "($1+({1})-{2}):4:({3}):(0) with vectors nohead lw 1.2 lc rgb '#333333' notitle, \\\n"
      "     'figures/workers.dat' index {0} using ($1+({1})-{2}):3:({3}):(0) with vectors nohead "
      "lw 1.2 lc rgb '#333333' notitle",
      block, num(offset), num(cap / 2), num(cap));
}

// A tic per worker where `pixels_per_worker` leave room for two digits, else every other one
// (or gnuplot's choice beyond 40 workers).
std::string worker_tics(size_t workers, double pixels_per_worker) {
  if (workers > 40) return "set xtics autofreq scale 0";
  return fmt::format("set xtics {} scale 0", pixels_per_worker >= 24 || workers <= 10 ? 1 : 2);
}

// One chart, a cluster of bars per worker.
void clustered_script(Script& s, const ComparisonRuns& runs, const WorkersData& d,
                      const std::string& title, int width, int height, const Legend& legend) {
  const Layout layout = side_by_side(1, width, height, legend, 4);  // "0.25"
  s << fmt::format("set title {} font ',{}'", gp_lines(title), kTitleFont);
  s << "set grid ytics lc rgb '#dddddd'\nset border 3 lc rgb '#444444'\nset tics nomirror";
  s << layout.panels[0].margins();
  s << key_at(layout);
  s << axis_commands('y', linear_axis(0, 1.05));
  s << fmt::format("set xrange [-0.6:{}]", num(static_cast<double>(d.workers) - 0.4));
  s << worker_tics(d.workers, (layout.panels[0].right - layout.panels[0].left) * width /
                                  static_cast<double>(d.workers));
  s << layout.panels[0].axis_labels("worker", "busy fraction of the run", width, height);
  std::vector<std::string> clauses;
  const double bar = 0.8 / static_cast<double>(d.shown.size());
  for (size_t k = 0; k < d.shown.size(); ++k) {
    const double offset = (static_cast<double>(k) - (d.shown.size() - 1) / 2.0) * bar;
    clauses.push_back(fmt::format(
        "'figures/workers.dat' index {} using ($1+({})):2:({}) with boxes fs solid 0.85 noborder "
        "lc rgb '{}' title {}",
        k, num(offset), num(bar), runs.styles[d.shown[k]].colour, gp_string(d.labels[k])));
  }
  for (size_t k = 0; k < d.shown.size(); ++k) {
    if (d.busy[k].seeds.size() < 2) continue;
    const double offset = (static_cast<double>(k) - (d.shown.size() - 1) / 2.0) * bar;
    clauses.push_back(whisker_clause(k, offset, 0.5 * bar));
  }
  if (d.any_spread) {
    clauses.push_back(
        "keyentry with vectors nohead lw 1.2 lc rgb '#333333' title "
        "'whisker: min–max over seeds'");
  }
  s.plot(clauses);
}

// A small chart per method, in a grid of `columns`, on one y scale.
void small_multiples_script(Script& s, const ComparisonRuns& runs, const WorkersData& d,
                            const std::string& title, int width, int height, int columns) {
  const int rows = static_cast<int>((d.shown.size() + columns - 1) / columns);
  const double left = 80.0 / width, right = 1 - 20.0 / width;
  const double top = 1 - 95.0 / height, bottom = 70.0 / height;
  const double cell_w = (right - left) / columns, cell_h = (top - bottom) / rows;
  s << fmt::format("set multiplot title {} font ',{}'", gp_lines(title), kTitleFont);
  s << "set grid ytics lc rgb '#dddddd'\nset border 3 lc rgb '#444444'\nset tics nomirror";
  s << "unset key";
  s << "set yrange [0:1.05]\nset ytics 0, 0.5, 1 font ',11'";
  s << fmt::format("set xrange [-0.6:{}]", num(static_cast<double>(d.workers) - 0.4));
  s << worker_tics(d.workers, cell_w * width / static_cast<double>(d.workers));
  s << "set xtics font ',11'";
  s << fmt::format("set label 91 'worker' at screen {}, screen {} center", num((left + right) / 2),
                   num(22.0 / height));
  s << fmt::format(
      "set label 92 'busy fraction of the run' at screen {}, screen {} center rotate "
      "by 90",
      num(18.0 / width), num((top + bottom) / 2));
  for (size_t k = 0; k < d.shown.size(); ++k) {
    const int col = static_cast<int>(k) % columns, row = static_cast<int>(k) / columns;
    const double l = left + col * cell_w, t = top - row * cell_h;
    s << fmt::format(
        "set lmargin at screen {}\nset rmargin at screen {}\nset tmargin at screen {}\n"
        "set bmargin at screen {}",
        num(l + 0.012), num(l + cell_w - 0.012), num(t - 30.0 / height),
        num(t - cell_h + 45.0 / height));
    s << fmt::format("set format y '{}'", col == 0 ? "%g" : "");
    s << fmt::format("set title {} font ',13' offset 0,-0.4", gp_string(d.labels[k]));
    std::string plot = fmt::format(
        "plot 'figures/workers.dat' index {} using 1:2:(0.7) with boxes fs solid 0.85 noborder "
        "lc rgb '{}' notitle",
        k, runs.styles[d.shown[k]].colour);
    if (d.busy[k].seeds.size() >= 2) plot += ", \\\n     " + whisker_clause(k, 0, 0.35);
    s << plot;
  }
  s << "unset multiplot";
}

}  // namespace

std::optional<Figure> workers_figure(const std::string& dir, const ComparisonRuns& runs,
                                     Rendering& rendering) {
  const WorkersData d = workers_data(runs);
  if (d.shown.empty()) return std::nullopt;
  const DataFile data = busy_file(runs, d);
  const std::string title = comparison_title(runs, "worker utilisation", d.shown.size(), d.seeds);
  std::string caption = fmt::format(
      "Per-worker busy fraction busy / (busy + idle) of the run's {}time, per method: the mean "
      "over {} (bar){}; below 1 where a worker waited for the rest of a step or sat idle after a "
      "cancelled job; the mean over workers follows each method's name",
      runs.clock == Clock::kWall        ? "wall-clock "
      : runs.clock == Clock::kSimulated ? "simulated "
                                        : "",
      describe_seeds(d.seeds), d.any_spread ? " and the min–max over those seeds (whisker)" : "");
  std::vector<std::vector<uint64_t>> drawn(runs.methods.size());
  for (size_t k = 0; k < d.shown.size(); ++k) drawn[d.shown[k]] = d.busy[k].seeds;
  caption += fewer_seeds_note(*runs.c, drawn) + ".";
  if (d.shown.size() <= kClusteredMethods) {
    std::vector<std::string> labels = d.labels;
    if (d.any_spread) labels.push_back("whisker: min–max over seeds");
    int height = 540;
    const Legend legend = fit_legend(labels, height);
    const int width = width_with_legend(
        std::clamp(static_cast<int>(300 + 18 * d.workers * d.shown.size()), 800, 1600), legend);
    Script s("workers", caption, width, height);
    clustered_script(s, runs, d, title, width, height, legend);
    return write_figure(dir, s, {{"figures/workers.dat", &data}}, caption, rendering);
  }
  const int columns = std::min(6, static_cast<int>(std::ceil(std::sqrt(d.shown.size()))));
  const int rows = static_cast<int>((d.shown.size() + columns - 1) / columns);
  // Wide enough for the bars, and for the longest panel title (font 13: about 11 pixels per
  // character as pngcairo draws it), so that neighbouring titles never run into each other.
  const int cell_w = std::max(std::clamp<int>(static_cast<int>(40 + 20 * d.workers), 260, 420),
                              static_cast<int>(40 + 11 * longest(d.labels)));
  // At least as wide as the title's longer line.
  const int title_w = static_cast<int>(40 + title_pixels(title));
  const int width = std::max(100 + columns * cell_w, title_w), height = 165 + rows * 220;
  Script s("workers", caption, width, height);
  small_multiples_script(s, runs, d, title, width, height, columns);
  return write_figure(dir, s, {{"figures/workers.dat", &data}}, caption, rendering);
}

}  // namespace pacer::figure
