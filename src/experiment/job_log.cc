#include "pacer/experiment/job_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "pacer/core/error.h"

namespace pacer {
namespace {

constexpr std::string_view kHeader =
    "worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate\n";
constexpr uint64_t kMaxPending = 1 << 20;  // bytes collected before a flush at the latest

double wall_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* fate_name(JobFate fate) {
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

// A time or amount, empty when it is not known (NaN).
void append_number(std::string& out, double value) {
  if (!std::isnan(value)) fmt::format_to(std::back_inserter(out), "{}", value);
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
  last_flush_wall_ = wall_now();
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
  row.finished = row.units = row.compute_time = std::nan("");
  open_[worker] = row;
}

double JobLog::known_start(int worker, double now) const {
  if (!open_[worker] || !(open_[worker]->started <= now)) return std::nan("");
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
  fmt::format_to(std::back_inserter(line), ",{},{}\n", r.bytes, fate_name(r.fate));
  if (!file_.is_open()) {
    text_ += line;
    return;
  }
  file_.append(line);
  if (file_.pending() >= kMaxPending || wall_now() - last_flush_wall_ >= interval_s_) flush();
}

void JobLog::flush() {
  if (!file_.is_open()) return;
  file_.flush();
  last_flush_wall_ = wall_now();
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
  return line + "\n" == kHeader;
}

JobsTrace trace_from_jobs_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open the job log", path);
  if (!is_jobs_csv(path)) {
    fail("{}:1: expected the jobs.csv header \"{}\"", path, kHeader.substr(0, kHeader.size() - 1));
  }
  std::string line;
  JobsTrace trace;
  trace.csv = "worker,duration\n";
  std::vector<double> overheads;  // delivered − assigned − compute_time, per job
  std::getline(in, line);
  for (int number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string_view> f;
    for (size_t begin = 0;;) {
      const size_t comma = line.find(',', begin);
      f.push_back(std::string_view(line).substr(begin, comma - begin));
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (f.size() != 10) fail("{}:{}: expected 10 fields, got {}", path, number, f.size());
    if (f[9] != "used" && f[9] != "late") continue;  // never delivered: no duration
    char* end = nullptr;
    const std::string worker(f[0]), units(f[6]), compute(f[7]);
    const long w = std::strtol(worker.c_str(), &end, 10);
    const bool worker_ok = !worker.empty() && *end == '\0' && w >= 0;
    const double u = std::strtod(units.c_str(), &end);
    const bool units_ok = !units.empty() && *end == '\0' && u > 0 && std::isfinite(u);
    const double c = std::strtod(compute.c_str(), &end);
    const bool compute_ok = !compute.empty() && *end == '\0' && c > 0 && std::isfinite(c);
    if (!worker_ok || !units_ok || !compute_ok) {
      fail("{}:{}: expected a worker index, units > 0 and compute_time > 0, got \"{}\"", path,
           number, line);
    }
    fmt::format_to(std::back_inserter(trace.csv), "{},{}\n", w, c / u);
    ++trace.jobs;
    const std::string assigned_text(f[2]), delivered_text(f[5]);
    const double assigned = std::strtod(assigned_text.c_str(), &end);
    const bool assigned_ok = !assigned_text.empty() && *end == '\0' && std::isfinite(assigned);
    const double delivered = std::strtod(delivered_text.c_str(), &end);
    const bool delivered_ok = !delivered_text.empty() && *end == '\0' && std::isfinite(delivered);
    if (!assigned_ok || !delivered_ok) {
      fail("{}:{}: expected the assigned and delivered times of a delivered job, got \"{}\"", path,
           number, line);
    }
    overheads.push_back(std::max(0.0, delivered - assigned - c));
  }
  if (trace.jobs == 0) {
    fail("{}: no delivered job (fate used or late) to take durations from", path);
  }
  std::nth_element(overheads.begin(), overheads.begin() + overheads.size() / 2, overheads.end());
  trace.latency = overheads[overheads.size() / 2] / 2;
  return trace;
}

}  // namespace pacer
