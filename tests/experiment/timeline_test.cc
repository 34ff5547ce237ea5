// The timeline figure (timeline.h): its data files hold exactly the clipped intervals of the jobs
// in the window, the automatic window ends where stated, bad input is an Error naming file, line
// and column, and the same input gives the same files. Without gnuplot the PNG checks are skipped.
#include "pacer/experiment/timeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
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
    "worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate\n";

// Three workers, every fate, in the order the jobs ended. With the window [1, 9] the first row
// (before it) and the last (after it) are left out, and several intervals are cut at its edges.
constexpr const char* kJobs =
    "2,0,-3,-2.5,-1,-0.5,1,1.5,800,used\n"
    "0,1,0,0.5,2,2.5,1,1.5,800,used\n"
    "1,1,0,0.25,3,3.5,1,2.75,800,late\n"
    "2,1,0,0.5,4,,,,0,cancelled\n"
    "0,2,2.5,2.75,5,5.25,1,2.25,800,used\n"
    "1,2,3.5,3.75,6,,,,0,lost\n"
    "1,4,6,6.5,7,,,,0,failed\n"
    "2,2,4,4.5,8,8.5,1,3.5,800,used\n"
    "2,3,8.5,,9.5,,,,0,cancelled\n"
    "0,3,5.25,5.5,10,,,,0,unfinished\n"
    "1,3,10,10.5,12,12.5,1,1.5,800,used\n";

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

// The blocks of a data file by the comment that heads each (the first '#' line after a blank
// line, or after the file's header comments).
std::map<std::string, std::vector<Row>> read_blocks(const std::string& path) {
  std::map<std::string, std::vector<Row>> blocks;
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

// Writes `rows` as dir/jobs.csv and draws it without gnuplot (its warning swallowed).
std::optional<Figure> draw(const TempDir& dir, const std::string& rows, TimelineWindow window,
                           const std::string& title = "fixture") {
  write_text(dir.file("jobs.csv"), kHeader + rows);
  NoGnuplot no_gnuplot;
  ::testing::internal::CaptureStderr();
  std::optional<Figure> f = write_timeline_figure(dir.path(), dir.file("jobs.csv"), window, title);
  ::testing::internal::GetCapturedStderr();
  return f;
}

// The numbers of the script's `set xrange [a:b]`.
std::pair<double, double> xrange(const std::string& script) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(script, m, std::regex(R"(set xrange \[([^:]+):([^\]]+)\])")));
  return m.size() == 3 ? std::pair{std::stod(m[1]), std::stod(m[2])} : std::pair{0.0, 0.0};
}

const std::string kTo = "to the worker: [assigned, started]";
const std::string kBack = "back to the master: [finished, delivered]";
const std::string kWhole =
    "jobs whose started or finished is unknown: [assigned, end] (timeline.h)";

TEST(TimelineFigure, DataFilesHoldTheClippedIntervalsOfTheJobsInTheWindow) {
  TempDir dir;
  std::optional<Figure> f = draw(dir, kJobs, {1, 9});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->script, "timeline.gp");
  EXPECT_FALSE(f->rendered);
  auto compute = read_blocks(dir.file("figures/timeline-compute.dat"));
  const std::map<std::string, std::vector<Row>> expected_compute = {
      {"used", {{0, 1, 1, 2}, {0, 2, 2.75, 5}, {2, 2, 4.5, 8}}},
      {"late", {{1, 1, 1, 3}}},
      {"cancelled", {{2, 1, 1, 4}}},
      {"lost", {{1, 2, 3.75, 6}}},
      {"failed", {{1, 4, 6.5, 7}}},
      {"unfinished", {{0, 3, 5.5, 9}}}};
  EXPECT_EQ(compute, expected_compute);
  auto transfers = read_blocks(dir.file("figures/timeline-transfers.dat"));
  const std::map<std::string, std::vector<Row>> expected_transfers = {
      {kTo,
       {{0, 2, 2.5, 2.75}, {0, 3, 5.25, 5.5}, {1, 2, 3.5, 3.75}, {1, 4, 6, 6.5}, {2, 2, 4, 4.5}}},
      {kBack, {{0, 1, 2, 2.5}, {0, 2, 5, 5.25}, {1, 1, 3, 3.5}, {2, 2, 8, 8.5}}},
      {kWhole, {{2, 3, 8.5, 9}}}};
  EXPECT_EQ(transfers, expected_transfers);
  // The jobs wholly before (worker 2, tag 0) and after (worker 1, tag 3) the window are left out.
  for (const auto* blocks : {&compute, &transfers}) {
    for (const auto& [name, rows] : *blocks) {
      for (const Row& r : rows) {
        EXPECT_FALSE(r.worker == 2 && r.tag == 0) << name;
        EXPECT_FALSE(r.worker == 1 && r.tag == 3) << name;
      }
    }
  }
  EXPECT_EQ(xrange(read_text(dir.file("timeline.gp"))), std::pair(1.0, 9.0));
}

