// The figures of comparisons and runs (plot.h): their data files, scripts and the fallback
// without gnuplot, on fixture run folders written here.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "pacer/method/method.h"
#include "pacer/report/comparison.h"
#include "pacer/report/figure_data.h"
#include "pacer/report/figure_palette.h"
#include "pacer/report/plot.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::gnuplot_installed;
using testing::NoGnuplot;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

struct FakeEval {
  double time, full_loss, tilde_loss;  // tilde NaN = synchronous
};

// What a fixture run's summary.json says beyond its defaults.
struct FakeSummary {
  std::string clock = "simulated";  // "" = the summary does not say
  std::string histogram_key = "staleness_histogram";
  std::vector<double> busy = {9.0, 6.0, 3.0};  // per worker, of 9 s (the rest idle)
  bool engine_stats = true;
};

// One run folder: evals.csv (work units = 10 × time), trace.csv, summary.json.
void write_run(const std::string& folder, const std::vector<FakeEval>& evals,
               const std::vector<std::pair<double, double>>& trace,
               const std::string& staleness_json = R"({"0": 30, "1": 10})",
               const FakeSummary& summary = FakeSummary{}) {
  std::filesystem::create_directories(folder);
  std::string e =
      "time,step,work_units,full_loss,grad_norm_sq,tilde_loss,test_loss,test_accuracy\n";
  int step = 0;
  for (const FakeEval& v : evals) {
    step += 10;
    e += fmt::format("{},{},{},{},0.5,{},,\n", v.time, step, 10 * v.time, v.full_loss,
                     std::isnan(v.tilde_loss) ? "" : fmt::format("{}", v.tilde_loss));
  }
  write_text(folder + "/evals.csv", e);
  std::string t = "time,step,work_units,loss\n";
  step = 0;
  for (const auto& [time, loss] : trace) {
    step += 1;
    t += fmt::format("{},{},{},{}\n", time, step, 10 * time, loss);
  }
  write_text(folder + "/trace.csv", t);
  std::vector<double> idle;
  for (double b : summary.busy) idle.push_back(9.0 - b);
  std::string json = fmt::format(R"({{"status": "max_steps", "time": 9.0,
  "method_stats": {{"{}": {}}})",
                                 summary.histogram_key, staleness_json);
  if (summary.engine_stats) {
    json += fmt::format(
        R"(, "engine_stats": {{"busy_time_per_worker": [{}], "idle_time_per_worker": [{}]}})",
        fmt::join(summary.busy, ", "), fmt::join(idle, ", "));
  }
  if (!summary.clock.empty()) json += fmt::format(R"(, "clock": "{}")", summary.clock);
  write_text(folder + "/summary.json", json + "}");
}

std::vector<std::pair<double, double>> falling_trace(double end_time, double start, double end) {
  std::vector<std::pair<double, double>> rows;
  for (int i = 1; i <= 50; ++i) {
    const double f = i / 50.0;
    rows.push_back({end_time * f, start + (end - start) * f});
  }
  return rows;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Two methods × two seeds: "alpha" (synchronous) reaches the target on both seeds, "beta:k=2"
// (asynchronous, with F̃) on one of two.
Comparison fixture(const std::string& dir) {
  write_run(dir + "/alpha/seed1", {{1, 4, kNaN}, {3, 3, kNaN}, {5, 2, kNaN}, {9, 1, kNaN}},
            falling_trace(9, 5, 1.2));
  FakeSummary alpha2;
  alpha2.busy = {9.0, 3.0, 4.5};
  write_run(dir + "/alpha/seed2", {{2, 5, kNaN}, {4, 3.5, kNaN}, {6, 2.5, kNaN}, {8, 1.5, kNaN}},
            falling_trace(8, 5.5, 1.4), R"({"0": 30, "1": 10})", alpha2);
  FakeSummary async;
  async.histogram_key = "delay_histogram";
  write_run(dir + "/beta_k=2/seed1", {{0.5, 3, 2.5}, {2, 2.5, 2}, {4, 2, 1.5}, {7, 1.8, 1.2}},
            falling_trace(7, 3.5, 1.9), R"({"0": 5, "1": 20, "2": 12, "3": 3})", async);
  write_run(dir + "/beta_k=2/seed2", {{1, 3.2, 2.6}, {3, 2.4, 1.9}, {5, 2.1, 1.4}, {7.5, 1.9, 1.3}},
            falling_trace(7.5, 3.6, 2.0), R"({"0": 4, "1": 22, "2": 10, "3": 4})", async);
  Comparison c;
  c.name = "fixture";
  c.budget = Budget{Budget::Kind::kSteps, 100, true};
  c.targets = {1.6};
  c.target_on = "train";
  c.seeds = {1, 2};
  c.criterion = "time to target";
  MethodResult alpha;
  alpha.spec = "alpha";
  alpha.folder = "alpha";
  alpha.reached = 2;
  // Set by hand (the figures draw what the estimates say; statistics_test checks the estimates).
  alpha.time_to_target = Estimate{.n = 2, .mean = 7, .low = 5.5, .high = 8.9};
  MethodResult beta;
  beta.spec = "beta:k=2";
  beta.folder = "beta_k=2";
  beta.asynchronous = true;
  beta.reached = 1;
  beta.time_to_target = Estimate{.n = 2, .mean = 8, .low = 6, .high = 10.5, .censored = 1};
  for (MethodResult* m : {&alpha, &beta}) {
    for (uint64_t seed : {1, 2}) {
      SeedRun r;
      r.seed = seed;
      r.folder = fmt::format("{}/seed{}", m->folder, seed);
      m->runs.push_back(r);
    }
  }
  c.methods = {alpha, beta};
  return c;
}

// The blocks of a data file: rows of numbers up to the first quoted text (comments skipped;
// blocks split at blank lines).
std::vector<std::vector<std::vector<double>>> read_blocks(const std::string& path) {
  std::vector<std::vector<std::vector<double>>> blocks(1);
  std::istringstream in(read_text(path));
  std::string line;
  int blank = 0;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (++blank == 2 && !blocks.back().empty()) blocks.emplace_back();
      continue;
    }
    blank = 0;
    if (line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<double> row;
    std::string f;
    while (fields >> f && f[0] != '"') row.push_back(f == "NaN" ? kNaN : std::stod(f));
    blocks.back().push_back(row);
  }
  if (blocks.back().empty()) blocks.pop_back();
  return blocks;
}

