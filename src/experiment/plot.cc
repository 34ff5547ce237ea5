#include "pacer/experiment/plot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "pacer/core/crash_point.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"
#include "pacer/experiment/figure_data.h"

namespace pacer {
namespace {

using figure::Axis;
using figure::Band;
using figure::data_number;
using figure::Series;
using figure::Table;

// Text sizes in points, readable on a slide at full width (the SVG canvas is 3/4 of the PNG's in
// pixels, so that its text has the same proportions: see Script).
constexpr int kFont = 15;
constexpr int kTitleFont = 17;
// Pixels per character of kFont text, generously (legend widths are computed from it).
constexpr double kCharPixels = 0.78 * kFont;
constexpr const char* kTargetColour = "#444444";
constexpr const char* kNeutralColour = "#666666";
// The figures pacer writes, so that a figure omitted this time does not leave an old one behind.
constexpr const char* kComparisonFigures[] = {"loss", "time_to_target", "tilde", "workers",
                                              "staleness"};

// gnuplot single-quoted string: a quote is written twice.
std::string gp_string(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

// gnuplot double-quoted string in a data file (no escapes are read there: drop the quotes).
std::string data_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? '\'' : c;
  return out + "\"";
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A script number: short and exact enough for an axis bound or a position.
std::string num(double v) { return fmt::format("{:.6g}", v); }

// The colour at about one third opacity (gnuplot's #AARRGGBB, AA = transparency).
std::string faint(const std::string& colour) { return "#A8" + colour.substr(1); }

std::string line_style(size_t m, double width) {
  return fmt::format("lw {} lc rgb '{}' dt {}", num(width), figure::method_colour(m),
                     figure::method_dash(m));
}

bool gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    // An empty entry is the current folder.
    const std::string program =
        (colon == start ? std::string(".") : dirs.substr(start, colon - start)) + "/gnuplot";
    if (::access(program.c_str(), X_OK) == 0) return true;
    start = colon + 1;
  }
  return false;
}

// "seeds 1–3", "seeds 1, 4, 7", "seed 2".
std::string describe_seeds(const std::vector<uint64_t>& seeds) {
  if (seeds.empty()) return "";
  if (seeds.size() == 1) return fmt::format("seed {}", seeds[0]);
  bool consecutive = true;
  for (size_t i = 1; i < seeds.size(); ++i) consecutive &= seeds[i] == seeds[i - 1] + 1;
  if (consecutive) return fmt::format("seeds {}–{}", seeds.front(), seeds.back());
  return fmt::format("seeds {}", fmt::join(seeds, ", "));
}

// "0.55 on the train loss" / "0.55 on F".
std::string describe_target(double target, const std::string& target_on) {
  return fmt::format("{:g} on {}", target, target_on == "full" ? "F" : "the train loss");
}

// A time or count for a label: three significant digits, no exponent.
std::string short_number(double v) {
  const double a = std::abs(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

// A data file of whitespace-separated columns, in blocks (gnuplot's `index`) separated by two
// blank lines; '#' lines are comments.
class DataFile {
 public:
  explicit DataFile(const std::string& header) {
    for (size_t start = 0; start < header.size();) {
      size_t end = header.find('\n', start);
      if (end == std::string::npos) end = header.size();
      text_ += "# " + header.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  // Starts a block; returns its index.
  int block(const std::string& comment) {
    if (blocks_ > 0) text_ += "\n\n";
    text_ += "# " + comment + "\n";
    return blocks_++;
  }
  void row(std::initializer_list<double> values) {
    bool first = true;
    for (double v : values) {
      if (!first) text_ += ' ';
      text_ += data_number(v);
      first = false;
    }
    text_ += '\n';
  }
  void raw(const std::string& line) { text_ += line + "\n"; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int blocks_ = 0;
};

// A gnuplot script that renders its body twice: to PNG (pngcairo) and to SVG.
class Script {
 public:
  Script(const std::string& name, const std::string& caption, int width, int height) : name_(name) {
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
  // One command (or several lines) of the body, indented.
  Script& operator<<(const std::string& lines) {
    size_t start = 0;
    while (start < lines.size()) {
      size_t end = lines.find('\n', start);
      if (end == std::string::npos) end = lines.size();
      body_ += "  " + lines.substr(start, end - start) + "\n";
      start = end + 1;
    }
    return *this;
  }
  // A plot command of several clauses, one per line.
  void plot(const std::vector<std::string>& clauses) {
    std::string text = "plot ";
    for (size_t i = 0; i < clauses.size(); ++i) {
      text += (i ? ", \\\n     " : "") + clauses[i];
    }
    *this << text;
  }
  std::string text() const { return head_ + body_ + "  set output\n}\n"; }
  const std::string& name() const { return name_; }

 private:
  std::string name_, head_, body_;
};

// Where the plot area of a panel lies, in screen coordinates.
struct Panel {
  double left, right, bottom, top;
  double ylabel_offset = 0;  // from the plot's left edge to the y label's centre
  // The axis labels at fixed places under and left of the plot area ("" = none): gnuplot's
  // xlabel and ylabel sit so many character heights away, which the svg terminal spaces wider
  // than it draws its text.
  std::string axis_labels(const std::string& x, const std::string& y, int width, int height) const {
    std::string out = "unset xlabel\nunset ylabel\n";
    out += x.empty() ? "unset label 91\n"
                     : fmt::format("set label 91 {} at screen {}, screen {} center\n", gp_string(x),
                                   num((left + right) / 2), num(22.0 / height));
    out += y.empty() ? "unset label 92"
                     : fmt::format("set label 92 {} at screen {}, screen {} center rotate by 90",
                                   gp_string(y), num(std::max(14.0 / width, left - ylabel_offset)),
                                   num((bottom + top) / 2));
    return out;
  }
  std::string margins() const {
    return fmt::format(
        "set lmargin at screen {}\nset rmargin at screen {}\nset bmargin at screen {}\n"
        "set tmargin at screen {}",
        num(left), num(right), num(bottom), num(top));
  }
};

// `panels` side by side with a legend to their right as wide as its longest entry
// (`legend_chars` characters), in a canvas `width` × `height` pixels, with room left of each plot
// for y tic labels of `tic_chars` characters (and a y label left of the first, and of every panel
// when `ylabel_each`).
struct Layout {
  std::vector<Panel> panels;
  double key_x = 0, key_y = 0;  // the legend's top left corner, screen coordinates
};
Layout side_by_side(int panels, int width, int height, size_t legend_chars, size_t tic_chars,
                    bool ylabel_each = false) {
  const double w = width, h = height;
  const double key_width = (70 + kCharPixels * static_cast<double>(legend_chars)) / w;
  // Tic labels start about 12 pixels left of the axis, at about 11 pixels per digit; the y
  // label's centre is 16 pixels beyond them.
  const double tics = 12 + 11.0 * static_cast<double>(std::max<size_t>(tic_chars, 1));
  const double ylabel = tics + 16;
  const double left = (ylabel + 18) / w, gap = ((ylabel_each ? ylabel + 18 : tics) + 32) / w;
  const double right = 1 - key_width - 30 / w;
  const double bottom = 80 / h, top = 1 - 62 / h;
  const double panel = (right - left - gap * (panels - 1)) / panels;
  Layout layout;
  for (int p = 0; p < panels; ++p) {
    const double l = left + p * (panel + gap);
    layout.panels.push_back({l, l + panel, bottom, top, ylabel / w});
  }
  layout.key_x = right + 25 / w;
  layout.key_y = top;
  return layout;
}

// The characters of an axis's longest tic label (5 when gnuplot chooses the tics).
size_t tic_chars(const Axis& a) {
  if (a.tics.empty()) return 5;
  size_t n = 0;
  for (double t : a.tics) n = std::max(n, figure::tic_label(t).size());
  return n;
}

std::string key_at(const Layout& layout) {
  return fmt::format(
      "set key at screen {},{} left top Left reverse samplen 2.5 spacing 1.15 nobox "
      "noautotitle",
      num(layout.key_x), num(layout.key_y));
}

// Axis commands for axis 'x' or 'y' from a fitted Axis.
std::string axis_commands(char axis, const Axis& a) {
  std::string out = a.log ? fmt::format("set logscale {}\n", axis) : "";
  out += fmt::format("set {}range [{}:{}]\n", axis, num(a.low), num(a.high));
  if (a.tics.empty()) return out + fmt::format("set format {} '%g'\n", axis);
  std::vector<std::string> tics;
  for (double t : a.tics) tics.push_back(fmt::format("'{}' {}", figure::tic_label(t), num(t)));
  out += fmt::format("set {}tics ({})\n", axis, fmt::join(tics, ", "));
  if (a.log) out += fmt::format("set m{}tics 10\n", axis);
  return out;
}

Axis linear_axis(double low, double high) {
  return Axis{low, high, false, figure::linear_tics(low, high)};
}

// A horizontal dashed line at each target, labelled at its left end.
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

// popen(command, "r") whose shell, and the gnuplot it becomes, is killed when pacer dies
// (PR_SET_PDEATHSIG): a gnuplot that outlived a killed pacer would go on writing into a folder a
// later run has replaced. Returns the read end and the child's pid; nullptr when it failed.
FILE* open_pipe(const std::string& command, pid_t& child) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  const pid_t parent = ::getpid();
  child = ::fork();
  if (child == 0) {  // only async-signal-safe calls until exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // pacer died before the line above
    ::dup2(fds[1], STDOUT_FILENO);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  if (child < 0) {
    ::close(fds[0]);
    return nullptr;
  }
  return ::fdopen(fds[0], "r");
}

// pclose for open_pipe: closes the pipe and returns the child's wait status.
int close_pipe(FILE* pipe, pid_t child) {
  std::fclose(pipe);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

// The gnuplot processes of one call, run side by side: each figure's starts as soon as its files
// are written, and finish() waits for them all.
class Rendering {
 public:
  Rendering() : available_(gnuplot_on_path()) {}
  ~Rendering() { finish(); }
  Rendering(const Rendering&) = delete;
  Rendering& operator=(const Rendering&) = delete;

  bool available() const { return available_; }

  // Starts gnuplot on <dir>/<name>.gp, drawing to temporary names.
  void start(const std::string& dir, const std::string& name) {
    if (!available_) return;
    Job job{dir, name, fmt::format(".tmp.{}", static_cast<long>(::getpid())), nullptr, -1};
    const std::string command = fmt::format(
        "cd {} && exec gnuplot -e {} {} 2>&1", shell_quoted(dir),
        shell_quoted(fmt::format("png={}; svg={}", gp_string(name + ".png" + job.suffix),
                                 gp_string(name + ".svg" + job.suffix))),
        shell_quoted(name + ".gp"));
    job.pipe = open_pipe(command, job.child);
    if (!job.pipe) {
      failed_.push_back(fmt::format("{}.gp: gnuplot could not be started", name));
      return;
    }
    jobs_.push_back(std::move(job));
  }

  // Waits for every started gnuplot; renames what each drew into place.
  void finish() {
    for (Job& job : jobs_) complete(job);
    jobs_.clear();
  }

  bool drawn(const std::string& name) const { return drawn_.count(name) > 0; }
  const std::vector<std::string>& failed() const { return failed_; }

 private:
  struct Job {
    std::string dir, name, suffix;
    FILE* pipe;
    pid_t child;
  };

  void complete(Job& job) {
    std::string output;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, job.pipe)) > 0) output.append(buffer, n);
    const int status = close_pipe(job.pipe, job.child);
    const std::string png = job.dir + "/" + job.name + ".png",
                      svg = job.dir + "/" + job.name + ".svg";
    std::string problem;
    if (status != 0 || !std::filesystem::exists(png + job.suffix) ||
        !std::filesystem::exists(svg + job.suffix)) {
      problem = fmt::format("{}.gp: {}", job.name, gnuplot_message(output));
    } else {
      problem = check_drawing(png, job.suffix, &whole_png);
      if (problem.empty()) problem = check_drawing(svg, job.suffix, &whole_svg);
    }
    if (problem.empty()) problem = move_into_place(job.name, {png, svg}, job.suffix);
    if (problem.empty()) {
      drawn_.insert(job.name);
      return;
    }
    failed_.push_back(problem);
    // Neither a part of the drawing nor an earlier call's figure stays: both would mislead.
    std::error_code ec;
    for (const std::string& file : {png, svg}) {
      std::filesystem::remove(file + job.suffix, ec);
      std::filesystem::remove(file, ec);
    }
  }

  // What gnuplot said about its failure: the line it names, else its first line.
  static std::string gnuplot_message(const std::string& output) {
    std::string first = output.substr(0, output.find('\n'));
    // gnuplot echoes the offending line first; its message follows.
    const size_t message = output.find("line ");
    if (message != std::string::npos) {
      first = output.substr(message, output.find('\n', message) - message);
    }
    return first.empty() ? "failed" : first;
  }

  // Whether `content` is a whole PNG: the signature, and the IEND chunk at the very end.
  static bool whole_png(const std::string& content) {
    static constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
    static constexpr char kEnd[] = "IEND\xae\x42\x60\x82";
    return content.size() > 20 && content.compare(0, 8, kSignature, 8) == 0 &&
           content.compare(content.size() - 8, 8, kEnd, 8) == 0;
  }
  // Whether `content` is a whole SVG: it ends with the closing tag.
  static bool whole_svg(const std::string& content) {
    const size_t end = content.find_last_not_of(" \t\r\n");
    return end != std::string::npos && end >= 5 && content.compare(end - 5, 6, "</svg>") == 0;
  }

  // "" when gnuplot's drawing <file><suffix> is whole; else what is wrong, naming <file>. gnuplot
  // exits 0 when the disk fills under it, leaving a cut file. PACER_TEST_FAIL_WRITE_AT naming
  // the file's name cuts it at 4096 bytes, as a full disk did (core/files.h).
  static std::string check_drawing(const std::string& file, const std::string& suffix,
                                   bool (*whole)(const std::string&)) {
    const std::string drawn = file + suffix;
    if (injected_write_failure(file)) {
      std::error_code ec;
      std::filesystem::resize_file(drawn, 4096, ec);
    }
    std::string content;
    try {
      content = read_file(drawn);
    } catch (const Error& e) {
      return e.what();
    }
    if (whole(content)) return "";
    return fmt::format("{}: gnuplot wrote an incomplete file ({} bytes; is the disk full?)", file,
                       content.size());
  }

  // Renames the drawings into place; "" or what failed.
  static std::string move_into_place(const std::string& name, const std::vector<std::string>& files,
                                     const std::string& suffix) {
    crash_point("outputs.temp_written");
    for (const std::string& file : files) {
      std::error_code ec;
      std::filesystem::rename(file + suffix, file, ec);
      if (ec) return fmt::format("{}.gp: {}: {}", name, file, ec.message());
      crash_point("outputs.replaced");
    }
    return "";
  }

  bool available_;
  std::vector<Job> jobs_;
  std::vector<std::string> failed_;  // "<script>: <first line of gnuplot's output>"
  std::set<std::string> drawn_;
};

// Waits for the figures' gnuplot processes, sets Figure::rendered, and warns once when gnuplot
// is missing or a figure could not be drawn.
void finish_rendering(const std::string& dir, std::vector<Figure>& figures, Rendering& rendering) {
  rendering.finish();
  if (figures.empty()) return;
  std::vector<std::string> scripts;
  for (Figure& f : figures) {
    f.rendered = rendering.drawn(f.script.substr(0, f.script.size() - 3));
    scripts.push_back(f.script);
  }
  if (!rendering.available()) {
    log_warning(
        "gnuplot not found: wrote the figure scripts {} in {} (and their data in figures/) but "
        "no PNG or SVG (apt-get install gnuplot-nox, then run them there with gnuplot)",
        fmt::join(scripts, ", "), dir);
  } else if (!rendering.failed().empty()) {
    log_warning("gnuplot could not draw {} in {}; the scripts and data are kept",
                fmt::join(rendering.failed(), "; "), dir);
  }
}

// Writes the data files and the script, and starts rendering it. Figure::rendered is set by
// finish_rendering.
Figure write_figure(const std::string& dir, const Script& script,
                    const std::vector<std::pair<std::string, const DataFile*>>& data,
                    const std::string& caption, Rendering& rendering) {
  make_directories(dir + "/figures");
  for (const auto& [file, content] : data) write_file_atomic(dir + "/" + file, content->text());
  write_file_atomic(dir + "/" + script.name() + ".gp", script.text());
  Figure f;
  f.png = script.name() + ".png";
  f.svg = script.name() + ".svg";
  f.script = script.name() + ".gp";
  f.caption = caption;
  rendering.start(dir, script.name());
  return f;
}

// Removes what an earlier call wrote for a figure that is not written now.
void remove_figure(const std::string& dir, const std::string& name) {
  std::error_code ec;
  for (const char* ext : {".gp", ".png", ".svg"})
    std::filesystem::remove(dir + "/" + name + ext, ec);
  const std::string figures = dir + "/figures";
  if (!std::filesystem::is_directory(figures, ec)) return;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(figures, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(name + "-", 0) == 0 || file == name + ".dat") stale.push_back(entry.path());
  }
  for (const auto& p : stale) std::filesystem::remove(p, ec);
}

// ---------------------------------------------------------------------------------------------
// What a comparison's runs hold.

struct SeedFiles {
  uint64_t seed = 0;
  std::optional<Table> evals, trace;
  std::optional<nlohmann::json> summary;
};

struct MethodFiles {
  std::vector<SeedFiles> seeds;  // the method's seeds that did not diverge
  int diverged_left_out = 0;
};

std::string seed_folder(const MethodResult& m, const SeedRun& r) {
  return r.folder.empty() ? fmt::format("{}/seed{}", m.folder, r.seed) : r.folder;
}

// Reads every run's evals.csv, trace.csv and summary.json; `missing` collects what could not be
// read.
std::vector<MethodFiles> read_runs(const std::string& dir, const Comparison& c,
                                   std::vector<std::string>& missing) {
  std::vector<MethodFiles> out(c.methods.size());
  for (size_t m = 0; m < c.methods.size(); ++m) {
    for (const SeedRun& r : c.methods[m].runs) {
      if (r.diverged) {
        ++out[m].diverged_left_out;
        continue;
      }
      SeedFiles files;
      files.seed = r.seed;
      const std::string folder = dir + "/" + seed_folder(c.methods[m], r);
      auto table = [&](const std::string& file) -> std::optional<Table> {
        if (!std::filesystem::exists(folder + "/" + file)) {
          missing.push_back(folder + "/" + file);
          return std::nullopt;
        }
        try {
          return figure::read_table(folder + "/" + file);
        } catch (const Error& e) {
          missing.push_back(e.what());
          return std::nullopt;
        }
      };
      files.evals = table("evals.csv");
      files.trace = table("trace.csv");
      try {
        files.summary = nlohmann::json::parse(read_file(folder + "/summary.json"));
      } catch (const std::exception&) {
        missing.push_back(folder + "/summary.json");
      }
      out[m].seeds.push_back(std::move(files));
    }
  }
  return out;
}

// One method's curves against one x column ("time" or "work_units").
struct MethodCurves {
  Band f;         // evaluated F (or F̃) over seeds
  Band reported;  // smoothed reported loss, seed mean
};

Band evals_band(const MethodFiles& files, const std::string& x, const std::string& y) {
  std::vector<Series> seeds;
  for (const SeedFiles& s : files.seeds) {
    if (!s.evals) continue;
    Series series = figure::table_series(*s.evals, x, y);
    if (!series.empty()) seeds.push_back(std::move(series));
  }
  return figure::seed_band(seeds, figure::kGridPoints);
}

Band trace_band(const MethodFiles& files, const std::string& x) {
  std::vector<Series> seeds;
  for (const SeedFiles& s : files.seeds) {
    if (!s.trace) continue;
    Series series = figure::table_series(*s.trace, x, "loss");
    if (series.empty()) continue;
    seeds.push_back(figure::moving_average(series, figure::smoothing_window(series.size())));
  }
  return figure::seed_band(seeds, figure::kGridPoints);
}

// The data file of one quantity against one x: a block per method that has data.
// `blocks[m]` is the method's block index (-1: none).
DataFile band_file(const std::string& header, const Comparison& c, const std::vector<Band>& bands,
                   std::vector<int>& blocks, bool with_band) {
  DataFile file(header);
  blocks.assign(c.methods.size(), -1);
  for (size_t m = 0; m < c.methods.size(); ++m) {
    const Band& b = bands[m];
    if (b.empty()) continue;
    blocks[m] = file.block(
        fmt::format("{} ({} seed{})", c.methods[m].spec, b.seeds, b.seeds == 1 ? "" : "s"));
    for (size_t i = 0; i < b.size(); ++i) {
      if (with_band) {
        file.row({b.x[i], b.mean[i], b.low[i], b.high[i]});
      } else {
        file.row({b.x[i], b.mean[i]});
      }
    }
  }
  return file;
}

// Each seed's evaluations of one method, drawn as markers where they are few enough to be told
// apart (at most kMarkedEvaluations per seed on average): x, y, seed.
constexpr size_t kMarkedEvaluations = 12;
struct Points {
  std::vector<double> x, y, seed;
  bool empty() const { return x.empty(); }
};

Points evals_points(const MethodFiles& files, const std::string& x, const std::string& y) {
  Points p;
  size_t seeds = 0;
  for (const SeedFiles& s : files.seeds) {
    if (!s.evals) continue;
    Series series = figure::table_series(*s.evals, x, y);
    if (series.empty()) continue;
    ++seeds;
    p.x.insert(p.x.end(), series.x.begin(), series.x.end());
    p.y.insert(p.y.end(), series.y.begin(), series.y.end());
    p.seed.insert(p.seed.end(), series.size(), static_cast<double>(s.seed));
  }
  if (p.x.size() > kMarkedEvaluations * seeds) return Points{};
  return p;
}

DataFile points_file(const std::string& header, const Comparison& c,
                     const std::vector<Points>& points, std::vector<int>& blocks) {
  DataFile file(header);
  blocks.assign(c.methods.size(), -1);
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (points[m].empty()) continue;
    blocks[m] = file.block(c.methods[m].spec);
    for (size_t i = 0; i < points[m].x.size(); ++i) {
      file.row({points[m].x[i], points[m].y[i], points[m].seed[i]});
    }
  }
  return file;
}

void collect(std::vector<double>& values, const Band& b, bool with_band) {
  values.insert(values.end(), b.mean.begin(), b.mean.end());
  if (with_band) {
    values.insert(values.end(), b.low.begin(), b.low.end());
    values.insert(values.end(), b.high.begin(), b.high.end());
  }
}

size_t longest(const std::vector<std::string>& labels) {
  size_t n = 0;
  for (const std::string& l : labels) {
    // UTF-8: count code points, not bytes.
    size_t chars = 0;
    for (unsigned char ch : l) chars += (ch & 0xC0) != 0x80;
    n = std::max(n, chars);
  }
  return n;
}

// The plot clauses of one panel: bands, then faint traces, then each seed's evaluations as open
// circles, then the mean lines on top. A file name "" (or block -1) leaves that layer out.
struct PanelFiles {
  std::string band, reported, points;
  std::vector<int> band_blocks, reported_blocks, points_blocks;
};

std::vector<std::string> band_clauses(const Comparison& c, const PanelFiles& files,
                                      const std::vector<Band>& bands, bool titles) {
  std::vector<std::string> clauses;
  auto has = [](const std::string& file, const std::vector<int>& blocks, size_t m) {
    return !file.empty() && m < blocks.size() && blocks[m] >= 0;
  };
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (!has(files.band, files.band_blocks, m) || bands[m].seeds < 2) continue;
    clauses.push_back(
        fmt::format("{} index {} using 1:3:4 with filledcurves fs transparent solid 0.18 noborder "
                    "lc rgb '{}' notitle",
                    gp_string(files.band), files.band_blocks[m], figure::method_colour(m)));
  }
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (!has(files.reported, files.reported_blocks, m)) continue;
    clauses.push_back(
        fmt::format("{} index {} using 1:2 with lines lw 1.5 lc rgb '{}' dt {} notitle",
                    gp_string(files.reported), files.reported_blocks[m],
                    faint(figure::method_colour(m)), figure::method_dash(m)));
  }
  for (size_t m = 0; m < c.methods.size(); ++m) {
    if (!has(files.points, files.points_blocks, m)) continue;
    clauses.push_back(fmt::format(
        "{} index {} using 1:2 with points pt 6 ps 1.2*pscale lw 1.5 lc rgb '{}' notitle",
        gp_string(files.points), files.points_blocks[m], figure::method_colour(m)));
  }
  for (size_t m = 0; m < c.methods.size(); ++m) {
    const bool line = has(files.band, files.band_blocks, m);
    if (!line && !has(files.points, files.points_blocks, m)) continue;
    const std::string title = titles ? "title " + gp_string(c.methods[m].spec) : "notitle";
    if (!line) {  // markers only: a legend entry in the method's colour
      if (titles)
        clauses.push_back(fmt::format("keyentry with lines {} {}", line_style(m, 2.5), title));
      continue;
    }
    const bool single = bands[m].size() == 1;
    clauses.push_back(fmt::format(
        "{} index {} using 1:2 with {} {} {}", gp_string(files.band), files.band_blocks[m],
        single ? "points pt 7 ps 1.3*pscale" : "lines", line_style(m, 2.5), title));
  }
  return clauses;
}

// Lowers the axis so that the label under each target line (at the left end) fits in the plot.
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
  if (changed && !y.log) y.tics = figure::linear_tics(y.low, y.high);
}

