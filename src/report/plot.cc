// Running gnuplot on the figures' scripts, and the entry points of plot.h. The figures are in
// figure_*.cc, written with the building blocks of figure_script.h.
#include "pacer/report/plot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "comparison_figures.h"
#include "figure_script.h"
#include "pacer/core/crash_point.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"

namespace pacer {
namespace figure {
namespace {

// The figures pacer writes, so that a figure omitted this time does not leave an old one behind.
constexpr const char* kComparisonFigures[] = {"loss", "time_to_target", "tilde", "workers",
                                              "staleness"};

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
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

}  // namespace

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

namespace {

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

}  // namespace

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

Figure render_now(const std::string& dir, const Script& script,
                  const std::vector<std::pair<std::string, const DataFile*>>& data,
                  const std::string& caption) {
  Rendering rendering;
  std::vector<Figure> figures = {write_figure(dir, script, data, caption, rendering)};
  finish_rendering(dir, figures, rendering);
  return figures[0];
}

Figure write_single_figure(const std::string& dir, const std::string& name,
                           const std::string& caption, int width, int height,
                           const std::string& body, const std::vector<DataText>& data) {
  Script script(name, caption, width, height);
  script << body;
  make_directories(dir + "/figures");
  for (const DataText& d : data) write_file_atomic(dir + "/" + d.path, d.text);
  return render_now(dir, script, {}, caption);
}

void remove_figure_files(const std::string& dir, const std::string& name) {
  remove_figure(dir, name);
}

}  // namespace figure

std::string clock_name(Clock clock) {
  switch (clock) {
    case Clock::kSimulated:
      return "simulated";
    case Clock::kWall:
      return "wall";
    case Clock::kUnknown:
      break;
  }
  return "";
}

Clock parse_clock(const std::string& name) {
  if (name == "simulated") return Clock::kSimulated;
  if (name == "wall") return Clock::kWall;
  return Clock::kUnknown;
}

std::string describe_run_length(int64_t steps, double time, Clock clock) {
  Budget budget{Budget::Kind::kTime, time, false};
  return fmt::format("{} step{}, {}", steps, steps == 1 ? "" : "s",
                     figure::describe_budget(budget, clock));
}

std::vector<Figure> write_comparison_figures(const std::string& dir, const Comparison& c) {
  std::vector<std::string> missing;
  const figure::ComparisonRuns runs = figure::read_comparison_runs(dir, c, missing);
  if (!missing.empty()) {
    log_warning("figures of {}: {} run file{} could not be read and {} left out (first: {})", dir,
                missing.size(), missing.size() == 1 ? "" : "s", missing.size() == 1 ? "is" : "are",
                missing[0]);
  }
  figure::Rendering rendering;  // each figure's gnuplot starts once its files are written
  std::vector<Figure> figures;
  std::set<std::string> written;
  auto add = [&](std::optional<Figure> f) {
    if (!f) return;
    written.insert(f->script.substr(0, f->script.size() - 3));
    figures.push_back(std::move(*f));
  };
  add(figure::loss_figure(dir, runs, rendering));
  add(figure::time_to_target_figure(dir, runs, rendering));
  add(figure::tilde_figure(dir, runs, rendering));
  add(figure::workers_figure(dir, runs, rendering));
  add(figure::staleness_figure(dir, runs, rendering));
  for (const char* name : figure::kComparisonFigures) {
    if (!written.count(name)) figure::remove_figure(dir, name);
  }
  figure::finish_rendering(dir, figures, rendering);
  return figures;
}

struct RunFigureJob::State {
  std::string dir;
  figure::Rendering rendering;
  std::vector<Figure> figures;  // the run figure, or none
  bool finished = false;
};

RunFigureJob::RunFigureJob(const std::string& dir, const std::string& title,
                           const std::vector<double>& targets, const std::string& target_on,
                           Clock clock)
    : state_(std::make_unique<State>()) {
  state_->dir = dir;
  if (std::optional<Figure> f =
          figure::start_run_figure(dir, title, targets, target_on, clock, state_->rendering)) {
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
    figure::finish_rendering(state_->dir, state_->figures, state_->rendering);
    state_->finished = true;
  }
  return !state_->figures.empty() && state_->figures[0].rendered;
}

bool write_run_figure(const std::string& dir, const std::string& title,
                      const std::vector<double>& targets, const std::string& target_on,
                      Clock clock) {
  return RunFigureJob(dir, title, targets, target_on, clock).finish();
}

}  // namespace pacer
