#include "figure_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace pacer::figure {

// ---- Words -----------------------------------------------------------------------------------

std::string gp_string(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

std::string gp_lines(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '\\' || ch == '"') out += '\\';
    out += ch == '\n' ? std::string("\\n") : std::string(1, ch);
  }
  return out + "\"";
}

std::string data_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? '\'' : c;
  return out + "\"";
}

std::string num(double v) { return fmt::format("{:.6g}", v); }

std::string faint(const std::string& colour) { return "#A8" + colour.substr(1); }

std::string short_number(double v) {
  const double a = std::abs(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

std::string round_number(double v) {
  if (std::abs(v) >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::string describe_seeds(std::vector<uint64_t> seeds) {
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  if (seeds.empty()) return "";
  if (seeds.size() == 1) return fmt::format("seed {}", seeds[0]);
  std::vector<std::string> parts;
  for (size_t i = 0; i < seeds.size();) {
    size_t end = i;  // the last seed of the run of consecutive seeds that starts at i
    while (end + 1 < seeds.size() && seeds[end + 1] == seeds[end] + 1) ++end;
    parts.push_back(end > i ? fmt::format("{}–{}", seeds[i], seeds[end])
                            : fmt::format("{}", seeds[i]));
    i = end + 1;
  }
  return fmt::format("seeds {}", fmt::join(parts, ", "));
}

double title_pixels(const std::string& title) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = title.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(title.substr(start, end - start));
  }
  lines.push_back(title.substr(start));
  return 0.75 * kTitleFont * static_cast<double>(longest(lines));
}

std::string describe_target(double target, const std::string& target_on) {
  return fmt::format("{:g} on {}", target, target_on == "full" ? "F" : "the train loss");
}

size_t longest(const std::vector<std::string>& labels) {
  size_t n = 0;
  for (const std::string& l : labels) {
    size_t chars = 0;
    for (unsigned char ch : l) chars += (ch & 0xC0) != 0x80;
    n = std::max(n, chars);
  }
  return n;
}

std::string time_axis_label(Clock clock) {
  switch (clock) {
    case Clock::kSimulated:
      return "simulated time (s)";
    case Clock::kWall:
      return "wall-clock time (s)";
    case Clock::kUnknown:
      break;
  }
  return "time (s)";
}

std::string time_unit(Clock clock) {
  switch (clock) {
    case Clock::kSimulated:
      return "simulated s";
    case Clock::kWall:
      return "wall-clock s";
    case Clock::kUnknown:
      break;
  }
  return "s";
}

std::string describe_budget(const Budget& budget, Clock clock) {
  switch (budget.kind) {
    case Budget::Kind::kSteps:
      return fmt::format("{:.0f} steps", budget.value);
    case Budget::Kind::kTime:
      return clock == Clock::kUnknown
                 ? fmt::format("{} s", round_number(budget.value))
                 : fmt::format("{} s of {} time", round_number(budget.value),
                               clock == Clock::kWall ? "wall-clock" : "simulated");
    case Budget::Kind::kWork:
      return fmt::format("{} work units", round_number(budget.value));
  }
  return "";
}

// ---- Data files and scripts ------------------------------------------------------------------

DataFile::DataFile(const std::string& header) {
  for (size_t start = 0; start < header.size();) {
    size_t end = header.find('\n', start);
    if (end == std::string::npos) end = header.size();
    text_ += "# " + header.substr(start, end - start) + "\n";
    start = end + 1;
  }
}

int DataFile::block(const std::string& comment) {
  if (blocks_ > 0) text_ += "\n\n";
  text_ += "# " + comment + "\n";
  return blocks_++;
}

void DataFile::row(std::initializer_list<double> values) {
  bool first = true;
  for (double v : values) {
    if (!first) text_ += ' ';
    text_ += data_number(v);
    first = false;
  }
  text_ += '\n';
}

void DataFile::raw(const std::string& line) { text_ += line + "\n"; }

Script::Script(const std::string& name, const std::string& caption, int width, int height)
    : name_(name) {
  head_ = fmt::format(
      "# {}.gp: {}\n"
      "# Written by pacer; it reads only the files in figures/. Re-run it in this folder with\n"
      "#   gnuplot {}.gp\n"
      "# to write {}.png and {}.svg (pacer sets `png` and `svg` to temporary names).\n"
      "if (!exists(\"png\")) png = {}\n"
      "if (!exists(\"svg\")) svg = {}\n"
      "set encoding utf8\n"
      "do for [kind in \"png svg\"] {{\n"
      "  reset\n"
      "  # The SVG is 3/4 the PNG's size in pixels: the svg terminal's text (its font size in\n"
      "  # pixels) then has the proportions pngcairo's (in points at 96 dpi) has in the PNG.\n"
      "  if (kind eq \"png\") {{\n"
      "    set terminal pngcairo size {},{} font 'Sans,{}' noenhanced\n"
      "    set output png\n"
      "    pscale = 1.0\n"
      "  }} else {{\n"
      "    set terminal svg size {},{} font 'Sans,{}' noenhanced background rgb 'white'\n"
      "    set output svg\n"
      "    pscale = 0.75\n"
      "  }}\n",
      name, caption, name, name, name, gp_string(name + ".png"), gp_string(name + ".svg"), width,
      height, kFont, width * 3 / 4, height * 3 / 4, kFont);
}

Script& Script::operator<<(const std::string& lines) {
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    body_ += "  " + lines.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return *this;
}

void Script::plot(const std::vector<std::string>& clauses) {
  std::string text = "plot ";
  for (size_t i = 0; i < clauses.size(); ++i) text += (i ? ", \\\n     " : "") + clauses[i];
  *this << text;
}

std::string Script::text() const { return head_ + body_ + "  set output\n}\n"; }

// ---- Layout ----------------------------------------------------------------------------------

std::string Panel::axis_labels(const std::string& x, const std::string& y, int width,
                               int /*height*/) const {
  std::string out = "unset xlabel\nunset ylabel\n";
  out += x.empty() ? "unset label 91\n"
                   : fmt::format("set label 91 {} at screen {}, screen {} center\n", gp_string(x),
                                 num((left + right) / 2), num(xlabel_y));
  out += y.empty() ? "unset label 92"
                   : fmt::format("set label 92 {} at screen {}, screen {} center rotate by 90",
                                 gp_string(y), num(std::max(14.0 / width, left - ylabel_offset)),
                                 num((bottom + top) / 2));
  return out;
}

std::string Panel::margins() const {
  return fmt::format(
      "set lmargin at screen {}\nset rmargin at screen {}\nset bmargin at screen {}\n"
      "set tmargin at screen {}",
      num(left), num(right), num(bottom), num(top));
}

// As gnuplot spaces a key's columns: (characters + 4) × its character width (about 12 pixels at
// kFont in pngcairo, as measured in its output), the sample (samplen 2.5) and a tic's length.
double Legend::column_pixels() const { return 12 * (static_cast<double>(chars) + 7.5); }

Legend fit_legend(const std::vector<std::string>& labels, int& height, int around) {
  auto legend_height = [around](int rows) {
    return around + static_cast<int>(std::ceil(kLegendLinePixels * rows));
  };
  Legend legend;
  legend.entries = labels.size();
  legend.chars = longest(labels);
  const int n = std::max<int>(1, static_cast<int>(labels.size()));
  int columns = 1;
  while (columns < n && legend_height((n + columns - 1) / columns) > kTallestFigure) ++columns;
  legend.columns = columns;
  legend.rows = (n + columns - 1) / columns;
  height = std::max(height, legend_height(legend.rows));
  return legend;
}

int width_with_legend(int plots_width, const Legend& legend) {
  return plots_width + static_cast<int>(std::ceil(legend.columns * legend.column_pixels())) + 30;
}

Layout side_by_side(int panels, int width, int height, const Legend& legend, size_t tic_chars,
                    bool ylabel_each, int title_lines, int extra_bottom) {
  const double w = width, h = height;
  const double key_width = legend.columns * legend.column_pixels() / w;
  // Tic labels start about 12 pixels left of the axis, at about 11 pixels per digit; the y
  // label's centre is 16 pixels beyond them.
  const double tics = 12 + 11.0 * static_cast<double>(std::max<size_t>(tic_chars, 1));
  const double ylabel = tics + 16;
  const double left = (ylabel + 18) / w, gap = ((ylabel_each ? ylabel + 18 : tics) + 32) / w;
  const double right = 1 - key_width - 30 / w;
  const double bottom = (80.0 + extra_bottom) / h, top = 1 - (38.0 + 24.0 * title_lines) / h;
  const double panel = (right - left - gap * (panels - 1)) / panels;
  Layout layout;
  for (int p = 0; p < panels; ++p) {
    const double l = left + p * (panel + gap);
    layout.panels.push_back({l, l + panel, bottom, top, ylabel / w, (22.0 + extra_bottom) / h});
  }
  layout.key_x = right + 25 / w;
  layout.key_y = top;
  layout.key_rows = legend.rows;
  return layout;
}

std::string legend_plot(const std::vector<std::string>& entries, double x, double y,
                        const std::string& key_options) {
  std::string out =
      "set lmargin at screen 0\nset rmargin at screen 1\nset bmargin at screen 0\n"
      "set tmargin at screen 1\nunset border\nunset tics\nunset title\nunset xlabel\n"
      "unset ylabel\nunset label\nunset arrow\nunset grid\nunset logscale\n"
      "set xrange [0:1]\nset yrange [0:1]\n";
  out += fmt::format(
      "set key at screen {}, screen {} left top Left reverse samplen 2.5 spacing 1.15 nobox "
      "noautotitle {}\n",
      num(x), num(y), key_options);
  // gnuplot needs something to plot besides the entries.
  out += "plot NaN notitle";
  for (const std::string& e : entries) out += ", \\\n     " + e;
  return out;
}

size_t tic_chars(const Axis& a) {
  if (a.tics.empty()) return 5;
  size_t n = 0;
  for (double t : a.tics) n = std::max(n, tic_label(t).size());
  return n;
}

std::string key_at(const Layout& layout) {
  return fmt::format(
      "set key at screen {},{} left top Left reverse samplen 2.5 spacing 1.15 nobox "
      "noautotitle maxrows {}",
      num(layout.key_x), num(layout.key_y), std::max(1, layout.key_rows));
}

std::string axis_commands(char axis, const Axis& a) {
  std::string out = a.log ? fmt::format("set logscale {}\n", axis) : "";
  // The bounds rounded as the data files round their numbers (data_number): rounded otherwise
  // (to num()'s 6 digits, or not at all) a bound at the last point, often the final evaluation,
  // could fall just inside the point as the data file writes it and leave it outside the plot.
  out += fmt::format("set {}range [{}:{}]\n", axis, data_number(a.low), data_number(a.high));
  if (a.tics.empty()) return out + fmt::format("set format {} '%g'\n", axis);
  std::vector<std::string> tics;
  for (double t : a.tics) tics.push_back(fmt::format("'{}' {}", tic_label(t), num(t)));
  out += fmt::format("set {}tics ({})\n", axis, fmt::join(tics, ", "));
  if (a.log) out += fmt::format("set m{}tics 10\n", axis);
  return out;
}

Axis linear_axis(double low, double high) { return Axis{low, high, false, linear_tics(low, high)}; }

std::string target_lines(const std::vector<double>& targets, const std::string& target_on) {
  std::string out;
  int tag = 1;
  for (double t : targets) {
    out += fmt::format(
        "set arrow {} from graph 0, first {} to graph 1, first {} nohead dt (10,6) lw 2 "
        "lc rgb '{}' front\n",
        tag, num(t), num(t), kTargetColour);
    out += fmt::format(
        "set label {} {} at graph 0.015, first {} offset 0,-0.75 left tc rgb '{}' front\n", tag,
        gp_string("target " + describe_target(t, target_on)), num(t), kTargetColour);
    ++tag;
  }
  return out;
}

void make_room_below(Axis& y, const std::vector<double>& targets) {
  bool changed = false;
  for (double t : targets) {
    if (!std::isfinite(t) || t <= y.low || t >= y.high) continue;
    if (y.log) {
      const double span = std::log10(y.high / y.low);
      if (t <= 0 || std::log10(t / y.low) >= 0.1 * span) continue;
      y.low = t / std::pow(10.0, 0.11 * span);
    } else {
      const double span = y.high - y.low;
      if (t - y.low >= 0.1 * span) continue;
      y.low = std::max(y.low >= 0 ? 0.0 : -INFINITY, t - 0.11 * span);
    }
    changed = true;
  }
  if (changed && !y.log) y.tics = linear_tics(y.low, y.high);
}

}  // namespace pacer::figure