TEST(SeedBand, IsTheStepFunctionMeanAndRangeOverSeeds) {
  figure::Series a{{1, 3, 5, 9}, {4, 3, 2, 1}};
  figure::Series b{{2, 4, 6, 8}, {5, 3.5, 2.5, 1.5}};
  figure::Band band = figure::seed_band({a, b}, 4);  // grid 2, 4, 6, 8 (the common range)
  ASSERT_EQ(band.size(), 4u);
  EXPECT_EQ(band.seeds, 2);
  const std::vector<double> x = {2, 4, 6, 8};
  // a at 2, 4, 6, 8: its last evaluation at or before: 4 (t=1), 3 (t=3), 2 (t=5), 2 (t=5);
  // b: 5, 3.5, 2.5, 1.5 (evaluated exactly there).
  const std::vector<double> mean = {4.5, 3.25, 2.25, 1.75}, low = {4, 3, 2, 1.5},
                            high = {5, 3.5, 2.5, 2};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(band.x[i], x[i]);
    EXPECT_DOUBLE_EQ(band.mean[i], mean[i]) << i;
    EXPECT_DOUBLE_EQ(band.low[i], low[i]) << i;
    EXPECT_DOUBLE_EQ(band.high[i], high[i]) << i;
  }
  // Ranges that do not overlap give no band; a single seed is its own step function.
  EXPECT_TRUE(figure::seed_band({figure::Series{{1, 2}, {1, 1}}, figure::Series{{3, 4}, {1, 1}}}, 5)
                  .empty());
  figure::Band one = figure::seed_band({a}, 3);  // 1, 5, 9
  EXPECT_EQ(one.mean, (std::vector<double>{4, 2, 1}));
  EXPECT_EQ(one.low, one.high);
}

TEST(MovingAverage, IsCentredAndCutAtTheEnds) {
  figure::Series s{{0, 1, 2, 3, 4}, {1, 2, 3, 4, 10}};
  figure::Series m = figure::moving_average(s, 3);
  EXPECT_EQ(m.x, s.x);
  const std::vector<double> expected = {1.5, 2, 3, 17.0 / 3, 7};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(m.y[i], expected[i]) << i;
  EXPECT_EQ(figure::moving_average(s, 1).y, s.y);
  EXPECT_EQ(figure::smoothing_window(2000), 81u);
  EXPECT_EQ(figure::smoothing_window(10), 1u);
}

TEST(ComparisonFigures, LossDataIsTheSeedMeanAndMinMaxOnTheCommonGrid) {
  TempDir dir;
  NoGnuplot no_gnuplot;
  const Comparison c = fixture(dir.path());
  std::vector<Figure> figures = write_comparison_figures(dir.path(), c);
  ASSERT_FALSE(figures.empty());
  EXPECT_EQ(figures[0].png, "loss.png");
  EXPECT_EQ(figures[0].svg, "loss.svg");
  auto blocks = read_blocks(dir.file("figures/loss-F-time.dat"));
  ASSERT_EQ(blocks.size(), 2u);  // alpha, beta
  const auto& alpha = blocks[0];
  ASSERT_EQ(alpha.size(), figure::kGridPoints);
  // alpha's seeds cover [2, 8] together; grid point i is 2 + 6 i / (points − 1).
  const size_t n = figure::kGridPoints;
  auto expect_row = [&](size_t i, double x, double mean, double low, double high) {
    SCOPED_TRACE(i);
    EXPECT_NEAR(alpha[i][0], x, 1e-7);
    EXPECT_NEAR(alpha[i][1], mean, 1e-7);
    EXPECT_NEAR(alpha[i][2], low, 1e-7);
    EXPECT_NEAR(alpha[i][3], high, 1e-7);
  };
  expect_row(0, 2, 4.5, 4, 5);         // seed 1 at t=1 (4), seed 2 at t=2 (5)
  expect_row(n - 1, 8, 1.75, 1.5, 2);  // seed 1 at t=5 (2), seed 2 at t=8 (1.5)
  const size_t i = n / 2;  // x = 2 + 6 · 0.5… ≈ 5.0075: seed 1 at t=5, seed 2 at t=4
  const double x = 2 + 6.0 * static_cast<double>(i) / static_cast<double>(n - 1);
  ASSERT_GT(x, 5);
  ASSERT_LT(x, 6);
  expect_row(i, x, 2.75, 2, 3.5);
  // Against work units (10 × time) the same values at 10 × x.
  auto work = read_blocks(dir.file("figures/loss-F-work.dat"));
  EXPECT_NEAR(work[0][i][0], 10 * x, 1e-6);
  EXPECT_NEAR(work[0][i][1], 2.75, 1e-7);
  // beta's seeds cover [1, 7].
  EXPECT_NEAR(blocks[1].front()[0], 1, 1e-9);
  EXPECT_NEAR(blocks[1].back()[0], 7, 1e-9);
  // The reported loss: a block per method, smoothed, of the same colour and dash, fainter.
  auto reported = read_blocks(dir.file("figures/loss-reported-time.dat"));
  ASSERT_EQ(reported.size(), 2u);
  const std::string script = read_text(dir.file("loss.gp"));
  const std::string colour = figure::method_styles({"alpha", "beta:k=2"})[0].colour;
  EXPECT_NE(script.find(fmt::format("'figures/loss-reported-time.dat' index 0 using 1:2 with lines "
                                    "lw 1.5 lc rgb '#A8{}' dt 1",
                                    colour.substr(1))),
            std::string::npos)
      << script;
  EXPECT_NE(
      script.find(fmt::format(
          "'figures/loss-F-time.dat' index 0 using 1:2 with lines lw 2.5 lc rgb '{}'", colour)),
      std::string::npos);
  // The band, the target line labelled with what it is on, the title with what ran.
  EXPECT_NE(script.find("using 1:3:4 with filledcurves"), std::string::npos);
  EXPECT_NE(script.find("'target 1.6 on the train loss'"), std::string::npos);
  EXPECT_NE(script.find("\"fixture: training loss\\n2 methods, seeds 1–2, 100 steps per run, "
                        "stopping at the target\""),
            std::string::npos)
      << script;
  // Two quantities on one y axis: the axis says "loss", the legend which line is which.
  EXPECT_NE(script.find("set label 92 'loss'"), std::string::npos);
  EXPECT_NE(script.find("title 'F (evaluated), mean over seeds'"), std::string::npos);
  EXPECT_NE(script.find("title 'reported minibatch loss (smoothed)'"), std::string::npos);
  EXPECT_NE(figures[0].caption.find("min–max"), std::string::npos);
  // Nothing reads a run's full log.
  for (const Figure& f : figures) {
    EXPECT_EQ(read_text(dir.file(f.script)).find("log.csv"), std::string::npos) << f.script;
  }
}

