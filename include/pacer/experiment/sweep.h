// `pacer sweep`: a comparison (compare.h) in every cell of a grid of configuration keys, and a
// regime map of where each method wins (DESIGN.md section 9).
//
// A sweep of axes K1 = (a, b), K2 = (x, y, z) has 6 cells, the first axis varying slowest; cell k
// is the comparison of the same methods, seeds, budget and tuning with K1 and K2 set to its
// values, in <out>/cells/<k>/ (its compare.csv, report.md, figures and runs, as pacer compare
// writes them). Cells are independent processes, so they can run side by side; each is
// deterministic, so the outputs below do not depend on how many ran at once.
//
// From the cells' compare.csv, a sweep writes in <out>:
//   sweep.csv   one row per cell and method: the cell, its axis values, the method's rank in the
//               cell by the comparison's criterion (compare.h: time to the first target with
//               missed seeds ranked last, or final F), its speedup over DGD (DGD's criterion
//               value divided by the method's; blank without DGD or when either is a lower
//               bound), then the method's compare.csv row as written;
//   report.md   the question, the regime map, a table of each cell's winner with its speedup
//               over DGD and over the runner-up, and links to every cell's report;
//   regime_map  (figure, plot.h conventions) for one or two axes: a tile per cell coloured by
//               the winning method, labelled with its name and the two speedups.
#pragma once

#include <string>
#include <vector>

#include "pacer/experiment/comparison.h"

namespace pacer {

struct SweepAxis {
  std::string key;
  std::vector<std::string> values;  // as written on the command line (TOML values)
};

// "KEY=v1,v2,...". An Error names --grid and what was expected otherwise (a key, '=', at least
// one non-empty value, no value twice).
SweepAxis parse_sweep_axis(const std::string& grid);

struct SweepCell {
  int index = 0;
  std::vector<std::string> values;  // one per axis
  std::string folder;               // "cells/<index>", relative to the sweep's folder
  // "KEY=value" for every axis: what --set gives the cell's comparison.
  std::vector<std::string> assignments(const std::vector<SweepAxis>& axes) const;
};

// Every combination of the axes' values, the first axis varying slowest. An Error when there
// are no axes, more than three, or one key twice.
std::vector<SweepCell> sweep_cells(const std::vector<SweepAxis>& axes);

// One cell's comparison as read back from its compare.csv.
struct SweepCellResult {
  bool has_target = false;               // the criterion is time to target (else final F)
  std::vector<MethodResult> methods;     // spec, tuned value, counts and estimates
  std::vector<std::string> csv_rows;     // each method's compare.csv row, verbatim
  std::vector<int> rank;                 // 1 = winner, by criterion_score (ties: list order)
  std::vector<double> speedup_over_dgd;  // NaN: no DGD, or a lower bound on either side
  int winner = -1, runner_up = -1;       // indices into methods (-1: none)
  double winner_over_runner_up = kNotAvailable;
};

struct SweepResult {
  std::string csv;       // sweep.csv
  std::string markdown;  // the winners' table, as printed and in report.md
};

// Reads <out_dir>/<cell.folder>/compare.csv of every cell (an Error naming the file when one is
// missing or malformed), writes sweep.csv, report.md and the regime map into out_dir, and returns
// the tables. `name` titles the report and the figure (the config's stem).
SweepResult write_sweep(const std::string& out_dir, const std::string& name,
                        const std::vector<SweepAxis>& axes, const std::vector<SweepCell>& cells);

// One cell's compare.csv text, parsed and ranked; `source` names it in errors.
SweepCellResult read_cell_result(const std::string& csv, const std::string& source);

}  // namespace pacer
