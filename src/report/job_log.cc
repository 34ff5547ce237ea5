#include "pacer/report/job_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"

namespace pacer {
namespace {

constexpr std::string_view kHeader =
    "worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate,sent,"
    "injected_time\n";
constexpr std::string_view kHeaderLine = kHeader.substr(0, kHeader.size() - 1);
constexpr const char* kColumns[] = {"worker",   "tag",       "assigned", "started",
                                    "finished", "delivered", "units",    "compute_time",
                                    "bytes",    "fate",      "sent",     "injected_time"};
constexpr size_t kFields = std::size(kColumns);
// The header pacer wrote before sent and injected_time were added: its first kLegacyFields
// columns, still read.
constexpr size_t kLegacyFields = 10;
constexpr std::string_view kLegacyHeaderLine = kHeaderLine.substr(0, kHeaderLine.find(",sent"));
constexpr JobFate kFates[] = {JobFate::kUsed, JobFate::kLate,   JobFate::kCancelled,
                              JobFate::kLost, JobFate::kFailed, JobFate::kUnfinished};
constexpr uint64_t kMaxPending = 1 << 20;  // bytes collected before a flush at the latest

}  // namespace

const char* job_fate_name(JobFate fate) {
  switch (fate) {
    case JobFate::kUsed:
      return "used";
    case JobFate::kLate:
      return "late";
    case JobFate::kCancelled:
      return "cancelled";
    case JobFate::kLost:
      return "lost";
    case JobFate::kFailed:
      return "failed";
    case JobFate::kUnfinished:
      return "unfinished";
  }
  return "unfinished";
}

namespace {

// A time or amount not known (std::nan("") parses a string at every call: this is per job).
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// A time or amount, empty when it is not known (NaN).
void append_number(std::string& out, double value) {
  if (!std::isnan(value)) fmt::format_to(std::back_inserter(out), "{}", value);
}

// Where a field is, for errors: "<file>:<line>: column <k> (<name>)".
struct Place {
  const std::string& file;
  size_t line;
  size_t column;  // 0-based
  std::string where() const {
    return fmt::format("{}:{}: column {} ({})", file, line, column + 1, kColumns[column]);
  }
};

[[noreturn]] void bad_field(const Place& at, std::string_view field, const char* expected) {
  fail("{}: '{}' is not {}", at.where(), field, expected);
}

// A finite number filling the whole field.
double parse_number(const Place& at, std::string_view field) {
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc() || end != field.data() + field.size() ||
      !std::isfinite(value)) {
    bad_field(at, field, "a number");
  }
  return value;
}

std::optional<double> parse_optional_number(const Place& at, std::string_view field) {
  if (field.empty()) return std::nullopt;
  return parse_number(at, field);
}

// An integer in [low, high] filling the whole field.
int64_t parse_integer(const Place& at, std::string_view field, int64_t low, int64_t high,
                      const char* expected) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc() || end != field.data() + field.size() || value < low ||
      value > high) {
    bad_field(at, field, expected);
  }
  return value;
}

JobFate parse_fate(const Place& at, std::string_view field) {
  for (JobFate fate : kFates) {
    if (field == job_fate_name(fate)) return fate;
  }
  bad_field(at, field, "a fate (used, late, cancelled, lost, failed or unfinished)");
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// The number of columns of a jobs.csv whose first line is `line`: kFields, or kLegacyFields for
// the older header; 0 for anything else.
size_t header_fields(std::string_view line) {
  if (line == kHeaderLine) return kFields;
  return line == kLegacyHeaderLine ? kLegacyFields : 0;
}

// One data row of a file with `fields` columns (header_fields); throws Error naming file, line
// and column.
JobRecord parse_job(const std::string& file, size_t line_number, std::string_view line,
                    size_t fields) {
  const std::vector<std::string_view> f = split(line);
  if (f.size() != fields) {
    fail("{}:{}: {} fields, expected {} ({})", file, line_number, f.size(), fields,
         fields == kFields ? kHeaderLine : kLegacyHeaderLine);
  }
  auto at = [&](size_t column) { return Place{file, line_number, column}; };
  JobRecord job;
  // Below INT_MAX so that worker + 1 (the row count) is an int too.
  job.worker = static_cast<int>(
      parse_integer(at(0), f[0], 0, INT_MAX - 1, "a worker number (an integer >= 0)"));
  job.tag = parse_integer(at(1), f[1], INT64_MIN, INT64_MAX, "an integer");
  job.assigned = parse_number(at(2), f[2]);
  job.started = parse_optional_number(at(3), f[3]);
  job.finished = parse_optional_number(at(4), f[4]);
  job.delivered = parse_optional_number(at(5), f[5]);
  job.units = parse_optional_number(at(6), f[6]);
  job.compute_time = parse_optional_number(at(7), f[7]);
  if (!f[8].empty()) {
    job.bytes = parse_integer(at(8), f[8], 0, INT64_MAX, "a byte count (an integer >= 0)");
  }
  job.fate = parse_fate(at(9), f[9]);
  if (fields == kFields) {
    job.sent = parse_optional_number(at(10), f[10]);
    job.injected_time = parse_optional_number(at(11), f[11]);
  }
  return job;
}

}  // namespace