std::string comparison_title(const Comparison& c, const std::string& what) {
  std::string title = c.name.empty() ? what : fmt::format("{}: {}", c.name, what);
  const std::string budget = c.budget.describe();
  std::vector<std::string> parts;
  if (!budget.empty()) parts.push_back(budget);
  if (!c.seeds.empty()) parts.push_back(describe_seeds(c.seeds));
  if (!parts.empty()) title += fmt::format(" ({})", fmt::join(parts, ", "));
  return title;
}

// How every bar chart of a comparison opens: its title, a light horizontal grid, and a border on
// the left and bottom only.
void open_bar_chart(Script& s, const Comparison& c, const std::string& what) {
  s << fmt::format("set title {} font ',{}'", gp_string(comparison_title(c, what)), kTitleFont);
  s << "set grid ytics lc rgb '#dddddd'\nset border 3 lc rgb '#444444'\nset tics nomirror";
}

// The same for a one-panel chart laid out by side_by_side: also its margins and key.
void open_bar_chart(Script& s, const Comparison& c, const std::string& what, const Layout& layout) {
  open_bar_chart(s, c, what);
  s << layout.panels[0].margins();
  s << key_at(layout);
}

// ---------------------------------------------------------------------------------------------
// The figures of a comparison.

// One panel of a curve figure: a quantity of evals.csv against x, per method.
struct CurvePanel {
  std::string x, y;  // evals.csv columns
  std::string what;  // the quantity, for the data files' headers
  std::string xlabel, ylabel;
  std::string band_file, points_file, reported_file;  // reported_file "": no reported loss
  bool targets = false;                               // draw the target lines
};

