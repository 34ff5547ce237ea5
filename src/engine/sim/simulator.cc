#include "pacer/engine/sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "pacer/core/error.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/core/state.h"

namespace pacer {

namespace {

// The [faults] table (read_fault_plan without the deadline).
FaultPlan read_faults_table(const Config& config, int workers) {
  FaultPlan plan;
  const std::vector<double> kill_workers = config.get_doubles("faults.kill_workers", {});
  for (double w : kill_workers) {
    if (!(w >= 0 && w < workers) || w != std::floor(w)) {
      config.fail_key("faults.kill_workers",
                      fmt::format("a list of worker indices from 0 to {} (workers = {})",
                                  workers - 1, workers));
    }
  }
  std::vector<double> kill_at = config.get_doubles("faults.kill_at", {});
  if (kill_at.size() == 1 && kill_workers.size() > 1)
    kill_at.assign(kill_workers.size(), kill_at[0]);
  if (kill_at.size() != kill_workers.size()) {
    config.fail_key("faults.kill_at",
                    fmt::format("one simulated time per entry of faults.kill_workers ({} given for "
                                "{} workers), or one time for all",
                                kill_at.size(), kill_workers.size()));
  }
  for (size_t k = 0; k < kill_at.size(); ++k) {
    if (!(kill_at[k] >= 0) || !std::isfinite(kill_at[k])) {
      config.fail_key("faults.kill_at", "finite simulated times in seconds, >= 0");
    }
    plan.kills.push_back(FaultPlan::Kill{static_cast<int>(kill_workers[k]), kill_at[k]});
  }
  if (config.has("faults.rejoin_after")) {
    plan.rejoin_after = config.get_double("faults.rejoin_after", 0);
    if (!(plan.rejoin_after > 0) || !std::isfinite(plan.rejoin_after)) {
      config.fail_key("faults.rejoin_after",
                      "a finite number of seconds > 0 (leave it out: lost workers stay lost)");
    }
  }
  plan.rate = config.get_double("faults.rate", 0);
  if (!(plan.rate >= 0) || !std::isfinite(plan.rate)) {
    config.fail_key("faults.rate", "a finite number >= 0 (failures per worker per second)");
  }
  return plan;
}

// engine.worker_timeout_s on the simulator (FaultPlan::deadline), 0 when absent.
double read_loss_deadline(const Config& config, const FaultPlan& plan) {
  if (!config.has("engine.worker_timeout_s")) return 0;
  const double deadline = config.get_double("engine.worker_timeout_s", 0);
  if (!(deadline > 0) || !std::isfinite(deadline)) {
    config.fail_key("engine.worker_timeout_s",
                    "a finite number of seconds > 0 on the simulator (the deadline after which an "
                    "unanswered job's worker is declared lost; leave it out: losses are seen at "
                    "once)");
  }
  if (plan.rejoin_after > 0) {
    config.fail_key("faults.rejoin_after",
                    "no key with engine.worker_timeout_s: as on MPI, a worker declared lost comes "
                    "back only by answering its job late");
  }
  return deadline;
}

}  // namespace

FaultPlan read_fault_plan(const Config& config, int workers) {
  // (No [faults] table is resolved for a run without faults.)
  FaultPlan plan = config.has("faults") ? read_faults_table(config, workers) : FaultPlan{};
  plan.deadline = read_loss_deadline(config, plan);
  return plan;
}

void SimulatorStats::to_json(nlohmann::json& out) const {
  out["engine"] = "sim";
  out["events"] = events;
  workers.to_json(out);
}

Simulator::Simulator(const TimingModel& timing, CommModel comm, uint64_t seed, double max_time)
    : timing_(timing), comm_(comm), max_time_(max_time), seed_(seed) {}

void Simulator::set_threads(int threads) {
  PACER_CHECK(threads >= 1);
  threads_ = threads;
}

void Simulator::run(Master& master, std::vector<std::unique_ptr<Worker>>& workers) {
  const int n = static_cast<int>(workers.size());
  if (n != timing_.num_workers()) {
    fail("simulator: the timing model has {} workers but the method has {}", timing_.num_workers(),
         n);
  }
  workers_ = &workers;
  for (const FaultPlan::Kill& kill : faults_.kills) {
    if (kill.worker < 0 || kill.worker >= n) fail("simulator: no worker {} to fail", kill.worker);
  }
  ahead_enabled_ = false;
  probed_jobs_ = 0;
  probed_seconds_ = 0;
  if (threads_ > 1) {
    pool_ = std::make_unique<ComputePool>(threads_);
    find_speculative_workers();
    ahead_enabled_ = ahead_policy_ == ComputeAhead::kAlways;
  }
  try {
    if (resumed_) {
      resumed_ = false;
      restart_ahead();
    } else {
      reset(n);
      master.start(*this);
      schedule_faults();
    }
    run_events(master);
    // Jobs computed ahead whose completion lies beyond the end never ran in virtual time.
    undo_all_ahead();
  } catch (...) {
    // No computation may outlive the run (the worker halves may go next): those not started are
    // dropped, the others waited for.
    for (WorkerState& s : state_) {
      if (s.ahead) pool_->drop(s.ahead);
      s.ahead.reset();
    }
    pool_.reset();
    workers_ = nullptr;
    throw;
  }
  pool_.reset();
  stats_.workers.end_time = now_;
  workers_ = nullptr;
}

void Simulator::run_events(Master& master) {
  while (!master.finished()) {
    if (interrupt_signal() != 0) {  // SIGINT/SIGTERM (core/interrupt.h): stop between events
      interrupted_ = true;
      break;
    }
    if (quiet_point_) quiet_point_();
    // Fault events alone (random failures are always pending) cannot make a method go on.
    if (queue_.empty() ||
        (busy_workers_ == 0 && owed_jobs_ == 0 && !timer_pending_ && pending_rejoins_ == 0)) {
      fail("simulation stalled at t={}: no job is running and the method has not finished", now_);
    }
    if (queue_.top().time > max_time_) {
      now_ = max_time_;  // nothing happens before the limit: the clock runs up to it
      break;
    }
    Event event = queue_.pop();
    if (event.kind == kTimer) {
      if (event.job != timer_id_) continue;  // replaced by a later set_timer
      ++stats_.events;
      now_ = event.time;
      timer_pending_ = false;
      master.on_timer(*this);
      continue;
    }
    if (event.kind == kLost) {
      if (!loss_is_current(event)) continue;
      ++stats_.events;
      now_ = event.time;
      if (faults_.deadline > 0) {
        die_silently(event.worker);
      } else {
        lose(event.worker, master);
      }
      continue;
    }
    if (event.kind == kDeadline) {
      const WorkerState& d = state_[event.worker];
      if (event.job != d.job_id || d.declared_lost || !(d.busy || d.owed)) continue;
      ++stats_.events;
      now_ = event.time;
      deadline_passed(event.worker, master);
      continue;
    }
    if (event.kind == kRejoins) {
      ++stats_.events;
      now_ = event.time;
      --pending_rejoins_;
      rejoin(event.worker, master);
      continue;
    }
    WorkerState& s = state_[event.worker];
    // The job was cancelled or dropped, or its worker died (with a deadline it keeps its id).
    if (event.job != s.job_id || !s.busy) continue;
    ++stats_.events;
    now_ = event.time;
    if (event.kind == kJobDone) {
      finish_job(event.worker);
      const double delay = comm_.time(8.0 * static_cast<double>(s.output().payload.size()));
      if (delay > 0) {
        queue_.push(Event{
            .time = now_ + delay, .worker = event.worker, .kind = kReplyArrives, .job = s.job_id});
        continue;
      }
    }
    if (s.declared_lost) {
      readmit(event.worker, master);
    } else {
      deliver(event.worker, master);
    }
  }
}

void Simulator::reset(int workers) {
  state_.clear();
  for (int i = 0; i < workers; ++i) {
    state_.emplace_back(Rng(seed_, "duration", static_cast<uint64_t>(i)),
                        Rng(seed_, "faults", static_cast<uint64_t>(i)));
  }
  stats_ = SimulatorStats{};
  stats_.workers.workers.assign(workers, WorkerStatistics{});
  now_ = 0;
  queue_ = EventQueue{};
  timer_id_ = 0;
  timer_pending_ = false;
  busy_workers_ = 0;
  last_model_.reset();
  pending_rejoins_ = 0;
  owed_jobs_ = 0;
}

void SimulatorStats::checkpoint(StateArchive& a) {
  a.io(events);
  const size_t n = workers.workers.size();
  a.io(workers.workers);
  if (workers.workers.size() != n) a.mismatch("statistics of another number of workers");
}

void Simulator::WorkerState::checkpoint(StateArchive& a) {
  a.io(alive);
  a.io(declared_lost);
  a.io(owed);
  a.io(owed_since);
  a.io(sent);
  a.io(fault_epoch);
  a.io(busy);
  a.io(job_id);
  a.io(job.tag);
  if (busy) {
    // A job in progress: the model it computes at, and its answer once computed.
    if (a.loading()) {
      x = std::make_shared<Vec>();
    }
    a.io(*x);  // saving only reads it
    a.io(units);
    a.io(start);
    a.io(duration);
    a.io(computed);
    if (computed) {
      a.io(output().payload);
      a.io(output().loss);
      a.io(output().versions);
    }
  }
  rng.checkpoint(a);
  fault_rng.checkpoint(a);
}

void Simulator::checkpoint(StateArchive& a) {
  // A saved run holds no computation ahead: a job not computed in virtual time is saved as such.
  if (!a.loading()) undo_all_ahead();
  a.section("simulator");
  const int n = timing_.num_workers();
  a.expect(n, "workers");
  if (a.loading()) {
    reset(n);
    resumed_ = true;
  }
  a.io(now_);
  queue_.checkpoint(a);
  for (WorkerState& s : state_) s.checkpoint(a);
  a.io(timer_id_);
  a.io(timer_pending_);
  a.io(busy_workers_);
  a.io(pending_rejoins_);
  a.io(owed_jobs_);
  stats_.checkpoint(a);
}

void Simulator::restart_ahead() {
  if (!pool_ || !ahead_enabled_) return;  // not inside run() (a checkpoint after an interrupt)
  for (size_t i = 0; i < state_.size(); ++i) {
    const WorkerState& s = state_[i];
    if (s.busy && !s.computed && !s.ahead && speculative_[i]) compute_ahead(static_cast<int>(i));
  }
}

bool Simulator::busy(int worker) const {
  const WorkerState& s = state_[worker];
  return (s.busy || s.owed) && !s.declared_lost;
}

bool Simulator::alive(int worker) const {
  const WorkerState& s = state_[worker];
  return faults_.deadline > 0 ? !s.declared_lost : s.alive;
}

void Simulator::assign(int worker, const Job& job, const Vec& x) {
  WorkerState& s = state_[worker];
  PACER_CHECK(!busy(worker));
  PACER_CHECK(alive(worker));
  ++s.job_id;
  s.job = job;
  s.sent = now_;
  // With a deadline, the job's deadline event comes after its completion's, so that a reply
  // computed on the deadline itself is in time (the cluster engines declare lost strictly after
  // it; a reply still in flight then, with message latency, is not).
  Event deadline{
      .time = now_ + faults_.deadline, .worker = worker, .kind = kDeadline, .job = s.job_id};
  if (faults_.deadline > 0 && !s.alive) {  // dead, unknown to the master: it will never answer
    if (s.owed_since < 0) s.owed_since = now_;
    deadline.time = std::max(now_, s.owed_since + faults_.deadline);
    s.owed = true;
    ++owed_jobs_;
    queue_.push(deadline);
    return;
  }
  s.busy = true;
  ++busy_workers_;
  set_model(s, x);
  s.computed = false;
  s.units = (*workers_)[worker]->units(job);
  s.duration = timing_.compute_time(worker, s.units, job.tag, s.rng).total();
  s.start = now_ + comm_.time(8.0 * static_cast<double>(x.size()));
  queue_.push(
      Event{.time = s.start + s.duration, .worker = worker, .kind = kJobDone, .job = s.job_id});
  if (faults_.deadline > 0) queue_.push(deadline);
  if (pool_) {
    s.current ^= 1;  // the reply being delivered (if any) keeps the other buffer
    if (ahead_enabled_ && speculative_[worker]) compute_ahead(worker);
  }
}

void Simulator::set_model(WorkerState& s, const Vec& x) {
  const bool same = last_model_ && last_model_->size() == x.size() &&
                    std::memcmp(last_model_->data(), x.data(), sizeof(double) * x.size()) == 0;
  if (same) {
    s.x = last_model_;
    return;
  }
  if (s.x && s.x.use_count() == 1) {
    *s.x = x;  // no job reads it: this worker is not busy, and nobody else holds it
  } else {
    s.x = std::make_shared<Vec>(x);
  }
  last_model_ = s.x;
}

void Simulator::cancel(int worker) {
  PACER_CHECK(busy(worker));
  WorkerState& s = state_[worker];
  if (!s.owed) {
    drop_job(worker);
    return;
  }
  // A dead worker's job that the master cancels: its deadline goes (the event is stale), but the
  // next job's comes from owed_since, not from its own send.
  s.owed = false;
  --owed_jobs_;
  ++s.job_id;
  ++stats_.workers.workers[worker].jobs_cancelled;
}

void Simulator::drop_job(int worker) {
  WorkerState& s = state_[worker];
  if (!s.busy) return;
  undo_ahead(worker);  // a cancelled job never touches the worker's state
  // Work done before the cancellation still occupied the worker (a computed job's was counted).
  if (!s.computed) count_work(worker, std::clamp(now_ - s.start, 0.0, s.duration));
  ++stats_.workers.workers[worker].jobs_cancelled;
  ++s.job_id;  // its pending events are now stale
  s.busy = false;
  --busy_workers_;
}

double Simulator::job_started(int worker) const {
  const WorkerState& s = state_[worker];
  return s.busy ? s.start : std::numeric_limits<double>::quiet_NaN();
}

void Simulator::set_timer(double time) {
  ++timer_id_;
  timer_pending_ = true;
  queue_.push(Event{.time = std::max(time, now_), .worker = -1, .kind = kTimer, .job = timer_id_});
}

void Simulator::schedule_faults() {
  for (const FaultPlan::Kill& kill : faults_.kills) {
    queue_.push(Event{.time = kill.time, .worker = kill.worker, .kind = kLost, .job = kPlanned});
  }
  for (int i = 0; i < num_workers(); ++i) schedule_random_failure(i);
}

void Simulator::schedule_random_failure(int worker) {
  if (faults_.rate == 0) return;
  WorkerState& s = state_[worker];
  const double after = s.fault_rng.exponential(1.0 / faults_.rate);
  queue_.push(Event{.time = now_ + after, .worker = worker, .kind = kLost, .job = s.fault_epoch});
}

bool Simulator::loss_is_current(const Event& event) const {
  const WorkerState& s = state_[event.worker];
  // Not a planned kill of a worker already lost, nor a random failure drawn before its last loss.
  return s.alive && (event.job == kPlanned || event.job == s.fault_epoch);
}

void Simulator::lose(int worker, Master& master) {
  WorkerState& s = state_[worker];
  drop_job(worker);
  s.alive = false;
  ++s.fault_epoch;
  WorkerStatistics& counts = stats_.workers.workers[worker];
  ++counts.losses;
  counts.lost = true;
  counts.last_loss_time = now_;
  if (faults_.rejoin_after > 0) {
    queue_.push(Event{.time = now_ + faults_.rejoin_after, .worker = worker, .kind = kRejoins});
    ++pending_rejoins_;
  }
  master.on_lost(worker, *this);
}

void Simulator::die_silently(int worker) {
  WorkerState& s = state_[worker];
  s.alive = false;
  ++s.fault_epoch;
  if (!s.busy) return;
  undo_ahead(worker);  // its job never touches the worker's state
  if (!s.computed) count_work(worker, std::clamp(now_ - s.start, 0.0, s.duration));
  s.busy = false;  // its completion events are now ignored; its deadline stands
  --busy_workers_;
  if (!s.declared_lost) {  // (counted as cancelled when it is declared lost)
    s.owed = true;
    s.owed_since = s.sent;
    ++owed_jobs_;
  }
}

void Simulator::deadline_passed(int worker, Master& master) {
  WorkerState& s = state_[worker];
  if (s.owed) {
    s.owed = false;
    --owed_jobs_;
  }
  s.owed_since = -1;
  s.declared_lost = true;
  WorkerStatistics& counts = stats_.workers.workers[worker];
  ++counts.jobs_cancelled;  // its job, as the cluster engines count a job lost with its worker
  ++counts.losses;
  counts.lost = true;
  counts.last_loss_time = now_;
  master.on_lost(worker, *this);
}

void Simulator::readmit(int worker, Master& master) {
  WorkerState& s = state_[worker];
  s.busy = false;
  --busy_workers_;
  s.declared_lost = false;
  WorkerStatistics& counts = stats_.workers.workers[worker];  // (its late job: counted cancelled)
  ++counts.rejoins;
  counts.lost = false;
  master.on_rejoined(worker, *this);
}

void Simulator::rejoin(int worker, Master& master) {
  WorkerState& s = state_[worker];
  s.alive = true;
  ++stats_.workers.workers[worker].rejoins;
  stats_.workers.workers[worker].lost = false;
  schedule_random_failure(worker);
  master.on_rejoined(worker, *this);
}

void Simulator::find_speculative_workers() {
  speculative_.assign(workers_->size(), false);
  for (size_t i = 0; i < workers_->size(); ++i) {
    try {
      StateArchive probe = StateArchive::for_saving();
      (*workers_)[i]->checkpoint(probe);
      speculative_[i] = true;
    } catch (const Error&) {
      // It cannot be checkpointed, so a computation ahead could not be undone.
    }
  }
}

void Simulator::compute_ahead(int worker) {
  WorkerState& s = state_[worker];
  Worker* half = (*workers_)[worker].get();
  WorkerOutput* out = &s.output();
  s.failure = nullptr;
  s.ahead = pool_->submit(s.start + s.duration, [&s, half, out] {
    try {
      StateArchive before = StateArchive::for_saving();
      half->checkpoint(before);
      s.undo = before.bytes();
      half->compute(s.job, *s.x, *out);
    } catch (...) {
      s.failure = std::current_exception();
    }
  });
}

void Simulator::commit_ahead(int worker) {
  WorkerState& s = state_[worker];
  pool_->wait(s.ahead);
  s.ahead.reset();
  s.undo.clear();
  if (s.failure) std::rethrow_exception(std::exchange(s.failure, nullptr));
}

void Simulator::undo_ahead(int worker) {
  WorkerState& s = state_[worker];
  if (!s.ahead) return;
  const bool never_ran = pool_->drop(s.ahead);
  s.ahead.reset();
  s.failure = nullptr;
  if (never_ran || s.undo.empty()) return;  // nothing was computed (or even saved)
  StateArchive before = StateArchive::for_loading(
      std::exchange(s.undo, std::string()), fmt::format("worker {}'s state before a job", worker));
  (*workers_)[worker]->checkpoint(before);
  before.expect_end();
}

void Simulator::undo_all_ahead() {
  for (size_t i = 0; i < state_.size(); ++i) undo_ahead(static_cast<int>(i));
}

void Simulator::compute_at_event(int worker) {
  WorkerState& s = state_[worker];
  const bool probe =
      pool_ && !ahead_enabled_ && ahead_policy_ == ComputeAhead::kAuto && probed_jobs_ < kProbeJobs;
  const double begin = probe ? steady_seconds() : 0;
  (*workers_)[worker]->compute(s.job, *s.x, s.output());
  if (!probe) return;
  probed_seconds_ += steady_seconds() - begin;
  if (++probed_jobs_ == kProbeJobs) {
    ahead_enabled_ = probed_seconds_ >= kProbeJobs * kMinAheadJobSeconds;
  }
}

void Simulator::finish_job(int worker) {
  WorkerState& s = state_[worker];
  if (s.ahead) {
    commit_ahead(worker);
  } else {
    compute_at_event(worker);
  }
  s.computed = true;
  count_work(worker, s.duration);
}

void Simulator::count_work(int worker, double seconds) {
  WorkerStatistics& counts = stats_.workers.workers[worker];
  counts.busy_time += seconds;
  counts.compute_time += seconds;  // a simulated job is all compute
}

void Simulator::deliver(int worker, Master& master) {
  WorkerState& s = state_[worker];
  s.busy = false;
  --busy_workers_;
  ++stats_.workers.workers[worker].jobs_completed;
  Reply reply{.worker = worker,
              .tag = s.job.tag,
              .payload = &s.output().payload,
              .loss = s.output().loss,
              .units = s.units,
              .compute_time = s.duration,
              .versions = s.output().versions,
              .started = s.start,
              .finished = s.start + s.duration,
              .bytes = 8 * static_cast<int64_t>(s.output().payload.size())};
  master.on_reply(reply, *this);
}

}  // namespace pacer