JobLogOptions read_job_log_options(const Config& config) {
  JobLogOptions options;
  if (config.has("record.jobs")) {
    options.enabled = config.get_bool("record.jobs", true);
    options.limit = -1;
    return options;
  }
  options.limit = config.get_int("record.jobs_limit", options.limit);
  if (options.limit < 0) {
    fail("record.jobs_limit = {}: expected a number of jobs >= 0 (record.jobs = true records all)",
         options.limit);
  }
  return options;
}

// The cluster as the tapped master sees it during one call: forwards everything to the engine's,
// recording assignments and cancellations on the way.
class JobLog::TapCluster : public Cluster {
 public:
  TapCluster(Cluster& inner, JobLog& log) : inner_(inner), log_(log) {}
  int num_workers() const override { return inner_.num_workers(); }
  double now() const override { return inner_.now(); }
  void assign(int worker, const Job& job, const Vec& x) override {
    inner_.assign(worker, job, x);
    log_.assigned(worker, job.tag, inner_.now(), inner_.job_started(worker));
  }
  bool busy(int worker) const override { return inner_.busy(worker); }
  bool can_cancel() const override { return inner_.can_cancel(); }
  void cancel(int worker) override {
    log_.dropped(worker, JobFate::kCancelled, inner_.now(), log_.known_start(worker, inner_.now()));
    inner_.cancel(worker);
  }
  bool alive(int worker) const override { return inner_.alive(worker); }
  void set_timer(double time) override { inner_.set_timer(time); }
  double job_started(int worker) const override { return inner_.job_started(worker); }

 private:
  Cluster& inner_;
  JobLog& log_;
};

class JobLog::Tap : public Master {
 public:
  Tap(Master& inner, JobLog& log) : inner_(inner), log_(log) {}
  void start(Cluster& cluster) override {
    TapCluster tap(cluster, log_);
    inner_.start(tap);
  }
  void on_reply(const Reply& reply, Cluster& cluster) override {
    log_.begin_delivery(reply, cluster.now());
    TapCluster tap(cluster, log_);
    try {
      inner_.on_reply(reply, tap);
    } catch (...) {
      log_.end_delivery();  // a failed reply ends the run by throwing: its row is kept
      throw;
    }
    log_.end_delivery();
  }
  void on_lost(int worker, Cluster& cluster) override {
    log_.dropped(worker, JobFate::kLost, cluster.now(), log_.known_start(worker, cluster.now()));
    TapCluster tap(cluster, log_);
    inner_.on_lost(worker, tap);
  }
  void on_rejoined(int worker, Cluster& cluster) override {
    TapCluster tap(cluster, log_);
    inner_.on_rejoined(worker, tap);
  }
  void on_timer(Cluster& cluster) override {
    TapCluster tap(cluster, log_);
    inner_.on_timer(tap);
  }
  bool finished() const override { return inner_.finished(); }
  void checkpoint(StateArchive& a) override { inner_.checkpoint(a); }

 private:
  Master& inner_;
  JobLog& log_;
};

JobLog::JobLog(int workers, JobLogOptions options)
    : workers_(workers), options_(options), open_(workers) {
  text_ = kHeader;
}

JobLog::~JobLog() = default;

