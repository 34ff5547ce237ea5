// What a run leaves in its folder when it is interrupted, killed or out of disk (DESIGN.md
// section 6, issue #12): log.csv and summary.json stream as the run goes; SIGINT and SIGTERM end
// a run "interrupted" with exit status 130 and 143; a new run replaces an earlier run's folder as
// a whole, whatever point it is killed at (PACER_TEST_CRASH_AT, core/crash_point.h); a full disk
// at any write (PACER_TEST_FAIL_WRITE_AT, core/files.h) is an error naming the file and leaves
// the earlier run when it strikes before the swap.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace pacer::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLogHeader =
    "time,step,work_units,loss,grad_norm,responders,staleness,stepsize,worker,wait,"
    "full_loss,grad_norm_sq,tilde_loss,test_loss,test_accuracy";
constexpr int kColumns = 15;
// Updates for a run that lasts until it is signalled (about 10^4 per second here, with the rows
// of kSlowData).
constexpr int64_t kEndless = 1000000000;
constexpr const char* kSlowData = "data.samples=5000";

// A DGD run on the least-squares table. DGD's every row has responders = workers, so the worker
// count tells which run wrote a file.
std::string run_config(int workers, int seed, int64_t max_steps, int eval_every,
                       bool save_model = false) {
  std::ostringstream top;
  top << "workers = " << workers << "\nseed = " << seed << "\nmax_steps = " << max_steps
      << "\neval_every = " << eval_every << "\nsave_model = " << (save_model ? "true" : "false")
      << "\n";
  return top.str() + kLeastSquaresTables +
         "[optimizer]\nlr = 0.01\n[method]\nname = \"dgd\"\n[timing]\nmodel = \"fixed\"\n";
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator && separator == ',') parts.emplace_back();
  return parts;
}

// The integer of a top-level "key = value" line of a TOML text; -1 when absent.
long toml_int(const std::string& toml, const std::string& key) {
  for (const std::string& line : split(toml, '\n')) {
    if (line.rfind(key + " = ", 0) == 0) return std::stol(line.substr(key.size() + 3));
  }
  return -1;
}

// What a run folder holds, when it holds one whole run.
struct RunState {
  std::string problem;  // empty: config.toml, log.csv and summary.json are whole and agree
  int workers = 0;
  long seed = -1;
  std::string status;
  int64_t steps = 0;
  size_t rows = 0;
};

// Checks log.csv: the header, then rows of kColumns fields that end with a newline, each saying
// responders = `workers`. Returns "" or the problem; counts the rows.
std::string check_log(const std::string& log, int workers, size_t& rows) {
  if (log.empty() || log.back() != '\n') return "log.csv does not end with a whole row";
  const std::vector<std::string> lines = split(log, '\n');
  if (lines.empty() || lines[0] != kLogHeader) return "log.csv has no header";
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = split(lines[i], ',');
    if (fields.size() != kColumns) return "log.csv row " + std::to_string(i) + ": " + lines[i];
    if (fields[5] != std::to_string(workers)) return "log.csv row of another run: " + lines[i];
  }
  rows = lines.size() - 1;
  return "";
}

RunState inspect(const std::string& dir) {
  RunState s;
  for (const char* file : {"config.toml", "log.csv", "summary.json"}) {
    if (!fs::exists(dir + "/" + file)) {
      s.problem = std::string("no ") + file;
      return s;
    }
  }
  const std::string toml = read_text(dir + "/config.toml");
  s.workers = static_cast<int>(toml_int(toml, "workers"));
  s.seed = toml_int(toml, "seed");
  nlohmann::json summary;
  try {
    summary = nlohmann::json::parse(read_text(dir + "/summary.json"));
  } catch (const std::exception& e) {
    s.problem = std::string("summary.json: ") + e.what();
    return s;
  }
  s.status = summary.value("status", "");
  s.steps = summary.value("steps", int64_t{-1});
  if (summary.value("workers", 0) != s.workers || summary.value("seed", -2L) != s.seed) {
    s.problem = "summary.json and config.toml are of different runs";
    return s;
  }
  s.problem = check_log(read_text(dir + "/log.csv"), s.workers, s.rows);
  if (s.problem.empty() && static_cast<int64_t>(s.rows) < s.steps) {
    s.problem = "summary.json counts more steps than log.csv has rows";
  }
  return s;
}

