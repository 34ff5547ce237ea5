// The timeline (timeline.h): its data files hold exactly the clipped phases of the jobs in the
// window (held, transfer, compute, injected delay, reply; transfer or wait where the log cannot
// tell them apart), the automatic window ends where stated, the title names the run and the
// rounded window, the Chrome trace is what a trace-event reader needs, bad input is an Error
// naming file, line and column, and the same input gives the same files. Without gnuplot the PNG
// checks are skipped.
#include "pacer/report/timeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pacer/core/error.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::gnuplot_installed;
using testing::NoGnuplot;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

constexpr const char* kHeader =
    "worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate,sent,"
    "injected_time\n";
constexpr const char* kLegacyHeader =
    "worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate\n";

// Three workers, every fate, in the order the jobs ended. With the window [1, 9] the first row
// (before it) and the last (after it) are left out, and several phases are cut at its edges.
// Worker 0's job 1 was held until 0.25 and slept 1 s of its compute; worker 2's job 2 was held
// until 4.2 and slept 2 s; jobs never delivered say neither.
constexpr const char* kJobs =
    "2,0,-3,-2.5,-1,-0.5,1,1.5,800,used,-3,0\n"
    "0,1,0,0.5,2,2.5,1,1.5,800,used,0.25,1\n"
    "1,1,0,0.25,3,3.5,1,2.75,800,late,0,0.5\n"
    "2,1,0,0.5,4,,,,0,cancelled,,\n"
    "0,2,2.5,2.75,5,5.25,1,2.25,800,used,2.5,0\n"
    "1,2,3.5,3.75,6,,,,0,lost,,\n"
    "1,4,6,6.5,7,,,,0,failed,,\n"
    "2,2,4,4.5,8,8.5,1,3.5,800,used,4.2,2\n"
    "2,3,8.5,,9.5,,,,0,cancelled,,\n"
    "0,3,5.25,5.5,10,,,,0,unfinished,,\n"
    "1,3,10,10.5,12,12.5,1,1.5,800,used,10,0\n";

// One interval of a data file: worker, tag, from, to.
struct Row {
  int worker;
  long tag;
  double from, to;
  bool operator==(const Row&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Row& r) {
  return out << "{" << r.worker << ", " << r.tag << ", " << r.from << ", " << r.to << "}";
}
using Blocks = std::map<std::string, std::vector<Row>>;

// The blocks of a data file by the comment that heads each (the first '#' line after a blank
// line, or after the file's header comments).
Blocks read_blocks(const std::string& path) {
  Blocks blocks;
  std::istringstream in(read_text(path));
  std::string line, name;
  bool named = false;  // the current block's heading has been read
  while (std::getline(in, line)) {
    if (line.empty()) {
      named = false;
    } else if (line[0] == '#') {
      if (!named) name = line.substr(2);
    } else {
      named = true;
      std::istringstream fields(line);
      Row r{};
      fields >> r.worker >> r.tag >> r.from >> r.to;
      EXPECT_TRUE(fields && fields.eof()) << path << ": " << line;
      blocks[name].push_back(r);
    }
  }
  return blocks;
}

TimelineOptions options_for(TimelineWindow window, const std::string& title = "fixture") {
  TimelineOptions options;
  options.window = window;
  options.title = title;
  return options;
}

// Writes `header` + `rows` as dir/jobs.csv and writes its timeline without gnuplot (its warning
// swallowed).
std::optional<Timeline> draw_with(const TempDir& dir, const std::string& rows,
                                  const TimelineOptions& options, const char* header = kHeader) {
  write_text(dir.file("jobs.csv"), header + rows);
  NoGnuplot no_gnuplot;
  ::testing::internal::CaptureStderr();
  std::optional<Timeline> t = write_timeline(dir.path(), dir.file("jobs.csv"), options);
  ::testing::internal::GetCapturedStderr();
  return t;
}
std::optional<Timeline> draw(const TempDir& dir, const std::string& rows, TimelineWindow window,
                             const std::string& title = "fixture") {
  return draw_with(dir, rows, options_for(window, title));
}

// The numbers of the script's `set xrange [a:b]`.
std::pair<double, double> xrange(const std::string& script) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(script, m, std::regex(R"(set xrange \[([^:]+):([^\]]+)\])")));
  return m.size() == 3 ? std::pair{std::stod(m[1]), std::stod(m[2])} : std::pair{0.0, 0.0};
}

