// The job log (jobs.csv) and the attribution of waiting (decisive workers), on simulated runs
// whose every job time is known in advance: fixed compute times, free messages.
#include "pacer/report/job_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/run/experiment.h"
#include "pacer/timing/trace.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::kLeastSquaresTables;
using testing::read_text;
using testing::TempDir;

// Three workers with fixed times 1, 1 and 3 s per job (one unit each), 6 steps, no target.
const std::string kConfig = std::string(R"(
seed = 4
workers = 3
max_steps = 6
eval_every = 0
)") + kLeastSquaresTables + R"([training]
batch = 0
[optimizer]
lr = 0.05
[timing]
model = "fixed"
tau = [1.0, 1.0, 3.0]
)";

RunOutcome run(const std::string& dir, const std::string& method_lines,
               std::initializer_list<std::string> settings = {}, bool timeline = false) {
  Config config = Config::parse(kConfig + "[method]\n" + method_lines, "jobs.toml");
  for (const std::string& s : settings) config.set(s);
  RunOptions options;
  options.out_dir = dir;
  options.timeline_figure = timeline;
  return run_experiment(config, options);
}

// A CSV file as rows of named fields.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream header(line);
  for (std::string name; std::getline(header, name, ',');) names.push_back(name);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::stringstream fields(line);
    std::string field;
    for (const std::string& name : names) {
      if (!std::getline(fields, field, ',')) field.clear();
      row[name] = field;
    }
    rows.push_back(row);
  }
  return rows;
}

double number(const std::map<std::string, std::string>& row, const std::string& name) {
  return std::stod(row.at(name));
}

TEST(JobLog, DgdNamesTheSlowWorkerAsDecisiveAndRecordsEveryJob) {
  TempDir dir;
  const RunOutcome r = run(dir.path(), "name = \"dgd\"\n");
  ASSERT_EQ(r.status, "max_steps");
  // Every step waits for worker 2 (3 s) after workers 0 and 1 (1 s): 2 s for it alone.
  const nlohmann::json& m = r.summary["method_stats"];
  EXPECT_EQ(m["decisive_steps_per_worker"], nlohmann::json({0, 0, 6}));
  const std::vector<double> wait = m["wait_caused_per_worker"].get<std::vector<double>>();
  ASSERT_EQ(wait.size(), 3u);
  EXPECT_EQ(wait[0], 0.0);
  EXPECT_EQ(wait[1], 0.0);
  EXPECT_DOUBLE_EQ(wait[2], 12.0);
  for (const auto& row : csv_rows(dir.file("log.csv"))) {
    EXPECT_EQ(row.at("worker"), "2");
    EXPECT_DOUBLE_EQ(number(row, "wait"), 2.0);
  }

  const auto jobs = csv_rows(dir.file("jobs.csv"));
  ASSERT_EQ(jobs.size(), 18u);  // 6 steps x 3 workers, each delivered and used
  std::map<int, int> per_worker;
  for (const auto& job : jobs) {
    const int w = std::stoi(job.at("worker"));
    const int64_t step = std::stoll(job.at("tag"));
    ++per_worker[w];
    EXPECT_EQ(job.at("fate"), "used");
    EXPECT_DOUBLE_EQ(number(job, "assigned"), 3.0 * static_cast<double>(step));
    EXPECT_DOUBLE_EQ(number(job, "started"), number(job, "assigned"));  // free messages
    EXPECT_DOUBLE_EQ(number(job, "finished") - number(job, "started"), w == 2 ? 3.0 : 1.0);
    EXPECT_DOUBLE_EQ(number(job, "delivered"), number(job, "finished"));
    EXPECT_DOUBLE_EQ(number(job, "compute_time"), w == 2 ? 3.0 : 1.0);
    EXPECT_EQ(job.at("units"), "1");
    EXPECT_EQ(job.at("bytes"), std::to_string(8 * 5));  // 5 parameters in double
    // The simulator sends every job at once and injects nothing.
    EXPECT_EQ(job.at("sent"), job.at("assigned"));
    EXPECT_EQ(job.at("injected_time"), "0");
  }
  EXPECT_EQ(per_worker, (std::map<int, int>{{0, 6}, {1, 6}, {2, 6}}));
  EXPECT_EQ(r.summary["jobs_csv"]["rows"], 18);
  EXPECT_EQ(r.summary["jobs_csv"]["complete"], true);
}

