// pacer timeline as a user meets it: pacer run writes timeline.png and the Chrome trace
// timeline.json titled with the method and seed; pacer timeline DIR redraws exactly those;
// --from/--to and --all write files of their own and leave the run's timeline alone, saying where
// they wrote; --format picks the figure or the trace; bad options are one error line. And one
// real browser: headless Chromium loads timeline.json into a page that checks it (skipped where
// no chromium is installed).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace pacer::testing {
namespace {

namespace fs = std::filesystem;

// 3 workers, 8 DGD steps with fixed times 1, 1 and 2 s and messages of 0.1 s: steps of 2.2 s.
constexpr const char* kConfig = R"(workers = 3
seed = 3
max_steps = 8
eval_every = 0
eval_final = false
[optimizer]
lr = 0.05
[method]
name = "dgd"
[timing]
model = "fixed"
tau = [1.0, 1.0, 2.0]
latency = 0.1
)";

std::string error_line(const CommandResult& r) {
  const size_t at = r.output.find("pacer: error: ");
  return at == std::string::npos ? "" : r.output.substr(at, r.output.find('\n', at) - at);
}

// A run folder made by pacer run, with its timeline.
class CliTimeline : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text(dir_.file("run.toml"), std::string(kConfig) + kLeastSquaresTables);
    const CommandResult r = run_pacer("-q run " + dir_.file("run.toml") + " --out " + run_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  std::string file(const std::string& name) const { return run_ + "/" + name; }

  TempDir dir_;
  std::string run_ = dir_.file("run");
};

TEST_F(CliTimeline, ARunWritesItsTimelineAndTraceTitledWithMethodAndSeed) {
  for (const char* name : {"timeline.gp", "timeline.json", "figures/timeline-compute.dat"}) {
    EXPECT_TRUE(fs::exists(file(name))) << name;
  }
  EXPECT_NE(
      read_text(file("timeline.gp")).find("set title 'dgd, seed 3: timeline, t = 0.0–17.6 s'"),
      std::string::npos)
      << read_text(file("timeline.gp"));
  const nlohmann::json trace = nlohmann::json::parse(read_text(file("timeline.json")));
  EXPECT_EQ(trace["traceEvents"][0]["args"]["name"], "dgd, seed 3: jobs of jobs.csv");
  if (gnuplot_installed()) {
    EXPECT_TRUE(fs::exists(file("timeline.png")));
  }
}

TEST_F(CliTimeline, TimelineWithoutAWindowRedrawsTheRunsOwn) {
  const std::string script = read_text(file("timeline.gp")),
                    trace = read_text(file("timeline.json"));
  const CommandResult r = run_pacer("timeline " + run_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(file("timeline.gp")), script);
  EXPECT_EQ(read_text(file("timeline.json")), trace);
  EXPECT_NE(r.output.find(file("timeline.json") + " (Chrome trace"), std::string::npos) << r.output;
}

