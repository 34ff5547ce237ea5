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

#include "pacer/experiment/comparison.h"
#include "pacer/experiment/figure_data.h"
#include "pacer/experiment/plot.h"
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

// One run folder: evals.csv (work units = 10 × time), trace.csv, summary.json.
void write_run(const std::string& folder, const std::vector<FakeEval>& evals,
               const std::vector<std::pair<double, double>>& trace,
               const std::string& staleness_json = R"({"0": 30, "1": 10})") {
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
  write_text(folder + "/summary.json", fmt::format(R"({{"status": "max_steps", "time": 9.0,
  "engine_stats": {{"busy_time_per_worker": [9.0, 6.0, 3.0], "idle_time_per_worker": [0.0, 3.0, 6.0]}},
  "method_stats": {{"staleness_histogram": {}}}}})",
                                                   staleness_json));
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
  write_run(dir + "/alpha/seed2", {{2, 5, kNaN}, {4, 3.5, kNaN}, {6, 2.5, kNaN}, {8, 1.5, kNaN}},
            falling_trace(8, 5.5, 1.4));
  write_run(dir + "/beta_k=2/seed1", {{0.5, 3, 2.5}, {2, 2.5, 2}, {4, 2, 1.5}, {7, 1.8, 1.2}},
            falling_trace(7, 3.5, 1.9), R"({"0": 5, "1": 20, "2": 12, "3": 3})");
  write_run(dir + "/beta_k=2/seed2", {{1, 3.2, 2.6}, {3, 2.4, 1.9}, {5, 2.1, 1.4}, {7.5, 1.9, 1.3}},
            falling_trace(7.5, 3.6, 2.0), R"({"0": 4, "1": 22, "2": 10, "3": 4})");
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
  alpha.time_to_target = estimate({6, 8});
  MethodResult beta;
  beta.spec = "beta:k=2";
  beta.folder = "beta_k=2";
  beta.asynchronous = true;
  beta.reached = 1;
  beta.time_to_target = estimate({7, 9}, 1);
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