TEST(JobLog, ATraceOfTheJobsKeepsStepsAndUnitsAndTheDecisiveWorkers) {
  // GC-CR with s = 1: every job is 2 units (2 s on workers 0 and 1, 6 s on worker 2), and each
  // step closes on the fastest n − s = 2 replies, so worker 2's replies are late.
  TempDir dir;
  ASSERT_EQ(run(dir.path(), "name = \"gc-cr\"\ns = 1\n").status, "max_steps");
  const JobsTrace trace = trace_from_jobs_csv(dir.file("jobs.csv"));
  ASSERT_EQ(trace.csv.substr(0, trace.csv.find('\n')), "worker,duration,step,units");
  const DurationTrace parsed = parse_trace(trace.csv, "t", 3);
  EXPECT_TRUE(parsed.with_time());
  for (int w = 0; w < 3; ++w) {
    for (size_t j = 0; j < parsed.rows[w].size(); ++j) {
      EXPECT_EQ(parsed.job_units(w, j), 2.0);
      EXPECT_DOUBLE_EQ(parsed.rows[w][j], w == 2 ? 3.0 : 1.0);  // seconds per unit
    }
  }
  EXPECT_EQ(parsed.steps[0], (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  // The step waited last for worker 0 or 1 (they deliver at the same time; a tie goes to the
  // earlier row), never for worker 2, whose replies came after the step had closed.
  int64_t steps = 0;
  const std::vector<int64_t> decided =
      decided_from_jobs(read_jobs_csv(dir.file("jobs.csv")), 3, steps);
  EXPECT_EQ(steps, 6);
  EXPECT_EQ(decided[0] + decided[1], 6);
  EXPECT_EQ(decided[2], 0);
}

TEST(JobLog, ALateReplyIsLateAndACancelledJobIsCancelled) {
  // IS-SGD ignoring k = 1 straggler, times 1, 2 and 5 s: every step closes when worker 1 answers
  // (2 s after its start, 1 s after worker 0), so worker 1 decides every step, and worker 2's jobs
  // end after their step closed: late (finish) or cancelled at the close (cancel).
  for (const std::string policy : {"finish", "cancel"}) {
    SCOPED_TRACE(policy);
    TempDir dir;
    const RunOutcome r =
        run(dir.path(), "name = \"is-sgd\"\nk = 1\nstraggler_policy = \"" + policy + "\"\n",
            {"timing.tau=[1.0, 2.0, 5.0]"});
    ASSERT_EQ(r.status, "max_steps");
    EXPECT_EQ(r.summary["method_stats"]["decisive_steps_per_worker"][1].get<int64_t>(),
              r.summary["steps"].get<int64_t>());
    int late = 0, cancelled = 0, unfinished = 0;
    for (const auto& job : csv_rows(dir.file("jobs.csv"))) {
      if (job.at("worker") != "2") {
        EXPECT_EQ(job.at("fate"), "used");
        continue;
      }
      if (job.at("fate") == "late") {
        ++late;
        EXPECT_FALSE(job.at("delivered").empty());
      } else if (job.at("fate") == "cancelled") {
        ++cancelled;
        // Dropped at the close of its step, 2 s after it began, and never delivered.
        EXPECT_DOUBLE_EQ(number(job, "finished") - number(job, "assigned"), 2.0);
        EXPECT_TRUE(job.at("delivered").empty());
      } else {
        EXPECT_EQ(job.at("fate"), "unfinished");
        ++unfinished;
      }
    }
    if (policy == "finish") {
      // Worker 2's 5 s jobs: each ends after its step closed (2 s steps), never used.
      EXPECT_GT(late, 0);
      EXPECT_EQ(cancelled, 0);
      EXPECT_EQ(late, r.summary["method_stats"]["late_replies"].get<int>());
    } else {
      EXPECT_EQ(late, 0);
      EXPECT_EQ(cancelled, r.summary["method_stats"]["cancelled_jobs"].get<int>());
      EXPECT_GE(cancelled, 5);  // at every close but the last, which ends the run
    }
    EXPECT_LE(unfinished, 1);
  }
}

TEST(JobLog, AJobOutWhenItsWorkerIsLostIsLostWithItsStart) {
  TempDir dir;
  // IS-SGD (k = 1) goes on without worker 2, killed at 4.5 s inside its second 3 s job (begun at
  // 3 s: it takes the newest model when its first, late reply arrives).
  const RunOutcome r = run(dir.path(), "name = \"is-sgd\"\nk = 1\n",
                           {"faults.kill_workers=[2]", "faults.kill_at=[4.5]"});
  ASSERT_EQ(r.status, "max_steps") << r.summary.dump(2);
  int lost = 0;
  for (const auto& job : csv_rows(dir.file("jobs.csv"))) {
    if (job.at("fate") != "lost") continue;
    ++lost;
    EXPECT_EQ(job.at("worker"), "2");
    EXPECT_DOUBLE_EQ(number(job, "started"), 3.0);
    EXPECT_DOUBLE_EQ(number(job, "finished"), 4.5);
    EXPECT_TRUE(job.at("delivered").empty());
  }
  EXPECT_EQ(lost, 1);
}

TEST(JobLog, TheDefaultLimitStopsRowsAndSaysSoAndFalseWritesNone) {
  TempDir dir;
  const RunOutcome limited = run(dir.file("limited"), "name = \"dgd\"\n", {"record.jobs_limit=5"});
  EXPECT_EQ(csv_rows(dir.file("limited/jobs.csv")).size(), 5u);
  EXPECT_EQ(limited.summary["jobs_csv"]["complete"], false);
  EXPECT_EQ(limited.summary["jobs_csv"]["jobs"], 18);

  run(dir.file("off"), "name = \"dgd\"\n", {"record.jobs=false"});
  EXPECT_FALSE(std::filesystem::exists(dir.file("off/jobs.csv")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("off/log.csv")));
}

TEST(JobLog, ARunDrawsItsTimelineOverTheWindowAsked) {
  TempDir dir;
  run(dir.path(), "name = \"dgd\"\n", {"record.timeline=[3.0, 9.0]"}, /*timeline=*/true);
  // Steps 1 and 2 (3 s each) lie in [3, 9]: 6 compute boxes, all used.
  const std::string compute = read_text(dir.file("figures/timeline-compute.dat"));
  int boxes = 0;
  std::istringstream lines(compute);
  for (std::string line; std::getline(lines, line);) boxes += !line.empty() && line[0] != '#';
  EXPECT_EQ(boxes, 6) << compute;
  EXPECT_TRUE(std::filesystem::exists(dir.file("timeline.gp")));
}

TEST(JobLog, ARunsChromeTraceHoldsThePhasesOfItsJobsCsvAndItsTitleTheMethodAndSeed) {
  // Messages of 0.25 s: each job goes to its worker, computes (1 or 3 s) and comes back.
  TempDir dir;
  run(dir.path(), "name = \"dgd\"\n", {"timing.latency=0.25"}, /*timeline=*/true);
  // 6 steps of 3 workers: fewer than 20 jobs per worker, so the automatic window holds them all.
  std::map<std::pair<int, int64_t>, std::vector<std::tuple<std::string, double, double>>> logged;
  for (const JobRecord& j : read_jobs_csv(dir.file("jobs.csv"))) {
    ASSERT_TRUE(j.started && j.finished && j.delivered && j.sent && j.injected_time);
    ASSERT_EQ(*j.sent, j.assigned);
    ASSERT_EQ(*j.injected_time, 0);
    logged[{j.worker, j.tag}] = {{"transfer", j.assigned, *j.started},
                                 {"compute", *j.started, *j.finished},
                                 {"reply", *j.finished, *j.delivered}};
  }
  ASSERT_EQ(logged.size(), 18u);
  const nlohmann::json trace = nlohmann::json::parse(read_text(dir.file("timeline.json")));
  std::map<std::pair<int, int64_t>, std::vector<std::tuple<std::string, double, double>>> traced;
  std::set<std::string> threads;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["name"] == "process_name") {
      EXPECT_EQ(e["args"]["name"], "dgd, seed 4: jobs of jobs.csv");
    }
    if (e["ph"] != "X" || e["cat"] != "phase") continue;
    // Microseconds, each boundary rounded to 1/1024 µs; the times here are multiples of 0.25 s.
    const double from = e["ts"].get<double>() / 1e6;
    traced[{e["args"]["worker"].get<int>(), e["args"]["tag"].get<int64_t>()}].push_back(
        {e["name"].get<std::string>(), from, from + e["dur"].get<double>() / 1e6});
  }
  EXPECT_EQ(traced, logged);
  EXPECT_EQ(threads, (std::set<std::string>{"worker 0", "worker 1", "worker 2"}));
  // Steps of 0.25 + 3 + 0.25 s: the sixth ends at 21 s.
  const std::string script = read_text(dir.file("timeline.gp"));
  EXPECT_NE(script.find("'dgd, seed 4: timeline, t = 0.0–21.0 s'"), std::string::npos) << script;
}