TEST(ComparisonFigures, WritesEveryFigureForAMixedComparison) {
  TempDir dir;
  NoGnuplot no_gnuplot;
  std::vector<Figure> figures = write_comparison_figures(dir.path(), fixture(dir.path()));
  std::vector<std::string> names;
  for (const Figure& f : figures) {
    names.push_back(f.script);
    EXPECT_FALSE(f.caption.empty());
    EXPECT_TRUE(std::filesystem::exists(dir.file(f.script)));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"loss.gp", "time_to_target.gp", "tilde.gp",
                                             "workers.gp", "staleness.gp"}));
  // workers: busy / (busy + idle) per worker, a block per method: mean, min and max over both
  // seeds (alpha's busy 9, 6, 3 and 9, 3, 4.5 s of 9).
  auto workers = read_blocks(dir.file("figures/workers.dat"));
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(workers[0].size(), 3u);
  EXPECT_EQ(workers[0][0], (std::vector<double>{0, 1, 1, 1}));
  EXPECT_NEAR(workers[0][1][1], 0.5, 1e-8);
  EXPECT_NEAR(workers[0][1][2], 3.0 / 9.0, 1e-8);
  EXPECT_NEAR(workers[0][1][3], 6.0 / 9.0, 1e-8);
  EXPECT_NEAR(workers[0][2][1], (3.0 / 9.0 + 4.5 / 9.0) / 2, 1e-8);
  EXPECT_NEAR(workers[1][1][1], 6.0 / 9.0, 1e-8);
  // staleness: a block per panel, pooled over both seeds, cumulative fractions per age bin (0, 1,
  // 2, 3): alpha (synchronous) 60, 20 of 80; beta (asynchronous) 9, 42, 22, 7 of 80.
  auto staleness = read_blocks(dir.file("figures/staleness.dat"));
  ASSERT_EQ(staleness.size(), 2u);
  ASSERT_EQ(staleness[0].size(), 1u);
  EXPECT_EQ(staleness[0][0], (std::vector<double>{0, 0.75, 1, 1, 1}));
  ASSERT_EQ(staleness[1].size(), 1u);
  EXPECT_EQ(staleness[1][0], (std::vector<double>{0, 9 / 80.0, 51 / 80.0, 73 / 80.0, 1}));
  const std::string staleness_script = read_text(dir.file("staleness.gp"));
  EXPECT_NE(staleness_script.find("asynchronous methods: delay"), std::string::npos);
  // The mean age, (42 + 44 + 21) / 80 = 1.3375, to three digits (1.34 or 1.33 by its rounding).
  EXPECT_NE(read_text(dir.file("figures/staleness.dat")).find("\"mean 1.3"), std::string::npos);
  // tilde: only the asynchronous method, F and F̃ on the same y range.
  EXPECT_EQ(read_blocks(dir.file("figures/tilde-F.dat")).size(), 1u);
  auto tilde = read_blocks(dir.file("figures/tilde-Ftilde.dat"));
  ASSERT_EQ(tilde.size(), 1u);
  EXPECT_NEAR(tilde[0].back()[1], (1.2 + 1.4) / 2, 1e-9);  // seed 2 at t=5
  // A synchronous comparison without a target has neither tilde nor time_to_target, and the
  // stale files of the earlier call are gone.
  Comparison sync = fixture(dir.path());
  sync.methods.pop_back();
  sync.targets.clear();
  figures = write_comparison_figures(dir.path(), sync);
  names.clear();
  for (const Figure& f : figures) names.push_back(f.script);
  EXPECT_EQ(names, (std::vector<std::string>{"loss.gp", "workers.gp", "staleness.gp"}));
  EXPECT_FALSE(std::filesystem::exists(dir.file("tilde.gp")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("figures/tilde-F.dat")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("figures/time_to_target.dat")));
}

// `pacer advise`'s default candidates (advise.cc): every registry method, those with an s (or
// k) once for each of 1, 2, 3 — 29 specs.
std::vector<std::string> advise_specs() {
  std::vector<std::string> specs;
  for (const std::string& method : method_names()) {
    const char* key = method == "is-sgd" ? "k" : nullptr;
    for (const char* coded : {"gc-fr", "gc-cr", "is-gc-fr", "is-gc-cr", "pgc-fr", "pgc-cr"}) {
      if (method == coded) key = "s";
    }
    if (!key) {
      specs.push_back(method);
      continue;
    }
    for (int s = 1; s <= 3; ++s) specs.push_back(fmt::format("{}:{}={}", method, key, s));
  }
  return specs;
}

TEST(Palette, EverySpecOfAComparisonHasItsOwnColourAndDash) {
  const std::vector<std::string> specs = advise_specs();
  ASSERT_EQ(specs.size(), 29u);
  const std::vector<figure::MethodStyle> styles = figure::method_styles(specs);
  std::set<std::pair<std::string, std::string>> pairs;
  for (const figure::MethodStyle& s : styles) pairs.insert({s.colour, s.dash});
  EXPECT_EQ(pairs.size(), 29u);
  // The specs of one method share its colour and differ in dash; other methods differ in colour.
  const auto at = [&](const std::string& spec) {
    return styles[std::find(specs.begin(), specs.end(), spec) - specs.begin()];
  };
  EXPECT_EQ(at("pgc-cr:s=1").colour, at("pgc-cr:s=3").colour);
  EXPECT_EQ(at("pgc-cr:s=1").dash, "1");
  EXPECT_NE(at("pgc-cr:s=2").dash, at("pgc-cr:s=3").dash);
  EXPECT_NE(at("pgc-cr:s=1").colour, at("pgc-fr:s=1").colour);
  EXPECT_EQ(at("pgc-cr:s=1").family, at("pgc-fr:s=1").family);
  EXPECT_EQ(at("asgd").family, at("ringmaster").family);
  EXPECT_NE(at("asgd").family, at("rennala").family);
  // Every registry method is in the palette's table, each with a colour of its own.
  const std::vector<std::string> known = figure::palette_methods();
  for (const std::string& m : method_names()) {
    EXPECT_NE(std::find(known.begin(), known.end(), m), known.end()) << m;
  }
  std::set<std::string> method_colours;
  for (const std::string& m : known) method_colours.insert(figure::method_styles({m})[0].colour);
  EXPECT_EQ(method_colours.size(), known.size());
  // Methods the table does not know share a few shades, told apart by dashes.
  std::vector<std::string> unknown;
  for (int i = 0; i < 40; ++i) unknown.push_back(fmt::format("method{}", i));
  pairs.clear();
  for (const figure::MethodStyle& s : figure::method_styles(unknown)) {
    pairs.insert({s.colour, s.dash});
  }
  EXPECT_EQ(pairs.size(), 40u);
  // The numbered-series palette (the run figure, the fit report).
  std::set<std::string> series;
  for (size_t i = 0; i < figure::kDistinctColours; ++i) series.insert(figure::method_colour(i));
  EXPECT_EQ(series.size(), figure::kDistinctColours);
  std::set<std::pair<std::string, int>> numbered;
  for (size_t i = 0; i < 40; ++i)
    numbered.insert({figure::method_colour(i), figure::method_dash(i)});
  EXPECT_EQ(numbered.size(), 40u);
}

