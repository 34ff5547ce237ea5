#include "pacer/engine/sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "pacer/core/error.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/state.h"

namespace pacer {

FaultPlan read_fault_plan(const Config& config, int workers) {
  FaultPlan plan;
  if (!config.has("faults")) return plan;  // (so that a run without faults resolves no [faults])
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

void SimulatorStats::to_json(nlohmann::json& out) const {
  out["engine"] = "sim";
  out["events"] = events;
  if (losses > 0) {
    out["workers_lost"] = losses;
    out["workers_rejoined"] = rejoins;
  }
  out["busy_time_per_worker"] = busy_time;
  std::vector<double> idle(busy_time.size());
  for (size_t i = 0; i < busy_time.size(); ++i) idle[i] = std::max(0.0, end_time - busy_time[i]);
  out["idle_time_per_worker"] = idle;
  out["jobs_completed_per_worker"] = jobs_completed;
  out["jobs_cancelled_per_worker"] = jobs_cancelled;
}

Simulator::Simulator(const TimingModel& timing, CommModel comm, uint64_t seed, double max_time)
    : timing_(timing), comm_(comm), max_time_(max_time), seed_(seed) {}

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
  if (resumed_) {
    resumed_ = false;
  } else {
    reset(n);
    master.start(*this);
    schedule_faults();
  }
  while (!master.finished()) {
    if (interrupt_signal() != 0) {  // SIGINT/SIGTERM (core/interrupt.h): stop between events
      interrupted_ = true;
      break;
    }
    if (quiet_point_) quiet_point_();
    // Fault events alone (random failures are always pending) cannot make a method go on.
    if (queue_.empty() || (busy_workers_ == 0 && !timer_pending_ && pending_rejoins_ == 0)) {
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
      lose(event.worker, master);
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
    if (event.job != s.job_id) continue;  // the job was cancelled or dropped
    ++stats_.events;
    now_ = event.time;
    if (event.kind == kJobDone) {
      finish_job(event.worker);
      const double delay = comm_.time(8.0 * static_cast<double>(s.output.payload.size()));
      if (delay > 0) {
        queue_.push(Event{
            .time = now_ + delay, .worker = event.worker, .kind = kReplyArrives, .job = s.job_id});
        continue;
      }
    }
    deliver(event.worker, master);
  }
  stats_.end_time = now_;
  workers_ = nullptr;
}

void Simulator::reset(int workers) {
  state_.clear();
  for (int i = 0; i < workers; ++i) {
    state_.emplace_back(Rng(seed_, "duration", static_cast<uint64_t>(i)),
                        Rng(seed_, "faults", static_cast<uint64_t>(i)));
  }
  stats_ = SimulatorStats{};
  stats_.busy_time.assign(workers, 0.0);
  stats_.jobs_completed.assign(workers, 0);
  stats_.jobs_cancelled.assign(workers, 0);
  now_ = 0;
  queue_ = EventQueue{};
  timer_id_ = 0;
  timer_pending_ = false;
  busy_workers_ = 0;
  pending_rejoins_ = 0;
}

void SimulatorStats::checkpoint(StateArchive& a) {
  a.io(events);
  a.io(losses);
  a.io(rejoins);
  a.io(busy_time);
  a.io(jobs_completed);
  a.io(jobs_cancelled);
}

void Simulator::WorkerState::checkpoint(StateArchive& a) {
  a.io(alive);
  a.io(fault_epoch);
  a.io(busy);
  a.io(job_id);
  a.io(job.tag);
  if (busy) {
    // A job in progress: the model it computes at, and its answer once computed.
    a.io(x);
    a.io(units);
    a.io(start);
    a.io(duration);
    a.io(computed);
    if (computed) {
      a.io(output.payload);
      a.io(output.loss);
      a.io(output.versions);
    }
  }
  rng.checkpoint(a);
  fault_rng.checkpoint(a);
}

void Simulator::checkpoint(StateArchive& a) {
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
  stats_.checkpoint(a);
}

void Simulator::assign(int worker, const Job& job, const Vec& x) {
  WorkerState& s = state_[worker];
  PACER_CHECK(!s.busy);
  PACER_CHECK(s.alive);
  s.busy = true;
  ++busy_workers_;
  ++s.job_id;
  s.job = job;
  s.x = x;
  s.computed = false;
  s.units = (*workers_)[worker]->units(job);
  s.duration = timing_.compute_time(worker, s.units, job.tag, s.rng).total();
  s.start = now_ + comm_.time(8.0 * static_cast<double>(x.size()));
  queue_.push(
      Event{.time = s.start + s.duration, .worker = worker, .kind = kJobDone, .job = s.job_id});
}

void Simulator::cancel(int worker) {
  PACER_CHECK(state_[worker].busy);
  drop_job(worker);
}

void Simulator::drop_job(int worker) {
  WorkerState& s = state_[worker];
  if (!s.busy) return;
  if (!s.computed) {
    // Work done before the cancellation still occupied the worker.
    stats_.busy_time[worker] += std::clamp(now_ - s.start, 0.0, s.duration);
    ++stats_.jobs_cancelled[worker];
  }
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
  ++stats_.losses;
  if (faults_.rejoin_after > 0) {
    queue_.push(Event{.time = now_ + faults_.rejoin_after, .worker = worker, .kind = kRejoins});
    ++pending_rejoins_;
  }
  master.on_lost(worker, *this);
}

void Simulator::rejoin(int worker, Master& master) {
  WorkerState& s = state_[worker];
  s.alive = true;
  ++stats_.rejoins;
  schedule_random_failure(worker);
  master.on_rejoined(worker, *this);
}

void Simulator::finish_job(int worker) {
  WorkerState& s = state_[worker];
  (*workers_)[worker]->compute(s.job, s.x, s.output);
  s.computed = true;
  stats_.busy_time[worker] += s.duration;
  ++stats_.jobs_completed[worker];
}

void Simulator::deliver(int worker, Master& master) {
  WorkerState& s = state_[worker];
  s.busy = false;
  --busy_workers_;
  Reply reply{.worker = worker,
              .tag = s.job.tag,
              .payload = &s.output.payload,
              .loss = s.output.loss,
              .units = s.units,
              .compute_time = s.duration,
              .versions = s.output.versions,
              .started = s.start,
              .finished = s.start + s.duration,
              .bytes = 8 * static_cast<int64_t>(s.output.payload.size())};
  master.on_reply(reply, *this);
}

}  // namespace pacer
