#include "pacer/study/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/report/plot.h"

namespace pacer {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::string format_ratio(const Estimate& r) {
  if (r.empty()) return "—";
  return "×" + format_ratio_estimate(r, "", RatioDigits::kTwoDecimals) +
         (r.has_interval() && r.includes(1) ? " (tie not excluded)" : "");
}

// What the ratio means under the criterion.
std::string ratio_meaning(bool has_target) {
  return has_target ? "speedup over DGD: DGD's time to target over the method's, paired over seeds"
                    : "DGD's final F over the method's, paired over seeds";
}

}  // namespace

SweepAxis parse_sweep_axis(const std::string& grid) {
  const size_t eq = grid.find('=');
  if (eq == std::string::npos || eq == 0) {
    fail("--grid {}: expected KEY=v1,v2,... (a configuration key, '=', comma-separated values)",
         grid);
  }
  SweepAxis axis{grid.substr(0, eq), split(grid.substr(eq + 1), ',')};
  std::set<std::string> seen;
  for (const std::string& v : axis.values) {
    if (v.empty()) fail("--grid {}: an empty value (expected KEY=v1,v2,...)", grid);
    if (!seen.insert(v).second) fail("--grid {}: the value {} twice", grid, v);
  }
  return axis;
}

std::vector<std::string> SweepCell::assignments(const std::vector<SweepAxis>& axes) const {
  std::vector<std::string> out;
  for (size_t a = 0; a < axes.size(); ++a) out.push_back(axes[a].key + "=" + values[a]);
  return out;
}

std::vector<SweepCell> sweep_cells(const std::vector<SweepAxis>& axes) {
  if (axes.empty() || axes.size() > 3) {
    fail("--grid: expected one to three grids (KEY=v1,v2,...), got {}", axes.size());
  }
  for (size_t a = 0; a < axes.size(); ++a) {
    for (size_t b = 0; b < a; ++b) {
      if (axes[a].key == axes[b].key) fail("--grid: the key {} twice", axes[a].key);
    }
  }
  size_t total = 1;
  for (const SweepAxis& axis : axes) total *= axis.values.size();
  std::vector<SweepCell> cells(total);
  for (size_t k = 0; k < total; ++k) {
    SweepCell& cell = cells[k];
    cell.index = static_cast<int>(k);
    cell.folder = fmt::format("cells/{}", k);
    size_t rest = k;
    cell.values.resize(axes.size());
    for (size_t a = axes.size(); a-- > 0;) {  // the last axis varies fastest
      cell.values[a] = axes[a].values[rest % axes[a].values.size()];
      rest /= axes[a].values.size();
    }
  }
  return cells;
}

SweepLayout read_sweep_layout(const std::string& sweep_dir) {
  const std::string path = sweep_dir + "/sweep.csv";
  const std::vector<std::string> lines = split(read_file(path), '\n');
  const std::vector<std::string> header = split(lines.front(), ',');
  const auto rank = std::find(header.begin(), header.end(), "rank");
  if (header.front() != "cell" || rank == header.end()) {
    fail("{}: expected the header of a sweep (cell, the axes' keys, rank, ...)", path);
  }
  SweepLayout layout;
  layout.keys.assign(header.begin() + 1, rank);
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const std::vector<std::string> fields = split(lines[i], ',');
    if (fields.size() <= layout.keys.size())
      fail("{}:{}: fewer fields than the header", path, i + 1);
    if (!layout.cells.empty() && std::to_string(layout.cells.back().index) == fields[0]) continue;
    SweepCell cell;
    try {
      cell.index = std::stoi(fields[0]);
    } catch (const std::exception&) {
      fail("{}:{}: the cell '{}' is not a number", path, i + 1, fields[0]);
    }
    cell.folder = fmt::format("cells/{}", cell.index);
    cell.values.assign(fields.begin() + 1, fields.begin() + 1 + layout.keys.size());
    layout.cells.push_back(std::move(cell));
  }
  if (layout.cells.empty()) fail("{}: no cells", path);
  return layout;
}