// A comparison of `specs` whose runs are all alpha's of the fixture.
Comparison many_methods(const std::string& dir, const std::vector<std::string>& specs) {
  Comparison c = fixture(dir);
  MethodResult base = c.methods[0];
  c.methods.clear();
  for (const std::string& spec : specs) {
    MethodResult r = base;
    r.spec = spec;
    c.methods.push_back(r);  // all read alpha's runs
  }
  return c;
}

// The number after `key` in `script` ("maxrows 16" -> 16).
double number_after(const std::string& script, const std::string& key) {
  const size_t at = script.find(key);
  EXPECT_NE(at, std::string::npos) << key;
  return at == std::string::npos ? 0 : std::stod(script.substr(at + key.size()));
}

TEST(ComparisonFigures, TwentyNineMethodsEachHaveALegendEntryInTheirOwnStyle) {
  TempDir dir;
  NoGnuplot no_gnuplot;
  const std::vector<std::string> specs = advise_specs();
  write_comparison_figures(dir.path(), many_methods(dir.path(), specs));
  const std::string loss = read_text(dir.file("loss.gp"));
  // Legend entries: "... lc rgb '#RRGGBB' dt DASH title 'SPEC'" (the seed means' lines).
  std::map<std::string, std::pair<std::string, std::string>> style_of;
  std::regex entry("lc rgb '(#[0-9A-F]{6})' dt (\\S+) title '([^']+)'");
  for (auto it = std::sregex_iterator(loss.begin(), loss.end(), entry);
       it != std::sregex_iterator(); ++it) {
    style_of[(*it)[3]] = {(*it)[1], (*it)[2]};
  }
  ASSERT_EQ(style_of.size(), 29u) << loss;
  std::set<std::pair<std::string, std::string>> pairs;
  for (const std::string& spec : specs) {
    ASSERT_TRUE(style_of.count(spec)) << spec;
    pairs.insert(style_of[spec]);
  }
  EXPECT_EQ(pairs.size(), 29u);
  // Nothing is cut off. The methods' legend (beside the last panel, the first key of the script)
  // in columns of at most `maxrows`, each line 28 pixels (15 pt text at spacing 1.15, as pngcairo
  // draws it), fits in the height of that panel, which gnuplot fits a key's rows in, and its
  // columns fit in the width: gnuplot spaces them (characters of the longest entry + 4) × its
  // character width apart, plus the sample and a tic, 12 × (characters + 7.5) pixels at 15 pt
  // (measured in pngcairo's output: 318 pixels for 19 characters). The 4 line kinds (F, band,
  // circles, reported loss) have a legend of their own under the plots.
  const std::regex titled(" title '");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(loss.begin(), loss.end(), titled), std::sregex_iterator()),
      29 + 4);
  const size_t key = loss.find("set key at screen ");
  ASSERT_NE(key, std::string::npos);
  const std::string before_key = loss.substr(0, key), from_key = loss.substr(key);
  const double width = number_after(loss, "pngcairo size ");
  const double height = number_after(loss, fmt::format("pngcairo size {},", width));
  const double rows = number_after(from_key, "maxrows ");
  const double top = number_after(before_key.substr(before_key.rfind("set tmargin at screen ")),
                                  "set tmargin at screen ");
  const double bottom = number_after(before_key.substr(before_key.rfind("set bmargin at screen ")),
                                     "set bmargin at screen ");
  EXPECT_LE(rows * 28, (top - bottom) * height);
  const double key_x = number_after(from_key, "set key at screen ");
  const double columns = std::ceil(29 / rows);
  const double longest = std::string("delay-adaptive-asgd").size();
  EXPECT_LE(key_x * width + columns * 12 * (longest + 7.5), width + 1);
  // The other figures name every method once: time_to_target's rows, workers' small charts,
  // staleness's rows.
  for (const char* script : {"time_to_target.gp", "workers.gp", "staleness.gp"}) {
    const std::string text = read_text(dir.file(script));
    for (const std::string& spec : specs) {
      EXPECT_NE(text.find("'" + spec + (std::string(script) == "workers.gp" ? " (mean" : "'")),
                std::string::npos)
          << script << ": " << spec;
    }
  }
}

// The y range of `script` ("set yrange [a:b]"), whether it is logarithmic.
std::tuple<double, double, bool> y_range(const std::string& script) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(script, m, std::regex("set yrange \\[([^:]+):([^\\]]+)\\]")));
  return {std::stod(m[1]), std::stod(m[2]), script.find("set logscale y") != std::string::npos};
}

void expect_range_fits(const std::string& dir, const std::vector<double>& targets) {
  std::vector<double> values = targets;
  for (const char* file : {"figures/loss-F-time.dat", "figures/loss-F-work.dat",
                           "figures/loss-reported-time.dat", "figures/loss-reported-work.dat"}) {
    for (const auto& block : read_blocks(dir + "/" + file)) {
      for (const auto& row : block) values.insert(values.end(), row.begin() + 1, row.end());
    }
  }
  // Each seed's evaluations: x, F, seed.
  for (const char* file : {"figures/loss-F-time-evals.dat", "figures/loss-F-work-evals.dat"}) {
    for (const auto& block : read_blocks(dir + "/" + file)) {
      for (const auto& row : block) values.push_back(row[1]);
    }
  }
  const double lo = *std::min_element(values.begin(), values.end());
  const double hi = *std::max_element(values.begin(), values.end());
  auto [a, b, log] = y_range(read_text(dir + "/loss.gp"));
  EXPECT_LE(a, lo);
  EXPECT_GE(b, hi);
  EXPECT_EQ(log, hi > 10 * lo) << lo << " " << hi;
  if (log) {
    const double span = std::log10(hi / lo);
    EXPECT_GE(std::log10(a), std::log10(lo) - 0.1 * span);
    EXPECT_LE(std::log10(b), std::log10(hi) + 0.1 * span);
  } else {
    EXPECT_GE(a, lo - 0.1 * (hi - lo));
    EXPECT_LE(b, hi + 0.1 * (hi - lo));
  }
}