TEST(TimelineFigure, ScriptDrawsAWorkerPerRowWithALegendPerFateDrawn) {
  TempDir dir;
  ASSERT_TRUE(draw(dir, kJobs, {1, 2.5}, "dgd, seed 1"));
  const std::string script = read_text(dir.file("timeline.gp"));
  // Worker 0 at the top: the y axis runs from the last row down to the first.
  EXPECT_NE(script.find("set yrange [2.5:-0.5]"), std::string::npos) << script;
  EXPECT_NE(script.find("set ytics ('w0' 0, 'w1' 1, 'w2' 2)"), std::string::npos) << script;
  EXPECT_NE(script.find("size 1400,284 "), std::string::npos) << script;  // 200 + 28 · 3
  EXPECT_NE(script.find("'dgd, seed 1: timeline, 1 s – 2.5 s'"), std::string::npos) << script;
  // In [1, 2.5] only used, late and cancelled jobs compute.
  for (const char* fate : {"used", "late", "cancelled"}) {
    EXPECT_NE(script.find(fmt::format("'{}' at screen", fate)), std::string::npos) << fate;
  }
  for (const char* fate : {"lost", "failed", "unfinished"}) {
    EXPECT_EQ(script.find(fmt::format("'{}' at screen", fate)), std::string::npos) << fate;
  }
  EXPECT_NE(script.find("'transfer' at screen"), std::string::npos);
  EXPECT_EQ(script.find("jobs.csv"), std::string::npos);  // it reads only figures/
}

