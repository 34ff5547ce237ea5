// pacer stragglers' outputs (stragglers_report.h): the printed report, stragglers.md, .json, .csv,
// trace.csv and the figure.

#include "pacer/report/stragglers_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/report/figure_data.h"
#include "pacer/report/job_log.h"
#include "pacer/report/plot.h"
#include "pacer/timing/fit.h"

namespace pacer {
namespace {

// The most steps the slowness map draws (a longer trace is shown as the largest ratio per bin).
constexpr size_t kMapSteps = 600;
constexpr int kFigureWidth = 1500, kFigureHeight = 560;
constexpr const char* kChronicColour = "#D55E00";
constexpr const char* kOtherColour = "#0072B2";

std::string seconds(double s) { return fmt::format("{:.4g}", s); }

// A gnuplot single-quoted string: a quote is written twice.
std::string gp_string(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string percent(double share) { return fmt::format("{:.1f} %", 100 * share); }

// ---- Reading. ----

// Per worker, the synchronous steps it decided according to log.csv (rows with a wait value);
// `steps` the rows counted.
std::vector<int64_t> decided_from_log(const std::string& path, int workers, int64_t& steps) {
  const figure::Table log = figure::read_table(path);
  std::vector<int64_t> decided(workers, 0);
  steps = 0;
  const std::vector<double>* worker = log.column("worker");
  const std::vector<double>* wait = log.column("wait");
  if (!worker || !wait) fail("{}: no worker and wait columns (not a pacer log.csv)", path);
  for (size_t r = 0; r < log.rows(); ++r) {
    const double w = (*worker)[r];
    if (std::isnan((*wait)[r]) || !(w >= 0) || w >= workers) continue;
    ++decided[static_cast<size_t>(w)];
    ++steps;
  }
  return decided;
}

DurationTrace trace_of_jobs(const std::string& path) {
  return parse_trace(trace_from_jobs_csv(path).csv, path, kMaxTraceWorkers);
}

void check_every_worker(const DurationTrace& trace) {
  if (trace.rows.empty()) fail("{}: no rows", trace.source);
  for (int i = 0; i < trace.workers(); ++i) {
    if (trace.rows[i].empty()) {
      fail("{}: no rows for worker {} (the report covers workers 0..{})", trace.source, i,
           trace.workers() - 1);
    }
  }
}

// ---- Text. ----

// "3 (slow on 33.1 % of its rows, 3.02 × M, in spells of 47.5 rows)".
std::string named(const WorkerStragglers& w) {
  std::string text = fmt::format("{} (slow on {} of its rows at {:.2f} × M", w.worker,
                                 percent(w.slow_share), w.slowdown);
  if (w.slow_spells > 0) {
    text += fmt::format(", in spells of {:.1f} rows on average, the longest {}", w.mean_spell,
                        w.longest_spell);
  }
  return text + ")";
}

std::string kind_lines(const StragglerAnalysis& a) {
  std::vector<std::string> chronic, one_off;
  for (const WorkerStragglers& w : a.workers) {
    if (w.kind == StragglerKind::kChronic) chronic.push_back(named(w));
    if (w.kind == StragglerKind::kOneOff) one_off.push_back(std::to_string(w.worker));
  }
  std::string text = chronic.empty()
                         ? "chronic: none\n"
                         : fmt::format("chronic: workers {}\n", fmt::join(chronic, "; "));
  text += one_off.empty() ? "one-off: none\n"
                          : fmt::format("one-off (slow now and then, no spells): workers {}\n",
                                        fmt::join(one_off, ", "));
  return text;
}

std::string table_text(const StragglerAnalysis& a) {
  std::string text =
      fmt::format("{:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>7} {:>9} {:>8} {:>8}  {}\n",
                  "worker", "jobs", "min", "median", "p95", "max", "slow", "slowdown", "spells",
                  "mean run", "longest", "decided", "kind");
  for (const WorkerStragglers& w : a.workers) {
    text += fmt::format(
        "{:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>7} {:>9} {:>8} {:>8}  {}\n", w.worker,
        w.rows, seconds(w.min), seconds(w.median), seconds(w.p95), seconds(w.max),
        percent(w.slow_share), w.slowdown > 0 ? fmt::format("{:.2f}", w.slowdown) : "-",
        w.slow_spells, w.mean_spell > 0 ? fmt::format("{:.1f}", w.mean_spell) : "-",
        w.longest_spell, w.decided, straggler_kind_name(w.kind));
  }
  return text;
}

std::string slowest_line(const StragglerAnalysis& a, size_t top) {
  std::vector<std::string> entries;
  for (int i : a.slowest(top)) {
    entries.push_back(fmt::format("{} ({} s)", i, seconds(a.workers[i].mean)));
  }
  return fmt::format("slowest {} by mean job time: {}\n", entries.size(), fmt::join(entries, ", "));
}

std::string co_occurrence_line(const StragglerAnalysis& a) {
  if (a.shared_steps == 0) return "co-occurrence: no step holds rows of two workers\n";
  return fmt::format(
      "steps with two or more slow workers: {} of {} ({} if each worker straggled independently "
      "at its own rate)\n",
      percent(a.co_occurrence), a.shared_steps, percent(a.co_occurrence_independent));
}

std::string next_lines(const std::string& trace_path) {
  return fmt::format(
      "next: advise with this trace: pacer advise CONFIG --trace {0}\n"
      "      fit the timing models to it: pacer fit {0}\n"
      "      replay it for one method, keeping which workers were slow together: pacer run CONFIG "
      "--set timing.model=trace --set timing.file={0} --set timing.replay=block\n",
      trace_path);
}

// ---- The figure. ----

std::string worker_data(const StragglerAnalysis& a) {
  std::string text = "# worker min median p95 max colour (0xRRGGBB): job times in seconds\n";
  for (const WorkerStragglers& w : a.workers) {
    text += fmt::format(
        "{} {} {} {} {} {}\n", w.worker, figure::data_number(w.min), figure::data_number(w.median),
        figure::data_number(w.p95), figure::data_number(w.max),
        figure::colour_value(w.kind == StragglerKind::kChronic ? kChronicColour : kOtherColour));
  }
  return text;
}

// The columns of the slowness map: the trace's steps, at most kMapSteps.
size_t map_bins(const DurationTrace& trace) { return std::min(kMapSteps, step_grid(trace).size()); }

// "step-bin worker ratio": each worker's largest duration per unit / M in each bin of steps.
std::string map_data(const DurationTrace& trace, const StragglerAnalysis& a) {
  const StepGrid grid = step_grid(trace);
  const size_t bins = std::min(kMapSteps, grid.size());
  std::string text = fmt::format("# step-bin worker ratio: bins of {} of the {} steps\n",
                                 (grid.size() + bins - 1) / bins, grid.size());
  for (int i = 0; i < trace.workers(); ++i) {
    std::vector<double> ratio(bins, NAN);
    for (size_t k = 0; k < grid.size(); ++k) {
      if (!grid.own[i][k]) continue;
      const size_t b = k * bins / grid.size();
      const double r = trace.rows[i][grid.at[i][k]] / a.median;
      ratio[b] = std::isnan(ratio[b]) ? r : std::max(ratio[b], r);
    }
    for (size_t b = 0; b < bins; ++b) {
      text += fmt::format("{} {} {}\n", b, i, figure::data_number(ratio[b]));
    }
    text += "\n";
  }
  return text;
}

std::string figure_body(const DurationTrace& trace, const StragglerAnalysis& a) {
  std::vector<double> times;
  for (const WorkerStragglers& w : a.workers) times.insert(times.end(), {w.min, w.max});
  const figure::Axis y = figure::fit_axis(times);
  const int n = trace.workers();
  return fmt::format(
      "set multiplot layout 1,2 title {}\n"
      "set grid lc rgb '#dddddd'\n"
      "set title 'job time per worker: whiskers min-max, box median-p95 (chronic in red)'\n"
      "set xlabel 'worker'\nset ylabel 'seconds'\n"
      "set xrange [-0.7:{}]\n{}set yrange [{}:{}]\nset boxwidth 0.5\n"
      "plot 'figures/stragglers-workers.dat' using 1:3:2:5:4:6 with candlesticks whiskerbars "
      "lc rgb variable lw 1.5*pscale notitle, \\\n"
      "     '' using 1:3:3:3:3:6 with candlesticks lc rgb variable lw 3*pscale notitle\n"
      "unset logscale y\n"
      "set title 'slowness over steps: duration per unit / M (the pooled median)'\n"
      "set xlabel 'step (bins)'\nset ylabel 'worker'\nset yrange [{}:-0.5]\nset xrange [-0.5:{}]\n"
      "set cbrange [1:4]\nset palette defined (1 '#ffffff', 1.5 '#fdd49e', 2.5 '#ef6548', "
      "4 '#7f0000')\n"
      "plot 'figures/stragglers-map.dat' using 1:2:3 with image notitle\n"
      "unset multiplot\n",
      gp_string(fmt::format("stragglers in {}", trace.source)), n - 0.3,
      y.log ? "set logscale y\n" : "", figure::data_number(y.low), figure::data_number(y.high),
      n - 0.5, map_bins(trace) - 0.5);
}

// ---- Markdown and CSV. ----

std::string markdown(const StragglersInput& in, size_t top, const std::string& figure) {
  const StragglerAnalysis& a = in.analysis;
  std::string text = fmt::format(
      "# Stragglers in {}\n\nA {} of {} workers and {} jobs. M = {} s per unit, the median of "
      "all rows; a row is slow above {} × M.\n\n",
      in.trace.source, in.kind, in.trace.workers(), in.trace.size(), seconds(a.median),
      kSlowFactor);
  text +=
      "| worker | jobs | min (s) | median (s) | p95 (s) | max (s) | slow | slowdown | spells | "
      "mean spell | lag-1 autocorrelation | decided | kind |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const WorkerStragglers& w : a.workers) {
    text +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    w.worker, w.rows, seconds(w.min), seconds(w.median), seconds(w.p95),
                    seconds(w.max), percent(w.slow_share),
                    w.slowdown > 0 ? fmt::format("{:.2f} × M", w.slowdown) : "–", w.slow_spells,
                    w.mean_spell > 0 ? fmt::format("{:.1f}", w.mean_spell) : "–", w.longest_spell,
                    std::isnan(w.autocorrelation) ? "–" : fmt::format("{:.2f}", w.autocorrelation),
                    w.decided, straggler_kind_name(w.kind));
  }
  text += "\n" + slowest_line(a, top) + "\n" + kind_lines(a) + "\n" + co_occurrence_line(a);
  text += fmt::format(
      "\nDecided: {} ({} steps).\n\nA block replay (timing.replay = \"block\") of "
      "this trace uses blocks of {}.\n",
      a.decided_rule, a.decided_steps, a.block.describe());
  if (!figure.empty()) text += fmt::format("\n![stragglers]({})\n", figure);
  text += fmt::format(
      "\n## Definitions\n\nA worker is **chronic** when it is slow on at least half of its rows, "
      "or when its slow rows come in spells: fewer spells than a random order of its rows would "
      "give, by the exact runs test at level {} / n (Bonferroni over the n workers); **one-off** "
      "when it is slow now and then without spells. Percentiles are nearest-rank. "
      "(include/pacer/timing/stragglers.h)\n\n```\n{}```\n",
      kChronicLevel, next_lines("trace.csv"));
  return text;
}

std::string csv_text(const StragglerAnalysis& a) {
  std::string text =
      "worker,jobs,min,median,p95,max,mean,relative_median,slow_share,slowdown,slow_spells,"
      "mean_spell,longest_spell,autocorrelation,spell_p_value,decided,kind\n";
  for (const WorkerStragglers& w : a.workers) {
    text += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", w.worker, w.rows,
                        w.min, w.median, w.p95, w.max, w.mean, w.relative_median, w.slow_share,
                        w.slowdown, w.slow_spells, w.mean_spell, w.longest_spell,
                        std::isnan(w.autocorrelation) ? "" : fmt::format("{}", w.autocorrelation),
                        w.spell_p_value, w.decided, straggler_kind_name(w.kind));
  }
  return text;
}