TEST(ComparisonFigures, WorkerPanelsAreWideEnoughForTheirTitles) {
  // advise's specs carry their tuned stepsize: "delay-adaptive-asgd:optimizer.lr=0.03333 (mean
  // 0.98)" is 52 characters. Neighbouring panels' titles must not run into each other: the
  // panels are at least 11 pixels (font 13 as pngcairo draws it: about 550 pixels for those 52
  // characters) per character of the longest title apart.
  TempDir dir;
  NoGnuplot no_gnuplot;
  std::vector<std::string> specs;
  for (const std::string& spec : advise_specs()) specs.push_back(spec + ":optimizer.lr=0.03333");
  write_comparison_figures(dir.path(), many_methods(dir.path(), specs));
  const std::string script = read_text(dir.file("workers.gp"));
  const double width = number_after(script, "pngcairo size ");
  std::vector<double> lefts;
  size_t longest_title = 0;
  const std::regex margin("set lmargin at screen ([0-9.e-]+)");
  for (auto it = std::sregex_iterator(script.begin(), script.end(), margin);
       it != std::sregex_iterator(); ++it) {
    lefts.push_back(std::stod((*it)[1]));
  }
  const std::regex title("set title '([^']+)' font ',13'");
  for (auto it = std::sregex_iterator(script.begin(), script.end(), title);
       it != std::sregex_iterator(); ++it) {
    longest_title = std::max(longest_title, (*it)[1].str().size());
  }
  ASSERT_EQ(lefts.size(), specs.size()) << script;
  ASSERT_GE(longest_title, 52u);
  EXPECT_GE((lefts[1] - lefts[0]) * width, 11.0 * static_cast<double>(longest_title) - 1);
}

TEST(ComparisonFigures, YRangeFitsTheData) {
  NoGnuplot no_gnuplot;
  {
    TempDir dir;
    write_comparison_figures(dir.path(), fixture(dir.path()));
    expect_range_fits(dir.path(), {1.6});  // 1..5.5: linear, just around the data
  }
  {
    TempDir dir;
    Comparison c = fixture(dir.path());
    // A loss falling over two decades: logarithmic.
    write_run(dir.file("alpha/seed1"),
              {{1, 40, kNaN}, {3, 3, kNaN}, {5, 0.9, kNaN}, {9, 0.3, kNaN}},
              falling_trace(9, 50, 0.35));
    write_comparison_figures(dir.path(), c);
    expect_range_fits(dir.path(), {1.6});
  }
  // fit_axis itself.
  figure::Axis a = figure::fit_axis({0.5, 0.6, 0.55});
  EXPECT_FALSE(a.log);
  EXPECT_NEAR(a.low, 0.495, 1e-12);
  EXPECT_NEAR(a.high, 0.605, 1e-12);
  a = figure::fit_axis({0.3, 5});  // more than a decade
  EXPECT_TRUE(a.log);
  EXPECT_LT(a.low, 0.3);
  EXPECT_GT(a.high, 5);
  EXPECT_GE(a.tics.size(), 3u);      // 0.5, 1, 2 at least: labelled within a short log range
  a = figure::fit_axis({0.3, 2.9});  // less than a decade
  EXPECT_FALSE(a.log);
  EXPECT_GE(a.low, 0);
}

TEST(ComparisonFigures, CensoredBarsAreMarked) {
  TempDir dir;
  NoGnuplot no_gnuplot;
  write_comparison_figures(dir.path(), fixture(dir.path()));
  const std::string data = read_text(dir.file("figures/time_to_target.dat"));
  std::istringstream lines(data);
  std::string line, alpha, beta;
  while (std::getline(lines, line)) {
    if (line.find("\"alpha\"") != std::string::npos) alpha = line;
    if (line.find("\"beta:k=2\"") != std::string::npos) beta = line;
  }
  // row (the first method at the top), mean, low, high, censored, reached, seeds, where the
  // label starts, the label, the method
  EXPECT_EQ(alpha.rfind("1 7 ", 0), 0u) << alpha;
  EXPECT_NE(alpha.find("\"7.00 s (2/2 reached)\""), std::string::npos) << alpha;
  EXPECT_EQ(beta.rfind("0 8 ", 0), 0u) << beta;
  EXPECT_NE(beta.find("\"≥ 8.00 s (1/2 reached)\""), std::string::npos) << beta;
  const std::string script = read_text(dir.file("time_to_target.gp"));
  std::istringstream clauses(script);
  std::string alpha_bar, beta_bar;
  while (std::getline(clauses, line)) {
    if (line.find("every ::0::0") != std::string::npos) alpha_bar += line;
    if (line.find("every ::1::1") != std::string::npos) beta_bar += line;
  }
  EXPECT_EQ(alpha_bar.find("pattern"), std::string::npos);
  EXPECT_NE(alpha_bar.find("fs solid 0.85"), std::string::npos);
  EXPECT_NE(beta_bar.find("fs transparent pattern"), std::string::npos);         // hatched
  EXPECT_NE(beta_bar.find("fs transparent solid 0.35"), std::string::npos);      // lighter
  EXPECT_NE(script.find("($4-$3):(0) with vectors nohead"), std::string::npos);  // error bars
  EXPECT_NE(script.find("lower bound"), std::string::npos);  // the legend says what hatching means
  // Error bars only where every seed reached the target: a censored mean has no interval (its
  // high end, 10.5 here, would reach past where its runs ended), and its label starts at the mean.
  EXPECT_NE(script.find("$5 == 0 ? $1"), std::string::npos);
  EXPECT_EQ(script.find("$5 > 0 ? $1"), std::string::npos);
  EXPECT_NE(beta.find(" 8 \"≥ 8.00 s"), std::string::npos) << beta;
}