TEST(TimelineFigure, AutomaticWindowEndsWhenTwentyJobsPerWorkerHaveEnded) {
  // 3 workers × 25 jobs; worker w's job k: assigned k + w/10, computes [+0.1, +0.8], delivered
  // +0.9. Rows grouped by worker (not by end time), so the first 60 rows are not the first 60
  // jobs to end: those end by job 19 of worker 2, at 19.2 + 0.9 = 20.1.
  std::string rows;
  for (int w = 2; w >= 0; --w) {
    for (int k = 0; k < 25; ++k) {
      const double a = k + w / 10.0;
      rows += fmt::format("{},{},{},{},{},{},1,0.7,100,used\n", w, k, a, a + 0.1, a + 0.8, a + 0.9);
    }
  }
  TempDir dir;
  std::optional<Figure> f = draw(dir, rows, {});
  ASSERT_TRUE(f);
  const auto [from, to] = xrange(read_text(dir.file("timeline.gp")));
  EXPECT_EQ(from, 0);
  EXPECT_NEAR(to, 20.1, 1e-9);
  EXPECT_NE(f->caption.find("until the first 60 jobs to end"), std::string::npos) << f->caption;
  EXPECT_NE(f->caption.find("from 0 s to 20.1 s"), std::string::npos) << f->caption;
  // Worker 0's job 20 is assigned at 20 and starts at 20.1: its transfer is in, its compute out.
  auto transfers = read_blocks(dir.file("figures/timeline-transfers.dat"));
  const std::vector<Row>& to_worker = transfers[kTo];
  EXPECT_NE(std::find_if(to_worker.begin(), to_worker.end(),
                         [](const Row& r) {
                           return r.worker == 0 && r.tag == 20 && r.from == 20 &&
                                  std::abs(r.to - 20.1) < 1e-9;
                         }),
            to_worker.end());
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

TEST(TimelineFigure, AutomaticWindowOfFewerJobsEndsAtTheLastEnd) {
  TempDir dir;
  std::optional<Figure> f = draw(dir, kJobs, {5, 5});  // to <= from: automatic
  ASSERT_TRUE(f);
  EXPECT_EQ(xrange(read_text(dir.file("timeline.gp"))), std::pair(-3.0, 12.5));
  EXPECT_NE(f->caption.find("until the first 11 jobs to end"), std::string::npos) << f->caption;
}

TEST(TimelineFigure, DrawsOnlyTheFirst64Workers) {
  std::string rows;
  for (int w = 0; w < 70; ++w) rows += fmt::format("{},1,0,0.5,2,2.5,1,1.5,800,used\n", w);
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
}

TEST(TimelineFigure, AnEmptyWindowReturnsNulloptAndRemovesAnEarlierTimeline) {
  TempDir dir;
  ASSERT_TRUE(draw(dir, kJobs, {1, 9}));
  ASSERT_TRUE(std::filesystem::exists(dir.file("timeline.gp")));
  EXPECT_FALSE(draw(dir, kJobs, {100, 200}));
  EXPECT_FALSE(std::filesystem::exists(dir.file("timeline.gp")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("figures/timeline-compute.dat")));
  // A header without rows holds no job either.
  TempDir empty;
  EXPECT_FALSE(draw(empty, "", {}));
  EXPECT_FALSE(std::filesystem::exists(empty.file("timeline.gp")));
}

TEST(TimelineFigure, SameInputGivesIdenticalScriptAndData) {
  TempDir a, b;
  ASSERT_TRUE(draw(a, kJobs, {}));
  ASSERT_TRUE(draw(b, kJobs, {}));
  for (const char* file :
       {"timeline.gp", "figures/timeline-compute.dat", "figures/timeline-transfers.dat"}) {
    EXPECT_FALSE(read_text(a.file(file)).empty()) << file;
    EXPECT_EQ(read_text(a.file(file)), read_text(b.file(file))) << file;
  }
}

// The message of the Error that drawing `content` as jobs.csv throws; "" when none is thrown.
std::string error_of(const TempDir& dir, const std::string& content) {
  write_text(dir.file("jobs.csv"), content);
  try {
    write_timeline_figure(dir.path(), dir.file("jobs.csv"), {}, "bad");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TimelineErrors, NameTheFileLineAndColumnAndWriteNothing) {
  TempDir dir;
  const std::string file = dir.file("jobs.csv");
  const std::string good = "0,1,0,0.5,2,2.5,1,1.5,800,used\n";
  EXPECT_NE(error_of(dir, "worker,tag,assigned,started,finished,delivered,fate\n" + good)
                .find(file + ":1: the header is"),
            std::string::npos);
  EXPECT_NE(error_of(dir, kHeader + good + "1,1,0,soon,2,2.5,1,1.5,800,used\n")
                .find(file + ":3: column 4 (started): 'soon' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(dir, kHeader + good + "x,1,0,0.5,2,2.5,1,1.5,800,used\n")
                .find(file + ":3: column 1 (worker)"),
            std::string::npos);
  EXPECT_NE(error_of(dir, kHeader + std::string("0,1,0,0.5,2,2.5,1,1.5,800,done\n") + good)
                .find(file + ":2: column 10 (fate): 'done' is not a fate"),
            std::string::npos);
  EXPECT_NE(error_of(dir, kHeader + good + "0,1,0,0.5,2\n").find(file + ":3: 5 fields"),
            std::string::npos);
  EXPECT_NE(error_of(dir, "").find(file + ":1: the header is missing"), std::string::npos);
  // Thrown before anything is written.
  EXPECT_FALSE(std::filesystem::exists(dir.file("timeline.gp")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("figures")));
}

TEST(TimelineErrors, AMissingFileIsAnErrorNamingIt) {
  TempDir dir;
  const std::string missing = dir.file("no-such/jobs.csv");
  try {
    write_timeline_figure(dir.path(), missing, {}, "t");
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("timeline.gp")));
}

TEST(TimelineFigure, GnuplotRendersThePngAndSvg) {
  TempDir dir;
  write_text(dir.file("jobs.csv"), kHeader + std::string(kJobs));
  std::optional<Figure> f = write_timeline_figure(dir.path(), dir.file("jobs.csv"), {}, "t");
  ASSERT_TRUE(f);
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  EXPECT_TRUE(f->rendered);
  const std::string png = read_text(dir.file(f->png));
  EXPECT_EQ(png.substr(0, 4), "\x89PNG");
  EXPECT_GT(png.size(), 1000u);
  EXPECT_NE(read_text(dir.file(f->svg)).find("<svg"), std::string::npos);
  // Re-run by hand it draws without a message (no skipped data, no warnings).
  testing::CommandResult again = testing::run_command(fmt::format(
      "cd '{}' && gnuplot -e \"png='/dev/null'; svg='/dev/null'\" timeline.gp", dir.path()));
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.output, "");
}

}  // namespace
}  // namespace pacer