// The trace as CSV ("worker,duration,step,units"), steps and units as the trace has them.
std::string trace_csv(const DurationTrace& trace) {
  std::string text = "worker,duration,step,units\n";
  for (int i = 0; i < trace.workers(); ++i) {
    for (size_t j = 0; j < trace.rows[i].size(); ++j) {
      text += fmt::format("{},{},{},{}\n", i, trace.rows[i][j], trace.step(i, j),
                          trace.job_units(i, j));
    }
  }
  return text;
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nullptr; }

}  // namespace

StragglersInput read_stragglers_input(const std::string& input) {
  StragglersInput in;
  std::error_code ec;
  if (std::filesystem::is_directory(input, ec)) {
    const std::string jobs = input + "/jobs.csv";
    if (!std::filesystem::exists(jobs, ec)) {
      fail("{}: no jobs.csv in this folder (a run records it unless record.jobs = false)", input);
    }
    in.kind = "run folder";
    in.trace = trace_of_jobs(jobs);
  } else if (is_jobs_csv(input)) {
    in.kind = "jobs.csv";
    in.trace = trace_of_jobs(input);
  } else {
    in.kind = "trace";
    in.trace = read_trace_file(input, kMaxTraceWorkers, "trace");
  }
  check_every_worker(in.trace);
  in.analysis = analyze_stragglers(in.trace);
  const int n = in.trace.workers();
  int64_t steps = 0;
  if (in.kind == "run folder" && std::filesystem::exists(input + "/log.csv", ec)) {
    const std::vector<int64_t> decided = decided_from_log(input + "/log.csv", n, steps);
    set_decided(in.analysis, decided,
                steps > 0 ? "the decisive worker of each synchronous step (log.csv)"
                          : "an asynchronous run: no step waits for one worker (log.csv)");
  } else if (in.kind != "trace") {
    const std::string path = in.kind == "run folder" ? input + "/jobs.csv" : input;
    const std::vector<int64_t> decided = decided_from_jobs(read_jobs_csv(path), n, steps);
    set_decided(in.analysis, decided,
                "the worker whose used job of each step was delivered last (jobs.csv; for a "
                "synchronous run)");
  }
  return in;
}