std::string_view JobLog::header() { return kHeader; }

std::unique_ptr<Master> JobLog::tap(Master& inner) { return std::make_unique<Tap>(inner, *this); }

void JobLog::stream(const std::string& path, double interval_s) {
  file_.open(path);
  text_.clear();
  text_.shrink_to_fit();
  interval_s_ = interval_s;
  last_flush_wall_ = coarse_steady_seconds();
}

void JobLog::continue_log() {
  PACER_CHECK(file_.is_open());
  if (file_.size() < saved_length_) {
    fail("{}: {} bytes long, shorter than the {} bytes the checkpoint recorded", file_.path(),
         file_.size(), saved_length_);
  }
  file_.truncate(saved_length_);
}

void JobLog::assigned(int worker, int64_t tag, double now, double starts) {
  Row row;
  row.worker = worker;
  row.tag = tag;
  row.assigned = now;
  row.started = starts;
  row.finished = row.units = row.compute_time = row.sent = row.injected_time = kUnknown;
  open_[worker] = row;
}

double JobLog::known_start(int worker, double now) const {
  if (!open_[worker] || !(open_[worker]->started <= now)) return kUnknown;
  return open_[worker]->started;
}

void JobLog::dropped(int worker, JobFate fate, double now, double started) {
  if (!open_[worker]) return;  // a lost worker that had no job out
  Row row = *open_[worker];
  open_[worker].reset();
  row.started = started;
  row.finished = now;
  row.fate = fate;
  write(row);
}

void JobLog::begin_delivery(const Reply& reply, double now) {
  const int w = reply.worker;
  // A reply for no job out: an MPI worker's error report between jobs. It ends the run (the
  // master fails on it) and is no job: no row.
  if (!open_[w]) return;
  Row row = *open_[w];
  open_[w].reset();
  row.started = reply.started;
  row.finished = reply.finished;
  row.delivered = now;
  row.delivered_known = true;
  row.units = reply.units;
  row.compute_time = reply.compute_time;
  row.bytes = reply.bytes;
  row.sent = std::isnan(reply.sent) ? row.assigned : reply.sent;
  row.injected_time = reply.injected_time;
  row.fate = reply.status == ReplyStatus::kOk ? JobFate::kUsed : JobFate::kFailed;
  delivering_ = row;
}

void JobLog::note_unused(int worker) {
  if (delivering_ && delivering_->worker == worker && delivering_->fate == JobFate::kUsed) {
    delivering_->fate = JobFate::kLate;
  }
}

void JobLog::end_delivery() {
  if (!delivering_) return;
  write(*delivering_);
  delivering_.reset();
}

void JobLog::write(const Row& r) {
  ++jobs_;
  if (options_.limit >= 0 && rows_ >= options_.limit) return;
  ++rows_;
  std::string line;
  fmt::format_to(std::back_inserter(line), "{},{},", r.worker, r.tag);
  append_number(line, r.assigned);
  line += ',';
  append_number(line, r.started);
  line += ',';
  append_number(line, r.finished);
  line += ',';
  if (r.delivered_known) append_number(line, r.delivered);
  line += ',';
  append_number(line, r.units);
  line += ',';
  append_number(line, r.compute_time);
  fmt::format_to(std::back_inserter(line), ",{},{},", r.bytes, job_fate_name(r.fate));
  append_number(line, r.sent);
  line += ',';
  append_number(line, r.injected_time);
  line += '\n';
  if (!file_.is_open()) {
    text_ += line;
    return;
  }
  file_.append(line);
  if (file_.pending() >= kMaxPending || coarse_steady_seconds() - last_flush_wall_ >= interval_s_)
    flush();
}

void JobLog::flush() {
  if (!file_.is_open()) return;
  file_.flush();
  last_flush_wall_ = coarse_steady_seconds();
}

void JobLog::finish(double end_time) {
  for (int w = 0; w < workers_; ++w) {
    dropped(w, JobFate::kUnfinished, end_time, known_start(w, end_time));
  }
  flush();
}

void JobLog::summarize(nlohmann::json& out) const {
  out["rows"] = rows_;
  out["jobs"] = jobs_;
  out["complete"] = rows_ == jobs_;
  out["limit"] = options_.limit;
}

