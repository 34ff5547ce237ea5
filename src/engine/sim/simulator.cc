#include "pacer/engine/sim/simulator.h"

#include <nlohmann/json.hpp>

#include "pacer/core/error.h"

namespace pacer {

void SimulatorStats::to_json(nlohmann::json& out) const {
  out["engine"] = "sim";
  out["events"] = events;
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
  state_.clear();
  for (int i = 0; i < n; ++i) {
    state_.emplace_back(Rng(seed_, "duration", static_cast<uint64_t>(i)));
  }
  stats_ = SimulatorStats{};
  stats_.busy_time.assign(n, 0.0);
  stats_.jobs_completed.assign(n, 0);
  stats_.jobs_cancelled.assign(n, 0);
  now_ = 0;

  master.start(*this);
  while (!master.finished()) {
    if (queue_.empty()) {
      fail("simulation stalled at t={}: no job is running and the method has not finished", now_);
    }
    if (queue_.top().time > max_time_) {
      now_ = max_time_;  // nothing happens before the limit: the clock runs up to it
      break;
    }
    Event event = queue_.pop();
    WorkerState& s = state_[event.worker];
    if (event.job != s.job_id) continue;  // the job was cancelled
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

void Simulator::assign(int worker, const Job& job, const Vec& x) {
  WorkerState& s = state_[worker];
  PACER_CHECK(!s.busy);
  s.busy = true;
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
  WorkerState& s = state_[worker];
  PACER_CHECK(s.busy);
  if (!s.computed) {
    // Work done before the cancellation still occupied the worker.
    stats_.busy_time[worker] += std::clamp(now_ - s.start, 0.0, s.duration);
    ++stats_.jobs_cancelled[worker];
  }
  ++s.job_id;  // its pending events are now stale
  s.busy = false;
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
  Reply reply{.worker = worker,
              .tag = s.job.tag,
              .payload = &s.output.payload,
              .loss = s.output.loss,
              .units = s.units,
              .compute_time = s.duration,
              .versions = s.output.versions};
  master.on_reply(reply, *this);
}

}  // namespace pacer