TEST(TimelineFigure, DataFilesHoldTheClippedPhasesOfTheJobsInTheWindow) {
  TempDir dir;
  std::optional<Timeline> t = draw(dir, kJobs, {1, 9});
  ASSERT_TRUE(t && t->figure);
  EXPECT_EQ(t->figure->script, "timeline.gp");
  EXPECT_FALSE(t->figure->rendered);
  EXPECT_EQ(t->chrome, "timeline.json");
  // Compute is [started, finished − injected_time].
  const Blocks expected_compute = {{"used", {{0, 2, 2.75, 5}, {2, 2, 4.5, 6}}},
                                   {"late", {{1, 1, 1, 2.5}}},
                                   {"cancelled", {{2, 1, 1, 4}}},
                                   {"lost", {{1, 2, 3.75, 6}}},
                                   {"failed", {{1, 4, 6.5, 7}}},
                                   {"unfinished", {{0, 3, 5.5, 9}}}};
  EXPECT_EQ(read_blocks(dir.file("figures/timeline-compute.dat")), expected_compute);
  const Blocks expected_injected = {{"used", {{0, 1, 1, 2}, {2, 2, 6, 8}}},
                                    {"late", {{1, 1, 2.5, 3}}}};
  EXPECT_EQ(read_blocks(dir.file("figures/timeline-injected.dat")), expected_injected);
  const Blocks expected_lines = {
      {"transfer", {{0, 2, 2.5, 2.75}, {2, 2, 4.2, 4.5}}},
      {"reply", {{0, 1, 2, 2.5}, {0, 2, 5, 5.25}, {1, 1, 3, 3.5}, {2, 2, 8, 8.5}}},
      // Jobs never delivered do not say when they were sent.
      {"transfer or wait", {{0, 3, 5.25, 5.5}, {1, 2, 3.5, 3.75}, {1, 4, 6, 6.5}}},
      {"held", {{2, 2, 4, 4.2}}},
      {"out (phases unknown)", {{2, 3, 8.5, 9}}}};
  EXPECT_EQ(read_blocks(dir.file("figures/timeline-lines.dat")), expected_lines);
  EXPECT_EQ(xrange(read_text(dir.file("timeline.gp"))), std::pair(1.0, 9.0));
}

TEST(TimelineFigure, ATenColumnLogCannotTellWaitingFromTransferNorInjectedDelay) {
  // The header pacer wrote before sent and injected_time: every job's way to the worker is
  // "transfer or wait", and all of its span on the worker is compute.
  TempDir dir;
  ASSERT_TRUE(
      draw_with(dir, "0,1,0,0.5,2,2.5,1,1.5,800,used\n", options_for({0, 3}), kLegacyHeader));
  EXPECT_EQ(read_blocks(dir.file("figures/timeline-compute.dat")),
            (Blocks{{"used", {{0, 1, 0.5, 2}}}}));
  EXPECT_EQ(read_blocks(dir.file("figures/timeline-injected.dat")), Blocks{});
  EXPECT_EQ(read_blocks(dir.file("figures/timeline-lines.dat")),
            (Blocks{{"transfer or wait", {{0, 1, 0, 0.5}}}, {"reply", {{0, 1, 2, 2.5}}}}));
}

TEST(TimelineFigure, PhasesFollowEachOtherWhenStartedPrecedesAssigned) {
  // On MPI started may precede assigned by microseconds: compute then begins at assigned, and
  // there is no transfer of negative length.
  TempDir dir;
  ASSERT_TRUE(draw(dir, "0,1,1,0.999,2,2.5,1,1.001,800,used,1,0\n", {0, 3}));
  EXPECT_EQ(read_blocks(dir.file("figures/timeline-compute.dat")),
            (Blocks{{"used", {{0, 1, 1, 2}}}}));
  EXPECT_EQ(read_blocks(dir.file("figures/timeline-lines.dat")),
            (Blocks{{"reply", {{0, 1, 2, 2.5}}}}));
}

