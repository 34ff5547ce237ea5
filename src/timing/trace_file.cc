// Trace files and what every reader of a trace derives from one (timing/trace.h): parsing, the
// step grid, the per-unit costs and the automatic block length.

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <sstream>

#include "pacer/core/error.h"
#include "pacer/core/stats.h"
#include "pacer/timing/trace.h"

namespace pacer {
namespace {

enum class Column { kWorker, kDuration, kStep, kUnits };
constexpr const char* kHeaderHelp =
    "expected the header \"worker,duration\" (optionally with the columns step and units, in any "
    "order)";

std::string_view trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

// Parses all of `text` as a T; false if it is not exactly one number.
template <typename T>
bool parse_number(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

// The header's columns in order; an Error naming the source unless worker and duration are there
// and every name is known and appears once.
std::vector<Column> parse_header(std::string_view text, const std::string& source) {
  std::vector<Column> columns;
  bool seen[4] = {false, false, false, false};
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    const std::string_view name =
        trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    const Column column = name == "worker"     ? Column::kWorker
                          : name == "duration" ? Column::kDuration
                          : name == "step"     ? Column::kStep
                          : name == "units"    ? Column::kUnits
                                               : Column(-1);
    const int index = static_cast<int>(column);
    if (index < 0 || seen[index]) fail("{}:1: {}, got \"{}\"", source, kHeaderHelp, text);
    seen[index] = true;
    columns.push_back(column);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (!seen[0] || !seen[1]) fail("{}:1: {}, got \"{}\"", source, kHeaderHelp, text);
  return columns;
}

struct Row {
  int64_t worker = 0, step = 0;
  double duration = 0, units = 1;
};

// One data row. Fields are taken in header order; the last column takes the rest of the line, so
// a row with a field too many fails in that column's check, and a missing field is empty.
Row parse_row(std::string_view text, const std::vector<Column>& columns, const std::string& where,
              int max_workers) {
  Row row;
  size_t start = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    const size_t comma = c + 1 < columns.size() ? text.find(',', start) : std::string_view::npos;
    const std::string_view field =
        start > text.size()
            ? std::string_view()
            : trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    switch (columns[c]) {
      case Column::kWorker:
        if (!parse_number(field, row.worker)) {
          fail("{}: expected a worker index, got \"{}\"", where, field);
        }
        if (row.worker < 0 || row.worker >= max_workers) {
          fail("{}: worker index {} out of range: expected 0..{}", where, row.worker,
               max_workers - 1);
        }
        break;
      case Column::kDuration:
        if (!parse_number(field, row.duration) || !(row.duration > 0) ||
            !std::isfinite(row.duration)) {
          fail("{}: expected a duration in seconds per work unit (a positive number), got \"{}\"",
               where, field);
        }
        break;
      case Column::kStep:
        if (!parse_number(field, row.step)) {
          fail("{}: expected a step (an integer), got \"{}\"", where, field);
        }
        break;
      case Column::kUnits:
        if (!parse_number(field, row.units) || !(row.units > 0) || !std::isfinite(row.units)) {
          fail("{}: expected the job's work units (a positive number), got \"{}\"", where, field);
        }
        break;
    }
  }
  return row;
}

// Orders each worker's rows by step, keeping file order within a step.
void sort_by_step(DurationTrace& trace) {
  for (int i = 0; i < trace.workers(); ++i) {
    std::vector<size_t> order(trace.rows[i].size());
    std::iota(order.begin(), order.end(), 0);
    const std::vector<int64_t>& steps = trace.steps[i];
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return steps[a] < steps[b]; });
    auto permute = [&](auto& values) {
      auto copy = values;
      for (size_t j = 0; j < order.size(); ++j) values[j] = copy[order[j]];
    };
    permute(trace.rows[i]);
    permute(trace.steps[i]);
    if (trace.has_units) permute(trace.units[i]);
  }
}