// Files named "*.tmp.*" under `dir`, and folders beside it named "<dir>.pacer-*".
std::vector<std::string> orphans(const std::string& dir) {
  std::vector<std::string> found;
  if (fs::exists(dir)) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
      if (e.path().filename().string().find(".tmp.") != std::string::npos) {
        found.push_back(e.path().string());
      }
    }
  }
  const std::string prefix = fs::path(dir).filename().string() + ".pacer-";
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(dir).parent_path())) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path().string());
  }
  return found;
}

// Every file under `dir` with its content.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = read_text(e.path());
  }
  return files;
}

// A test's folder with its configs, and pacer runs into <dir>/out.
class Fixture {
 public:
  Fixture() {
    fs::create_directories(dir_.file("bin"));  // an empty PATH: no gnuplot, runs end fast
  }
  std::string out() const { return dir_.file("out"); }
  std::string config(const std::string& name, const std::string& text) const {
    write_text(dir_.file(name), text);
    return dir_.file(name);
  }
  // pacer run CONFIG --out OUT under `env` ("K=V ..."), with gnuplot only when `plots`.
  CommandResult run(const std::string& config, const std::string& env = "",
                    bool plots = false) const {
    const std::string path = plots ? "" : "PATH=" + dir_.file("bin") + " ";
    return run_command("env " + path + env + " " + PACER_BINARY + " run " + config + " --out " +
                       out());
  }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
};

// Ended by SIGKILL (the shell that started it reports 128 + 9).
bool killed(const CommandResult& r) { return r.exit_code == 128 + SIGKILL || r.exit_code == -1; }

// ---- streaming and signals ------------------------------------------------------------------

// pacer as a child process, its stdout and stderr in a file.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::vector<std::string>& env,
        const std::string& output)
      : output_(output) {
    pid_ = ::fork();
    if (pid_ != 0) return;
    for (const std::string& e : env) ::putenv(::strdup(e.c_str()));
    const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(PACER_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(PACER_BINARY, argv.data());
    ::_exit(127);
  }
  ~Child() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  void signal(int sig) const { ::kill(pid_, sig); }
  // Waits for the end: the exit status, or -signal when a signal ended it.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  // Stops it (SIGSTOP: a write in progress completes first) and waits until it is stopped.
  void pause() const {
    ::kill(pid_, SIGSTOP);
    int status = 0;
    ::waitpid(pid_, &status, WUNTRACED);
  }
  void resume() const { ::kill(pid_, SIGCONT); }
  std::string output() const { return read_text(output_); }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string output_;
};

std::vector<std::string> quiet_env(const Fixture& f) {
  return {"PATH=" + f.dir().file("bin"), "PACER_STREAM_INTERVAL_S=0"};
}

