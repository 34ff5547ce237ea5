// The figures of a comparison (plot.h: write_comparison_figures), one file per kind:
// figure_loss.cc (loss, tilde), figure_time_to_target.cc, figure_workers.cc and
// figure_staleness.cc; figure_runs.cc reads what they are drawn from.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "figure_script.h"
#include "pacer/report/comparison.h"
#include "pacer/report/figure_data.h"
#include "pacer/report/figure_palette.h"
#include "pacer/report/plot.h"

namespace pacer::figure {

// One run's files.
struct SeedFiles {
  uint64_t seed = 0;
  std::optional<Table> evals, trace;
  std::optional<nlohmann::json> summary;
};

struct MethodFiles {
  std::vector<SeedFiles> seeds;  // the method's seeds that did not diverge
  int diverged_left_out = 0;
};

// What the figures of a comparison are drawn from.
struct ComparisonRuns {
  const Comparison* c = nullptr;
  std::vector<MethodFiles> methods;  // per c->methods
  std::vector<MethodStyle> styles;   // per c->methods (figure_palette.h)
  // The clock of the runs' times (summary.json "clock"); Clock::kUnknown when a summary does not
  // say or two disagree.
  Clock clock = Clock::kUnknown;
};

// Reads every run's evals.csv, trace.csv and summary.json; `missing` collects what could not be
// read (those runs are drawn without it).
ComparisonRuns read_comparison_runs(const std::string& dir, const Comparison& c,
                                    std::vector<std::string>& missing);

// A comparison figure's title, two lines: "<name>: <what>" and what ran, "<k> methods, <seeds>,
// <budget> per run[, stopping at the target]", `methods` and `seeds` being those the figure
// draws. Written for gnuplot's double-quoted strings (gp_lines).
std::string comparison_title(const ComparisonRuns& runs, const std::string& what, size_t methods,
                             const std::vector<uint64_t>& seeds);

// "; fewer seeds for pgc-cr:s=2 (seed 1)": the methods of `drawn` (seeds per method, empty =
// not drawn) whose seeds are not all of `seeds`; "" when none.
std::string fewer_seeds_note(const Comparison& c, const std::vector<std::vector<uint64_t>>& drawn);

// "lw <width> lc rgb '<colour>' dt <dash>": method m's line.
std::string line_style(const ComparisonRuns& runs, size_t m, double width);

// The summary.json numbers of a list, NaN for an entry that is not a number.
std::vector<double> json_doubles(const nlohmann::json& j);

std::optional<Figure> loss_figure(const std::string& dir, const ComparisonRuns& runs,
                                  Rendering& rendering);
std::optional<Figure> tilde_figure(const std::string& dir, const ComparisonRuns& runs,
                                   Rendering& rendering);
std::optional<Figure> time_to_target_figure(const std::string& dir, const ComparisonRuns& runs,
                                            Rendering& rendering);
std::optional<Figure> workers_figure(const std::string& dir, const ComparisonRuns& runs,
                                     Rendering& rendering);
std::optional<Figure> staleness_figure(const std::string& dir, const ComparisonRuns& runs,
                                       Rendering& rendering);

}  // namespace pacer::figure