// Two panels side by side with a shared y axis, a legend on the right: per method the seed mean
// (line), the min–max band, each seed's evaluations where they are few, and the faint reported
// loss. `shown[m]`: whether method m is drawn. Returns nullopt when there is nothing to draw.
std::optional<Figure> curve_figure(const std::string& dir, const Comparison& c,
                                   const std::vector<MethodFiles>& runs,
                                   const std::vector<bool>& shown, const std::string& name,
                                   const std::string& title, const std::string& caption_head,
                                   const std::vector<CurvePanel>& panels, Rendering& rendering) {
  const size_t methods = c.methods.size();
  const size_t n = panels.size();
  std::vector<std::vector<Band>> bands(n, std::vector<Band>(methods)),
      reported(n, std::vector<Band>(methods));
  std::vector<std::vector<Points>> points(n, std::vector<Points>(methods));
  std::vector<double> y_values;
  std::vector<std::vector<double>> x_values(n);
  bool any_band = false, any_reported = false, any_points = false, any = false;
  for (size_t p = 0; p < n; ++p) {
    const CurvePanel& panel = panels[p];
    for (size_t m = 0; m < methods; ++m) {
      if (!shown[m]) continue;
      bands[p][m] = evals_band(runs[m], panel.x, panel.y);
      points[p][m] = evals_points(runs[m], panel.x, panel.y);
      if (!panel.reported_file.empty()) reported[p][m] = trace_band(runs[m], panel.x);
      collect(y_values, bands[p][m], true);
      collect(y_values, reported[p][m], false);
      y_values.insert(y_values.end(), points[p][m].y.begin(), points[p][m].y.end());
      for (const std::vector<double>* xs : {&bands[p][m].x, &reported[p][m].x, &points[p][m].x}) {
        x_values[p].insert(x_values[p].end(), xs->begin(), xs->end());
      }
      any_band |= bands[p][m].seeds >= 2;
      any_reported |= !reported[p][m].empty();
      any_points |= !points[p][m].empty();
      any |= !bands[p][m].empty() || !points[p][m].empty() || !reported[p][m].empty();
    }
  }
  if (!any) return std::nullopt;
  bool with_targets = false;
  for (const CurvePanel& panel : panels) with_targets |= panel.targets;
  if (with_targets) y_values.insert(y_values.end(), c.targets.begin(), c.targets.end());
  Axis y = figure::fit_axis(y_values);
  if (with_targets) make_room_below(y, c.targets);

  std::vector<PanelFiles> files(n);
  std::vector<std::pair<std::string, DataFile>> data;
  for (size_t p = 0; p < n; ++p) {
    const CurvePanel& panel = panels[p];
    files[p].band = panel.band_file;
    data.emplace_back(panel.band_file,
                      band_file(fmt::format("{} against {}, one block per method.\nColumns: {}, "
                                            "mean over seeds, min over seeds, max over seeds. "
                                            "Each seed is a step function\n(its last evaluation "
                                            "at or before x) on {} points over the range every "
                                            "seed covers.",
                                            panel.what, panel.x, panel.x, figure::kGridPoints),
                                c, bands[p], files[p].band_blocks, true));
    bool panel_points = false;
    for (const Points& pts : points[p]) panel_points |= !pts.empty();
    if (panel_points) {
      files[p].points = panel.points_file;
      data.emplace_back(panel.points_file,
                        points_file(fmt::format("{}: each seed's evaluations (evals.csv), one "
                                                "block per method.\nColumns: {}, {}, seed",
                                                panel.what, panel.x, panel.y),
                                    c, points[p], files[p].points_blocks));
    }
    if (!panel.reported_file.empty()) {
      files[p].reported = panel.reported_file;
      data.emplace_back(
          panel.reported_file,
          band_file(fmt::format("The reported (minibatch) training loss against {}, one block "
                                "per method: each seed's\ntrace.csv smoothed by a centred moving "
                                "average of about 1/25 of its rows, then the mean\nover seeds as "
                                "a step function on {} points over the range every seed "
                                "covers.\nColumns: {}, mean over seeds.",
                                panel.x, figure::kGridPoints, panel.x),
                    c, reported[p], files[p].reported_blocks, false));
    }
  }

  const std::string band_label = "band: min–max over seeds";
  const std::string points_label = "one seed's evaluation";
  const std::string reported_label = "reported loss, smoothed";
  std::vector<std::string> labels;
  for (size_t m = 0; m < methods; ++m) {
    if (shown[m]) labels.push_back(c.methods[m].spec);
  }
  if (any_band) labels.push_back(band_label);
  if (any_points) labels.push_back(points_label);
  if (any_reported) labels.push_back(reported_label);
  const int width = n == 1 ? 1000 : 1400, height = 540;
  bool ylabel_each = false;
  for (size_t p = 1; p < n; ++p) ylabel_each |= !panels[p].ylabel.empty();
  Layout layout =
      side_by_side(static_cast<int>(n), width, height, longest(labels), tic_chars(y), ylabel_each);

  std::string caption = fmt::format(
      "{}: per method the mean over {} (line){}, each seed a step function of its last "
      "evaluation on a common grid over the range every seed covers{}{}",
      caption_head, c.seeds.empty() ? "the seeds" : describe_seeds(c.seeds),
      any_band ? " and the pointwise min–max over the seeds (band)" : "",
      any_points ? "; open circles: each seed's evaluations" : "",
      any_reported ? "; faint lines: the reported minibatch loss, smoothed (seed mean)" : "");
  if (with_targets && !c.targets.empty()) {
    std::vector<std::string> ts;
    for (double t : c.targets) ts.push_back(describe_target(t, c.target_on));
    caption += fmt::format("; dashed: the target {}", fmt::join(ts, ", "));
  }
  int left_out = 0;
  for (size_t m = 0; m < methods; ++m) left_out += shown[m] ? runs[m].diverged_left_out : 0;
  if (left_out) {
    caption += fmt::format(" ({} diverged run{} left out)", left_out, left_out == 1 ? "" : "s");
  }
  caption += ".";

  Script s(name, caption, width, height);
  s << fmt::format("set multiplot title {} font ',{}'", gp_string(comparison_title(c, title)),
                   kTitleFont);
  s << "set grid lc rgb '#dddddd'\nset border lc rgb '#444444'";
  s << axis_commands('y', y);
  for (size_t p = 0; p < n; ++p) {
    const CurvePanel& panel = panels[p];
    s << layout.panels[p].margins();
    s << axis_commands('x', figure::fit_x_axis(x_values[p]));
    s << "unset arrow\nunset label";
    if (panel.targets) s << target_lines(c.targets, c.target_on);
    s << layout.panels[p].axis_labels(panel.xlabel, panel.ylabel, width, height);
    const bool last = p + 1 == n;
    s << (last ? key_at(layout) : std::string("unset key"));
    std::vector<std::string> clauses = band_clauses(c, files[p], bands[p], last);
    if (last) {
      if (any_band) {
        clauses.push_back(fmt::format(
            "keyentry with filledcurves fs transparent solid 0.25 noborder lc rgb '{}' title {}",
            kNeutralColour, gp_string(band_label)));
      }
      if (any_points) {
        clauses.push_back(
            fmt::format("keyentry with points pt 6 ps 1.2*pscale lw 1.5 lc rgb '{}' title {}",
                        kNeutralColour, gp_string(points_label)));
      }
      if (any_reported) {
        clauses.push_back(fmt::format("keyentry with lines lw 1.5 lc rgb '{}' title {}",
                                      faint(kNeutralColour), gp_string(reported_label)));
      }
    }
    if (clauses.empty()) clauses.push_back("keyentry notitle");
    s.plot(clauses);
  }
  s << "unset multiplot";
  std::vector<std::pair<std::string, const DataFile*>> written;
  for (const auto& [file, content] : data) written.emplace_back(file, &content);
  return write_figure(dir, s, written, caption, rendering);
}

