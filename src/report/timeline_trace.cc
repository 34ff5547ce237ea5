// The timeline's Chrome trace (include/pacer/report/timeline.h).
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "timeline_phases.h"

namespace pacer::timeline {
namespace {

using Json = nlohmann::ordered_json;  // keys in the order written, for a reader of the file

constexpr int kPid = 1;

// Engine seconds as trace microseconds, rounded to a multiple of 1/1024 µs: such numbers and
// their differences are exact in binary and in the decimal text, so adjacent phases meet exactly
// (ts + dur of one is the next one's ts) in every reader.
double micros(double seconds) { return std::round(seconds * 1e6 * 1024) / 1024; }

int tid(int worker) { return worker + 1; }

Json metadata(const char* name, int thread, Json args) {
  return Json{{"name", name}, {"ph", "M"}, {"pid", kPid}, {"tid", thread}, {"args", args}};
}

// What every event of a job carries: worker, tag, fate, and units, compute_time, bytes where
// known.
Json job_args(const JobRecord& j) {
  Json args{{"worker", j.worker}, {"tag", j.tag}, {"fate", job_fate_name(j.fate)}};
  if (j.units) args["units"] = *j.units;
  if (j.compute_time) args["compute_time_s"] = *j.compute_time;
  if (j.bytes) args["bytes"] = *j.bytes;
  return args;
}

Json complete(const std::string& name, const char* category, Span s, const JobRecord& j,
              const Json& args) {
  const double ts = micros(s.from);
  return Json{
      {"name", name}, {"cat", category},      {"ph", "X"},   {"ts", ts}, {"dur", micros(s.to) - ts},
      {"pid", kPid},  {"tid", tid(j.worker)}, {"args", args}};
}

}  // namespace

std::string chrome_trace(const std::vector<JobPhases>& jobs, int workers, Span window,
                         const std::string& title, const std::string& jobs_csv) {
  std::vector<Json> events;
  const std::string run = title.empty() ? "run" : title;
  events.push_back(metadata("process_name", 0, {{"name", run + ": jobs of " + jobs_csv}}));
  for (int w = 0; w < workers; ++w) {
    events.push_back(metadata("thread_name", tid(w), {{"name", "worker " + std::to_string(w)}}));
    events.push_back(metadata("thread_sort_index", tid(w), {{"sort_index", w}}));
  }
  for (const JobPhases& in : jobs) {
    const JobRecord& j = *in.job;
    const Json args = job_args(j);
    const Span whole{in.phases.front().span.from, in.phases.back().span.to};
    events.push_back(complete("job " + std::to_string(j.tag), "job", whole, j, args));
    for (const Phase& p : in.phases) {
      events.push_back(complete(kPhaseNames[p.kind], "phase", p.span, j, args));
    }
  }
  std::string text = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    text += events[i].dump() + (i + 1 < events.size() ? ",\n" : "\n");
  }
  const Json other{{"run", run},
                   {"jobs_csv", jobs_csv},
                   {"window_s", {window.from, window.to}},
                   {"time", "ts and dur: microseconds of engine time (seconds x 10^6)"}};
  text += "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": " + other.dump() + "}\n";
  return text;
}

}  // namespace pacer::timeline
