#include "pacer/report/figure_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "pacer/core/error.h"
#include "pacer/core/files.h"

namespace pacer::figure {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Splits one CSV line at commas (the files pacer writes quote nothing).
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

double parse_number(std::string_view field) {
  while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) field.remove_prefix(1);
  while (!field.empty() && (field.back() == ' ' || field.back() == '\t' || field.back() == '\r')) {
    field.remove_suffix(1);
  }
  if (field.empty()) return kNaN;
  double value = kNaN;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) return kNaN;
  return value;
}

// The smallest and largest finite value; (+inf, -inf) when there is none.
std::pair<double, double> finite_range(const std::vector<double>& values) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return {lo, hi};
}

}  // namespace

const std::vector<double>* Table::column(const std::string& name) const {
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c] == name) return &values[c];
  }
  return nullptr;
}

Table parse_table(const std::string& text, const std::string& source) {
  Table table;
  size_t pos = 0, line_number = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string_view> fields = split_fields(line);
    if (table.columns.empty()) {
      for (std::string_view f : fields) table.columns.emplace_back(f);
      table.values.resize(table.columns.size());
      continue;
    }
    if (fields.size() > table.columns.size()) {
      fail("{}: line {} has {} fields, the header {}", source, line_number, fields.size(),
           table.columns.size());
    }
    for (size_t c = 0; c < table.columns.size(); ++c) {
      table.values[c].push_back(c < fields.size() ? parse_number(fields[c]) : kNaN);
    }
  }
  return table;
}

Table read_table(const std::string& path) { return parse_table(read_file(path), path); }

Series table_series(const Table& table, const std::string& x, const std::string& y) {
  Series s;
  const std::vector<double>* xs = table.column(x);
  const std::vector<double>* ys = table.column(y);
  if (!xs || !ys) return s;
  std::vector<size_t> order;
  for (size_t r = 0; r < xs->size(); ++r) {
    if (std::isfinite((*xs)[r]) && std::isfinite((*ys)[r])) order.push_back(r);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return (*xs)[a] < (*xs)[b]; });
  for (size_t r : order) {
    s.x.push_back((*xs)[r]);
    s.y.push_back((*ys)[r]);
  }
  return s;
}

size_t smoothing_window(size_t points) {
  size_t w = points / 25;
  if (w % 2 == 0) ++w;
  return std::max<size_t>(w, 1);
}

Series moving_average(const Series& s, size_t window) {
  if (window <= 1 || s.size() < 3) return s;
  const size_t half = window / 2;
  Series out;
  out.x = s.x;
  out.y.resize(s.size());
  // Prefix sums make every window O(1); summed in order, so the result is deterministic.
  std::vector<double> prefix(s.size() + 1, 0.0);
  for (size_t i = 0; i < s.size(); ++i) prefix[i + 1] = prefix[i] + s.y[i];
  for (size_t i = 0; i < s.size(); ++i) {
    // Cut at the ends rather than shrunk to a single point: the first and last rows (a trace's
    // last block may hold a single update) are averaged like the others.
    const size_t first = i >= half ? i - half : 0;
    const size_t last = std::min(s.size() - 1, i + half);
    out.y[i] = (prefix[last + 1] - prefix[first]) / static_cast<double>(last - first + 1);
  }
  return out;
}

Band seed_band(const std::vector<Series>& seeds, size_t points) {
  Band band;
  if (seeds.empty() || points == 0) return band;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  for (const Series& s : seeds) {
    if (s.empty()) return band;
    lo = std::max(lo, s.x.front());
    hi = std::min(hi, s.x.back());
  }
  if (lo > hi) return band;
  const size_t n = lo == hi ? 1 : points;
  band.seeds = static_cast<int>(seeds.size());
  band.x.resize(n);
  for (size_t i = 0; i < n; ++i) {
    band.x[i] =
        i + 1 == n ? hi : lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(n - 1);
  }
  band.mean.assign(n, 0.0);
  band.low.assign(n, std::numeric_limits<double>::infinity());
  band.high.assign(n, -std::numeric_limits<double>::infinity());
  for (const Series& s : seeds) {
    size_t j = 0;  // s.x[j] <= band.x[i] < s.x[j + 1], advanced monotonically
    for (size_t i = 0; i < n; ++i) {
      while (j + 1 < s.size() && s.x[j + 1] <= band.x[i]) ++j;
      const double v = s.y[j];
      band.mean[i] += v;
      band.low[i] = std::min(band.low[i], v);
      band.high[i] = std::max(band.high[i], v);
    }
  }
  for (double& m : band.mean) m /= static_cast<double>(seeds.size());
  return band;
}