// Polls `ready` every 10 ms; false after 30 s (a failure, not a verdict on speed).
bool eventually(const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(Outputs, LogAndSummaryStreamWhileTheRunGoesAndProgressIsLogged) {
  Fixture f;
  const std::string config = f.config("long.toml", run_config(4, 1, kEndless, 2000));
  std::vector<std::string> env = quiet_env(f);
  env.push_back("PACER_PROGRESS_S=0.2");  // stderr is a file here: plain progress lines
  Child child({"run", config, "--out", f.out(), "--set", kSlowData}, env,
              f.dir().file("output.txt"));
  // summary.json is rewritten at evaluations while the run goes.
  ASSERT_TRUE(eventually([&] {
    const RunState s = inspect(f.out());
    return s.problem.empty() && s.steps > 0 && child.output().find("ETA") != std::string::npos;
  })) << child.output();
  child.pause();
  const RunState running = inspect(f.out());
  EXPECT_EQ(running.problem, "");
  EXPECT_EQ(running.status, "running");
  EXPECT_GE(running.rows, static_cast<size_t>(running.steps));
  child.resume();
  // The progress line says where the run is against its budget (max_steps here).
  const std::string output = child.output();
  EXPECT_NE(output.find("pacer: info: dgd  step "), std::string::npos) << output;
  EXPECT_NE(output.find("%, ETA "), std::string::npos) << output;
  child.signal(SIGTERM);
  EXPECT_EQ(child.wait(), 143) << child.output();
  const RunState stopped = inspect(f.out());
  EXPECT_EQ(stopped.problem, "");
  EXPECT_EQ(stopped.status, "interrupted");
  EXPECT_GE(stopped.rows, running.rows);
  EXPECT_NE(child.output().find("interrupted after"), std::string::npos) << child.output();
}

// SIGINT or SIGTERM at random moments (a fixed seed) of runs into one folder, each run with its
// own seed. Counted from the run's start (its folder in place), every run ends with whole files
// saying "interrupted" and exit status 128 + the signal. Counted from the process's start, the
// signal may also come before pacer handles signals: the process then ends by the signal, and the
// folder holds the run before, whole.
TEST(Outputs, SignalsAtRandomMomentsLeaveWholeFilesSayingInterrupted) {
  Fixture f;
  const std::string config = f.config("long.toml", run_config(4, 1, kEndless, 500));
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> delay_ms(0, 300);
  for (int trial = 0; trial < 10; ++trial) {
    const int sig = trial % 2 ? SIGTERM : SIGINT;
    const bool from_start = trial < 4;  // of the process, else of the run
    const long seed = trial + 1;
    Child child({"run", config, "--out", f.out(), "--set", kSlowData, "--set",
                 "seed=" + std::to_string(seed)},
                quiet_env(f), f.dir().file("output.txt"));
    if (!from_start) {
      ASSERT_TRUE(eventually([&] { return inspect(f.out()).seed == seed; }));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    child.signal(sig);
    const int status = child.wait();
    SCOPED_TRACE("trial " + std::to_string(trial) + ", exit status " + std::to_string(status));
    EXPECT_TRUE(orphans(f.out()).empty());
    const RunState s = inspect(f.out());
    if (status == -sig) {  // ended by the signal before pacer handled it: nothing was started
      EXPECT_TRUE(from_start);
      if (fs::exists(f.out())) {
        EXPECT_EQ(s.problem, "");
        EXPECT_NE(s.seed, seed);
      }
      continue;
    }
    EXPECT_EQ(s.problem, "") << child.output();
    EXPECT_EQ(s.seed, seed);
    EXPECT_EQ(s.status, "interrupted") << child.output();
    EXPECT_EQ(status, 128 + sig) << child.output();
  }
}

// `timeout 60 pacer run ...` ends the run with SIGTERM. The signal is sent once the run has
// recorded rows (not after a fixed delay, which a loaded machine could outlast while starting).
TEST(Outputs, ATimeLimitsSigtermEndsTheRunInterruptedWithStatus143) {
  Fixture f;
  const std::string config = f.config("long.toml", run_config(4, 1, kEndless, 500));
  Child child({"run", config, "--out", f.out(), "--set", kSlowData}, quiet_env(f),
              f.dir().file("output.txt"));
  ASSERT_TRUE(eventually([&] { return inspect(f.out()).rows > 0; }));
  child.signal(SIGTERM);
  EXPECT_EQ(child.wait(), 143) << child.output();
  const RunState s = inspect(f.out());
  EXPECT_EQ(s.problem, "");
  EXPECT_EQ(s.status, "interrupted");
}

TEST(Outputs, AnInterruptedComparisonKeepsItsRunsAndWritesNoTable) {
  Fixture f;
  const std::string config = f.config("long.toml", run_config(4, 1, kEndless, 500));
  Child child({"compare", config, "--methods", "dgd,dgd:optimizer.lr=0.02", "--out", f.out(),
               "--set", kSlowData},
              quiet_env(f), f.dir().file("output.txt"));
  ASSERT_TRUE(eventually([&] { return inspect(f.out() + "/dgd/seed1").rows > 0; }));
  child.signal(SIGINT);
  EXPECT_EQ(child.wait(), 130) << child.output();
  EXPECT_NE(child.output().find("interrupted (SIGINT)"), std::string::npos) << child.output();
  EXPECT_EQ(inspect(f.out() + "/dgd/seed1").status, "interrupted");
  std::set<std::string> entries;
  for (const fs::directory_entry& e : fs::directory_iterator(f.out())) {
    entries.insert(e.path().filename().string());
  }
  EXPECT_EQ(entries, std::set<std::string>{"dgd"});  // no later run, no compare.md
}

// ---- the folder replaced as a whole ---------------------------------------------------------

// The earlier run (4 workers, seed 1, model.bin) and the new one (3 workers, seed 2) in one
// folder; with PACER_STREAM_INTERVAL_S=0 the new run also rewrites its files at each evaluation.
struct TwoRuns {
  Fixture f;
  std::string earlier = f.config("earlier.toml", run_config(4, 1, 30, 10, true));
  std::string later = f.config("later.toml", run_config(3, 2, 40, 20));

  // Restores the earlier run (a whole run that leaves no orphan behind).
  void run_earlier() const {
    const CommandResult r = f.run(earlier);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(orphans(f.out()).empty());
    ASSERT_EQ(which(), 4);
  }
  // 4 for the earlier run, 3 for the new one, 0 when the folder holds no whole run.
  int which() const {
    const RunState s = inspect(f.out());
    EXPECT_EQ(s.problem, "");
    if (!s.problem.empty()) return 0;
    EXPECT_EQ(s.seed, s.workers == 4 ? 1 : 2);
    // model.bin only ever belongs to the earlier run.
    EXPECT_EQ(fs::exists(f.out() + "/model.bin"), s.workers == 4 && s.status != "running");
    return s.workers;
  }
};

TEST(Outputs, AKillAtEveryReplacementPointLeavesTheEarlierRunOrTheNewOne) {
  TwoRuns runs;
  runs.run_earlier();
  int kills = 0;
  for (const std::string point :
       {"outputs.staged", "outputs.swapped", "outputs.temp_written", "outputs.replaced"}) {
    // Every point; of the ones a run passes many times (each file replaced), the first three
    // passes and then every third (each kill costs two runs of pacer).
    for (int k = 1; k < 40; k += k < 3 ? 1 : 3) {
      const CommandResult r = runs.f.run(
          runs.later,
          "PACER_STREAM_INTERVAL_S=0 PACER_TEST_CRASH_AT=" + point + ":" + std::to_string(k),
          /*plots=*/true);
      SCOPED_TRACE(point + ":" + std::to_string(k));
      if (!killed(r)) {  // the run passed that point fewer than k times
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_GT(k, 1) << "never passed " << point;
        break;
      }
      ++kills;
      const int run = runs.which();
      EXPECT_TRUE(run == 3 || run == 4);
      EXPECT_EQ(run, point == "outputs.staged" ? 4 : 3);  // swapped after staging
      runs.run_earlier();  // ... and the next run leaves no orphan of the killed one
    }
  }
  EXPECT_GE(kills, 10);
}

TEST(Outputs, WithoutRenameExchangeACrashBetweenTheRenamesIsRepaired) {
  TwoRuns runs;
  runs.run_earlier();
  const std::map<std::string, std::string> before = snapshot(runs.f.out());
  const std::string fallback = "PACER_TEST_NO_EXCHANGE=1 ";
  // Killed with the earlier run moved aside and the new one not yet in place.
  CommandResult r = runs.f.run(runs.later, fallback + "PACER_TEST_CRASH_AT=outputs.aside");
  ASSERT_TRUE(killed(r)) << r.output;
  EXPECT_FALSE(fs::exists(runs.f.out()));
  // The next run puts the earlier run back first; here it then fails before its own swap.
  r = runs.f.run(runs.later, fallback + "PACER_TEST_FAIL_WRITE_AT=config.toml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(snapshot(runs.f.out()), before);
  EXPECT_TRUE(orphans(runs.f.out()).empty());
  r = runs.f.run(runs.later, fallback + "PACER_TEST_CRASH_AT=outputs.swapped");
  ASSERT_TRUE(killed(r)) << r.output;
  EXPECT_EQ(runs.which(), 3);
  runs.run_earlier();
}

// The first line of pacer's error.
std::string error_line(const CommandResult& r) {
  const size_t at = r.output.find("pacer: error: ");
  return at == std::string::npos ? "" : r.output.substr(at, r.output.find('\n', at) - at);
}

TEST(Outputs, AFullDiskAtAnyWriteIsAnErrorNamingTheFile) {
  TwoRuns runs;
  runs.run_earlier();
  const std::map<std::string, std::string> before = snapshot(runs.f.out());
  const std::string later = runs.f.config("later-model.toml", run_config(3, 2, 40, 20, true));
  for (const std::string name : {"config.toml", "log.csv", "summary.json", "evals.csv", "trace.csv",
                                 "model.bin", "loss.gp", "loss-evals.dat"}) {
    for (int k = 1; k <= 2; ++k) {  // its first write, and a later one (the run going on)
      const std::string at = name + ":" + std::to_string(k);
      SCOPED_TRACE(at);
      const CommandResult r =
          runs.f.run(later, "PACER_STREAM_INTERVAL_S=0 PACER_TEST_FAIL_WRITE_AT=" + at);
      if (r.exit_code == 0) {  // written fewer than k times
        EXPECT_GT(k, 1) << name << " was never written";
        runs.run_earlier();
        break;
      }
      EXPECT_EQ(r.exit_code, 1) << r.output;
      const std::string error = error_line(r);
      EXPECT_NE(error.find(name + ": cannot write: No space left on device"), std::string::npos)
          << r.output;
      EXPECT_TRUE(orphans(runs.f.out()).empty());
      const RunState s = inspect(runs.f.out());
      if (s.workers == 4) {
        // Struck before the swap: the earlier run is exactly as it was.
        EXPECT_EQ(snapshot(runs.f.out()), before);
        EXPECT_EQ(k, 1);
        continue;
      }
      // After the swap: the new run, whole, and not claiming to have finished.
      EXPECT_EQ(s.problem, "");
      EXPECT_TRUE(s.status == "running" || s.status == "error") << s.status;
      runs.run_earlier();
    }
  }
}

TEST(Outputs, APlotThatCannotBeWrittenIsAWarningNamingItAndNoCutFile) {
  if (run_command("command -v gnuplot").exit_code != 0) GTEST_SKIP() << "no gnuplot";
  TwoRuns runs;
  const CommandResult r =
      runs.f.run(runs.later, "PACER_TEST_FAIL_WRITE_AT=loss.png", /*plots=*/true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: gnuplot could not draw"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("loss.png: gnuplot wrote an incomplete file (4096 bytes"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(runs.f.out() + "/loss.png"));
  EXPECT_FALSE(fs::exists(runs.f.out() + "/loss.svg"));
  EXPECT_TRUE(fs::exists(runs.f.out() + "/loss.gp"));  // the script and data are kept
  EXPECT_TRUE(orphans(runs.f.out()).empty());
  // Drawn whole, it is there.
  EXPECT_EQ(runs.f.run(runs.later, "", /*plots=*/true).exit_code, 0);
  EXPECT_TRUE(fs::exists(runs.f.out() + "/loss.png"));
}

TEST(Outputs, AFolderThatIsNotARunsIsNotReplaced) {
  Fixture f;
  fs::create_directories(f.out());
  write_text(f.out() + "/notes.txt", "mine");
  const CommandResult r = f.run(f.config("c.toml", run_config(3, 2, 10, 5)));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(error_line(r).find("is not a pacer run's folder"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(f.out() + "/notes.txt"), "mine");
}

}  // namespace
}  // namespace pacer::testing