// Rewrites every run of the fixture's comparison `c` in `dir` with its summary saying `clock`
// ("" = not at all).
void set_clock(const std::string& dir, const Comparison& c, const std::string& clock) {
  for (const MethodResult& m : c.methods) {
    for (const SeedRun& r : m.runs) {
      const std::string file = dir + "/" + r.folder + "/summary.json";
      std::string text = read_text(file);
      text = std::regex_replace(text, std::regex(R"(, "clock": "[a-z]*")"), "");
      if (!clock.empty()) text.insert(text.rfind('}'), fmt::format(R"(, "clock": "{}")", clock));
      write_text(file, text);
    }
  }
}

TEST(ComparisonFigures, TimeAxesSayTheRunsClock) {
  TempDir dir;
  NoGnuplot no_gnuplot;
  Comparison c = fixture(dir.path());
  c.budget = Budget{Budget::Kind::kTime, 6.99222, true};
  struct Case {
    std::string clock, axis, to_target, budget;
  };
  for (const Case& k :
       std::vector<Case>{{"simulated", "'simulated time (s)'", "'time to target (simulated s)'",
                          "6.99 s of simulated time per run"},
                         {"wall", "'wall-clock time (s)'", "'time to target (wall-clock s)'",
                          "6.99 s of wall-clock time per run"},
                         {"", "'time (s)'", "'time to target (s)'", "6.99 s per run"}}) {
    SCOPED_TRACE(k.clock);
    set_clock(dir.path(), c, k.clock);
    write_comparison_figures(dir.path(), c);
    for (const char* script : {"loss.gp", "tilde.gp"}) {
      const std::string text = read_text(dir.file(script));
      EXPECT_NE(text.find("set label 91 " + k.axis), std::string::npos) << script;
      EXPECT_NE(text.find(k.budget), std::string::npos) << script;
      EXPECT_EQ(text.find("6.99222"), std::string::npos) << script;
    }
    const std::string bars = read_text(dir.file("time_to_target.gp"));
    EXPECT_NE(bars.find("set xlabel " + k.to_target), std::string::npos) << bars;
    // Nothing says "simulated" of a wall clock, or of a clock no summary names.
    if (k.clock != "simulated") {
      for (const char* script : {"loss.gp", "tilde.gp", "time_to_target.gp", "workers.gp"}) {
        EXPECT_EQ(read_text(dir.file(script)).find("simulated"), std::string::npos) << script;
      }
    }
  }
  // Runs that disagree: no clock is named.
  set_clock(dir.path(), c, "simulated");
  write_text(dir.file("alpha/seed2/summary.json"),
             std::regex_replace(read_text(dir.file("alpha/seed2/summary.json")),
                                std::regex("\"simulated\""), "\"wall\""));
  write_comparison_figures(dir.path(), c);
  EXPECT_NE(read_text(dir.file("loss.gp")).find("set label 91 'time (s)'"), std::string::npos);
}

TEST(ComparisonFigures, TitlesNameTheSeedsDrawn) {
  TempDir dir;
  NoGnuplot no_gnuplot;
  Comparison c = fixture(dir.path());
  c.seeds = {1, 2};
  // beta's seed 2 diverged: the curves still draw seeds 1–2 (alpha's), and the caption says that
  // beta has only seed 1.
  c.methods[1].runs[1].diverged = true;
  std::vector<Figure> figures = write_comparison_figures(dir.path(), c);
  const std::string loss = read_text(dir.file("loss.gp"));
  EXPECT_NE(loss.find("\\n2 methods, seeds 1–2, "), std::string::npos) << loss;
  EXPECT_NE(figures[0].caption.find("fewer seeds for beta:k=2 (seed 1)"), std::string::npos)
      << figures[0].caption;
  // Seeds drawn with gaps (advise's tied methods: seeds 1–5, then 8–12 after two tuning seeds)
  // are named as ranges, not one by one.
  {
    TempDir gaps;
    Comparison g = fixture(gaps.path());
    std::vector<SeedRun> runs;
    for (uint64_t seed : {1, 2, 3, 4, 5, 8, 9, 10, 11, 12}) {
      SeedRun r = g.methods[0].runs[0];
      r.seed = seed;
      r.folder = fmt::format("alpha/seed{}", seed);
      write_run(gaps.file(r.folder), {{1, 3, kNaN}, {7, 1.5, kNaN}}, falling_trace(7, 3.5, 1.4));
      runs.push_back(r);
    }
    g.methods[0].runs = runs;
    g.methods.resize(1);
    g.seeds = {1, 2, 3, 4, 5, 8, 9, 10, 11, 12};
    write_comparison_figures(gaps.path(), g);
    const std::string title = read_text(gaps.file("loss.gp"));
    EXPECT_NE(title.find("\\n1 method, seeds 1–5, 8–12, "), std::string::npos) << title;
    // Four more methods on seeds 1–2 only: counted in the caption, not listed.
    for (const char* spec : {"b1", "b2", "b3", "b4"}) {
      MethodResult m = c.methods[0];
      m.spec = m.folder = spec;
      for (SeedRun& r : m.runs) r.folder = fmt::format("{}/seed{}", spec, r.seed);
      for (const SeedRun& r : m.runs) {
        write_run(gaps.file(r.folder), {{1, 3, kNaN}, {7, 1.5, kNaN}}, falling_trace(7, 3.5, 1.4));
      }
      g.methods.push_back(m);
    }
    const std::vector<Figure> more = write_comparison_figures(gaps.path(), g);
    EXPECT_NE(more[0].caption.find("fewer seeds for 4 methods (seeds 1–2)"), std::string::npos)
        << more[0].caption;
  }
  // The tilde figure draws beta alone: seed 1.
  EXPECT_NE(read_text(dir.file("tilde.gp")).find("\\n1 method, seed 1, "), std::string::npos);
  // Both methods' seed 2 diverged: every figure of runs says seed 1.
  c.methods[0].runs[1].diverged = true;
  write_comparison_figures(dir.path(), c);
  for (const char* script : {"loss.gp", "workers.gp", "staleness.gp"}) {
    EXPECT_NE(read_text(dir.file(script)).find(", seed 1, "), std::string::npos) << script;
  }
  // Seed 2's summaries have no engine statistics: the workers figure shows seed 1 alone, the
  // staleness figure (whose histograms they have) both.
  c = fixture(dir.path());
  FakeSummary no_stats;
  no_stats.engine_stats = false;
  write_run(dir.file("alpha/seed2"), {{2, 5, kNaN}, {8, 1.5, kNaN}}, falling_trace(8, 5.5, 1.4),
            R"({"0": 30, "1": 10})", no_stats);
  no_stats.histogram_key = "delay_histogram";
  write_run(dir.file("beta_k=2/seed2"), {{1, 3.2, 2.6}, {7.5, 1.9, 1.3}},
            falling_trace(7.5, 3.6, 2.0), R"({"0": 4, "1": 22})", no_stats);
  write_comparison_figures(dir.path(), c);
  EXPECT_NE(read_text(dir.file("workers.gp")).find("\\n2 methods, seed 1, "), std::string::npos);
  EXPECT_NE(read_text(dir.file("staleness.gp")).find("\\n2 methods, seeds 1–2, "),
            std::string::npos);
  // The workers' data are seed 1's alone: min = max = mean.
  for (const auto& block : read_blocks(dir.file("figures/workers.dat"))) {
    for (const auto& row : block) {
      EXPECT_EQ(row[1], row[2]);
      EXPECT_EQ(row[1], row[3]);
    }
  }
}