SweepCellResult read_cell_result(const std::string& runs_csv, const std::string& compare_csv,
                                 const std::string& source) {
  SweepCellResult r;
  r.comparison = read_seed_runs(runs_csv, source + "/runs.csv");
  r.verdict = decide(r.comparison);
  std::vector<std::string> lines = split(compare_csv, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  const std::vector<MethodResult>& methods = r.comparison.methods;
  if (lines.size() != methods.size() + 1) {
    fail("{}/compare.csv: {} rows, its runs.csv has {} methods", source,
         lines.size() < 1 ? 0 : lines.size() - 1, methods.size());
  }
  r.csv_rows.assign(lines.begin() + 1, lines.end());
  const size_t n = methods.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return criterion_score(methods[a], r.has_target()) <
           criterion_score(methods[b], r.has_target());
  });
  r.rank.assign(n, 0);
  for (size_t k = 0; k < n; ++k) r.rank[order[k]] = static_cast<int>(k + 1);
  r.speedup_over_dgd.assign(n, Estimate{});
  const auto dgd = std::find_if(methods.begin(), methods.end(),
                                [](const MethodResult& m) { return m.spec == "dgd"; });
  if (dgd != methods.end()) {
    const std::vector<double> base = criterion_values(r.comparison, *dgd);
    for (size_t i = 0; i < n; ++i) {
      int censored = 0;
      for (size_t k = 0; k < methods[i].runs.size() && r.has_target(); ++k) {
        censored += methods[i].runs[k].reached && dgd->runs[k].reached ? 0 : 1;
      }
      r.speedup_over_dgd[i] =
          paired_ratio(base, criterion_values(r.comparison, methods[i]), censored);
    }
  }
  return r;
}