std::string stragglers_text(const StragglersInput& in, size_t top) {
  const StragglerAnalysis& a = in.analysis;
  return fmt::format(
      "stragglers in {} ({}): {} workers, {} jobs; M = {} s per unit (the median of all rows); a "
      "row is slow above {} × M\n{}{}{}{}decided: {} ({} steps)\nblock replay: blocks of {}\n",
      in.trace.source, in.kind, in.trace.workers(), in.trace.size(), seconds(a.median), kSlowFactor,
      table_text(a), slowest_line(a, top), kind_lines(a), co_occurrence_line(a), a.decided_rule,
      a.decided_steps, a.block.describe());
}

nlohmann::json stragglers_json(const StragglersInput& in, size_t top) {
  const StragglerAnalysis& a = in.analysis;
  nlohmann::json out;
  out["source"] = in.trace.source;
  out["input"] = in.kind;
  out["median_duration_per_unit"] = a.median;
  out["slow_factor"] = kSlowFactor;
  for (const WorkerStragglers& w : a.workers) {
    out["workers"].push_back({{"worker", w.worker},
                              {"jobs", w.rows},
                              {"min", w.min},
                              {"median", w.median},
                              {"p95", w.p95},
                              {"max", w.max},
                              {"mean", w.mean},
                              {"relative_median", w.relative_median},
                              {"slow_share", w.slow_share},
                              {"slowdown", w.slowdown},
                              {"slow_spells", w.slow_spells},
                              {"mean_spell", w.mean_spell},
                              {"longest_spell", w.longest_spell},
                              {"autocorrelation", number_or_null(w.autocorrelation)},
                              {"spell_p_value", w.spell_p_value},
                              {"decided", w.decided},
                              {"kind", straggler_kind_name(w.kind)}});
  }
  out["slowest"] = a.slowest(top);
  out["chronic"] = a.chronic();
  out["co_occurrence"] = {{"steps", a.shared_steps},
                          {"two_or_more_slow", a.co_occurrence},
                          {"if_independent", a.co_occurrence_independent}};
  out["decided"] = {{"rule", a.decided_rule}, {"steps", a.decided_steps}};
  out["block_length"] = {{"steps", a.block.length}, {"text", a.block.describe()}};
  return out;
}

