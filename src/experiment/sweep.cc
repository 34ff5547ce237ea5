#include "pacer/experiment/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/experiment/plot.h"

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

// A compare.csv number: blank = not available.
double number(const std::string& field, const std::string& source, const std::string& column) {
  if (field.empty()) return kNotAvailable;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != field.size())
    fail("{}: column {}: expected a number, found '{}'", source, column, field);
  return v;
}

// The columns of one compare.csv row by name.
class Row {
 public:
  Row(const std::vector<std::string>& header, std::vector<std::string> fields, std::string source)
      : header_(header), fields_(std::move(fields)), source_(std::move(source)) {}
  const std::string& text(const std::string& column) const {
    const auto it = std::find(header_.begin(), header_.end(), column);
    if (it == header_.end())
      fail("{}: no column '{}' (not a compare.csv of this pacer)", source_, column);
    return fields_[it - header_.begin()];
  }
  double value(const std::string& column) const { return number(text(column), source_, column); }
  // A count: a non-negative integer.
  int count(const std::string& column) const {
    const double v = value(column);
    if (!(v >= 0 && v <= 1e9 && v == std::floor(v))) {
      fail("{}: column {}: expected a non-negative integer, found '{}'", source_, column,
           text(column));
    }
    return static_cast<int>(v);
  }
  Estimate estimate(const std::string& name) const {
    Estimate e;
    e.mean = value(name + "_mean");
    e.low = value(name + "_low");
    e.high = value(name + "_high");
    e.censored = count(name + "_censored");
    e.n = std::isnan(e.mean) ? 0 : std::isnan(e.low) ? 1 : 2;  // ≥ 2: the interval is printed
    return e;
  }

 private:
  const std::vector<std::string>& header_;
  std::vector<std::string> fields_;
  std::string source_;
};

// The criterion's value of a method as a number, NaN when it is only a lower bound (censored
// seeds) or missing: time to target with a target, final F without.
double exact_criterion(const MethodResult& m, bool has_target) {
  const Estimate& e = has_target ? m.time_to_target : m.final_loss;
  if (e.empty() || e.censored > 0 || (!has_target && m.diverged > 0)) return kNotAvailable;
  return e.mean;
}

std::string format_ratio(double r) { return std::isnan(r) ? "—" : fmt::format("×{:.2f}", r); }

// What the ratio means under the criterion.
std::string ratio_meaning(bool has_target) {
  return has_target ? "speedup: the other method's mean time to target divided by the winner's"
                    : "ratio of final F: the other method's mean final F divided by the winner's";
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

SweepCellResult read_cell_result(const std::string& csv, const std::string& source) {
  std::vector<std::string> lines = split(csv, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.size() < 2) fail("{}: expected a header and a row per method", source);
  const std::vector<std::string> header = split(lines[0], ',');
  SweepCellResult r;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> fields = split(lines[i], ',');
    if (fields.size() != header.size()) {
      fail("{}: line {}: {} fields, the header has {}", source, i + 1, fields.size(),
           header.size());
    }
    const Row row(header, std::move(fields), source);
    MethodResult& m = r.methods.emplace_back();
    m.spec = row.text("method");
    m.tuned_value = row.text("tuned");
    m.runs.resize(static_cast<size_t>(row.count("runs")));
    m.reached = row.count("reached");
    m.diverged = row.count("diverged");
    m.steps_to_target = row.estimate("steps_to_target");
    m.time_to_target = row.estimate("time_to_target");
    m.step_time = row.estimate("step_time");
    m.final_loss = row.estimate("final_loss");
    r.csv_rows.push_back(lines[i]);
  }
  // With a target every method has a time to target (reached, or censored at its end time).
  r.has_target = !r.methods.front().time_to_target.empty();
  const size_t n = r.methods.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return criterion_score(r.methods[a], r.has_target) <
           criterion_score(r.methods[b], r.has_target);
  });
  r.rank.assign(n, 0);
  for (size_t k = 0; k < n; ++k) r.rank[order[k]] = static_cast<int>(k + 1);
  r.winner = static_cast<int>(order[0]);
  r.runner_up = n > 1 ? static_cast<int>(order[1]) : -1;
  const auto dgd = std::find_if(r.methods.begin(), r.methods.end(),
                                [](const MethodResult& m) { return m.spec == "dgd"; });
  r.speedup_over_dgd.assign(n, kNotAvailable);
  for (size_t i = 0; i < n; ++i) {
    if (dgd == r.methods.end()) break;
    r.speedup_over_dgd[i] =
        exact_criterion(*dgd, r.has_target) / exact_criterion(r.methods[i], r.has_target);
  }
  if (r.runner_up >= 0) {
    r.winner_over_runner_up = exact_criterion(r.methods[r.runner_up], r.has_target) /
                              exact_criterion(r.methods[r.winner], r.has_target);
  }
  return r;
}