std::optional<Figure> loss_figure(const std::string& dir, const Comparison& c,
                                  const std::vector<MethodFiles>& runs, Rendering& rendering) {
  const std::string what = "F (full training loss of the evaluated model)";
  std::vector<CurvePanel> panels = {
      {"time", "full_loss", what, "simulated time (s)", "F (full training loss)",
       "figures/loss-F-time.dat", "figures/loss-F-time-evals.dat", "figures/loss-reported-time.dat",
       true},
      {"work_units", "full_loss", what, "work units (partition gradients)", "",
       "figures/loss-F-work.dat", "figures/loss-F-work-evals.dat", "figures/loss-reported-work.dat",
       true}};
  return curve_figure(dir, c, runs, std::vector<bool>(c.methods.size(), true), "loss",
                      "training loss",
                      "F, the full training loss of the evaluated model, against simulated time "
                      "(left) and work units (right)",
                      panels, rendering);
}

std::optional<Figure> tilde_figure(const std::string& dir, const Comparison& c,
                                   const std::vector<MethodFiles>& runs, Rendering& rendering) {
  std::vector<bool> shown;
  bool any_async = false;
  for (const MethodResult& m : c.methods) {
    shown.push_back(m.asynchronous);
    any_async |= m.asynchronous;
  }
  if (!any_async) return std::nullopt;
  const bool on_f = c.target_on == "full";
  std::vector<CurvePanel> panels = {
      {"time", "full_loss", "F (full training loss) of the asynchronous methods",
       "simulated time (s)", "F (full training loss)", "figures/tilde-F.dat",
       "figures/tilde-F-evals.dat", "", on_f},
      {"time", "tilde_loss",
       "F̃ = Σ w_i F_i with w_i ∝ 1/τ_i (the objective vanilla ASGD minimises)",
       "simulated time (s)", "F̃ (frequency-weighted loss)", "figures/tilde-Ftilde.dat",
       "figures/tilde-Ftilde-evals.dat", "", false}};
  return curve_figure(dir, c, runs, shown, "tilde", "F and F̃",
                      "The full training loss F (left) and the frequency-weighted loss F̃ = Σ w_i "
                      "F_i, w_i ∝ 1/τ_i (right: the objective vanilla ASGD minimises) of the "
                      "asynchronous methods against simulated time, on one y axis",
                      panels, rendering);
}