TEST(TimelineFigure, ScriptDrawsAWorkerPerRowWithALegendPerKindDrawn) {
  TempDir dir;
  ASSERT_TRUE(draw(dir, kJobs, {1, 3}, "dgd, seed 1"));
  const std::string script = read_text(dir.file("timeline.gp"));
  // Worker 0 at the top: the y axis runs from the last row down to the first.
  EXPECT_NE(script.find("set yrange [2.5:-0.5]"), std::string::npos) << script;
  EXPECT_NE(script.find("set ytics ('w0' 0, 'w1' 1, 'w2' 2)"), std::string::npos) << script;
  EXPECT_NE(script.find("size 1400,284 "), std::string::npos) << script;  // 200 + 28 · 3
  EXPECT_NE(script.find("'dgd, seed 1: timeline, t = 1.00–3.00 s'"), std::string::npos) << script;
  // In [1, 3] only used, late and cancelled jobs compute; workers 0 and 1 sleep injected delay,
  // worker 0 receives a job and sends a reply, and nothing is held, waits or is out.
  for (const char* drawn : {"used", "late", "cancelled", "injected delay", "transfer, reply"}) {
    EXPECT_NE(script.find(fmt::format("'{}' at screen", drawn)), std::string::npos) << drawn;
  }
  for (const char* absent : {"lost", "failed", "unfinished", "held", "transfer or wait", "out"}) {
    EXPECT_EQ(script.find(fmt::format("'{}' at screen", absent)), std::string::npos) << absent;
  }
  EXPECT_EQ(script.find("jobs.csv"), std::string::npos);  // it reads only figures/
}

// The title's "t = ..." part for the window [from, to].
std::string title_window(double from, double to) {
  TempDir dir;
  const std::string row =
      fmt::format("0,1,{},{},{},{},1,1,8,used,{},0\n", from, from, to, to, from);
  EXPECT_TRUE(draw(dir, row, {from, to}, "r"));
  std::smatch m;
  const std::string script = read_text(dir.file("timeline.gp"));
  EXPECT_TRUE(std::regex_search(script, m, std::regex("'r: timeline, (t = [^']*)'")));
  return m.size() == 2 ? m[1].str() : "";
}

TEST(TimelineFigure, TitleRoundsTheWindowToThreeDigitsOfItsWidth) {
  EXPECT_EQ(title_window(10, 20), "t = 10.0–20.0 s");
  EXPECT_EQ(title_window(5.385, 5.584), "t = 5.385–5.584 s");
  EXPECT_EQ(title_window(0, 2.704e-05), "t = 0.0–27.0 µs");
  EXPECT_EQ(title_window(0.01, 0.5), "t = 10–500 ms");
}

TEST(TimelineFigure, AutomaticWindowEndsWhenTwentyJobsPerWorkerHaveEnded) {
  // 3 workers × 25 jobs; worker w's job k: assigned k + w/10, computes [+0.1, +0.8], delivered
  // +0.9. Rows grouped by worker (not by end time), so the first 60 rows are not the first 60
  // jobs to end: those end by job 19 of worker 2, at 19.2 + 0.9 = 20.1.
  std::string rows;
  for (int w = 2; w >= 0; --w) {
    for (int k = 0; k < 25; ++k) {
      const double a = k + w / 10.0;
      rows += fmt::format("{},{},{},{},{},{},1,0.7,100,used,{},0\n", w, k, a, a + 0.1, a + 0.8,
                          a + 0.9, a);
    }
  }
  TempDir dir;
  std::optional<Timeline> t = draw(dir, rows, TimelineWindow{});
  ASSERT_TRUE(t);
  const auto [from, to] = xrange(read_text(dir.file("timeline.gp")));
  EXPECT_EQ(from, 0);
  EXPECT_NEAR(to, 20.1, 1e-9);
  EXPECT_NE(t->caption.find("until the first 60 jobs to end"), std::string::npos) << t->caption;
  EXPECT_NE(t->caption.find("from 0 s to 20.1 s"), std::string::npos) << t->caption;
  // Worker 0's job 20 is assigned at 20 and starts at 20.1: its transfer is in, its compute out.
  const std::vector<Row> transfers =
      read_blocks(dir.file("figures/timeline-lines.dat"))["transfer"];
  EXPECT_NE(std::find_if(transfers.begin(), transfers.end(),
                         [](const Row& r) {
                           return r.worker == 0 && r.tag == 20 && r.from == 20 &&
                                  std::abs(r.to - 20.1) < 1e-9;
                         }),
            transfers.end());
  size_t boxes = 0;
  // The map must outlive the loop: a range-for over a member of a temporary reads freed memory
  // (found by ThreadSanitizer, scripts/check-tsan.sh).
  auto compute = read_blocks(dir.file("figures/timeline-compute.dat"));
  for (const Row& r : compute["used"]) {
    EXPECT_LE(r.to, 20.1 + 1e-9);
    ++boxes;
  }
  EXPECT_EQ(boxes, 60u);  // jobs 0..19 of each worker
}