TEST(ComparisonFigures, WithoutGnuplotOnlyScriptsAndDataAreWrittenWithOneWarning) {
  TempDir dir;
  const Comparison c = fixture(dir.path());
  std::vector<Figure> figures;
  std::string err;
  {
    NoGnuplot no_gnuplot;
    ::testing::internal::CaptureStderr();
    figures = write_comparison_figures(dir.path(), c);
    err = ::testing::internal::GetCapturedStderr();
  }
  ASSERT_EQ(figures.size(), 5u);
  for (const Figure& f : figures) {
    EXPECT_FALSE(f.rendered);
    EXPECT_TRUE(std::filesystem::exists(dir.file(f.script)));
    EXPECT_FALSE(std::filesystem::exists(dir.file(f.png)));
    EXPECT_FALSE(std::filesystem::exists(dir.file(f.svg)));
  }
  EXPECT_TRUE(std::filesystem::exists(dir.file("figures/loss-F-time.dat")));
  size_t warnings = 0;
  for (size_t p = err.find("warning"); p != std::string::npos; p = err.find("warning", p + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << err;
  EXPECT_NE(err.find("gnuplot not found"), std::string::npos) << err;
  // Nothing but the run folders, the scripts and figures/.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(entry.is_directory() || (name.size() > 3 && name.substr(name.size() - 3) == ".gp"))
        << name;
  }
}

TEST(ComparisonFigures, AFailingGnuplotLeavesTheScriptsAndOneWarning) {
  TempDir dir, bin;
  const Comparison c = fixture(dir.path());
  // A gnuplot that draws half a PNG and fails, as a broken installation might.
  write_text(bin.file("gnuplot"),
             "#!/bin/sh\necho 'gnuplot: \"x.gp\" line 3: unknown command' >&2\n"
             "touch \"$(echo \"$2\" | sed \"s/^png='\\([^']*\\)'.*/\\1/\")\"\nexit 1\n");
  std::filesystem::permissions(bin.file("gnuplot"), std::filesystem::perms::owner_all);
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", (bin.path() + ":/bin:/usr/bin").c_str(), 1);
  ::testing::internal::CaptureStderr();
  std::vector<Figure> figures = write_comparison_figures(dir.path(), c);
  const std::string err = ::testing::internal::GetCapturedStderr();
  setenv("PATH", saved.c_str(), 1);
  ASSERT_EQ(figures.size(), 5u);
  for (const Figure& f : figures) {
    EXPECT_FALSE(f.rendered);
    EXPECT_TRUE(std::filesystem::exists(dir.file(f.script)));
    EXPECT_FALSE(std::filesystem::exists(dir.file(f.png)));
  }
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("gnuplot could not draw loss.gp: line 3: unknown command"), std::string::npos)
      << err;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

TEST(ComparisonFigures, SameInputsGiveIdenticalScriptsAndData) {
  TempDir a, b;
  NoGnuplot no_gnuplot;
  write_comparison_figures(a.path(), fixture(a.path()));
  write_comparison_figures(b.path(), fixture(b.path()));
  size_t compared = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(a.path())) {
    const std::string rel = std::filesystem::relative(entry.path(), a.path()).string();
    if (entry.is_directory() || rel.find("seed") != std::string::npos) continue;
    EXPECT_EQ(read_text(entry.path().string()), read_text(b.file(rel))) << rel;
    ++compared;
  }
  // Five scripts; the data: loss 6 (F, each seed's evaluations and the reported loss, against
  // time and work), tilde 4, time_to_target, workers and staleness 1 each.
  EXPECT_EQ(compared, 5u + 13u);
}

TEST(ComparisonFigures, GnuplotRendersEveryFigureCleanly) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  TempDir dir;
  std::vector<Figure> figures = write_comparison_figures(dir.path(), fixture(dir.path()));
  ASSERT_EQ(figures.size(), 5u);
  for (const Figure& f : figures) {
    SCOPED_TRACE(f.script);
    EXPECT_TRUE(f.rendered);
    EXPECT_EQ(read_text(dir.file(f.png)).substr(0, 4), "\x89PNG");
    EXPECT_NE(read_text(dir.file(f.svg)).find("<svg"), std::string::npos);
    // Re-run by hand it draws without a message (no skipped data, no warnings).
    testing::CommandResult again =
        testing::run_command(fmt::format("cd '{}' && gnuplot -e \"png='/dev/null'; "
                                         "svg='/dev/null'\" {}",
                                         dir.path(), f.script));
    EXPECT_EQ(again.exit_code, 0);
    EXPECT_EQ(again.output, "");
  }
  // No temporary file is left behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