// The blocks of a data file: rows of numbers (comments skipped; blocks split at blank lines).
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
    while (fields >> f) row.push_back(f == "NaN" ? kNaN : std::stod(f));
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
  // The reported loss: a block per method, smoothed, of the same colour, fainter.
  auto reported = read_blocks(dir.file("figures/loss-reported-time.dat"));
  ASSERT_EQ(reported.size(), 2u);
  const std::string script = read_text(dir.file("loss.gp"));
  EXPECT_NE(script.find("'figures/loss-reported-time.dat' index 0 using 1:2 with lines lw 1.5 "
                        "lc rgb '#A80072B2'"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("'figures/loss-F-time.dat' index 0 using 1:2 with lines lw 2.5 lc rgb "
                        "'#0072B2'"),
            std::string::npos);
  // The band, the target line labelled with what it is on, the title with name and budget.
  EXPECT_NE(script.find("using 1:3:4 with filledcurves"), std::string::npos);
  EXPECT_NE(script.find("'target 1.6 on the train loss'"), std::string::npos);
  EXPECT_NE(script.find("fixture: training loss (100 steps, seeds 1–2)"), std::string::npos);
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
  // workers: busy / (busy + idle) per worker, first seed.
  auto workers = read_blocks(dir.file("figures/workers.dat"));
  ASSERT_EQ(workers.size(), 1u);
  ASSERT_EQ(workers[0].size(), 3u);
  EXPECT_NEAR(workers[0][1][1], 6.0 / 9.0, 1e-8);
  EXPECT_NEAR(workers[0][2][2], 3.0 / 9.0, 1e-8);
  // staleness: fractions per age, first seed: beta's 5, 20, 12, 3 of 40.
  auto staleness = read_blocks(dir.file("figures/staleness.dat"));
  ASSERT_EQ(staleness[0].size(), 4u);
  EXPECT_DOUBLE_EQ(staleness[0][1][2], 0.5);
  EXPECT_DOUBLE_EQ(staleness[0][0][1], 0.75);
  EXPECT_DOUBLE_EQ(staleness[0][3][1], 0.0);  // alpha had no gradient 3 steps old
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

TEST(ComparisonFigures, NoTwoOfTwelveMethodsShareAColour) {
  std::set<std::string> colours;
  for (size_t i = 0; i < figure::kDistinctColours; ++i) colours.insert(figure::method_colour(i));
  EXPECT_EQ(colours.size(), figure::kDistinctColours);
  EXPECT_GE(figure::kDistinctColours, 12u);
  std::set<std::pair<std::string, int>> styles;
  for (size_t i = 0; i < 40; ++i) styles.insert({figure::method_colour(i), figure::method_dash(i)});
  EXPECT_EQ(styles.size(), 40u);  // beyond the palette, dash patterns tell repeats apart

  TempDir dir;
  NoGnuplot no_gnuplot;
  Comparison c = fixture(dir.path());
  MethodResult base = c.methods[0];
  c.methods.clear();
  for (int m = 0; m < 12; ++m) {
    MethodResult r = base;
    r.spec = fmt::format("method{}", m);
    c.methods.push_back(r);  // all read alpha's runs
  }
  write_comparison_figures(dir.path(), c);
  for (const char* script : {"loss.gp", "time_to_target.gp", "workers.gp", "staleness.gp"}) {
    SCOPED_TRACE(script);
    const std::string text = read_text(dir.file(script));
    std::map<std::string, std::string> colour_of;  // spec -> colour of its legend entry or bar
    std::regex titled("lc rgb '(#[0-9A-F]{6})'[^\\n]*title '(method[0-9]+)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), titled);
         it != std::sregex_iterator(); ++it) {
      colour_of[(*it)[2]] = (*it)[1];
    }
    if (std::string(script) == "time_to_target.gp") {
      std::regex bar("every ::([0-9]+)::[0-9]+ [^\\n]*lc rgb '(#[0-9A-F]{6})' notitle");
      for (auto it = std::sregex_iterator(text.begin(), text.end(), bar);
           it != std::sregex_iterator(); ++it) {
        colour_of["method" + (*it)[1].str()] = (*it)[2];
      }
    }
    EXPECT_EQ(colour_of.size(), 12u) << text;
    std::set<std::string> distinct;
    for (const auto& [spec, colour] : colour_of) distinct.insert(colour);
    EXPECT_EQ(distinct.size(), 12u);
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
  // position, mean, low, high, censored, reached, seeds, label height, labels, method
  EXPECT_EQ(alpha.rfind("0 7 ", 0), 0u) << alpha;
  EXPECT_NE(alpha.find("\"7.00 s\" \"2/2 reached\""), std::string::npos) << alpha;
  EXPECT_NE(beta.find("\"≥ 8.00 s\" \"1/2 reached\""), std::string::npos) << beta;
  const std::string script = read_text(dir.file("time_to_target.gp"));
  std::istringstream clauses(script);
  std::string alpha_bar, beta_bar;
  while (std::getline(clauses, line)) {
    if (line.find("every ::0::0") != std::string::npos) alpha_bar += line;
    if (line.find("every ::1::1") != std::string::npos) beta_bar += line;
  }
  EXPECT_EQ(alpha_bar.find("pattern"), std::string::npos);
  EXPECT_NE(alpha_bar.find("fs solid 0.85"), std::string::npos);
  EXPECT_NE(beta_bar.find("fs transparent pattern"), std::string::npos);     // hatched
  EXPECT_NE(beta_bar.find("fs transparent solid 0.35"), std::string::npos);  // lighter
  EXPECT_NE(script.find("($4-$3) with vectors nohead"), std::string::npos);  // error bars
  EXPECT_NE(script.find("lower bound"), std::string::npos);  // the legend says what hatching means
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
  EXPECT_FALSE(write_run_figure(dir.path(), "asgd (seed 1)", {1.9, 1.5}, "full"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("gnuplot not found"), std::string::npos);
  const std::string script = read_text(dir.file("loss.gp"));
  EXPECT_NE(script.find("'asgd (seed 1)'"), std::string::npos);
  EXPECT_NE(script.find("F̃"), std::string::npos);
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
  write_run_figure(sync.path(), "dgd (seed 1)", {}, "train");
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(read_text(sync.file("loss.gp")).find("F̃"), std::string::npos);
}

TEST(RunFigure, SameInputsGiveIdenticalScriptsAndData) {
  TempDir a, b;
  NoGnuplot no_gnuplot;
  for (const TempDir* dir : {&a, &b}) {
    write_run(dir->path(), {{0.5, 3, 2.5}, {2, 2.5, 2}, {4, 2, 1.5}}, falling_trace(4, 3.5, 1.9));
    ::testing::internal::CaptureStderr();
    RunFigureJob job(dir->path(), "asgd, seed 1", {1.9}, "full");  // the two halves
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
  EXPECT_TRUE(write_run_figure(dir.path(), "dgd (seed 1)", {2.5}, "train"));
  EXPECT_EQ(read_text(dir.file("loss.png")).substr(0, 4), "\x89PNG");
  EXPECT_NE(read_text(dir.file("loss.svg")).find("<svg"), std::string::npos);
  testing::CommandResult again = testing::run_command(fmt::format(
      "cd '{}' && gnuplot -e \"png='/dev/null'; svg='/dev/null'\" loss.gp", dir.path()));
  EXPECT_EQ(again.output, "");
}

}  // namespace
}  // namespace pacer