void JobLog::Row::checkpoint(StateArchive& a) {
  a.io(worker);
  a.io(tag);
  a.io(assigned);
  a.io(started);
  a.io(finished);
  a.io(delivered);
  a.io(units);
  a.io(compute_time);
  a.io(bytes);
  a.io(delivered_known);
  int fate_code = static_cast<int>(fate);
  a.io(fate_code);
  if (fate_code < 0 || fate_code > static_cast<int>(JobFate::kUnfinished)) {
    a.mismatch("a job fate that does not exist");
  }
  fate = static_cast<JobFate>(fate_code);
}

void JobLog::checkpoint(StateArchive& a) {
  a.section("job_log");
  a.expect(static_cast<int64_t>(workers_), "workers");
  for (int w = 0; w < workers_; ++w) {
    bool out = open_[w].has_value();
    a.io(out);
    if (!out) {
      open_[w].reset();
      continue;
    }
    if (a.loading()) open_[w] = Row{};
    open_[w]->checkpoint(a);
  }
  a.io(jobs_);
  a.io(rows_);
  if (!a.loading()) {
    flush();
    saved_length_ = file_.is_open() ? file_.size() : 0;
  }
  a.io(saved_length_);
}

bool is_jobs_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return header_fields(line) != 0;
}

double JobRecord::end() const {
  return delivered.value_or(finished.value_or(started.value_or(assigned)));
}

std::vector<JobRecord> read_jobs_csv(const std::string& path) {
  const std::string text = read_file(path);
  std::vector<JobRecord> jobs;
  size_t line_number = 0, fields = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    if (++line_number == 1) {
      fields = header_fields(line);
      if (fields == 0) fail("{}:1: the header is '{}', expected '{}'", path, line, kHeaderLine);
      continue;
    }
    jobs.push_back(parse_job(path, line_number, line, fields));
  }
  if (line_number == 0) fail("{}:1: the header is missing (expected '{}')", path, kHeaderLine);
  return jobs;
}

JobsTrace trace_from_jobs_csv(const std::string& path) {
  JobsTrace trace;
  trace.csv = "worker,duration,step,units\n";
  std::vector<double> overheads;  // delivered − sent − compute_time, per job
  size_t row = 1;                 // the header
  for (const JobRecord& job : read_jobs_csv(path)) {
    ++row;  // line number: read_jobs_csv refuses blank lines
    if (job.fate != JobFate::kUsed && job.fate != JobFate::kLate) continue;  // no duration
    if (!job.delivered || !(job.units.value_or(0) > 0) || !(job.compute_time.value_or(0) > 0)) {
      fail("{}:{}: a delivered job needs its delivered time, units > 0 and compute_time > 0", path,
           row);
    }
    fmt::format_to(std::back_inserter(trace.csv), "{},{},{},{}\n", job.worker,
                   *job.compute_time / *job.units, job.tag, *job.units);
    ++trace.jobs;
    // From the send: a job held during an MPI checkpoint's drain was waiting, not travelling.
    const double sent = job.sent.value_or(job.assigned);
    overheads.push_back(std::max(0.0, *job.delivered - sent - *job.compute_time));
  }
  if (trace.jobs == 0) {
    fail("{}: no delivered job (fate used or late) to take durations from", path);
  }
  std::nth_element(overheads.begin(), overheads.begin() + overheads.size() / 2, overheads.end());
  trace.latency = overheads[overheads.size() / 2] / 2;
  return trace;
}

std::vector<int64_t> decided_from_jobs(const std::vector<JobRecord>& jobs, int workers,
                                       int64_t& steps) {
  std::map<int64_t, std::pair<double, int>> last;  // tag -> (delivered, worker)
  for (const JobRecord& job : jobs) {
    if (job.fate != JobFate::kUsed || !job.delivered) continue;
    auto [it, inserted] = last.try_emplace(job.tag, *job.delivered, job.worker);
    if (!inserted && *job.delivered > it->second.first) it->second = {*job.delivered, job.worker};
  }
  std::vector<int64_t> decided(workers, 0);
  steps = 0;
  for (const auto& [tag, entry] : last) {
    if (entry.second >= workers) continue;
    ++decided[entry.second];
    ++steps;
  }
  return decided;
}

}  // namespace pacer