TEST_F(CliTimeline, AWindowWritesFilesOfItsOwnAndSaysWhere) {
  const std::string script = read_text(file("timeline.gp")),
                    trace = read_text(file("timeline.json"));
  const std::string png = gnuplot_installed() ? read_text(file("timeline.png")) : "";
  const CommandResult r = run_pacer("timeline " + run_ + " --from 2.2 --to 4.4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(
      r.output.find(file(gnuplot_installed() ? "timeline-2.2-4.4.png" : "timeline-2.2-4.4.gp")),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(file("timeline-2.2-4.4.json")), std::string::npos) << r.output;
  EXPECT_NE(read_text(file("timeline-2.2-4.4.gp"))
                .find("set title 'dgd, seed 3: timeline, t = 2.20–4.40 s'"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(file("figures/timeline-2.2-4.4-compute.dat")));
  // The run's own timeline is untouched.
  EXPECT_EQ(read_text(file("timeline.gp")), script);
  EXPECT_EQ(read_text(file("timeline.json")), trace);
  if (gnuplot_installed()) {
    EXPECT_EQ(read_text(file("timeline.png")), png);
  }
  // --all, as the trace only.
  const CommandResult all = run_pacer("timeline " + run_ + " --all --format chrome");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_TRUE(fs::exists(file("timeline-all.json")));
  EXPECT_FALSE(fs::exists(file("timeline-all.gp")));
  EXPECT_EQ(read_text(file("timeline.gp")), script);
}

TEST_F(CliTimeline, BadOptionsAreOneErrorLine) {
  EXPECT_NE(error_line(run_pacer("timeline " + run_ + " --from 3")).find("--from 3 --to 0"),
            std::string::npos);
  EXPECT_NE(
      error_line(run_pacer("timeline " + run_ + " --all --to 3")).find("--all with --from/--to"),
      std::string::npos);
  const CommandResult format = run_pacer("timeline " + run_ + " --format xml");
  EXPECT_NE(format.exit_code, 0);
  EXPECT_NE(format.output.find("--format"), std::string::npos) << format.output;
  EXPECT_NE(error_line(run_pacer("timeline " + run_ + " --from 100 --to 200"))
                .find("no job in the window [100, 200] s"),
            std::string::npos);
}

// A page that loads timeline.json the way a trace viewer's loader does (XMLHttpRequest,
// JSON.parse) and checks what such a loader needs: traceEvents; complete events with numeric ts
// and dur >= 0, pid and tid; a thread_name for every tid used; phases inside their job. It writes
// "OK <events> <tracks>" or "FAIL <why>" into #result.
constexpr const char* kPage = R"(<!DOCTYPE html>
<html><body><div id="result">not run</div><script>
function check(text) {
  var trace = JSON.parse(text);
  if (!Array.isArray(trace.traceEvents)) return 'FAIL no traceEvents';
  var names = {}, jobs = {}, used = {}, n = 0;
  for (var e of trace.traceEvents) {
    if (typeof e.name !== 'string' || !Number.isInteger(e.pid) || !Number.isInteger(e.tid))
      return 'FAIL event ' + JSON.stringify(e);
    if (e.ph === 'M') { if (e.name === 'thread_name') names[e.tid] = e.args.name; continue; }
    if (e.ph !== 'X' || typeof e.ts !== 'number' || !(e.dur >= 0))
      return 'FAIL complete event ' + JSON.stringify(e);
    used[e.tid] = true;
    var key = e.tid + '/' + e.args.tag;
    if (e.cat === 'job') jobs[key] = e;
    else if (!jobs[key] || e.ts < jobs[key].ts || e.ts + e.dur > jobs[key].ts + jobs[key].dur)
      return 'FAIL phase outside its job ' + JSON.stringify(e);
    n++;
  }
  for (var tid in used) if (!names[tid]) return 'FAIL no thread_name for tid ' + tid;
  return 'OK ' + n + ' ' + Object.keys(names).length;
}
var r = new XMLHttpRequest();
r.open('GET', 'timeline.json', false);
try { r.send(); document.getElementById('result').textContent = check(r.responseText); }
catch (err) { document.getElementById('result').textContent = 'FAIL ' + err; }
</script></body></html>
)";

TEST_F(CliTimeline, HeadlessChromiumLoadsTheTrace) {
  if (run_command("command -v chromium").exit_code != 0) {
    GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium)";
  }
  write_text(file("check.html"), kPage);
  // --no-sandbox: CI runs as root; file access: the page reads its neighbour timeline.json.
  const CommandResult r = run_command(fmt::format(
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files "
      "--user-data-dir='{}' --dump-dom 'file://{}' 2>/dev/null",
      dir_.file("profile"), file("check.html")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 8 steps × 3 workers = 24 jobs, each a job and 3 phases; 3 tracks.
  EXPECT_NE(r.output.find("<div id=\"result\">OK 96 3</div>"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace pacer::testing