std::string run_stragglers(const std::string& input, const std::string& out_dir, size_t top) {
  const StragglersInput in = read_stragglers_input(input);
  make_directories(out_dir);
  write_file_atomic(out_dir + "/trace.csv", trace_csv(in.trace));
  const Figure figure = figure::write_single_figure(
      out_dir, "stragglers",
      "Each worker's job times (whiskers min to max, box median to p95; chronic workers in red) "
      "and each row's duration per unit over M, workers by steps.",
      kFigureWidth, kFigureHeight, figure_body(in.trace, in.analysis),
      {{"figures/stragglers-workers.dat", worker_data(in.analysis)},
       {"figures/stragglers-map.dat", map_data(in.trace, in.analysis)}});
  write_file_atomic(out_dir + "/stragglers.csv", csv_text(in.analysis));
  write_file_atomic(out_dir + "/stragglers.json", stragglers_json(in, top).dump(2) + "\n");
  write_file_atomic(out_dir + "/stragglers.md",
                    markdown(in, top, figure.rendered ? figure.png : ""));
  return stragglers_text(in, top) + next_lines(out_dir + "/trace.csv") +
         fmt::format(
             "report: {0}/stragglers.md; table: {0}/stragglers.csv, {0}/stragglers.json; "
             "figure: {0}/{1}\n",
             out_dir, figure.rendered ? figure.png : figure.script);
}

}  // namespace pacer