namespace {

// A cell's verdict in the winners' table: the winner, or why there is none.
std::string cell_verdict(const SweepCellResult& r) {
  const Verdict& v = r.verdict;
  const auto& methods = r.comparison.methods;
  switch (v.outcome) {
    case Verdict::Outcome::kBest:
      return "**" + methods[static_cast<size_t>(v.leader)].spec + "**";
    case Verdict::Outcome::kUndecided: {
      std::vector<std::string> names = {methods[static_cast<size_t>(v.leader)].spec};
      for (int j : v.tied) names.push_back(methods[static_cast<size_t>(j)].spec);
      return fmt::format("undecided between {}", fmt::join(names, ", "));
    }
    case Verdict::Outcome::kNoneReached:
      break;
  }
  return r.has_target() ? "no method reached the target on every seed" : "no method finished";
}

// Every cell's comparison, read back from its folder (compare.csv and runs.csv), with the header
// of compare.csv they share. Throws when cells differ in their columns, methods or targets.
std::vector<SweepCellResult> read_cells(const std::string& out_dir,
                                        const std::vector<SweepCell>& cells,
                                        std::string& compare_header) {
  std::vector<SweepCellResult> results;
  for (const SweepCell& cell : cells) {
    const std::string folder = out_dir + "/" + cell.folder;
    const std::string text = read_file(folder + "/compare.csv");
    const std::string header = text.substr(0, text.find('\n'));
    if (compare_header.empty()) compare_header = header;
    if (header != compare_header) {
      fail("{}/compare.csv: its columns differ from the other cells'", folder);
    }
    results.push_back(read_cell_result(read_file(folder + "/runs.csv"), text, folder));
    const auto& first = results.front().comparison.methods;
    const auto& these = results.back().comparison.methods;
    if (!std::equal(
            first.begin(), first.end(), these.begin(), these.end(),
            [](const MethodResult& a, const MethodResult& b) { return a.spec == b.spec; })) {
      fail("{}: its methods differ from the first cell's (is a folder left from another sweep?)",
           folder);
    }
  }
  const bool has_target = results.front().has_target();
  for (size_t k = 0; k < results.size(); ++k) {
    if (results[k].has_target() != has_target) {
      fail(
          "{}/{}/runs.csv: a target in some cells and not in others: the cells cannot be "
          "ranked alike (is target.loss one of the grid's keys?)",
          out_dir, cells[k].folder);
    }
  }

  return results;
}

// sweep.csv: a row per cell and method: the cell's keys, rank, speedup over DGD, compare.csv's row.
std::string sweep_csv(const std::vector<SweepAxis>& axes, const std::vector<SweepCell>& cells,
                      const std::vector<SweepCellResult>& results,
                      const std::string& compare_header) {
  std::string csv = "cell";
  for (const SweepAxis& axis : axes) csv += "," + axis.key;
  csv += ",rank,speedup_over_dgd_mean,speedup_over_dgd_low,speedup_over_dgd_high," +
         compare_header + "\n";
  for (size_t k = 0; k < cells.size(); ++k) {
    const SweepCellResult& r = results[k];
    for (size_t i = 0; i < r.comparison.methods.size(); ++i) {
      csv += fmt::format("{}", cells[k].index);
      for (const std::string& v : cells[k].values) csv += "," + v;
      const std::string speedup = csv_estimate(r.speedup_over_dgd[i]);
      csv += fmt::format(",{},{},{}\n", r.rank[i], speedup.substr(0, speedup.rfind(',')),
                         r.csv_rows[i]);
    }
  }

  return csv;
}

// The verdicts' table: a row per cell with its verdict, the winner's value and speedup over DGD.
std::string verdict_table(const std::vector<SweepAxis>& axes, const std::vector<SweepCell>& cells,
                          const std::vector<SweepCellResult>& results, bool has_target) {
  std::string md;
  md = "| cell |";
  for (const SweepAxis& axis : axes) md += " " + axis.key + " |";
  md += " verdict | " + std::string(has_target ? "time to target (s)" : "final F") +
        " | over dgd | what would decide it | report |\n|---|";
  for (size_t a = 0; a < axes.size(); ++a) md += "---|";
  md += "---|---|---|---|---|\n";
  for (size_t k = 0; k < cells.size(); ++k) {
    const SweepCellResult& r = results[k];
    md += fmt::format("| {} |", cells[k].index);
    for (const std::string& v : cells[k].values) md += " " + v + " |";
    std::string value = "—", over_dgd = "—";
    if (r.verdict.leader >= 0) {
      const MethodResult& w = r.comparison.methods[static_cast<size_t>(r.verdict.leader)];
      value = format_estimate(has_target ? w.time_to_target : w.final_loss,
                              has_target ? "{:.2f}" : "{:.4g}");
      if (has_target) value += fmt::format(" ({}/{} reached)", w.reached, w.runs.size());
      // DGD against itself is no comparison: the column says so instead of a 1.00 "tie".
      if (w.spec != "dgd") {
        over_dgd = format_ratio(r.speedup_over_dgd[static_cast<size_t>(r.verdict.leader)]);
      } else {
        over_dgd = "(dgd)";
      }
    }
    md += fmt::format(
        " {} | {} | {} | {} | [report]({}/report.md) |\n", cell_verdict(r), value, over_dgd,
        r.verdict.what_would_decide.empty() ? "—" : r.verdict.what_would_decide, cells[k].folder);
  }

  return md;
}

// The regime map of the first two axes (regime_map.h), drawn into out_dir.
std::optional<Figure> draw_regime_map(const std::string& out_dir, const std::string& name,
                                      const std::vector<SweepAxis>& axes,
                                      const std::vector<SweepCell>& cells,
                                      const std::vector<SweepCellResult>& results,
                                      bool has_target) {
  // The regime map: a tile per cell of the first two axes (further axes: one map per value would
  // be needed; only the first value's cells are drawn then).
  RegimeMap map;
  map.title = fmt::format("{}: the winning method per cell", name);
  map.y_key = axes[0].key;
  map.y_values = axes[0].values;
  if (axes.size() > 1) {
    map.x_key = axes[1].key;
    map.x_values = axes[1].values;
  }
  for (const MethodResult& m : results.front().comparison.methods) map.methods.push_back(m.spec);
  const size_t per_row = std::max<size_t>(1, map.x_values.size());
  const size_t drawn = map.y_values.size() * per_row;
  for (size_t k = 0; k < cells.size(); ++k) {
    if (axes.size() > 2 && k % axes[2].values.size() != 0) continue;  // the third varies fastest
    const SweepCellResult& r = results[k];
    const Verdict& v = r.verdict;
    map.winner.push_back(v.decided() ? v.leader : -1);
    std::string label;
    if (v.decided()) {
      label = map.methods[static_cast<size_t>(v.leader)];
      const Estimate& speedup = r.speedup_over_dgd[static_cast<size_t>(v.leader)];
      if (!speedup.empty() && label != "dgd")
        label += fmt::format("\n×{} vs dgd",
                             format_ratio_number(speedup.mean, RatioDigits::kTwoDecimals));
    } else if (v.leader >= 0) {
      label = "undecided:\n" + map.methods[static_cast<size_t>(v.leader)];
      for (int j : v.tied) label += "\n" + map.methods[static_cast<size_t>(j)];
    } else {
      label = has_target ? "none reached\nthe target" : "none finished";
    }
    map.labels.push_back(label);
  }
  PACER_CHECK(map.winner.size() == drawn);
  map.caption = fmt::format(
      "The winner by {} in each cell ({}{}), where the runs decide it (verdict.h); grey: "
      "undecided or no method reached the target. Labels give the winner's {}",
      has_target ? "time to target" : "final F", axes[0].key,
      axes.size() > 1 ? " × " + axes[1].key : "", ratio_meaning(has_target));
  return write_regime_map(out_dir, map);
}

// report.md's text: the question, the criterion, the map and the table.
std::string sweep_report(const std::string& name, const std::vector<SweepAxis>& axes,
                         const std::vector<SweepCell>& cells,
                         const std::vector<std::string>& methods, bool has_target,
                         const std::optional<Figure>& figure, const std::string& md) {
  std::string report = fmt::format("# {}: sweep of {}\n\n", name, [&] {
    std::vector<std::string> parts;
    for (const SweepAxis& axis : axes) {
      parts.push_back(fmt::format("{} ∈ {{{}}}", axis.key, fmt::join(axis.values, ", ")));
    }
    return fmt::format("{}", fmt::join(parts, " × "));
  }());
  report += fmt::format(
      "{} cells, each a comparison of {} with the same seeds, budget and tuning (see any cell's "
      "report for them). Criterion: {}. A cell has a winner only where the runs decide it: it "
      "reached the target on every seed and the paired 95 % interval of every other method's "
      "ratio to it lies above 1 (the rule of pacer compare's verdict); otherwise the cell says "
      "\"undecided\" and what would decide it. Ratios: {}, with its 95 % interval (Student t on "
      "the log scale).\n\n",
      cells.size(), fmt::join(methods, ", "),
      has_target ? "time to the first target (geometric mean over seeds)"
                 : "final F (geometric mean over seeds)",
      ratio_meaning(has_target));
  if (figure) {
    report += fmt::format("![{}]({})\n\n*{}.*{}\n\n", figure->caption, figure->png, figure->caption,
                          axes.size() > 2 ? fmt::format(" Only the cells with {} = {} are drawn.",
                                                        axes[2].key, axes[2].values[0])
                                          : "");
  }
  report += md + "\nEvery cell and method: sweep.csv.\n";
  return report;
}

}  // namespace

SweepResult write_sweep(const std::string& out_dir, const std::string& name,
                        const std::vector<SweepAxis>& axes, const std::vector<SweepCell>& cells) {
  std::string compare_header;
  const std::vector<SweepCellResult> results = read_cells(out_dir, cells, compare_header);
  const bool has_target = results.front().has_target();
  SweepResult out;
  out.csv = sweep_csv(axes, cells, results, compare_header);
  out.markdown = verdict_table(axes, cells, results, has_target);
  const std::optional<Figure> figure =
      draw_regime_map(out_dir, name, axes, cells, results, has_target);
  std::vector<std::string> methods;
  for (const MethodResult& m : results.front().comparison.methods) methods.push_back(m.spec);
  const std::string report =
      sweep_report(name, axes, cells, methods, has_target, figure, out.markdown);
  write_file_atomic(out_dir + "/sweep.csv", out.csv);
  write_file_atomic(out_dir + "/report.md", report);
  return out;
}

}  // namespace pacer