TEST(TimelineFigure, AutomaticWindowOfFewerJobsEndsAtTheLastEndAndAllTakesEveryJob) {
  TempDir dir;
  std::optional<Timeline> t = draw(dir, kJobs, {5, 5});  // to <= from: automatic
  ASSERT_TRUE(t);
  EXPECT_EQ(xrange(read_text(dir.file("timeline.gp"))), std::pair(-3.0, 12.5));
  EXPECT_NE(t->caption.find("until the first 11 jobs to end"), std::string::npos) << t->caption;
  // 60 jobs of one worker: the automatic window stops at the 20th, `all` takes them all.
  std::string rows;
  for (int k = 0; k < 60; ++k)
    rows += fmt::format("0,{},{},{},{},{},1,1,8,used,{},0\n", k, k, k, k + 1, k + 1, k);
  EXPECT_TRUE(draw(dir, rows, TimelineWindow{}));
  EXPECT_EQ(xrange(read_text(dir.file("timeline.gp"))), std::pair(0.0, 20.0));
  EXPECT_TRUE(draw(dir, rows, TimelineWindow{.all = true}));
  EXPECT_EQ(xrange(read_text(dir.file("timeline.gp"))), std::pair(0.0, 60.0));
}

TEST(TimelineFigure, DrawsOnlyTheFirst64WorkersButExportsThemAll) {
  std::string rows;
  for (int w = 0; w < 70; ++w) rows += fmt::format("{},1,0,0.5,2,2.5,1,1.5,800,used,0,0\n", w);
  TempDir dir;
  ASSERT_TRUE(draw(dir, rows, {0, 3}, "big"));
  const std::string script = read_text(dir.file("timeline.gp"));
  EXPECT_NE(script.find("(the first 64 of 70 workers)"), std::string::npos);
  EXPECT_NE(script.find("size 1400,1992 "), std::string::npos);  // 200 + 28 · 64
  EXPECT_NE(script.find("'w63' 63)"), std::string::npos);
  EXPECT_EQ(script.find("'w64'"), std::string::npos);
  auto compute = read_blocks(dir.file("figures/timeline-compute.dat"));
  ASSERT_EQ(compute["used"].size(), 64u);
  EXPECT_EQ(compute["used"].back().worker, 63);
  const std::string trace = read_text(dir.file("timeline.json"));
  EXPECT_NE(trace.find("\"name\":\"worker 69\""), std::string::npos);
}

TEST(TimelineFigure, AnEmptyWindowReturnsNulloptAndRemovesAnEarlierTimelineOnly) {
  TempDir dir;
  ASSERT_TRUE(draw(dir, kJobs, {1, 9}));
  TimelineOptions other = options_for({1, 9});
  other.name = "timeline-1-9";
  ASSERT_TRUE(draw_with(dir, kJobs, other));
  ASSERT_TRUE(std::filesystem::exists(dir.file("timeline.gp")));
  EXPECT_FALSE(draw(dir, kJobs, {100, 200}));
  for (const char* gone : {"timeline.gp", "timeline.json", "figures/timeline-compute.dat",
                           "figures/timeline-injected.dat", "figures/timeline-lines.dat"}) {
    EXPECT_FALSE(std::filesystem::exists(dir.file(gone))) << gone;
  }
  // Another timeline of the folder stays.
  EXPECT_TRUE(std::filesystem::exists(dir.file("timeline-1-9.json")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("figures/timeline-1-9-compute.dat")));
  // A header without rows holds no job either.
  TempDir empty;
  EXPECT_FALSE(draw(empty, "", TimelineWindow{}));
  EXPECT_FALSE(std::filesystem::exists(empty.file("timeline.gp")));
}