std::optional<Figure> time_to_target_figure(const std::string& dir, const Comparison& c,
                                            Rendering& rendering) {
  if (c.targets.empty() || c.methods.empty()) return std::nullopt;
  const std::string target = describe_target(c.targets[0], c.target_on);
  DataFile data(fmt::format(
      "Time to the target {} (simulated s), one row per method.\nColumns: position, mean over "
      "seeds, 95 % t interval low and high (NaN with fewer than two values),\ncensored seeds "
      "(their end time counts: the mean is a lower bound), seeds that reached it, seeds,\nthe "
      "height of the labels, the value label, the reached label, the method.",
      target));
  double top = 0;
  bool any_censored = false;
  for (const MethodResult& m : c.methods) {
    const Estimate& e = m.time_to_target;
    if (e.empty()) continue;
    top = std::max({top, e.mean, std::isfinite(e.high) ? e.high : 0.0});
  }
  if (!(top > 0)) top = 1;
  const Axis y = linear_axis(0, top * 1.22);
  for (size_t i = 0; i < c.methods.size(); ++i) {
    const MethodResult& m = c.methods[i];
    const Estimate& e = m.time_to_target;
    const int runs = static_cast<int>(m.runs.size());
    const bool censored = e.censored > 0;
    any_censored |= censored && !e.empty();
    std::string value = e.empty()
                            ? (m.diverged ? "diverged" : "no value")
                            : fmt::format("{}{} s", censored ? "≥ " : "", short_number(e.mean));
    std::string reached = fmt::format("{}/{} reached", m.reached, runs);
    const double label_y =
        e.empty() ? 0 : std::max(e.mean, std::isfinite(e.high) ? e.high : e.mean);
    data.raw(fmt::format("{} {} {} {} {} {} {} {} {} {} {}", i, data_number(e.mean),
                         data_number(e.low), data_number(e.high), e.censored, m.reached, runs,
                         data_number(label_y), data_string(value), data_string(reached),
                         data_string(m.spec)));
  }
  const int n = static_cast<int>(c.methods.size());
  const int width = std::max(1000, 180 + 120 * n), height = 600;
  std::string caption = fmt::format(
      "Simulated time to the target {} per method: the mean over {} with its 95 % t interval "
      "(error bars); above each bar the mean and how many seeds reached the target",
      target, c.seeds.empty() ? "seeds" : describe_seeds(c.seeds));
  if (any_censored) {
    caption +=
        "; hatched, lighter bars marked ≥ include seeds that missed it, counted at their end "
        "time, so the mean is a lower bound";
  }
  caption += ".";
  Script s("time_to_target", caption, width, height);
  open_bar_chart(s, c, "time to target " + target);
  std::vector<std::string> specs;
  for (const MethodResult& m : c.methods) specs.push_back(m.spec);
  // Method names longer than a bar is wide are written at 20°, with room below for the longest.
  // (A name of k characters at 20° reaches about 0.13 k character heights below the axis.)
  const bool rotate = longest(specs) > 9;
  const int names = rotate ? static_cast<int>(std::ceil(0.13 * longest(specs))) : 1;
  s << fmt::format("set lmargin 11\nset rmargin 4\nset bmargin {}\nset tmargin 3",
                   2 + names + (any_censored ? 2 : 0));
  s << axis_commands('y', y);
  s << fmt::format("set xrange [-0.6:{}]", num(n - 0.4));
  std::vector<std::string> tics;
  for (int i = 0; i < n; ++i) tics.push_back(fmt::format("{} {}", gp_string(c.methods[i].spec), i));
  s << fmt::format("set xtics ({}) scale 0{}", fmt::join(tics, ", "),
                   rotate ? " rotate by 20 right" : "");
  s << "set ylabel 'time to target (simulated s)'";
  s << "unset key";
  if (any_censored) {
    s << fmt::format("set label 1 {} at screen 0.5, screen {} center tc rgb '{}' font ',13'",
                     gp_string("hatched: some seeds missed the target and count their end "
                               "time (≥: a lower bound)"),
                     num(22.0 / height), kNeutralColour);
  }
  const std::string file = gp_string("figures/time_to_target.dat");
  std::vector<std::string> clauses;
  for (int i = 0; i < n; ++i) {
    const MethodResult& m = c.methods[i];
    if (m.time_to_target.empty()) continue;
    const std::string colour = figure::method_colour(i);
    if (m.time_to_target.censored > 0) {
      clauses.push_back(fmt::format(
          "{} every ::{}::{} using 1:2:(0.7) with boxes fs transparent solid 0.35 noborder lc rgb "
          "'{}' notitle",
          file, i, i, colour));
      clauses.push_back(fmt::format(
          "{} every ::{}::{} using 1:2:(0.7) with boxes fs transparent pattern 4 border lc rgb "
          "'{}' lc rgb '{}' notitle",
          file, i, i, colour, colour));
    } else {
      clauses.push_back(fmt::format(
          "{} every ::{}::{} using 1:2:(0.7) with boxes fs solid 0.85 border lc rgb '#333333' "
          "lc rgb '{}' notitle",
          file, i, i, colour));
    }
  }
  // The 95 % interval as an error bar (drawn as vectors: gnuplot's errorbars leave a gap at the
  // mean). The interval of a censored mean is one of lower bounds: drawn lighter.
  for (int censored = 0; censored < (any_censored ? 2 : 1); ++censored) {
    const std::string keep = censored ? "$5 > 0" : "$5 == 0";
    const std::string colour = censored ? "#999999" : "#222222";
    clauses.push_back(fmt::format(
        "{} using 1:({} ? $3 : NaN):(0):($4-$3) with vectors nohead lw 1.5 lc rgb '{}' notitle",
        file, keep, colour));
    for (int end : {3, 4}) {
      clauses.push_back(fmt::format(
          "{} using ($1-0.08):({} ? ${} : NaN):(0.16):(0) with vectors nohead lw 1.5 lc rgb '{}' "
          "notitle",
          file, keep, end, colour));
    }
  }
  clauses.push_back(fmt::format("{} using 1:8:9 with labels offset 0,1.9 notitle", file));
  clauses.push_back(
      fmt::format("{} using 1:8:10 with labels offset 0,0.8 tc rgb '#555555' font ',{}' notitle",
                  file, kFont - 2));
  s.plot(clauses);
  return write_figure(dir, s, {{"figures/time_to_target.dat", &data}}, caption, rendering);
}

// The first seed of each method whose summary.json could be read.
const SeedFiles* first_summary(const MethodFiles& files) {
  for (const SeedFiles& s : files.seeds) {
    if (s.summary) return &s;
  }
  return nullptr;
}