TEST(RunFigure, ShowsFAndFTildeWithTheSmoothedReportedLossAndTargets) {
  TempDir dir;
  NoGnuplot no_gnuplot;
  write_run(dir.path(), {{0.5, 3, 2.5}, {2, 2.5, 2}, {4, 2, 1.5}, {7, 1.8, 1.2}},
            falling_trace(7, 3.5, 1.9));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(write_run_figure(dir.path(), "asgd (seed 1)", {1.9, 1.5}, "full", Clock::kWall));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("gnuplot not found"), std::string::npos);
  const std::string script = read_text(dir.file("loss.gp"));
  EXPECT_NE(script.find("'asgd (seed 1)'"), std::string::npos);
  EXPECT_NE(script.find("F̃"), std::string::npos);
  EXPECT_NE(script.find("set label 91 'wall-clock time (s)'"), std::string::npos);
  EXPECT_EQ(script.find("simulated"), std::string::npos);
  // Three quantities on one y axis, each named in the legend.
  EXPECT_NE(script.find("set label 92 'loss'"), std::string::npos);
  for (const char* entry : {"title 'F (evaluated)'", "title 'F̃ (frequency-weighted, evaluated)'",
                            "title 'reported minibatch loss (smoothed)'"}) {
    EXPECT_NE(script.find(entry), std::string::npos) << entry;
  }
  EXPECT_NE(script.find("'target 1.9 on F'"), std::string::npos);
  EXPECT_NE(script.find("'target 1.5 on F'"), std::string::npos);
  EXPECT_EQ(script.find("log.csv"), std::string::npos);
  auto evals = read_blocks(dir.file("figures/loss-evals.dat"));
  ASSERT_EQ(evals.size(), 1u);
  ASSERT_EQ(evals[0].size(), 4u);
  EXPECT_EQ(evals[0][3], (std::vector<double>{7, 70, 1.8, 1.2}));
  auto trace = read_blocks(dir.file("figures/loss-reported.dat"));
  ASSERT_EQ(trace[0].size(), 50u);
  // Smoothed by a centred moving average: a straight line stays straight.
  EXPECT_NEAR(trace[0][25][2], 3.5 + (1.9 - 3.5) * 26 / 50.0, 1e-9);

  // A synchronous run has no F̃.
  TempDir sync;
  write_run(sync.path(), {{1, 4, kNaN}, {3, 3, kNaN}}, falling_trace(3, 5, 3));
  ::testing::internal::CaptureStderr();
  write_run_figure(sync.path(), "dgd (seed 1)", {}, "train", Clock::kSimulated);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(read_text(sync.file("loss.gp")).find("F̃"), std::string::npos);
  EXPECT_NE(read_text(sync.file("loss.gp")).find("set label 91 'simulated time (s)'"),
            std::string::npos);
}

TEST(RunFigure, AnFTildeEqualToFIsDrawnOnceAndTheLegendSaysSo) {
  TempDir dir;
  NoGnuplot no_gnuplot;
  write_run(dir.path(), {{0.5, 3, 3}, {2, 2.5, 2.5}, {4, 2, 2}}, falling_trace(4, 3.5, 1.9));
  ::testing::internal::CaptureStderr();
  write_run_figure(dir.path(), "asgd (seed 1)", {}, "full", Clock::kSimulated);
  ::testing::internal::GetCapturedStderr();
  const std::string script = read_text(dir.file("loss.gp"));
  // Every entry of the legend has a visible curve: no F̃ curve hidden under F's.
  EXPECT_EQ(script.find("title 'F̃ (frequency-weighted, evaluated)'"), std::string::npos) << script;
  EXPECT_NE(script.find("title 'F (evaluated; F̃ equals it here)'"), std::string::npos) << script;
}

TEST(RunFigure, TheXRangeHoldsTheLastEvaluation) {
  // A final evaluation at a time of more than 6 significant digits: a range rounded to 6 digits
  // (607.086), or written exactly (607.0863838962148, below the data file's 607.086384), would
  // leave it just outside the time panel.
  TempDir dir;
  NoGnuplot no_gnuplot;
  const double end = 607.0863838962148;  // written as 607.086384 in the data file
  write_run(dir.path(), {{1, 3, kNaN}, {end, 2, kNaN}}, falling_trace(end, 3.5, 1.9));
  ::testing::internal::CaptureStderr();
  write_run_figure(dir.path(), "dgd (seed 1)", {}, "full", Clock::kSimulated);
  ::testing::internal::GetCapturedStderr();
  const std::string script = read_text(dir.file("loss.gp"));
  std::vector<double> highs;
  const std::regex range("set xrange \\[([^:]+):([^\\]]+)\\]");
  for (auto it = std::sregex_iterator(script.begin(), script.end(), range);
       it != std::sregex_iterator(); ++it) {
    highs.push_back(std::stod((*it)[2]));
  }
  ASSERT_FALSE(highs.empty()) << script;
  // The time panel ends at or after the evaluation as the data file writes it (9 digits:
  // 607.086384), the work panel (10 units per second here) at or after its work.
  const auto evals = read_blocks(dir.file("figures/loss-evals.dat"));
  ASSERT_EQ(evals.size(), 1u);
  const double time = evals[0].back()[0], work = evals[0].back()[1];
  EXPECT_NEAR(time, end, 1e-5);
  // The panels in order: time, then work.
  ASSERT_EQ(highs.size(), 2u) << script;
  EXPECT_GE(highs[0], time) << script;
  EXPECT_LT(highs[0], time + 1) << script;
  EXPECT_GE(highs[1], work) << script;
}

TEST(RunFigure, SameInputsGiveIdenticalScriptsAndData) {
  TempDir a, b;
  NoGnuplot no_gnuplot;
  for (const TempDir* dir : {&a, &b}) {
    write_run(dir->path(), {{0.5, 3, 2.5}, {2, 2.5, 2}, {4, 2, 1.5}}, falling_trace(4, 3.5, 1.9));
    ::testing::internal::CaptureStderr();
    RunFigureJob job(dir->path(), "asgd, seed 1", {1.9}, "full", Clock::kSimulated);  // halves
    EXPECT_FALSE(job.finish());
    ::testing::internal::GetCapturedStderr();
  }
  for (const char* file : {"loss.gp", "figures/loss-evals.dat", "figures/loss-reported.dat"}) {
    EXPECT_EQ(read_text(a.file(file)), read_text(b.file(file))) << file;
    EXPECT_FALSE(read_text(a.file(file)).empty()) << file;
  }
}

TEST(RunFigure, RendersPngAndSvgWithGnuplot) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  TempDir dir;
  write_run(dir.path(), {{1, 4, kNaN}, {3, 3, kNaN}, {5, 2, kNaN}}, falling_trace(5, 5, 2));
  EXPECT_TRUE(write_run_figure(dir.path(), "dgd (seed 1)", {2.5}, "train", Clock::kSimulated));
  EXPECT_EQ(read_text(dir.file("loss.png")).substr(0, 4), "\x89PNG");
  EXPECT_NE(read_text(dir.file("loss.svg")).find("<svg"), std::string::npos);
  testing::CommandResult again = testing::run_command(fmt::format(
      "cd '{}' && gnuplot -e \"png='/dev/null'; svg='/dev/null'\" loss.gp", dir.path()));
  EXPECT_EQ(again.output, "");
}

}  // namespace
}  // namespace pacer
