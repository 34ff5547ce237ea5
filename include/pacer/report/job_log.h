// The job log of a run: jobs.csv, one row per job (DESIGN.md section 6), on every engine.
//
// A JobLog sits between the engine and the master (JobLog::tap): it sees every assignment, every
// reply delivered, every cancellation and every loss, so it needs nothing of an engine but what
// the seam carries (method/protocol.h: Reply::started, ::finished, ::bytes and
// Cluster::job_started). Whether the master used a reply it learns from the master itself
// (Monitor::on_unused_reply, forwarded by the Recorder to note_unused).
//
// jobs.csv has the header
//   worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate,sent,injected_time
// and one row per job in the order the jobs ended (a job dropped while the master handles another
// worker's reply comes just before that reply's row). Times are the engine's clock (simulated
// seconds; on MPI wall seconds on rank 0's clock, the worker's span placed by half the round
// trip: engine/mpi/mpi_cluster.h). A field the engine cannot tell is empty. fate is one of
//   used        the reply was delivered in time for its step (synchronous) or taken by the
//               method's rule (asynchronous); a synchronous close rule may still leave it out of
//               the decoded gradient (gc-fr's other group members: steps_not_used_per_worker);
//   late        delivered but not used (a synchronous step that had closed; a stale gradient
//               discarded by the method's rule);
//   cancelled   the master dropped the job (finished is the moment it was dropped);
//   lost        the engine declared the worker lost while the job was out (finished: then);
//   failed      the worker half reported an error for it;
//   unfinished  the job was still out when the run ended (finished: the run's end).
// units and compute_time are the reply's (empty for jobs never delivered); bytes counts the
// reply message as the engine counts it. compute_time is the whole span [started, finished] on
// the worker, injected sleep included. The last two columns (added later: readers also take the
// ten-column header without them, whose rows then lack both):
//   sent           when the job left the master: assigned, unless the engine held the job first
//                  (MPI holds the jobs handed out during a checkpoint's drain until the
//                  checkpoint is written: Reply::sent); empty for jobs never delivered;
//   injected_time  of compute_time, the seconds the worker slept by delay injection (MPI's
//                  engine.inject; 0 in the simulator, whose modelled duration is the compute);
//                  empty for jobs never delivered.
// So a delivered job's row tells apart, in order: [assigned, sent] held by the master, [sent,
// started] the job's transfer to the worker, [started, finished − injected_time] computing,
// [finished − injected_time, finished] injected delay, [finished, delivered] the reply's transfer
// (on MPI the two transfers include the wait for the other side's next poll, and are equal by
// construction: engine/mpi/mpi_cluster.h). timeline.h draws and exports exactly these.
//
// Size: record.jobs = true records every job, false none; by default (the key unset) the first
// record.jobs_limit jobs (default 20000, about 1.5 MB) are recorded, and a run with more says in
// summary.json that jobs.csv is incomplete (jobs_csv.complete = false), so a small run always has
// its log and a long one does not pay for it unasked.
//
// Streaming: rows go to the file as jobs end, flushed in whole rows whenever a row ends
// `interval_s` seconds or more of wall time after the last flush, and at finish(); a checkpoint
// records the file's length and the jobs out, so a resumed run continues the file exactly where the
// checkpoint was taken.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/files.h"
#include "pacer/core/state.h"
#include "pacer/method/protocol.h"

namespace pacer {

enum class JobFate { kUsed, kLate, kCancelled, kLost, kFailed, kUnfinished };

// What record.jobs and record.jobs_limit ask for (see the file comment).
struct JobLogOptions {
  bool enabled = true;
  int64_t limit = 20000;  // rows at most; < 0: no limit
};
// Reads record.jobs (a boolean) and record.jobs_limit (an integer >= 0, read only when
// record.jobs is unset). Errors name the key.
JobLogOptions read_job_log_options(const Config& config);

class JobLog {
 public:
  JobLog(int workers, JobLogOptions options);
  ~JobLog();
  JobLog(const JobLog&) = delete;
  JobLog& operator=(const JobLog&) = delete;

  // jobs.csv's first line (with its newline).
  static std::string_view header();

  // Sends rows to the file `path`, which already holds header() (or, resuming, the rows before
  // the checkpoint: continue_log). Throws Error naming the file when it cannot be opened.
  void stream(const std::string& path, double interval_s);
  // After checkpoint() loaded a saved state: cuts the file back to the length saved. Throws Error
  // naming the file when it is shorter.
  void continue_log();

  // A Master that forwards every call to `inner` and records the jobs on the way (the engine
  // runs it in place of `inner`). It must not outlive this log or `inner`.
  std::unique_ptr<Master> tap(Master& inner);
  // The reply being delivered to the master is not used (Monitor::on_unused_reply).
  void note_unused(int worker);