std::vector<double> json_doubles(const nlohmann::json& j) {
  std::vector<double> out;
  if (!j.is_array()) return out;
  for (const auto& v : j) out.push_back(v.is_number() ? v.get<double>() : std::nan(""));
  return out;
}

// "seed 1 of each method" or "the first seed of each method (1, 1, 2)".
std::string describe_first_seeds(const std::vector<uint64_t>& seeds) {
  std::set<uint64_t> distinct(seeds.begin(), seeds.end());
  if (distinct.size() == 1) return fmt::format("seed {} of each method", seeds[0]);
  return fmt::format("the first seed of each method ({})", fmt::join(seeds, ", "));
}

std::optional<Figure> workers_figure(const std::string& dir, const Comparison& c,
                                     const std::vector<MethodFiles>& runs, Rendering& rendering) {
  // busy[m][w]; methods without the stats are left out.
  std::vector<std::vector<double>> busy(c.methods.size());
  std::vector<size_t> shown;
  std::vector<uint64_t> seeds;
  size_t workers = 0;
  for (size_t m = 0; m < c.methods.size(); ++m) {
    const SeedFiles* s = first_summary(runs[m]);
    if (!s || !s->summary->contains("engine_stats")) continue;
    const nlohmann::json& stats = (*s->summary)["engine_stats"];
    if (!stats.contains("busy_time_per_worker") || !stats.contains("idle_time_per_worker")) {
      continue;
    }
    std::vector<double> b = json_doubles(stats["busy_time_per_worker"]);
    std::vector<double> idle = json_doubles(stats["idle_time_per_worker"]);
    if (b.empty() || b.size() != idle.size()) continue;
    for (size_t w = 0; w < b.size(); ++w) {
      const double total = b[w] + idle[w];
      b[w] = total > 0 ? b[w] / total : std::nan("");
    }
    workers = std::max(workers, b.size());
    busy[m] = std::move(b);
    shown.push_back(m);
    seeds.push_back(s->seed);
  }
  if (shown.empty()) return std::nullopt;
  std::vector<std::string> columns = {"worker"};
  for (size_t m : shown) columns.push_back(c.methods[m].spec);
  DataFile data(fmt::format(
      "Busy fraction busy / (busy + idle) of each worker over the run ({}).\nColumns: {}",
      describe_first_seeds(seeds), fmt::join(columns, ", ")));
  data.block("one row per worker");
  double top = 0;
  for (size_t w = 0; w < workers; ++w) {
    std::string line = std::to_string(w);
    for (size_t m : shown) {
      const double v = w < busy[m].size() ? busy[m][w] : std::nan("");
      line += ' ';
      line += data_number(v);
      if (std::isfinite(v)) top = std::max(top, v);
    }
    data.raw(line);
  }
  std::vector<std::string> labels;
  for (size_t m : shown) {
    double sum = 0;
    int count = 0;
    for (double v : busy[m]) {
      if (std::isfinite(v)) sum += v, ++count;
    }
    labels.push_back(fmt::format("{} (mean {:.2f})", c.methods[m].spec, count ? sum / count : 0.0));
  }
  const bool bars = workers * shown.size() <= 160;
  const int width =
      bars ? std::clamp(static_cast<int>(420 + 16 * workers * shown.size()), 1200, 2000) : 1400;
  const int height = 540;
  Layout layout = side_by_side(1, width, height, longest(labels), 4);  // "0.25"
  std::string caption = fmt::format(
      "Per-worker busy fraction busy / (busy + idle) of the run's simulated time for {}: below 1 "
      "where a worker waited for the rest of a step or sat idle after a cancelled job; the "
      "legend gives the mean over workers.",
      describe_first_seeds(seeds));
  Script s("workers", caption, width, height);
  open_bar_chart(s, c, "worker utilisation", layout);
  s << axis_commands('y', linear_axis(0, std::max(top, 0.05) * 1.08));
  s << fmt::format("set xrange [-0.6:{}]", num(static_cast<double>(workers) - 0.4));
  s << (workers <= 32 ? "set xtics 1 scale 0" : "set xtics autofreq");
  s << layout.panels[0].axis_labels("worker", "busy fraction of the run", width, height);
  std::vector<std::string> clauses;
  const double group = 0.8, bar = group / static_cast<double>(shown.size());
  for (size_t k = 0; k < shown.size(); ++k) {
    const size_t m = shown[k];
    if (bars) {
      const double offset = (static_cast<double>(k) - (shown.size() - 1) / 2.0) * bar;
      clauses.push_back(fmt::format(
          "'figures/workers.dat' using ($1+({})):{}:({}) with boxes fs solid 0.85 noborder "
          "lc rgb '{}' title {}",
          num(offset), k + 2, num(bar), figure::method_colour(m), gp_string(labels[k])));
    } else {
      clauses.push_back(fmt::format(
          "'figures/workers.dat' using 1:{} with linespoints pt 7 ps 0.6*pscale {} title {}", k + 2,
          line_style(m, 2), gp_string(labels[k])));
    }
  }
  s.plot(clauses);
  return write_figure(dir, s, {{"figures/workers.dat", &data}}, caption, rendering);
}

std::optional<Figure> staleness_figure(const std::string& dir, const Comparison& c,
                                       const std::vector<MethodFiles>& runs, Rendering& rendering) {
  // fraction[m][age]
  std::vector<std::map<int64_t, double>> fraction(c.methods.size());
  std::vector<size_t> shown;
  std::vector<uint64_t> seeds;
  int64_t max_age = 0;
  for (size_t m = 0; m < c.methods.size(); ++m) {
    const SeedFiles* s = first_summary(runs[m]);
    if (!s || !s->summary->contains("method_stats")) continue;
    const nlohmann::json& stats = (*s->summary)["method_stats"];
    // Synchronous masters count the age (in steps) of each gradient used; asynchronous ones the
    // delay (in updates) of each arrival.
    const char* key = stats.contains("staleness_histogram") ? "staleness_histogram"
                      : stats.contains("delay_histogram")   ? "delay_histogram"
                                                            : nullptr;
    if (!key || !stats[key].is_object()) continue;
    double total = 0;
    std::map<int64_t, double> counts;
    for (const auto& [age, count] : stats[key].items()) {
      if (!count.is_number()) continue;
      int64_t a = 0;
      try {
        a = std::stoll(age);
      } catch (const std::exception&) {
        continue;
      }
      counts[a] += count.get<double>();
      total += count.get<double>();
    }
    if (!(total > 0)) continue;
    for (auto& [age, count] : counts) {
      fraction[m][age] = count / total;
      max_age = std::max(max_age, age);
    }
    shown.push_back(m);
    seeds.push_back(s->seed);
  }
  if (shown.empty()) return std::nullopt;
  // Grouped bars for short histograms; a long tail reads better as points on a log axis.
  const bool bars = max_age <= 10 && (max_age + 1) * static_cast<int64_t>(shown.size()) <= 80;
  std::vector<std::string> columns = {"age"};
  for (size_t m : shown) columns.push_back(c.methods[m].spec);
  DataFile data(fmt::format(
      "Staleness histogram ({}): the fraction of the gradients used that were computed at a\n"
      "model so many steps (synchronous methods) or updates (asynchronous methods) old.\n"
      "Columns: {}{}",
      describe_first_seeds(seeds), fmt::join(columns, ", "),
      bars ? "" : "\nAges no gradient had are NaN (the figure's y axis may be logarithmic)."));
  data.block("one row per age");
  std::vector<double> values;
  for (int64_t age = 0; age <= max_age; ++age) {
    std::string line = std::to_string(age);
    for (size_t m : shown) {
      auto it = fraction[m].find(age);
      const double v = it == fraction[m].end() ? (bars ? 0.0 : std::nan("")) : it->second;
      line += ' ';
      line += data_number(v);
      if (std::isfinite(v) && v > 0) values.push_back(v);
    }
    data.raw(line);
  }
  std::vector<std::string> labels;
  for (size_t m : shown) {
    double mean = 0;
    for (const auto& [age, f] : fraction[m]) mean += static_cast<double>(age) * f;
    labels.push_back(fmt::format("{} (mean {:.2f})", c.methods[m].spec, mean));
  }
  const int width =
      bars ? std::clamp(static_cast<int>(420 + 22 * (max_age + 1) * shown.size()), 1100, 1600)
           : 1400;
  const int height = 540;
  Layout layout = side_by_side(1, width, height, longest(labels), 6);  // "0.0001"
  std::string caption = fmt::format(
      "Staleness of the gradients each method used, for {}: the fraction of gradients per age "
      "(steps since the model version they were computed at; updates for asynchronous methods); "
      "the legend gives the mean age.",
      describe_first_seeds(seeds));
  Script s("staleness", caption, width, height);
  open_bar_chart(s, c, "gradient staleness", layout);
  s << layout.panels[0].axis_labels("staleness (steps; updates for asynchronous methods)",
                                    "fraction of gradients", width, height);
  std::vector<std::string> clauses;
  if (bars) {
    double top = 0;
    for (double v : values) top = std::max(top, v);
    s << axis_commands('y', linear_axis(0, std::max(top, 0.05) * 1.08));
    s << fmt::format("set xrange [-0.6:{}]\nset xtics 1 scale 0",
                     num(static_cast<double>(max_age) + 0.4));
    const double bar = 0.8 / static_cast<double>(shown.size());
    for (size_t k = 0; k < shown.size(); ++k) {
      const double offset = (static_cast<double>(k) - (shown.size() - 1) / 2.0) * bar;
      clauses.push_back(fmt::format(
          "'figures/staleness.dat' using ($1+({})):{}:({}) with boxes fs solid 0.85 noborder "
          "lc rgb '{}' title {}",
          num(offset), k + 2, num(bar), figure::method_colour(shown[k]), gp_string(labels[k])));
    }
  } else {
    Axis y = figure::fit_axis(values);
    if (!y.log) {  // within a decade: a plain axis from 0
      double top = 0;
      for (double v : values) top = std::max(top, v);
      y = linear_axis(0, top * 1.08);
    }
    s << axis_commands('y', y);
    const int64_t ages = max_age + 1;
    if (ages * static_cast<int64_t>(shown.size()) <= 200) {
      // Grouped stems from the bottom of the log axis: a bar chart that shows the tail.
      s << axis_commands('x', Axis{-0.6, static_cast<double>(max_age) + 0.4, false,
                                   figure::linear_tics(0, static_cast<double>(max_age))});
      const double bar = 0.8 / static_cast<double>(shown.size());
      const double plot_pixels = (layout.panels[0].right - layout.panels[0].left) * width;
      const double stem =
          std::clamp(0.8 * bar * plot_pixels / static_cast<double>(ages), 1.0, 12.0);
      for (size_t k = 0; k < shown.size(); ++k) {
        const double offset = (static_cast<double>(k) - (shown.size() - 1) / 2.0) * bar;
        clauses.push_back(fmt::format(
            "'figures/staleness.dat' using ($1+({})):({}):(0):(column({})-({})) with vectors "
            "nohead lw {}*pscale lc rgb '{}' title {}",
            num(offset), num(y.low), k + 2, num(y.low), num(stem), figure::method_colour(shown[k]),
            gp_string(labels[k])));
      }
    } else {
      s << axis_commands('x', linear_axis(0, static_cast<double>(max_age)));
      for (size_t k = 0; k < shown.size(); ++k) {
        clauses.push_back(fmt::format(
            "'figures/staleness.dat' using 1:{} with linespoints pt 7 ps 0.6*pscale {} title {}",
            k + 2, line_style(shown[k], 1.5), gp_string(labels[k])));
      }
    }
  }
  s.plot(clauses);
  return write_figure(dir, s, {{"figures/staleness.dat", &data}}, caption, rendering);
}

}  // namespace