// The optimal block length of one series (Politis and White 2004; Patton, Politis and White
// 2009): with ρ̂ the sample autocorrelations and K_N = max(5, ⌈√log10 N⌉), m̂ is the smallest lag
// after which K_N autocorrelations in a row are below 2·√(log10 N / N); the flat-top kernel λ
// (1 up to half its width, then linear to 0) over M = 2·max(m̂, 1) lags (at most ⌈√N⌉ + K_N) gives
// G = Σ_{|k|<=M} λ(k/M)·|k|·γ̂(k) and g = Σ_{|k|<=M} λ(k/M)·γ̂(k), and the block length of the
// moving-block (and circular) bootstrap is (2G² / D)^{1/3}·N^{1/3} with D = (4/3)·g². 0 when the
// series does not vary.
double politis_white(const std::vector<double>& x) {
  const size_t n = x.size();
  if (n < 4) return 0;
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  const double N = static_cast<double>(n);
  const size_t kn = std::max<size_t>(5, static_cast<size_t>(std::ceil(std::sqrt(std::log10(N)))));
  const size_t m_max = std::min(n - 1, static_cast<size_t>(std::ceil(std::sqrt(N))) + kn);
  std::vector<double> gamma(m_max + 1, 0.0);
  for (size_t k = 0; k <= m_max; ++k) {
    for (size_t t = k; t < n; ++t) gamma[k] += (x[t] - mean) * (x[t - k] - mean);
    gamma[k] /= N;
  }
  if (!(gamma[0] > 0)) return 0;
  const double threshold = 2 * std::sqrt(std::log10(N) / N);
  size_t m_hat = m_max;
  for (size_t m = 0; m + kn <= m_max; ++m) {
    bool negligible = true;
    for (size_t k = 1; k <= kn && negligible; ++k) {
      negligible = std::abs(gamma[m + k] / gamma[0]) < threshold;
    }
    if (negligible) {
      m_hat = m;
      break;
    }
  }
  const size_t M = std::min(m_max, 2 * std::max<size_t>(m_hat, 1));
  double G = 0, g = gamma[0];
  for (size_t k = 1; k <= M; ++k) {
    const double s = static_cast<double>(k) / static_cast<double>(M);
    const double lambda = s <= 0.5 ? 1.0 : 2 * (1 - s);
    G += 2 * lambda * static_cast<double>(k) * gamma[k];
    g += 2 * lambda * gamma[k];
  }
  const double D = 4.0 / 3.0 * g * g;
  if (!(D > 0)) return 0;
  return std::cbrt(2 * G * G / D) * std::cbrt(N);
}

// The weighted least-squares slope of y on u (weights w); 0 when the u do not vary.
double weighted_slope(const std::vector<double>& u, const std::vector<double>& y,
                      const std::vector<double>& w) {
  double sw = 0, su = 0, sy = 0;
  for (size_t k = 0; k < u.size(); ++k) {
    sw += w[k];
    su += w[k] * u[k];
    sy += w[k] * y[k];
  }
  double sxy = 0, sxx = 0;
  for (size_t k = 0; k < u.size(); ++k) {
    sxy += w[k] * (u[k] - su / sw) * (y[k] - sy / sw);
    sxx += w[k] * (u[k] - su / sw) * (u[k] - su / sw);
  }
  return sxx > 0 ? sxy / sxx : 0;
}

}  // namespace

size_t DurationTrace::size() const {
  size_t n = 0;
  for (const std::vector<double>& r : rows) n += r.size();
  return n;
}

int64_t DurationTrace::step(int worker, size_t row) const {
  return steps.empty() ? static_cast<int64_t>(row) : steps[worker][row];
}

double DurationTrace::job_units(int worker, size_t row) const {
  return units.empty() ? 1.0 : units[worker][row];
}

double DurationTrace::job_seconds(int worker, size_t row) const {
  return rows[worker][row] * job_units(worker, row);
}