TEST(JobLog, ReadsTheTenColumnLogsOfEarlierVersions) {
  TempDir dir;
  testing::write_text(dir.file("old.csv"),
                      "worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,"
                      "fate\n1,7,0.5,0.75,1.5,2,1,0.75,40,late\n");
  EXPECT_TRUE(is_jobs_csv(dir.file("old.csv")));
  const std::vector<JobRecord> jobs = read_jobs_csv(dir.file("old.csv"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].worker, 1);
  EXPECT_EQ(jobs[0].tag, 7);
  EXPECT_EQ(jobs[0].delivered, 2.0);
  EXPECT_EQ(jobs[0].fate, JobFate::kLate);
  EXPECT_FALSE(jobs[0].sent);
  EXPECT_FALSE(jobs[0].injected_time);
  // Its message latency: half of delivered − assigned − compute_time, (2 − 0.5 − 0.75) / 2.
  const JobsTrace old = trace_from_jobs_csv(dir.file("old.csv"));
  EXPECT_EQ(old.jobs, 1);
  EXPECT_DOUBLE_EQ(old.latency, 0.375);
}

TEST(JobLog, TheLatencyOfATraceCountsFromTheSendNotTheHeldAssignment) {
  // Held from 0 to 1 (a checkpoint's drain), sent at 1, 0.25 s each way around 1 s of work.
  TempDir dir;
  testing::write_text(dir.file("held.csv"),
                      std::string(JobLog::header()) + "0,3,0,1.25,2.25,2.5,1,1,40,used,1,0\n");
  EXPECT_DOUBLE_EQ(trace_from_jobs_csv(dir.file("held.csv")).latency, 0.25);
}

TEST(JobLog, AsynchronousRunsLogEveryArrivalAsUsed) {
  TempDir dir;
  const RunOutcome r = run(dir.path(), "name = \"asgd\"\n", {"max_steps=30"});
  const auto jobs = csv_rows(dir.file("jobs.csv"));
  int used = 0;
  for (const auto& job : jobs) used += job.at("fate") == "used";
  EXPECT_EQ(used, 30);  // one update per arrival
  EXPECT_FALSE(r.summary["method_stats"].contains("decisive_steps_per_worker"));
}

TEST(JobLog, ABadLimitIsRefusedNamingTheKey) {
  TempDir dir;
  try {
    run(dir.path(), "name = \"dgd\"\n", {"record.jobs_limit=-3"});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("record.jobs_limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pacer
