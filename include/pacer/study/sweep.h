// `pacer sweep`: a comparison (compare.h) in every cell of a grid of configuration keys, and a
// regime map of where each method wins (DESIGN.md section 9).
//
// A sweep of axes K1 = (a, b), K2 = (x, y, z) has 6 cells, the first axis varying slowest; cell k
// is the comparison of the same methods, seeds, budget and tuning with K1 and K2 set to its
// values, in <out>/cells/<k>/ (its compare.csv, report.md, figures and runs, as pacer compare
// writes them). Cells are independent processes, so they can run side by side; each is
// deterministic, so the outputs below do not depend on how many ran at once. The same sweep again
// (after an interrupt or a crash) continues every cell's comparison (compare.h: finished runs
// reused, an interrupted one resumed).
//
// From the cells' compare.csv, a sweep writes in <out>:
//   sweep.csv   one row per cell and method: the cell, its axis values, the method's rank in the
//               cell by the comparison's criterion (compare.h: time to the first target with
//               missed seeds ranked last, or final F), its speedup over DGD (paired over seeds:
//               the geometric mean of DGD's criterion value over the method's, with its 95 %
//               interval; blank without DGD), then the method's compare.csv row as written;
//   report.md   the question, the regime map, a table of each cell's verdict (verdict.h: the
//               winner only where the runs decide it, else "undecided between ..." or "no method
//               reached the target", and what would decide it) with the winner's speedup over
//               DGD, and links to every cell's report;
//   regime_map  (figure, plot.h conventions) for one or two axes: a tile per cell coloured by
//               the winning method and labelled with its name and speedup over DGD; an
//               undecided cell is grey and names the tied methods.
#pragma once

#include <string>
#include <vector>

#include "pacer/report/comparison.h"
#include "pacer/report/verdict.h"

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

// One cell's comparison as read back from its runs.csv and compare.csv.
struct SweepCellResult {
  Comparison comparison;              // from runs.csv: every seed of every method
  Verdict verdict;                    // verdict.h, on `comparison`
  std::vector<std::string> csv_rows;  // each method's compare.csv row, verbatim
  std::vector<int> rank;              // 1 = first, by criterion_score (ties: list order)
  // DGD's criterion over the method's, paired over seeds (a speedup when the criterion is a time);
  // empty without DGD.
  std::vector<Estimate> speedup_over_dgd;
  bool has_target() const { return !comparison.targets.empty(); }
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

// The axes and cells of a sweep that write_sweep wrote in `sweep_dir`, read back from its
// sweep.csv: each axis's key (its values are the cells'), and each cell's index, values and folder,
// in the file's order. An Error names the file when it is absent or not a sweep's.
struct SweepLayout {
  std::vector<std::string> keys;
  std::vector<SweepCell> cells;
};
SweepLayout read_sweep_layout(const std::string& sweep_dir);

// One cell's results: `runs_csv` (its runs.csv) and `compare_csv` (its compare.csv, whose rows
// go into sweep.csv), parsed, ranked and decided; `source` names the cell's folder in errors.
SweepCellResult read_cell_result(const std::string& runs_csv, const std::string& compare_csv,
                                 const std::string& source);

}  // namespace pacer