std::vector<Figure> write_comparison_figures(const std::string& dir, const Comparison& c) {
  std::vector<std::string> missing;
  const std::vector<MethodFiles> runs = read_runs(dir, c, missing);
  if (!missing.empty()) {
    log_warning("figures of {}: {} run file{} could not be read and {} left out (first: {})", dir,
                missing.size(), missing.size() == 1 ? "" : "s", missing.size() == 1 ? "is" : "are",
                missing[0]);
  }
  Rendering rendering;  // each figure's gnuplot starts once its files are written
  std::vector<Figure> figures;
  std::set<std::string> written;
  auto add = [&](std::optional<Figure> f) {
    if (!f) return;
    written.insert(f->script.substr(0, f->script.size() - 3));
    figures.push_back(std::move(*f));
  };
  add(loss_figure(dir, c, runs, rendering));
  add(time_to_target_figure(dir, c, rendering));
  add(tilde_figure(dir, c, runs, rendering));
  add(workers_figure(dir, c, runs, rendering));
  add(staleness_figure(dir, c, runs, rendering));
  for (const char* name : kComparisonFigures) {
    if (!written.count(name)) remove_figure(dir, name);
  }
  finish_rendering(dir, figures, rendering);
  return figures;
}

namespace {

// A gnuplot double-quoted string: "\n" in `text` becomes a line break there.
std::string gp_lines(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '\\' || ch == '"') out += '\\';
    out += ch == '\n' ? std::string("\\n") : std::string(1, ch);
  }
  return out + "\"";
}

// Tic labels at 0, 1, ...: ("a" 0, "b" 1).
std::string category_tics(const std::vector<std::string>& values) {
  std::vector<std::string> tics;
  for (size_t i = 0; i < values.size(); ++i)
    tics.push_back(fmt::format("{} {}", gp_string(values[i]), i));
  return fmt::format("({})", fmt::join(tics, ", "));
}

}  // namespace

std::optional<Figure> write_regime_map(const std::string& dir, const RegimeMap& map) {
  const size_t nx = std::max<size_t>(1, map.x_values.size()), ny = map.y_values.size();
  if (ny == 0 || map.winner.size() != nx * ny || map.labels.size() != nx * ny) return std::nullopt;
  DataFile data(fmt::format(
      "{}\nOne row per cell: column (x), row (y), the winning method's colour as 0xRRGGBB, its "
      "index, its name.",
      map.title));
  std::set<int> winners;
  for (size_t y = 0; y < ny; ++y) {
    for (size_t x = 0; x < nx; ++x) {
      const int w = map.winner[y * nx + x];
      winners.insert(w);
      // No winner (undecided, or no method reached the target): grey.
      const std::string hex = w < 0 ? "#BBBBBB" : figure::method_colour(static_cast<size_t>(w));
      const long colour = std::stol(hex.substr(1), nullptr, 16);
      data.raw(fmt::format("{} {} {} {} {}", x, y, colour, w,
                           data_string(w < 0 ? "no winner" : map.methods[w])));
    }
  }
  size_t legend = std::string("no winner").size();
  for (int w : winners) legend = std::max(legend, w < 0 ? 0 : map.methods[w].size());
  const int tile_w = 230, tile_h = 120;
  const int width =
      200 + tile_w * static_cast<int>(nx) + static_cast<int>(legend * kCharPixels) + 80;
  const int height = 170 + tile_h * static_cast<int>(ny);
  Script s("regime_map", map.caption, width, height);
  const double left = 170.0 / width, right = (170.0 + tile_w * nx) / width;
  s << fmt::format(
      "set lmargin at screen {}\nset rmargin at screen {}\nset bmargin at screen {}\n"
      "set tmargin at screen {}",
      num(left), num(right), num(90.0 / height), num(1 - 60.0 / height));
  s << fmt::format("set title {}", gp_string(map.title));
  s << fmt::format("set xrange [-0.5:{}]\nset yrange [-0.5:{}]", num(nx - 0.5), num(ny - 0.5));
  s << (map.x_values.empty()
            ? std::string("unset xtics")
            : fmt::format("set xtics {} nomirror scale 0", category_tics(map.x_values)));
  s << fmt::format("set ytics {} nomirror scale 0", category_tics(map.y_values));
  s << fmt::format("set xlabel {}\nset ylabel {}", gp_string(map.x_key), gp_string(map.y_key));
  s << fmt::format("set key at screen {}, screen {} left top noautotitle",
                   num((190.0 + tile_w * nx) / width), num(1 - 60.0 / height));
  for (size_t y = 0; y < ny; ++y) {
    for (size_t x = 0; x < nx; ++x) {
      s << fmt::format("set label {} {} at {}, {} center front", y * nx + x + 1,
                       gp_lines(map.labels[y * nx + x]), x, y);
    }
  }
  std::vector<std::string> clauses = {
      "'figures/regime_map.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fc rgb variable "
      "fs solid 0.45 border lc rgb 'white' notitle"};
  for (int w : winners) {
    clauses.push_back(fmt::format(
        "keyentry with boxes fs solid 0.45 fc rgb '{}' title {}",
        w < 0 ? "#BBBBBB" : figure::method_colour(static_cast<size_t>(w)),
        gp_string(w < 0 ? "no winner (undecided)" : map.methods[w])));
  }
  s.plot(clauses);
  Rendering rendering;
  std::vector<Figure> figures = {
      write_figure(dir, s, {{"figures/regime_map.dat", &data}}, map.caption, rendering)};
  finish_rendering(dir, figures, rendering);
  return figures[0];
}