TEST(TimelineFigure, FormatsWriteOnlyWhatIsAsked) {
  TempDir dir;
  TimelineOptions chrome = options_for({1, 9});
  chrome.figure = false;
  std::optional<Timeline> t = draw_with(dir, kJobs, chrome);
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->figure);
  EXPECT_TRUE(std::filesystem::exists(dir.file("timeline.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("timeline.gp")));
  TempDir figure_dir;
  TimelineOptions figure = options_for({1, 9});
  figure.chrome = false;
  t = draw_with(figure_dir, kJobs, figure);
  ASSERT_TRUE(t && t->figure);
  EXPECT_EQ(t->chrome, "");
  EXPECT_FALSE(std::filesystem::exists(figure_dir.file("timeline.json")));
}

TEST(TimelineFigure, SameInputGivesIdenticalFiles) {
  TempDir a, b;
  ASSERT_TRUE(draw(a, kJobs, TimelineWindow{}));
  ASSERT_TRUE(draw(b, kJobs, TimelineWindow{}));
  for (const char* file : {"timeline.gp", "timeline.json", "figures/timeline-compute.dat",
                           "figures/timeline-injected.dat", "figures/timeline-lines.dat"}) {
    EXPECT_FALSE(read_text(a.file(file)).empty()) << file;
    EXPECT_EQ(read_text(a.file(file)), read_text(b.file(file))) << file;
  }
}

TEST(TimelineNames, AWindowOtherThanTheRunsHasFilesOfItsOwn) {
  EXPECT_EQ(timeline_window_name({10, 20}), "timeline-10-20");
  EXPECT_EQ(timeline_window_name({5.385, 5.584}), "timeline-5.385-5.584");
  EXPECT_EQ(timeline_window_name({.all = true}), "timeline-all");
  EXPECT_EQ(timeline_window_name({}), "timeline");
}

TEST(TimelineNames, TheRunTitleNamesMethodAndSeed) {
  TempDir dir;
  const std::string run = dir.file("seed1");
  std::filesystem::create_directories(run);
  EXPECT_EQ(timeline_run_title(run), "seed1");  // nothing to read: the folder's name
  write_text(run + "/config.toml", "seed = 7\n[method]\nname = \"pgc-cr\"\n");
  EXPECT_EQ(timeline_run_title(run), "pgc-cr, seed 7");
  write_text(run + "/summary.json", R"({"method": "gc-cr", "seed": 3, "status": "max_steps"})");
  EXPECT_EQ(timeline_run_title(run), "gc-cr, seed 3");
}

// ---------------------------------------------------------------------------------------------
// The Chrome trace, read back as a trace-event reader reads it.

using nlohmann::json;

// A phase of a job as the test expects it: worker, tag, name, from and to in microseconds.
struct Slice {
  int worker;
  long tag;
  std::string name;
  double from, to;
};

// Checks what every reader of the trace-event format needs, and returns the complete events of
// category `category` by worker; `workers` is set to the thread names per tid.
std::vector<json> complete_events(const json& trace, const std::string& category,
                                  std::map<int, std::string>& threads) {
  EXPECT_TRUE(trace.is_object());
  EXPECT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    EXPECT_TRUE(e["name"].is_string() && e["ph"].is_string()) << e;
    EXPECT_TRUE(e["pid"].is_number_integer() && e["tid"].is_number_integer()) << e;
    if (e["ph"] == "M") {
      EXPECT_TRUE(e["args"].is_object()) << e;
      if (e["name"] == "thread_name") {
        EXPECT_TRUE(threads.emplace(e["tid"].get<int>(), e["args"]["name"]).second) << e;
      }
      continue;
    }
    EXPECT_EQ(e["ph"], "X") << e;
    EXPECT_TRUE(e["ts"].is_number() && e["dur"].is_number()) << e;
    EXPECT_GE(e["dur"].get<double>(), 0) << e;
    EXPECT_TRUE(e["cat"].is_string() && e["args"].is_object()) << e;
    for (const char* key : {"worker", "tag"}) EXPECT_TRUE(e["args"][key].is_number_integer()) << e;
    EXPECT_TRUE(e["args"]["fate"].is_string()) << e;
    EXPECT_EQ(e["tid"], e["args"]["worker"].get<int>() + 1) << e;
    if (e["cat"] == category) out.push_back(e);
  }
  return out;
}

TEST(TimelineTrace, HoldsATrackPerWorkerAndEveryPhaseOfTheJobsInTheWindow) {
  TempDir dir;
  ASSERT_TRUE(draw(dir, kJobs, {1, 9}, "dgd, seed 1"));
  const json trace = json::parse(read_text(dir.file("timeline.json")));
  std::map<int, std::string> threads;
  const std::vector<json> phases = complete_events(trace, "phase", threads);
  EXPECT_EQ(threads,
            (std::map<int, std::string>{{1, "worker 0"}, {2, "worker 1"}, {3, "worker 2"}}));
  // The phases of the data files above, in microseconds, by worker and time.
  const std::vector<Slice> expected = {{0, 1, "injected delay", 1e6, 2e6},
                                       {0, 1, "reply", 2e6, 2.5e6},
                                       {0, 2, "transfer", 2.5e6, 2.75e6},
                                       {0, 2, "compute", 2.75e6, 5e6},
                                       {0, 2, "reply", 5e6, 5.25e6},
                                       {0, 3, "transfer or wait", 5.25e6, 5.5e6},
                                       {0, 3, "compute", 5.5e6, 9e6},
                                       {1, 1, "compute", 1e6, 2.5e6},
                                       {1, 1, "injected delay", 2.5e6, 3e6},
                                       {1, 1, "reply", 3e6, 3.5e6},
                                       {1, 2, "transfer or wait", 3.5e6, 3.75e6},
                                       {1, 2, "compute", 3.75e6, 6e6},
                                       {1, 4, "transfer or wait", 6e6, 6.5e6},
                                       {1, 4, "compute", 6.5e6, 7e6},
                                       {2, 1, "compute", 1e6, 4e6},
                                       {2, 2, "held", 4e6, 4.2e6},
                                       {2, 2, "transfer", 4.2e6, 4.5e6},
                                       {2, 2, "compute", 4.5e6, 6e6},
                                       {2, 2, "injected delay", 6e6, 8e6},
                                       {2, 2, "reply", 8e6, 8.5e6},
                                       {2, 3, "out (phases unknown)", 8.5e6, 9e6}};
  ASSERT_EQ(phases.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const json& e = phases[i];
    const Slice& s = expected[i];
    EXPECT_EQ(e["args"]["worker"], s.worker) << e;
    EXPECT_EQ(e["args"]["tag"], s.tag) << e;
    EXPECT_EQ(e["name"], s.name) << e;
    // Rounded to 1/1024 µs.
    EXPECT_NEAR(e["ts"].get<double>(), s.from, 1.0 / 1024) << e;
    EXPECT_NEAR(e["ts"].get<double>() + e["dur"].get<double>(), s.to, 1.0 / 1024) << e;
  }
  // Args: the fate, and units where known.
  EXPECT_EQ(phases[0]["args"]["fate"], "used");
  EXPECT_EQ(phases[0]["args"]["units"], 1.0);
  EXPECT_FALSE(phases.back()["args"].contains("units"));
  EXPECT_EQ(trace["otherData"]["run"], "dgd, seed 1");
}

TEST(TimelineTrace, EachJobSpansItsPhasesWhichMeetExactly) {
  TempDir dir;
  ASSERT_TRUE(draw(dir, kJobs, TimelineWindow{}));
  const json trace = json::parse(read_text(dir.file("timeline.json")));
  std::map<int, std::string> threads, again;
  const std::vector<json> jobs = complete_events(trace, "job", threads);
  const std::vector<json> phases = complete_events(trace, "phase", again);
  EXPECT_EQ(jobs.size(), 11u);  // every job of the file: the window is the automatic one
  size_t p = 0;
  for (const json& job : jobs) {
    EXPECT_EQ(job["name"], fmt::format("job {}", job["args"]["tag"].get<long>()));
    double at = job["ts"].get<double>();
    // The phases follow their job, nested in it: the first starts with it, each starts where
    // the one before ended, exactly, and the last ends with it.
    for (; p < phases.size() && phases[p]["args"] == job["args"]; ++p) {
      EXPECT_EQ(phases[p]["ts"].get<double>(), at) << phases[p];
      at += phases[p]["dur"].get<double>();
    }
    EXPECT_EQ(at, job["ts"].get<double>() + job["dur"].get<double>()) << job;
  }
  EXPECT_EQ(p, phases.size());
}

TEST(TimelineErrors, NameTheFileLineAndColumnAndWriteNothing) {
  TempDir dir;
  const std::string file = dir.file("jobs.csv");
  auto error_of = [&](const std::string& content) -> std::string {
    write_text(file, content);
    try {
      write_timeline(dir.path(), file, {});
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string good = "0,1,0,0.5,2,2.5,1,1.5,800,used,0,0\n";
  EXPECT_NE(error_of("worker,tag,assigned,started,finished,delivered,fate\n" + good)
                .find(file + ":1: the header is"),
            std::string::npos);
  EXPECT_NE(error_of(kHeader + good + "1,1,0,soon,2,2.5,1,1.5,800,used,0,0\n")
                .find(file + ":3: column 4 (started): 'soon' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(kHeader + good + "x,1,0,0.5,2,2.5,1,1.5,800,used,0,0\n")
                .find(file + ":3: column 1 (worker)"),
            std::string::npos);
  EXPECT_NE(error_of(kHeader + std::string("0,1,0,0.5,2,2.5,1,1.5,800,done,0,0\n") + good)
                .find(file + ":2: column 10 (fate): 'done' is not a fate"),
            std::string::npos);
  EXPECT_NE(error_of(kHeader + good + "0,1,0,0.5,2,2.5,1,1.5,800,used,0,x\n")
                .find(file + ":3: column 12 (injected_time): 'x' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(kHeader + good + "0,1,0,0.5,2\n").find(file + ":3: 5 fields, expected 12"),
            std::string::npos);
  // A ten-column row under the twelve-column header, and the other way round.
  EXPECT_NE(error_of(kHeader + std::string("0,1,0,0.5,2,2.5,1,1.5,800,used\n"))
                .find(file + ":2: 10 fields, expected 12"),
            std::string::npos);
  EXPECT_NE(error_of(kLegacyHeader + good).find(file + ":2: 12 fields, expected 10"),
            std::string::npos);
  EXPECT_NE(error_of("").find(file + ":1: the header is missing"), std::string::npos);
  // Thrown before anything is written.
  EXPECT_FALSE(std::filesystem::exists(dir.file("timeline.gp")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("timeline.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("figures")));
}

TEST(TimelineErrors, AMissingFileIsAnErrorNamingIt) {
  TempDir dir;
  const std::string missing = dir.file("no-such/jobs.csv");
  try {
    write_timeline(dir.path(), missing, {});
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("timeline.gp")));
}

TEST(TimelineFigure, GnuplotRendersThePngAndSvg) {
  TempDir dir;
  write_text(dir.file("jobs.csv"), kHeader + std::string(kJobs));
  std::optional<Timeline> t = write_timeline(dir.path(), dir.file("jobs.csv"), {});
  ASSERT_TRUE(t && t->figure);
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  const Figure& f = *t->figure;
  EXPECT_TRUE(f.rendered);
  const std::string png = read_text(dir.file(f.png));
  EXPECT_EQ(png.substr(0, 4), "\x89PNG");
  EXPECT_GT(png.size(), 1000u);
  EXPECT_NE(read_text(dir.file(f.svg)).find("<svg"), std::string::npos);
  // Re-run by hand it draws without a message (no skipped data, no warnings).
  testing::CommandResult again = testing::run_command(fmt::format(
      "cd '{}' && gnuplot -e \"png='/dev/null'; svg='/dev/null'\" timeline.gp", dir.path()));
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.output, "");
}

}  // namespace
}  // namespace pacer
