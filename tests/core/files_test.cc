// Files that are never half-written (core/files.h), the run folder replaced as a whole
// (core/run_folder.h), the progress line (core/log.h) and the interrupt flag (core/interrupt.h).
#include "pacer/core/files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/core/run_folder.h"
#include "test_util.h"

namespace pacer::testing {
namespace {

namespace fs = std::filesystem;

// A pid no process has: a child that has exited and been reaped.
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return static_cast<long>(child);
}

// The names in `dir`'s parent that start with `dir`'s name followed by ".pacer-".
std::vector<std::string> siblings(const std::string& dir) {
  std::vector<std::string> out;
  const fs::path p(dir);
  const std::string prefix = p.filename().string() + ".pacer-";
  for (const fs::directory_entry& e : fs::directory_iterator(p.parent_path())) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AppendFile, GrowsInWholePiecesAndCutsBack) {
  TempDir dir;
  const std::string path = dir.file("log.csv");
  write_text(path, "header\n");
  AppendFile file;
  file.open(path);
  EXPECT_EQ(file.size(), 7u);
  file.append("row 1\n");
  EXPECT_EQ(read_text(path), "header\n");  // collected, not written
  EXPECT_EQ(file.flush(), 13u);
  EXPECT_EQ(read_text(path), "header\nrow 1\n");
  file.append("row 2\n");
  file.truncate(15);  // inside the collected bytes
  EXPECT_EQ(file.flush(), 15u);
  EXPECT_EQ(read_text(path), "header\nrow 1\nro");
  file.truncate(7);  // inside the written bytes
  file.append("again\n");
  file.flush();
  EXPECT_EQ(read_text(path), "header\nagain\n");
}

TEST(AppendFile, AFullDiskIsAnErrorNamingTheFileAndKeepsTheRows) {
  AppendFile file;
  file.open("/dev/full");  // every write fails with ENOSPC
  file.append("row\n");
  const std::string error = error_of([&] { file.flush(); });
  EXPECT_NE(error.find("/dev/full"), std::string::npos) << error;
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
  EXPECT_EQ(file.pending(), 4u);  // nothing lost: a later flush may succeed
}

TEST(Files, AtomicWriteFailureNamesTheFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string error =
      error_of([&] { write_file_atomic(dir.file("missing/summary.json"), "{}"); });
  EXPECT_NE(error.find("missing/summary.json"), std::string::npos) << error;
  write_file_atomic(dir.file("a.txt"), "one");
  write_file_atomic(dir.file("a.txt"), "two");
  EXPECT_EQ(read_text(dir.file("a.txt")), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(Files, StaleTemporaryFilesOfDeadProcessesAreRemoved) {
  TempDir dir;
  const long dead = dead_pid();
  fs::create_directories(dir.file("figures"));
  const std::string stale = dir.file("log.csv.tmp." + std::to_string(dead));
  const std::string nested = dir.file("figures/loss.png.tmp." + std::to_string(dead));
  const std::string own = dir.file("summary.json.tmp." + std::to_string(::getpid()));
  const std::string live = dir.file("evals.csv.tmp.1");  // init is always running
  const std::string kept = dir.file("notes.tmp.txt");    // no pid: not a temporary file
  for (const std::string& f : {stale, nested, own, live, kept}) write_text(f, "x");
  remove_stale_temp_files(dir.path());
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(nested));
  EXPECT_FALSE(fs::exists(own));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(kept));
}

const RunFolder::Files kNewRun = {{"config.toml", "seed = 2\n"}, {"summary.json", "{\"new\": 1}"}};

// An earlier run's folder: a summary, a log and a file only that run had.
void write_earlier_run(const std::string& dir) {
  fs::create_directories(dir);
  write_text(dir + "/summary.json", "{\"old\": 1}");
  write_text(dir + "/log.csv", "old\n");
  write_text(dir + "/model.bin", "old");
}

TEST(RunFolder, CreateMakesTheFolderWithItsFirstFiles) {
  TempDir dir;
  const RunFolder folder = RunFolder::create(dir.file("runs/a"), kNewRun);
  EXPECT_EQ(read_text(dir.file("runs/a/config.toml")), "seed = 2\n");
  EXPECT_EQ(read_text(folder.path("summary.json")), "{\"new\": 1}");
  EXPECT_TRUE(siblings(dir.file("runs/a")).empty());
}

// Both swaps (RENAME_EXCHANGE, and the two-rename fallback) replace the earlier run whole.
TEST(RunFolder, CreateReplacesAnEarlierRunAsAWhole) {
  for (const bool fallback : {false, true}) {
    TempDir dir;
    const std::string out = dir.file("out");
    write_earlier_run(out);
    if (fallback) ::setenv("PACER_TEST_NO_EXCHANGE", "1", 1);
    RunFolder::create(out, kNewRun);
    ::unsetenv("PACER_TEST_NO_EXCHANGE");
    EXPECT_EQ(read_text(out + "/summary.json"), "{\"new\": 1}") << fallback;
    EXPECT_FALSE(fs::exists(out + "/model.bin")) << fallback;  // nothing of the earlier run
    EXPECT_FALSE(fs::exists(out + "/log.csv")) << fallback;
    EXPECT_TRUE(siblings(out).empty()) << fallback;
  }
}

TEST(RunFolder, AFailureBeforeTheSwapKeepsTheEarlierRun) {
  TempDir dir;
  const std::string out = dir.file("out");
  write_earlier_run(out);
  // "a" is a file, so "a/b" cannot be written: the staging fails half-way.
  const std::string error = error_of([&] { RunFolder::create(out, {{"a", "x"}, {"a/b", "y"}}); });
  EXPECT_NE(error.find(".pacer-new."), std::string::npos) << error;  // names the staged file
  EXPECT_EQ(read_text(out + "/summary.json"), "{\"old\": 1}");
  EXPECT_EQ(read_text(out + "/model.bin"), "old");
  EXPECT_TRUE(siblings(out).empty());
}

TEST(RunFolder, RefusesToReplaceWhatIsNotARunFolder) {
  TempDir dir;
  fs::create_directories(dir.file("home"));
  write_text(dir.file("home/notes.txt"), "mine");
  const std::string error = error_of([&] { RunFolder::create(dir.file("home"), kNewRun); });
  EXPECT_NE(error.find("is not a pacer run's folder"), std::string::npos) << error;
  EXPECT_EQ(read_text(dir.file("home/notes.txt")), "mine");
  write_text(dir.file("file"), "x");
  EXPECT_NE(error_of([&] { RunFolder::create(dir.file("file"), kNewRun); }).find("not a folder"),
            std::string::npos);
  EXPECT_NE(error_of([&] { RunFolder::reopen(dir.file("none")); }).find("no run folder"),
            std::string::npos);
  // An empty folder is fine.
  fs::create_directories(dir.file("empty"));
  RunFolder::create(dir.file("empty"), kNewRun);
  EXPECT_TRUE(fs::exists(dir.file("empty/summary.json")));
}

TEST(RunFolder, OrphansOfKilledRunsAreRemovedOrRestored) {
  TempDir dir;
  const std::string out = dir.file("out");
  const std::string dead = std::to_string(dead_pid());
  // Killed after staging (a staging folder), and between the fallback's renames with the new run
  // never put in place (the earlier run moved aside, `out` missing).
  fs::create_directories(out + ".pacer-new." + dead);
  write_earlier_run(out + ".pacer-old." + dead);
  const RunFolder reopened = RunFolder::reopen(out);
  EXPECT_EQ(read_text(out + "/summary.json"), "{\"old\": 1}");  // renamed back
  EXPECT_TRUE(siblings(out).empty());
  // With `out` present, an old folder is a leftover to remove, and so are dead temporary files.
  write_earlier_run(out + ".pacer-old." + dead);
  write_text(out + "/summary.json.tmp." + dead, "half");
  RunFolder::reopen(out);
  EXPECT_TRUE(siblings(out).empty());
  EXPECT_FALSE(fs::exists(out + "/summary.json.tmp." + dead));
  EXPECT_EQ(read_text(out + "/model.bin"), "old");
  reopened.write("figures/a.dat", "1 2\n");
  EXPECT_EQ(read_text(out + "/figures/a.dat"), "1 2\n");
  reopened.remove("model.bin");
  reopened.remove("model.bin");  // absent: nothing to do
  EXPECT_FALSE(fs::exists(out + "/model.bin"));
}

TEST(RunFolder, ALinkedFolderIsReplacedAndTheLinkKept) {
  TempDir dir;
  write_earlier_run(dir.file("real"));
  fs::create_directory_symlink(dir.file("real"), dir.file("link"));
  const RunFolder folder = RunFolder::create(dir.file("link") + "/", kNewRun);
  EXPECT_TRUE(fs::is_symlink(dir.file("link")));
  EXPECT_EQ(read_text(dir.file("link/summary.json")), "{\"new\": 1}");
  EXPECT_FALSE(fs::exists(dir.file("real/model.bin")));
  EXPECT_EQ(folder.dir(), fs::canonical(dir.file("real")).string());
}

// A progress line on a fake clock, collecting what it prints.
struct FakeProgress {
  double t = 0;
  std::vector<std::string> lines;
  ProgressLine::Options options(bool terminal, double interval) {
    ProgressLine::Options o;
    o.terminal = terminal;
    o.interval_s = interval;
    o.clock = [this] { return t; };
    o.write = [this](std::string_view text) { lines.emplace_back(text); };
    return o;
  }
};

TEST(ProgressLine, WithoutATerminalPrintsOneLineEveryIntervalWithTheEta) {
  FakeProgress fake;
  {
    ProgressLine progress("dgd", fake.options(false, 10));
    for (int i = 1; i <= 70; ++i) {  // 35 s in steps of 0.5 s; half the budget done at 35 s
      fake.t = 0.5 * i;
      progress.update("step " + std::to_string(i), fake.t / 70);
    }
  }
  ASSERT_EQ(fake.lines.size(), 3u);  // at 10, 20 and 30 s; never more often, nothing to clear
  EXPECT_EQ(fake.lines[0], "pacer: info: dgd  step 20  14%, ETA 1 min 0 s  [10 s so far]\n");
  EXPECT_EQ(fake.lines[2], "pacer: info: dgd  step 60  43%, ETA 40 s  [30 s so far]\n");
}

TEST(ProgressLine, OnATerminalRedrawsAtMostFiveTimesASecondAfterOneSecond) {
  FakeProgress fake;
  {
    ProgressLine progress("run", fake.options(true, 10));
    for (int i = 0; i <= 200; ++i) {  // 2 s in steps of 10 ms
      fake.t = 0.01 * i;
      progress.update("s");
    }
  }
  // Drawn at 1.0, 1.2, ..., 2.0 s (6 times; the clock's rounding may drop the last), then cleared.
  ASSERT_GE(fake.lines.size(), 6u);
  EXPECT_LE(fake.lines.size(), 7u);
  EXPECT_EQ(fake.lines.front(), "\r\033[Krun  s  [1 s]");
  EXPECT_EQ(fake.lines.back(), "\r\033[K");
  ProgressLine off("x", fake.options(false, 0));
  fake.t = 1000;
  EXPECT_FALSE(off.due());
}

TEST(ProgressLine, DurationsReadAsPeopleSayThem) {
  EXPECT_EQ(format_duration(42.4), "42 s");
  EXPECT_EQ(format_duration(725), "12 min 5 s");
  EXPECT_EQ(format_duration(3 * 3600 + 20 * 60 + 7), "3 h 20 min");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(Interrupt, TheFirstSignalIsKeptAndGivesTheShellsExitStatus) {
  install_interrupt_handlers();
  clear_interrupt();
  EXPECT_EQ(interrupt_signal(), 0);
  EXPECT_STREQ(interrupt_signal_name(), "");
  ::raise(SIGTERM);  // handled: the process goes on
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  ::raise(SIGINT);
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  EXPECT_STREQ(interrupt_signal_name(), "SIGTERM");
  EXPECT_EQ(interrupt_exit_status(), 143);
  clear_interrupt();
  ::raise(SIGINT);
  EXPECT_EQ(interrupt_exit_status(), 130);
  clear_interrupt();
}

volatile sig_atomic_t g_host_signals = 0;
extern "C" void count_host_signal(int) { g_host_signals = g_host_signals + 1; }

// A host's own SIGINT handler (Python's) is set aside for the scope and put back after it.
TEST(Interrupt, AScopeSetsTheHostsHandlerAsideAndPutsItBack) {
  struct sigaction host = {};
  struct sigaction original_int = {};
  struct sigaction original_term = {};
  host.sa_handler = count_host_signal;
  sigemptyset(&host.sa_mask);
  sigaction(SIGINT, &host, &original_int);
  sigaction(SIGTERM, &host, &original_term);
  g_host_signals = 0;
  ::raise(SIGINT);  // pacer's flag, if set by an earlier test, is cleared by the scope
  {
    InterruptHandlersScope scope;
    EXPECT_EQ(interrupt_signal(), 0);
    ::raise(SIGINT);
    ::raise(SIGTERM);
    EXPECT_EQ(interrupt_signal(), SIGINT);
  }
  EXPECT_EQ(g_host_signals, 1);  // only the signal before the scope reached the host
  ::raise(SIGTERM);
  EXPECT_EQ(g_host_signals, 2);
  EXPECT_EQ(interrupt_signal(), SIGINT);  // kept until the next scope or clear_interrupt
  clear_interrupt();
  sigaction(SIGINT, &original_int, nullptr);
  sigaction(SIGTERM, &original_term, nullptr);
}

}  // namespace
}  // namespace pacer::testing