namespace {

// The run figure's data and script; starts its rendering.
std::optional<Figure> start_run_figure(const std::string& dir, const std::string& title,
                                       const std::vector<double>& targets,
                                       const std::string& target_on, Rendering& rendering) {
  std::optional<Table> evals, trace;
  try {
    if (std::filesystem::exists(dir + "/evals.csv")) evals = figure::read_table(dir + "/evals.csv");
    if (std::filesystem::exists(dir + "/trace.csv")) trace = figure::read_table(dir + "/trace.csv");
  } catch (const Error& e) {
    log_warning("no figure for {}: {}", dir, e.what());
    return std::nullopt;
  }
  if (!evals && !trace) {
    remove_figure(dir, "loss");
    return std::nullopt;
  }
  struct Axis1 {
    const char* column;
    const char* label;
  };
  const Axis1 xs[2] = {{"time", "simulated time (s)"},
                       {"work_units", "work units (partition gradients)"}};
  Series f[2], ft[2], r[2];
  std::vector<double> y_values(targets.begin(), targets.end()), x_values[2];
  for (int a = 0; a < 2; ++a) {
    if (evals) {
      f[a] = figure::table_series(*evals, xs[a].column, "full_loss");
      ft[a] = figure::table_series(*evals, xs[a].column, "tilde_loss");
    }
    if (trace) {
      Series raw = figure::table_series(*trace, xs[a].column, "loss");
      r[a] = figure::moving_average(raw, figure::smoothing_window(raw.size()));
    }
    for (const Series* s : {&f[a], &ft[a], &r[a]}) {
      y_values.insert(y_values.end(), s->y.begin(), s->y.end());
      x_values[a].insert(x_values[a].end(), s->x.begin(), s->x.end());
    }
  }
  const bool has_f = !f[0].empty(), has_tilde = !ft[0].empty(), has_trace = !r[0].empty();
  if (!has_f && !has_trace) {
    remove_figure(dir, "loss");
    return std::nullopt;
  }
  // Evaluations: time, work units, F, F̃ (NaN when absent).
  DataFile eval_file(
      "The run's evaluations (evals.csv).\nColumns: time, work_units, F (full training loss), "
      "F̃ (frequency-weighted loss; NaN for synchronous runs)");
  eval_file.block("one row per evaluation");
  if (evals) {
    const std::vector<double>* t = evals->column("time");
    const std::vector<double>* w = evals->column("work_units");
    const std::vector<double>* fl = evals->column("full_loss");
    const std::vector<double>* tl = evals->column("tilde_loss");
    for (size_t i = 0; i < evals->rows(); ++i) {
      auto at = [&](const std::vector<double>* col) { return col ? (*col)[i] : std::nan(""); };
      eval_file.row({at(t), at(w), at(fl), at(tl)});
    }
  }
  DataFile trace_file(fmt::format(
      "The reported (minibatch) training loss: trace.csv's block means smoothed by a centred "
      "moving\naverage of {} rows.\nColumns: time, work_units, smoothed loss",
      figure::smoothing_window(r[0].size())));
  trace_file.block("one row per trace row");
  if (trace) {
    // Smoothed against the row order, the same for both x columns.
    const std::vector<double>* t = trace->column("time");
    const std::vector<double>* w = trace->column("work_units");
    const std::vector<double>* l = trace->column("loss");
    Series by_row;
    for (size_t i = 0; l && i < trace->rows(); ++i) {
      if (!std::isfinite((*l)[i])) continue;
      by_row.x.push_back(static_cast<double>(i));
      by_row.y.push_back((*l)[i]);
    }
    Series smooth = figure::moving_average(by_row, figure::smoothing_window(by_row.size()));
    for (size_t k = 0; k < smooth.size(); ++k) {
      const size_t i = static_cast<size_t>(smooth.x[k]);
      trace_file.row({t ? (*t)[i] : std::nan(""), w ? (*w)[i] : std::nan(""), smooth.y[k]});
    }
  }
  Axis y = figure::fit_axis(y_values);
  make_room_below(y, targets);
  const std::string f_colour = figure::method_colour(0), tilde_colour = figure::method_colour(1);
  std::vector<std::string> labels;
  if (has_f) labels.push_back("F (evaluated)");
  if (has_tilde) labels.push_back("F̃ (frequency-weighted)");
  if (has_trace) labels.push_back(has_f ? "reported loss, smoothed" : "reported loss");
  const int width = 1400, height = 540;
  Layout layout = side_by_side(2, width, height, longest(labels), tic_chars(y));
  std::string caption = has_f ? "F, the full training loss of the evaluated model"
                              : "The reported minibatch training loss";
  if (has_f && has_tilde) caption += ", and F̃ = Σ w_i F_i (w_i ∝ 1/τ_i)";
  caption += " against simulated time (left) and work units (right)";
  if (has_f && has_trace) caption += "; faint: the reported minibatch loss, smoothed";
  if (!targets.empty()) {
    std::vector<std::string> ts;
    for (double t : targets) ts.push_back(describe_target(t, target_on));
    caption += fmt::format("; dashed: the target {}", fmt::join(ts, ", "));
  }
  caption += ".";
  Script s("loss", caption, width, height);
  s << fmt::format("set multiplot title {} font ',{}'", gp_string(title), kTitleFont);
  s << "set grid lc rgb '#dddddd'\nset border lc rgb '#444444'";
  s << axis_commands('y', y);
  s << target_lines(targets, target_on);
  const size_t evaluations = f[0].size();
  const std::string f_style = evaluations <= 60 ? "linespoints pt 7 ps 0.9*pscale" : "lines";
  for (int a = 0; a < 2; ++a) {
    s << layout.panels[a].margins();
    s << axis_commands('x', figure::fit_x_axis(x_values[a]));
    s << layout.panels[a].axis_labels(
        xs[a].label, a == 0 ? (has_f ? "loss" : "training loss (reported)") : "", width, height);
    s << (a == 0 ? std::string("unset key") : key_at(layout));
    const int x_col = a + 1;
    std::vector<std::string> clauses;
    // Drawn bottom to top: the faint reported loss, F̃, F; the legend lists F first.
    const std::string trace_style = fmt::format("lines lw {} lc rgb '{}'", has_f ? "1.5" : "2",
                                                has_f ? faint(f_colour) : f_colour);
    const std::string tilde_style =
        fmt::format("{} lw 2.5 dt (8,4) lc rgb '{}'", f_style, tilde_colour);
    const std::string f_line = fmt::format("{} lw 2.5 lc rgb '{}'", f_style, f_colour);
    if (has_trace) {
      clauses.push_back(fmt::format("'figures/loss-reported.dat' using {}:3 with {} notitle", x_col,
                                    trace_style));
    }
    if (has_tilde) {
      clauses.push_back(
          fmt::format("'figures/loss-evals.dat' using {}:4 with {} notitle", x_col, tilde_style));
    }
    if (has_f) {
      clauses.push_back(
          fmt::format("'figures/loss-evals.dat' using {}:3 with {} notitle", x_col, f_line));
    }
    if (a == 1) {
      size_t label = 0;
      for (const std::string* style :
           {has_f ? &f_line : nullptr, has_tilde ? &tilde_style : nullptr,
            has_trace ? &trace_style : nullptr}) {
        if (!style) continue;
        clauses.push_back(
            fmt::format("keyentry with {} title {}", *style, gp_string(labels[label++])));
      }
    }
    s.plot(clauses);
  }
  s << "unset multiplot";
  return write_figure(
      dir, s, {{"figures/loss-evals.dat", &eval_file}, {"figures/loss-reported.dat", &trace_file}},
      caption, rendering);
}

}  // namespace

struct RunFigureJob::State {
  std::string dir;
  Rendering rendering;
  std::vector<Figure> figures;  // the run figure, or none
  bool finished = false;
};

RunFigureJob::RunFigureJob(const std::string& dir, const std::string& title,
                           const std::vector<double>& targets, const std::string& target_on)
    : state_(std::make_unique<State>()) {
  state_->dir = dir;
  if (std::optional<Figure> f =
          start_run_figure(dir, title, targets, target_on, state_->rendering)) {
    state_->figures.push_back(std::move(*f));
  }
}

RunFigureJob::~RunFigureJob() {
  try {
    finish();
  } catch (...) {  // a destructor does not throw; finish() reports by warning anyway
  }
}

bool RunFigureJob::finish() {
  if (!state_->finished) {
    finish_rendering(state_->dir, state_->figures, state_->rendering);
    state_->finished = true;
  }
  return !state_->figures.empty() && state_->figures[0].rendered;
}

bool write_run_figure(const std::string& dir, const std::string& title,
                      const std::vector<double>& targets, const std::string& target_on) {
  return RunFigureJob(dir, title, targets, target_on).finish();
}

namespace figure {

Figure write_single_figure(const std::string& dir, const std::string& name,
                           const std::string& caption, int width, int height,
                           const std::string& body, const std::vector<DataText>& data) {
  Script script(name, caption, width, height);
  script << body;
  make_directories(dir + "/figures");
  for (const DataText& d : data) write_file_atomic(dir + "/" + d.path, d.text);
  Rendering rendering;
  std::vector<Figure> figures = {pacer::write_figure(dir, script, {}, caption, rendering)};
  finish_rendering(dir, figures, rendering);
  return figures[0];
}

void remove_figure_files(const std::string& dir, const std::string& name) {
  pacer::remove_figure(dir, name);
}

}  // namespace figure
}  // namespace pacer