  // Records the jobs still out as unfinished at `end_time` and flushes the file. Throws Error
  // naming the file when a write fails (a full disk); rows are never half-written.
  void finish(double end_time);
  // Writes what was collected (whole rows). Throws as finish().
  void flush();

  // summary.json's jobs_csv: rows written, whether every job is in them, the limit.
  void summarize(nlohmann::json& out) const;
  // The jobs out, the counters and the file's length (flushed first).
  void checkpoint(StateArchive& a);

  // The rows as text, when not streaming (tests); empty once stream() was called.
  const std::string& csv() const { return text_; }

 private:
  struct Row {
    int worker = 0;
    int64_t tag = 0;
    double assigned = 0, started = 0, finished = 0, delivered = 0;
    double units = 0, compute_time = 0;
    // Set only when the reply is delivered (never checkpointed: an open job has neither).
    double sent = std::numeric_limits<double>::quiet_NaN();
    double injected_time = std::numeric_limits<double>::quiet_NaN();
    int64_t bytes = 0;
    bool delivered_known = false;
    JobFate fate = JobFate::kUnfinished;
    void checkpoint(StateArchive& a);
  };
  class Tap;
  class TapCluster;
  friend class Tap;
  friend class TapCluster;

  // `starts`: when the job begins on the worker, if the engine says (Cluster::job_started).
  void assigned(int worker, int64_t tag, double now, double starts);
  // The worker's open job's start, if the engine gave one and it is not after `now`; else NaN.
  double known_start(int worker, double now) const;
  // The worker's job ended without a reply (cancelled, lost): `started` as the engine knows it.
  void dropped(int worker, JobFate fate, double now, double started);
  // Takes the worker's open job for the reply being delivered (the master may assign the next
  // one while it handles the reply); end_delivery() writes it.
  void begin_delivery(const Reply& reply, double now);
  void end_delivery();
  void write(const Row& row);

  int workers_;
  JobLogOptions options_;
  std::vector<std::optional<Row>> open_;  // per worker: the job out, if any
  std::optional<Row> delivering_;
  int64_t jobs_ = 0;  // jobs ended (written or not)
  int64_t rows_ = 0;  // rows written
  std::string text_;  // rows while not streaming
  AppendFile file_;
  double interval_s_ = 2;
  double last_flush_wall_ = 0;
  uint64_t saved_length_ = 0;  // loaded from a checkpoint
};

// jobs.csv's name of a fate ("used", "late", ...).
const char* job_fate_name(JobFate fate);

// One row of a jobs.csv as read back; a field left empty is nullopt.
struct JobRecord {
  int worker = 0;
  int64_t tag = 0;
  double assigned = 0;
  std::optional<double> started, finished, delivered, units, compute_time;
  std::optional<int64_t> bytes;
  JobFate fate = JobFate::kUnfinished;
  std::optional<double> sent, injected_time;  // nullopt also in a file without these columns
  // When the job ended: delivered, else finished, else started, else assigned.
  double end() const;
};

// Every job of the jobs.csv at `path` (either header), in file order. Throws Error naming the
// file (unreadable), the line (a bad header, a wrong number of fields) or the line and column (a
// field that is not a number of the column's kind, a fate not in the list).
std::vector<JobRecord> read_jobs_csv(const std::string& path);

// What a jobs.csv says of the cluster's timings (trace_from_jobs_csv).
struct JobsTrace {
  // The delivered jobs (fate used or late) as a trace with time (timing/trace.h): the text of a
  // CSV "worker,duration,step,units" with compute_time / units, the tag and the units of each job,
  // in the file's order (what timing.model = "trace", pacer fit, pacer stragglers and pacer advise
  // read). worker and duration come first, as in a classic trace.
  std::string csv;
  // Seconds one message takes: half the median over delivered jobs of the time from the job's
  // send to its delivery not spent computing (delivered − sent − compute_time; sent is assigned
  // in a file without that column), the comm model's timing.latency; 0 when no job says (the
  // simulator's own logs without a comm model).
  double latency = 0;
  int64_t jobs = 0;  // rows in csv
};
// Reads the jobs.csv at `path` (read_jobs_csv). Throws Error as read_jobs_csv does, naming the
// line of a delivered job without its delivered time, units or compute time, and when no job was
// delivered.
JobsTrace trace_from_jobs_csv(const std::string& path);

// Whether the file at `path` begins with jobs.csv's header, or the older ten-column one (false
// when it cannot be read).
bool is_jobs_csv(const std::string& path);

// Per worker, the synchronous steps it decided according to a jobs.csv: for each tag, the worker
// whose used job of that tag was delivered last (a synchronous step closes on the last reply it
// needs; of equal times, the earlier row). `workers` entries; tags without a used job count for
// no one. `steps` is set to the
// number of tags counted. Meaningless for an asynchronous run, whose tags are update counts.
std::vector<int64_t> decided_from_jobs(const std::vector<JobRecord>& jobs, int workers,
                                       int64_t& steps);

}  // namespace pacer