DurationTrace parse_trace(std::string_view text, const std::string& source, int max_workers) {
  PACER_CHECK(max_workers > 0);
  DurationTrace trace;
  trace.source = source;
  std::vector<Column> columns;
  size_t number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    ++number;
    if (line.empty()) continue;
    if (columns.empty()) {
      columns = parse_header(line, source);
      for (Column c : columns) {
        trace.has_steps |= c == Column::kStep;
        trace.has_units |= c == Column::kUnits;
      }
      continue;
    }
    const Row row = parse_row(line, columns, fmt::format("{}:{}", source, number), max_workers);
    if (static_cast<size_t>(row.worker) >= trace.rows.size()) {
      trace.rows.resize(row.worker + 1);
      if (trace.has_steps) trace.steps.resize(row.worker + 1);
      if (trace.has_units) trace.units.resize(row.worker + 1);
    }
    trace.rows[row.worker].push_back(row.duration);
    if (trace.has_steps) trace.steps[row.worker].push_back(row.step);
    if (trace.has_units) trace.units[row.worker].push_back(row.units);
  }
  if (columns.empty()) fail("{}: empty trace, {}", source, kHeaderHelp);
  if (trace.has_steps) sort_by_step(trace);
  return trace;
}

DurationTrace read_trace_file(const std::string& path, int max_workers, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open the {}", path, what);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail("{}: read error", path);
  const std::string content = text.str();
  if (trim(content).empty()) fail("{}: empty {}, {}", path, what, kHeaderHelp);
  return parse_trace(content, path, max_workers);
}

StepGrid step_grid(const DurationTrace& trace) {
  StepGrid grid;
  for (int i = 0; i < trace.workers(); ++i) {
    PACER_CHECK(!trace.rows[i].empty());
    for (size_t j = 0; j < trace.rows[i].size(); ++j) grid.steps.push_back(trace.step(i, j));
  }
  std::sort(grid.steps.begin(), grid.steps.end());
  grid.steps.erase(std::unique(grid.steps.begin(), grid.steps.end()), grid.steps.end());
  for (int i = 0; i < trace.workers(); ++i) {
    std::vector<uint32_t> at(grid.size(), 0);
    std::vector<bool> own(grid.size(), false);
    size_t j = 0;  // the worker's first row with a step >= steps[k]
    const size_t rows = trace.rows[i].size();
    for (size_t k = 0; k < grid.size(); ++k) {
      while (j < rows && trace.step(i, j) < grid.steps[k]) ++j;
      at[k] = static_cast<uint32_t>(std::min(j, rows - 1));
      own[k] = j < rows && trace.step(i, j) == grid.steps[k];
    }
    grid.at.push_back(std::move(at));
    grid.own.push_back(std::move(own));
  }
  return grid;
}

std::vector<double> unit_costs(const DurationTrace& trace) {
  std::vector<double> costs;
  for (int i = 0; i < trace.workers(); ++i) {
    PACER_CHECK(!trace.rows[i].empty());
    std::map<double, std::vector<double>> by_size;  // units -> job seconds
    for (size_t j = 0; j < trace.rows[i].size(); ++j) {
      by_size[trace.job_units(i, j)].push_back(trace.job_seconds(i, j));
    }
    std::vector<double> u, y, w;
    for (const auto& [units, seconds] : by_size) {
      u.push_back(units);
      y.push_back(median(seconds));
      w.push_back(static_cast<double>(seconds.size()));
    }
    const double slope = weighted_slope(u, y, w);
    costs.push_back(slope > 0 ? slope : median(trace.rows[i]));
  }
  return costs;
}

std::string BlockLength::describe() const {
  if (worker < 0)
    return fmt::format("{} step{} (no worker's durations vary)", length, length == 1 ? "" : "s");
  return fmt::format(
      "{} step{} (Politis–White automatic choice; worker {}'s durations ask for "
      "the longest)",
      length, length == 1 ? "" : "s", worker);
}

BlockLength automatic_block_length(const DurationTrace& trace) {
  BlockLength result;
  double longest = 0;
  for (int i = 0; i < trace.workers(); ++i) {
    const double b = politis_white(trace.rows[i]);
    if (b > longest) {
      longest = b;
      result.worker = i;
    }
  }
  const StepGrid grid = step_grid(trace);
  const int64_t cap = std::max<int64_t>(1, static_cast<int64_t>(grid.size()) / 3);
  result.length = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(longest)), 1, cap);
  return result;
}

}  // namespace pacer