SweepResult write_sweep(const std::string& out_dir, const std::string& name,
                        const std::vector<SweepAxis>& axes, const std::vector<SweepCell>& cells) {
  std::vector<SweepCellResult> results;
  std::string compare_header;
  for (const SweepCell& cell : cells) {
    const std::string file = out_dir + "/" + cell.folder + "/compare.csv";
    const std::string text = read_file(file);
    const std::string header = text.substr(0, text.find('\n'));
    if (compare_header.empty()) compare_header = header;
    if (header != compare_header) fail("{}: its columns differ from the other cells'", file);
    results.push_back(read_cell_result(text, file));
    const auto& first = results.front().methods;
    const auto& these = results.back().methods;
    if (!std::equal(
            first.begin(), first.end(), these.begin(), these.end(),
            [](const MethodResult& a, const MethodResult& b) { return a.spec == b.spec; })) {
      fail("{}: its methods differ from the first cell's (is a folder left from another sweep?)",
           file);
    }
  }
  const bool has_target = results.front().has_target;
  for (size_t k = 0; k < results.size(); ++k) {
    if (results[k].has_target != has_target) {
      fail(
          "{}/{}/compare.csv: a target in some cells and not in others: the cells cannot be "
          "ranked alike (is target.loss one of the grid's keys?)",
          out_dir, cells[k].folder);
    }
  }

  SweepResult out;
  out.csv = "cell";
  for (const SweepAxis& axis : axes) out.csv += "," + axis.key;
  out.csv += ",rank,speedup_over_dgd," + compare_header + "\n";
  for (size_t k = 0; k < cells.size(); ++k) {
    const SweepCellResult& r = results[k];
    for (size_t i = 0; i < r.methods.size(); ++i) {
      out.csv += fmt::format("{}", cells[k].index);
      for (const std::string& v : cells[k].values) out.csv += "," + v;
      const double s = r.speedup_over_dgd[i];
      out.csv += fmt::format(",{},{},{}\n", r.rank[i], std::isnan(s) ? "" : fmt::format("{}", s),
                             r.csv_rows[i]);
    }
  }

  // The winners' table.
  std::string& md = out.markdown;
  md = "| cell |";
  for (const SweepAxis& axis : axes) md += " " + axis.key + " |";
  md += " winner | " + std::string(has_target ? "time to target (s)" : "final F") +
        " | over dgd | runner-up | over runner-up | report |\n|---|";
  for (size_t a = 0; a < axes.size(); ++a) md += "---|";
  md += "---|---|---|---|---|---|\n";
  for (size_t k = 0; k < cells.size(); ++k) {
    const SweepCellResult& r = results[k];
    const MethodResult& w = r.methods[r.winner];
    md += fmt::format("| {} |", cells[k].index);
    for (const std::string& v : cells[k].values) md += " " + v + " |";
    const Estimate& value = has_target ? w.time_to_target : w.final_loss;
    const char* spec = has_target ? "{:.2f}" : "{:.4g}";
    std::string reached =
        has_target ? fmt::format(" ({}/{} reached)", w.reached, w.runs.size()) : "";
    std::string over_runner_up = format_ratio(r.winner_over_runner_up);
    if (r.runner_up >= 0) {
      const Estimate& second =
          has_target ? r.methods[r.runner_up].time_to_target : r.methods[r.runner_up].final_loss;
      if (std::isfinite(value.high) && std::isfinite(second.low) && value.high >= second.low) {
        over_runner_up += " (95 % intervals overlap)";
      }
    }
    md += fmt::format(
        " {} | {}{} | {} | {} | {} | [report]({}/report.md) |\n", w.spec,
        format_estimate(value, spec), reached, format_ratio(r.speedup_over_dgd[r.winner]),
        r.runner_up >= 0 ? r.methods[r.runner_up].spec : "—", over_runner_up, cells[k].folder);
  }

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
  for (const MethodResult& m : results.front().methods) map.methods.push_back(m.spec);
  const size_t per_row = std::max<size_t>(1, map.x_values.size());
  const size_t drawn = map.y_values.size() * per_row;
  for (size_t k = 0; k < cells.size(); ++k) {
    if (axes.size() > 2 && k % axes[2].values.size() != 0) continue;  // the third varies fastest
    const SweepCellResult& r = results[k];
    map.winner.push_back(r.winner);
    std::string label = r.methods[r.winner].spec;
    if (!std::isnan(r.speedup_over_dgd[r.winner]) && r.methods[r.winner].spec != "dgd") {  // once
      label += "\n" + format_ratio(r.speedup_over_dgd[r.winner]) + " vs dgd";
    }
    if (!std::isnan(r.winner_over_runner_up) && r.methods[r.runner_up].spec != "dgd") {
      label += "\n" + format_ratio(r.winner_over_runner_up) + " vs " + r.methods[r.runner_up].spec;
    }
    map.labels.push_back(label);
  }
  PACER_CHECK(map.winner.size() == drawn);
  map.caption = fmt::format(
      "The method with the best {} in each cell ({}{}); labels give the winner's {}",
      has_target ? "mean time to target (fewest missed seeds first)" : "mean final F", axes[0].key,
      axes.size() > 1 ? " × " + axes[1].key : "", ratio_meaning(has_target));
  const std::optional<Figure> figure = write_regime_map(out_dir, map);

  std::string report = fmt::format("# {}: sweep of {}\n\n", name, [&] {
    std::vector<std::string> parts;
    for (const SweepAxis& axis : axes) {
      parts.push_back(fmt::format("{} ∈ {{{}}}", axis.key, fmt::join(axis.values, ", ")));
    }
    return fmt::format("{}", fmt::join(parts, " × "));
  }());
  report += fmt::format(
      "{} cells, each a comparison of {} with the same seeds, budget and tuning (see any cell's "
      "report for them). Criterion: {}. Ratios: {}; \"—\" where either side is a lower bound "
      "(seeds that did not reach the target) or there is no DGD.\n\n",
      cells.size(), fmt::join(map.methods, ", "),
      has_target ? "mean time to the first target, methods that missed it on more seeds ranked last"
                 : "mean final F",
      ratio_meaning(has_target));
  if (figure) {
    report += fmt::format("![{}]({})\n\n*{}.*{}\n\n", figure->caption, figure->png, figure->caption,
                          axes.size() > 2 ? fmt::format(" Only the cells with {} = {} are drawn.",
                                                        axes[2].key, axes[2].values[0])
                                          : "");
  }
  report += md + "\nEvery cell and method: sweep.csv.\n";
  write_file_atomic(out_dir + "/sweep.csv", out.csv);
  write_file_atomic(out_dir + "/report.md", report);
  return out;
}

}  // namespace pacer