Axis fit_axis(const std::vector<double>& values, double margin) {
  Axis axis;
  const auto [lo, hi] = finite_range(values);
  if (!(lo <= hi)) return axis;  // no finite value
  if (lo > 0 && hi > 10 * lo) {
    axis.log = true;
    const double a = std::log10(lo), b = std::log10(hi), span = b - a;
    axis.low = std::pow(10.0, a - margin * span);
    axis.high = std::pow(10.0, b + margin * span);
    if (span < 2) {
      // 1-2-5 in every decade the range touches: at least three labels in a decade or more.
      for (int e = static_cast<int>(std::floor(std::log10(axis.low)));
           e <= static_cast<int>(std::ceil(std::log10(axis.high))); ++e) {
        for (double m : {1.0, 2.0, 5.0}) {
          const double t = m * std::pow(10.0, e);
          if (t >= axis.low && t <= axis.high) axis.tics.push_back(t);
        }
      }
    }
    return axis;
  }
  if (lo == hi) {
    const double d = lo == 0 ? 1.0 : 0.1 * std::abs(lo);
    axis.low = lo - d;
    axis.high = hi + d;
    axis.tics = linear_tics(axis.low, axis.high);
    return axis;
  }
  const double span = hi - lo;
  axis.low = lo - margin * span;
  axis.high = hi + margin * span;
  if (lo >= 0 && axis.low < 0) axis.low = 0;  // losses, fractions and times are not negative
  axis.tics = linear_tics(axis.low, axis.high);
  return axis;
}

Axis fit_x_axis(const std::vector<double>& values) {
  Axis axis;
  const auto [lo, hi] = finite_range(values);
  if (!(lo <= hi)) return axis;
  if (hi <= 0) {
    axis.low = lo == hi ? lo - 1 : lo;
    axis.high = lo == hi ? hi + 1 : hi;
    return axis;
  }
  axis.low = (lo < 0.1 * hi || lo == hi) ? std::min(0.0, lo) : lo;
  axis.high = hi;
  axis.tics = linear_tics(axis.low, axis.high);
  return axis;
}

std::vector<double> linear_tics(double low, double high, int count) {
  std::vector<double> tics;
  if (!(high > low) || !std::isfinite(low) || !std::isfinite(high) || count < 1) return tics;
  const double raw = (high - low) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * magnitude >= raw * 0.75) {
      step = m * magnitude;
      break;
    }
  }
  const double first = std::ceil(low / step - 1e-9);
  for (double k = first;; ++k) {
    double t = k * step;
    if (t > high + 1e-9 * step) break;
    if (std::abs(t) < 1e-12 * step) t = 0;  // no "-0"
    tics.push_back(t);
  }
  return tics;
}

std::string tic_label(double v) {
  const double a = std::abs(v);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

std::string method_colour(size_t i) {
  // Okabe & Ito (2008) without its yellow (unreadable on white), then seven of Paul Tol's muted
  // scheme: its cyan, rose and pale grey are left out as too close to sky blue, vermillion and
  // the grey of the legend's style entries. Beyond these 14, method_dash adds dash patterns.
  static const char* const kPalette[kDistinctColours] = {
      "#0072B2",  // blue
      "#D55E00",  // vermillion
      "#009E73",  // bluish green
      "#CC79A7",  // reddish purple
      "#E69F00",  // orange
      "#56B4E9",  // sky blue
      "#000000",  // black
      "#882255",  // wine
      "#117733",  // green
      "#332288",  // indigo
      "#999933",  // olive
      "#DDCC77",  // sand
      "#AA4499",  // purple
      "#44AA99",  // teal
  };
  return kPalette[i % kDistinctColours];
}

int method_dash(size_t i) { return static_cast<int>(i / kDistinctColours) + 1; }

long colour_value(const std::string& colour) {
  return std::stol(colour.substr(colour.front() == '#' ? 1 : 0), nullptr, 16);
}

std::string data_number(double v) {
  if (!std::isfinite(v)) return "NaN";
  return fmt::format("{:.9g}", v);
}

}  // namespace pacer::figure
