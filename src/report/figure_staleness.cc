// The staleness figure of a comparison: per method a horizontal bar of length 1 divided by how
// old the gradients were, pooled over the seeds drawn.
//
// Synchronous and asynchronous methods measure different things, so they get a panel each: a
// synchronous master counts the age in steps of every partition gradient it used
// (method_stats.staleness_histogram), an asynchronous one the delay δ in updates of every
// gradient that arrived, used or discarded (method_stats.delay_histogram; round-based methods
// restart their workers at each round, so theirs is 0). Ages are binned 0, 1, 2, 3, 4–7, 8–15,
// ... up to a last open bin, so a long tail and 30 methods fit one readable chart.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "comparison_figures.h"

namespace pacer::figure {
namespace {

constexpr int kBins = 10;  // the last one is open: ≥ its lower edge
constexpr double kBarHalf = 0.35;
constexpr int kRowPixels = 30;
// Pixels above the first panel (the title, the panel's heading), between panels (x tics, the
// next heading) and below the last (x tics and label).
constexpr double kAbovePanels = 120, kBetweenPanels = 100, kBelowPanels = 90;
// A sequential palette from fresh (light) to stale (dark): viridis, reversed.
constexpr const char* kBinColours[kBins] = {"#FDE725", "#B5DE2B", "#6ECE58", "#35B779", "#1F9E89",
                                            "#26828E", "#31688E", "#3E4989", "#482878", "#440154"};

int bin_of(int64_t age) {
  if (age < 4) return static_cast<int>(std::max<int64_t>(age, 0));
  int b = 2;
  while (age >= 2 && b < kBins - 1) age /= 2, ++b;
  return std::min(b, kBins - 1);
}

int64_t bin_low(int b) { return b < 4 ? b : int64_t{1} << (b - 2); }

std::string bin_label(int b) {
  if (b < 4) return std::to_string(b);
  if (b == kBins - 1) return fmt::format("≥ {}", bin_low(b));
  return fmt::format("{}–{}", bin_low(b), bin_low(b + 1) - 1);
}

// One method's histogram pooled over its seeds.
struct Ages {
  size_t method = 0;
  std::map<int64_t, double> counts;
  std::vector<uint64_t> seeds;
  double total = 0, mean = 0;
};

// The histogram of one seed's summary under `key`, added to `ages`; false when it has none.
bool add_histogram(const nlohmann::json& stats, const char* key, Ages& ages) {
  if (!stats.contains(key) || !stats[key].is_object()) return false;
  for (const auto& [age, count] : stats[key].items()) {
    if (!count.is_number()) continue;
    int64_t a = 0;
    try {
      a = std::stoll(age);
    } catch (const std::exception&) {
      continue;
    }
    ages.counts[a] += count.get<double>();
    ages.total += count.get<double>();
  }
  return true;
}

// The two panels' methods.
struct StalenessData {
  std::vector<Ages> sync, async;
  std::vector<uint64_t> seeds;
  int bins = 1;  // bins in use: 0 .. bins − 1
};

StalenessData staleness_data(const ComparisonRuns& runs) {
  StalenessData d;
  for (size_t m = 0; m < runs.methods.size(); ++m) {
    Ages ages;
    ages.method = m;
    bool sync = true;
    for (const SeedFiles& s : runs.methods[m].seeds) {
      if (!s.summary || !s.summary->contains("method_stats")) continue;
      const nlohmann::json& stats = (*s.summary)["method_stats"];
      if (add_histogram(stats, "staleness_histogram", ages)) {
        ages.seeds.push_back(s.seed);
      } else if (add_histogram(stats, "delay_histogram", ages)) {
        ages.seeds.push_back(s.seed);
        sync = false;
      }
    }
    if (!(ages.total > 0)) continue;
    for (const auto& [age, count] : ages.counts) {
      ages.mean += static_cast<double>(age) * count / ages.total;
      d.bins = std::max(d.bins, bin_of(age) + 1);
    }
    d.seeds.insert(d.seeds.end(), ages.seeds.begin(), ages.seeds.end());
    (sync ? d.sync : d.async).push_back(std::move(ages));
  }
  return d;
}

// A block per panel: one row per method, the first at the top.
// Columns: row, then per bin the cumulative fraction up to and including it, then the label.
void panel_block(DataFile& data, const ComparisonRuns& runs, const std::vector<Ages>& panel,
                 int bins, const std::string& comment) {
  data.block(comment);
  for (size_t k = 0; k < panel.size(); ++k) {
    const Ages& a = panel[k];
    std::vector<double> fraction(bins, 0.0);
    for (const auto& [age, count] : a.counts) fraction[bin_of(age)] += count / a.total;
    std::string line = std::to_string(panel.size() - 1 - k);
    double cumulative = 0;
    for (int b = 0; b < bins; ++b) {
      cumulative += fraction[b];
      line += fmt::format(" {}", data_number(b + 1 == bins ? 1.0 : std::min(cumulative, 1.0)));
    }
    data.raw(fmt::format("{} {} {}", line,
                         data_string(fmt::format("mean {}", short_number(a.mean))),
                         data_string(runs.c->methods[a.method].spec)));
  }
}

// The stacked bars of one panel (block `block`), and the mean age right of each.
std::vector<std::string> panel_clauses(int block, int bins) {
  std::vector<std::string> clauses;
  for (int b = 0; b < bins; ++b) {
    const std::string from = b == 0 ? "(0)" : fmt::format("{}", b + 1);
    clauses.push_back(fmt::format(
        "'figures/staleness.dat' index {} using (0):1:{}:{}:($1-{}):($1+{}) with boxxyerror fs "
        "solid 1 border lc rgb 'white' fc rgb '{}' notitle",
        block, from, b + 2, num(kBarHalf), num(kBarHalf), kBinColours[b]));
  }
  clauses.push_back(fmt::format(
      "'figures/staleness.dat' index {} using (1):1:{} with labels left offset 0.8,0 notitle",
      block, bins + 2));
  return clauses;
}

// The legend of the age bins, right of the panels.
std::string bins_legend(int bins, double x, double y) {
  std::vector<std::string> entries;
  for (int b = 0; b < bins; ++b) {
    entries.push_back(fmt::format("keyentry with boxes fs solid 1 fc rgb '{}' title {}",
                                  kBinColours[b], gp_string(bin_label(b))));
  }
  return legend_plot(entries, x, y, fmt::format("maxrows {} title 'age'", bins));
}

struct StalenessPanel {
  const std::vector<Ages>* methods;
  std::string heading;
};

void staleness_script(Script& s, const ComparisonRuns& runs, const StalenessData& d,
                      const std::vector<StalenessPanel>& panels, const std::string& title,
                      int width, int height, double names_pixels) {
  const double left = names_pixels / width, right = 1 - (160.0 + 130.0) / width;
  s << fmt::format("set multiplot title {} font ',{}'", gp_lines(title), kTitleFont);
  s << "set grid xtics lc rgb '#dddddd'\nset border 3 lc rgb '#444444'\nset tics nomirror";
  s << axis_commands('x', linear_axis(0, 1));
  double top = 1 - kAbovePanels / height;
  for (size_t p = 0; p < panels.size(); ++p) {
    const std::vector<Ages>& methods = *panels[p].methods;
    const int n = static_cast<int>(methods.size());
    const double bottom = top - (kRowPixels * n + 20.0) / height;
    s << fmt::format(
        "set lmargin at screen {}\nset rmargin at screen {}\nset tmargin at screen {}\n"
        "set bmargin at screen {}",
        num(left), num(right), num(top), num(bottom));
    s << fmt::format("set title {} font ',{}'", gp_string(panels[p].heading), kFont);
    s << fmt::format("set yrange [-0.6:{}]", num(n - 0.4));
    std::vector<std::string> tics;
    for (int i = 0; i < n; ++i) {
      tics.push_back(
          fmt::format("{} {}", gp_string(runs.c->methods[methods[i].method].spec), n - 1 - i));
    }
    s << fmt::format("set ytics ({}) scale 0", fmt::join(tics, ", "));
    s << (p + 1 == panels.size() ? "set xlabel 'fraction of gradients'" : "unset xlabel");
    s << "unset key";
    s.plot(panel_clauses(static_cast<int>(p), d.bins));
    top = bottom - kBetweenPanels / height;
  }
  s << bins_legend(d.bins, right + 130.0 / width, 1 - kAbovePanels / height);
  s << "unset multiplot";
}

}  // namespace

std::optional<Figure> staleness_figure(const std::string& dir, const ComparisonRuns& runs,
                                       Rendering& rendering) {
  const StalenessData d = staleness_data(runs);
  if (d.sync.empty() && d.async.empty()) return std::nullopt;
  std::vector<StalenessPanel> panels;
  if (!d.sync.empty()) {
    panels.push_back(
        {&d.sync, "synchronous methods: age in steps of each partition gradient used"});
  }
  if (!d.async.empty()) {
    panels.push_back({&d.async, "asynchronous methods: delay δ in updates of each arrival"});
  }
  DataFile data(
      "Staleness, pooled over the seeds drawn: one block per panel (synchronous methods: age in\n"
      "steps of each partition gradient used; asynchronous: delay in updates of each arrival),\n"
      "one row per method. Columns: row, the cumulative fraction of gradients up to and including\n"
      "each age bin (" +
      [&] {
        std::vector<std::string> bins;
        for (int b = 0; b < d.bins; ++b) bins.push_back(bin_label(b));
        return fmt::format("{}", fmt::join(bins, ", "));
      }() +
      "), the mean age label, the method.");
  for (const StalenessPanel& p : panels) {
    panel_block(data, runs, *p.methods, d.bins, p.heading);
  }
  std::vector<std::string> specs;
  std::vector<std::vector<uint64_t>> drawn(runs.methods.size());
  for (const auto* group : {&d.sync, &d.async}) {
    for (const Ages& a : *group) {
      specs.push_back(runs.c->methods[a.method].spec);
      drawn[a.method] = a.seeds;
    }
  }
  const double names = 40 + kCharPixels * static_cast<double>(longest(specs));
  const int width = static_cast<int>(names) + 1000;
  // Each panel's plot is its rows and 20 pixels.
  const int legend = static_cast<int>(kAbovePanels + kLegendLinePixels * (d.bins + 1) + 20);
  const int height =
      std::max(legend, static_cast<int>(kAbovePanels + kBelowPanels) +
                           static_cast<int>(panels.size() - 1) * static_cast<int>(kBetweenPanels) +
                           static_cast<int>(panels.size()) * 20 +
                           kRowPixels * static_cast<int>(specs.size()));
  const std::string caption = fmt::format(
      "Staleness of the gradients, pooled over {}: per method the fraction of gradients by age "
      "(synchronous methods: steps since the model version each partition gradient used was "
      "computed at; asynchronous methods: master updates between the model a gradient was "
      "computed at and its arrival, used or discarded), with the mean age right of each bar{}.",
      describe_seeds(d.seeds), fewer_seeds_note(*runs.c, drawn));
  Script s("staleness", caption, width, height);
  staleness_script(s, runs, d, panels,
                   comparison_title(runs, "gradient staleness", specs.size(), d.seeds), width,
                   height, names);
  return write_figure(dir, s, {{"figures/staleness.dat", &data}}, caption, rendering);
}

}  // namespace pacer::figure
