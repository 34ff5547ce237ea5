#include "pacer/engine/cluster/remote_cluster.h"

#include "master.h"

namespace pacer::cluster {

// ---------------------------------------------------------------------------------------------
// Rank 0: jobs out, replies in, liveness, shutdown.

void RemoteCluster::Impl::post_receives() {
  for (int w = 0; w < workers; ++w) {
    post_header_receive(w);
    post_payload_receive(w);
  }
  receives_posted = true;
}

int RemoteCluster::Impl::poll() {
  ++polls;
  const int count = transport.test_some(requests, completed, received);
  if (count == 0) {
    ++empty_polls;
    return 0;
  }
  for (int k = 0; k < count; ++k) {
    const int i = completed[k];
    const int w = i % workers;
    const bool header = i < workers;
    const int64_t bytes = received[k].bytes;
    bytes_received += static_cast<double>(bytes);
    ++messages_received;
    (header ? slots[w].header_done : slots[w].payload_done) = true;
    if (!header) slots[w].payload_received = static_cast<int>(bytes);
  }
  return count;
}

bool RemoteCluster::Impl::handle(int w, Master* master, Cluster* cluster) {
  Slot& s = slots[w];
  if (!s.header_done) return false;
  ReplyHeader h;
  std::memcpy(&h, s.reply_buffer.data(), sizeof h);
  const char* trailer = s.reply_buffer.data() + sizeof h;
  const size_t trailer_bytes =
      static_cast<size_t>(std::clamp<int64_t>(h.trailer_bytes, 0, kTrailerBytes));
  const bool deliver = master != nullptr && !master->finished();
  switch (h.kind) {
    case ReplyHeader::kReply:
      return handle_reply(w, h, trailer, trailer_bytes, deliver ? master : nullptr, cluster);
    case ReplyHeader::kError:
      handle_error(w, h, std::string(trailer, trailer_bytes), deliver ? master : nullptr, cluster);
      return true;
    case ReplyHeader::kBye:
      s.header_done = false;
      s.said_bye = true;
      std::memcpy(&s.reported, trailer, std::min(sizeof s.reported, trailer_bytes));
      return true;
    case ReplyHeader::kState:
      // An answer to a save or load request that is no longer awaited (a checkpoint that
      // failed on another worker): its bytes are received and dropped.
      s.header_done = false;
      if (h.trailer_bytes == 0 && h.payload_size > 0) receive_state_bytes(w, h.payload_size);
      s.state.clear();
      post_header_receive(w);
      return true;
    default:
      fail("{}: malformed reply (kind {}) from rank {}", transport.name(), h.kind, w + 1);
  }
}

void RemoteCluster::Impl::readmit(int w, int64_t tag, double round_trip, Master* master,
                                  Cluster* cluster) {
  Slot& s = slots[w];
  s.lost = false;
  s.busy = false;
  ++s.rejoins;
  if (!s.losses.empty()) s.losses.back().rejoined = now();
  transport.set_peer_lost(w + 1, false);
  if (master == nullptr) {
    ++s.drained;
    return;
  }
  log_warning(
      "{} engine: worker {} (rank {}) answered its job (tag {}) after {:.3g} s, after it had "
      "been declared lost: it is back (that reply is dropped)",
      transport.name(), w, w + 1, tag, round_trip);
  call_master([&] { master->on_rejoined(w, *cluster); });
}

double RemoteCluster::Impl::worker_deadline() const {
  if (options.worker_timeout_s > 0) return options.worker_timeout_s;
  if (options.worker_timeout_s == 0) return std::numeric_limits<double>::infinity();
  return std::max(kWorkerTimeoutFloorS, kWorkerTimeoutFactor * longest_round_trip);
}

const char* RemoteCluster::Impl::deadline_source() const {
  return options.worker_timeout_s > 0 ? "engine.worker_timeout_s"
                                      : "adaptive, as engine.worker_timeout_s is unset";
}

void RemoteCluster::Impl::declare_overdue_lost(Master& master, Cluster& cluster) {
  if (options.worker_timeout_s == 0) return;
  const double deadline = worker_deadline();
  for (int w = 0; w < workers && !master.finished(); ++w) {
    const Slot& s = slots[w];
    if (!s.busy || s.held || s.header_done) continue;
    const double elapsed = now() - s.assigned_at;
    if (elapsed > deadline) declare_lost(w, elapsed, deadline, master, cluster);
  }
}

void RemoteCluster::Impl::declare_lost(int w, double elapsed, double deadline, Master& master,
                                       Cluster& cluster) {
  Slot& s = slots[w];
  s.lost = true;
  s.busy = false;
  s.losses.push_back(Loss{.time = now(), .tag = s.tag, .elapsed = elapsed});
  transport.set_peer_lost(w + 1, true);
  log_warning(
      "{} engine: worker {} (rank {}) has not answered its job (tag {}) for {:.3g} s, past the "
      "worker deadline of {:.3g} s ({}): declared lost at t = {:.3f} s; the run goes on without "
      "it, and it comes back if it answers after all",
      transport.name(), w, w + 1, s.tag, elapsed, deadline, deadline_source(), now());
  call_master([&] { master.on_lost(w, cluster); });
}

void RemoteCluster::Impl::check_progress(double last_activity) const {
  bool any_busy = false, any_lost = false;
  for (const Slot& s : slots) {
    any_busy = any_busy || s.busy;
    any_lost = any_lost || s.lost;
  }
  if (!any_busy && !any_lost && !timer_armed) {
    fail(
        "{} engine: the method stalled at t = {:.3f} s: no job is running and the method "
        "has not finished",
        transport.name(), now());
  }
  if (options.timeout_s > 0 && (any_busy || any_lost) &&
      wall_seconds() - last_activity > options.timeout_s) {
    fail("{} engine: no reply for {} s (engine.timeout_s); {}", transport.name(), options.timeout_s,
         describe_waiting());
  }
}

std::string RemoteCluster::Impl::describe_waiting() const {
  std::string busy, lost;
  for (int w = 0; w < workers; ++w) {
    const Slot& s = slots[w];
    if (s.busy) {
      busy += fmt::format("{}worker {} (rank {}, job tag {}{})", busy.empty() ? "" : ", ", w, w + 1,
                          s.tag, s.held ? ", held for a checkpoint" : "");
    } else if (s.lost) {
      lost += fmt::format("{}worker {} (rank {}, lost at t = {:.3f} s)", lost.empty() ? "" : ", ",
                          w, w + 1, s.losses.back().time);
    }
  }
  std::string out = busy.empty() ? "no job is out" : "still waiting for " + busy;
  if (!lost.empty()) out += "; lost, and may still answer: " + lost;
  return out;
}

void RemoteCluster::Impl::wait_sends(int w, double timeout_s) {
  Slot& s = slots[w];
  for (Request& r : s.sends) {
    wait_request(transport, r, "the send of a job", w + 1, kTagJob, options.poll_sleep_us,
                 timeout_s);
  }
  wait_request(transport, s.stop_send, "the send of a stop", w + 1, kTagJob, options.poll_sleep_us,
               timeout_s);
}

void RemoteCluster::Impl::send_stop(int w, StopStatus status, double limit) {
  Slot& s = slots[w];
  s.stopped_lost = s.lost;
  if (s.lost && transport.peer_known_dead(w + 1)) return;
  if (!s.lost) wait_sends(w, limit);
  s.stop_header = JobHeader{.kind = JobHeader::kStop,
                            .stop_status = static_cast<int64_t>(status),
                            .lost = s.lost ? 1 : 0};
  transport.isend(&s.stop_header, sizeof s.stop_header, w + 1, kTagJob, s.stop_send);
  ++messages_sent;
  bytes_sent += sizeof s.stop_header;
}

void RemoteCluster::Impl::drain(double deadline) {
  double next_check = wall_seconds() + kLivenessCheckS;
  while (true) {
    bool done = true;
    for (const Slot& s : slots) done = done && (s.said_bye || s.stopped_lost);
    if (done) return;
    if (poll() == 0) {
      if (wall_seconds() > deadline) return;
      if (wall_seconds() >= next_check) {
        next_check = wall_seconds() + kLivenessCheckS;
        lose_dead_at_shutdown();
      }
      transport.idle(options.poll_sleep_us);
      continue;
    }
    for (int w = 0; w < workers; ++w) {
      while (handle(w, nullptr, nullptr)) {
      }
    }
  }
}

void RemoteCluster::Impl::lose_dead_at_shutdown() {
  for (int w = 0; w < workers; ++w) {
    Slot& s = slots[w];
    if (s.said_bye || s.stopped_lost || !transport.peer_known_dead(w + 1)) continue;
    s.lost = s.stopped_lost = true;
    s.losses.push_back(Loss{.time = now(), .tag = -1, .elapsed = 0});
    transport.set_peer_lost(w + 1, true);
    log_warning(
        "{} engine: the process of worker {} (rank {}) ended before it acknowledged the stop: "
        "declared lost",
        transport.name(), w, w + 1);
  }
}

std::string RemoteCluster::Impl::finish_stop(double limit) {
  std::string missing;
  for (int w = 0; w < workers; ++w) {
    Slot& s = slots[w];
    if (s.stopped_lost) {
      // Back during the drain: its stop says lost, so it sends nothing more. Still lost: its
      // receives stay posted and its buffers kept (~RemoteCluster).
      if (!s.lost) {
        transport.cancel(requests[w]);
        transport.cancel(requests[workers + w]);
      }
      continue;
    }
    if (!s.said_bye) {
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", w + 1);
      continue;
    }
    transport.cancel(requests[workers + w]);  // no message follows a goodbye
    wait_sends(w, limit);
  }
  return missing;
}

bool RemoteCluster::Impl::any_stopped_lost() const {
  for (const Slot& s : slots) {
    if (s.stopped_lost) return true;
  }
  return false;
}

std::shared_ptr<RemoteCluster::Impl::Snapshot> RemoteCluster::Impl::snapshot_for(int64_t tag) {
  if (current && current->tag == tag) return current;
  current.reset();
  release_sent_models();
  for (const std::shared_ptr<Snapshot>& s : snapshots) {
    if (s.use_count() == 1) current = s;  // only the pool holds it
  }
  if (!current) current = snapshots.emplace_back(std::make_shared<Snapshot>());
  current->tag = tag;
  current->has64 = current->has32 = false;
  return current;
}

void RemoteCluster::Impl::release_sent_models() {
  for (Slot& s : slots) {
    if (s.model && !s.held && sends_complete(s)) s.model.reset();
  }
}

bool RemoteCluster::Impl::sends_complete(Slot& s) {
  for (Request& r : s.sends) {
    if (!transport.test(r, "the send of a job")) return false;
  }
  return true;
}

void RemoteCluster::Impl::send_job(int w) {
  Slot& s = slots[w];
  wait_sends(w, options.timeout_s);  // a save request's header may still be out
  if (!s.model->has(s.reads)) s.model->fill(s.reads, s.model->x64);  // a held job: from its doubles
  const int64_t value_bytes = s.reads == Precision::kFloat32 ? 4 : 8;
  s.job_header = JobHeader{
      .kind = JobHeader::kJob, .tag = s.tag, .model_size = dim, .model_bytes = value_bytes};
  transport.isend(&s.job_header, sizeof s.job_header, w + 1, kTagJob, s.sends[0]);
  transport.isend(s.model->data(s.reads), value_bytes * dim, w + 1, kTagModel, s.sends[1]);
  messages_sent += 2;
  bytes_sent += static_cast<double>(sizeof s.job_header + value_bytes * dim);
  if (value_bytes == 4) ++float32_jobs;
  s.assigned_at = now();
}

EngineWorkerStatistics RemoteCluster::Impl::worker_statistics() const {
  EngineWorkerStatistics stats;
  stats.end_time = end_time;
  for (const Slot& s : slots) {
    WorkerStatistics& w = stats.workers.emplace_back();
    w.jobs_completed = s.replies;
    for (const Loss& loss : s.losses) w.jobs_cancelled += loss.tag >= 0;  // a job was dropped
    w.jobs_drained = s.drained;
    w.busy_time = s.busy_time;
    w.compute_time = s.compute_time;
    w.injected_time = s.injected_time;
    w.losses = static_cast<int64_t>(s.losses.size());
    w.rejoins = s.rejoins;
    w.lost = s.lost;
    if (!s.losses.empty()) w.last_loss_time = s.losses.back().time;
  }
  return stats;
}

void RemoteCluster::Impl::losses_to_json(nlohmann::json& out) const {
  nlohmann::json list = nlohmann::json::array();
  for (int w = 0; w < workers; ++w) {
    for (const Loss& loss : slots[w].losses) {
      nlohmann::json entry{{"worker", w},
                           {"rank", w + 1},
                           {"time", loss.time},
                           {"tag", loss.tag},
                           {"elapsed", loss.elapsed}};
      if (loss.rejoined >= 0) entry["rejoined_time"] = loss.rejoined;
      list.push_back(entry);
    }
  }
  out["worker_timeout"] = options.worker_timeout_s > 0    ? "fixed"
                          : options.worker_timeout_s == 0 ? "off"
                                                          : "adaptive";
  out["worker_deadline_s"] = options.worker_timeout_s == 0 ? 0.0 : worker_deadline();
  out["launched_with_recovery"] = transport.survives_dead_worker();
  out["losses"] = list;
}

RemoteCluster::RemoteCluster(Transport& transport, const ClusterOptions& options, int workers,
                             int64_t dim)
    : impl_(std::make_unique<Impl>(transport, options, workers, dim)) {
  PACER_CHECK(transport.rank() == 0 && transport.size() == workers + 1 && workers > 0 && dim > 0);
  PACER_CHECK(dim <= kMaxDim);
  impl_->start = wall_seconds();
}

RemoteCluster::~RemoteCluster() {
  if (!impl_->shut_down) {
    try {
      shutdown(StopStatus::kError);
    } catch (const std::exception& e) {
      log_warning("{}", e.what());
    }
  }
  // A worker lost at shutdown may still be sent to and may still send. Where sends complete at
  // once (in-process), the receives still posted are cancelled: a late message then waits in the
  // transport, and nothing reads or writes this cluster's buffers once it is gone. Otherwise (MPI)
  // the transport may read the stop and job buffers and write into the posted receives until the
  // process ends, so they are kept.
  if (impl_->transport.sends_complete_at_once()) {
    for (Request& r : impl_->requests) impl_->transport.cancel(r);
    return;
  }
  static std::vector<std::unique_ptr<Impl>> kept;
  if (impl_->any_stopped_lost()) kept.push_back(std::move(impl_));
}

int RemoteCluster::num_workers() const { return impl_->workers; }
double RemoteCluster::now() const { return impl_->now(); }

void RemoteCluster::exclude_time(double seconds) {
  PACER_CHECK(seconds >= 0);
  impl_->start += seconds;
}
// Inside hook->write(), the run's clock at the cut (what the checkpoint records).
double RemoteCluster::end_time() const {
  return impl_->writing ? impl_->cut_time : impl_->end_time;
}
bool RemoteCluster::busy(int worker) const { return impl_->slots[worker].busy; }
bool RemoteCluster::alive(int worker) const { return !impl_->slots[worker].lost; }

void RemoteCluster::set_timer(double time) {
  impl_->timer_at = time;
  impl_->timer_armed = true;
}

void RemoteCluster::cancel(int /*worker*/) {
  PACER_CHECK(!"the cluster protocol cannot cancel jobs (can_cancel() is false)");
}

void RemoteCluster::assign(int worker, const Job& job, const Vec& x) {
  Impl& m = *impl_;
  PACER_CHECK(worker >= 0 && worker < m.workers);
  Impl::Slot& s = m.slots[worker];
  PACER_CHECK(m.started && !s.busy && !s.lost && !m.shut_down);
  PACER_CHECK(x.size() == m.dim);
  if (s.failed) {
    fail("{} engine: worker {} (rank {}) failed earlier in this run ({}) and takes no more jobs",
         m.transport.name(), worker, worker + 1, s.error);
  }
  const double begin = wall_seconds();
  // The previous job's sends have long been matched (the worker has replied since).
  m.wait_sends(worker, m.options.timeout_s);
  s.busy = true;
  s.tag = job.tag;
  s.model = m.snapshot_for(job.tag);
  s.was_held = m.drain_if_due();
  if (s.was_held) {
    s.model->fill(Precision::kFloat64, x);  // a held job is checkpointed in double
    s.held = true;  // sent once the checkpoint is written (remote_cluster.h)
  } else {
    s.model->fill(s.reads, x);
    m.send_job(worker);
  }
  m.assign_time += wall_seconds() - begin;
}

void RemoteCluster::set_checkpoint_hook(CheckpointHook* hook) {
  PACER_CHECK(!impl_->started);
  impl_->hook = hook;
}
bool RemoteCluster::can_checkpoint_now() const { return impl_->writing; }
void RemoteCluster::checkpoint(StateArchive& a) { impl_->checkpoint(a); }

RemoteCluster::Outcome RemoteCluster::run(Master& master, double max_time) {
  // Every worker rank has set up its run by now (begin_run waited for their reports).
  log_debug("{}: the run starts on {} workers", impl_->transport.name(), num_workers());
  static bool warned = false;
  if (!warned && impl_->options.worker_timeout_s != 0 && !impl_->transport.survives_dead_worker()) {
    warned = true;
    log_warning("{} (engine.worker_timeout_s = 0 silences this warning)",
                impl_->transport.dead_worker_warning());
  }
  try {
    return run_loop(master, max_time);
  } catch (const std::exception& e) {
    impl_->run_error = e.what();  // for shutdown, should it have to abort the job
    throw;
  }
}

RemoteCluster::Outcome RemoteCluster::run_loop(Master& master, double max_time) {
  Impl& m = *impl_;
  PACER_CHECK(!m.started && !m.shut_down);
  m.started = true;
  if (!m.receives_posted) m.post_receives();  // a loaded checkpoint posted them
  // A resumed run's clock continues from the saved time.
  m.start = wall_seconds() - (m.resumed ? m.cut_time : 0);
  if (m.resumed) {
    m.continue_saved_run(master, *this);
  } else {
    m.call_master([&] { master.start(*this); });
  }
  double last_activity = wall_seconds();
  Outcome outcome = Outcome::kFinished;
  while (!master.finished()) {
    if (interrupt_requested()) {
      outcome = Outcome::kInterrupted;
      break;
    }
    if (m.timer_armed && m.now() >= m.timer_at) {
      m.timer_armed = false;
      m.call_master([&] { master.on_timer(*this); });
      continue;
    }
    if (max_time > 0 && m.now() >= max_time) {
      outcome = Outcome::kMaxTime;
      break;
    }
    m.quiet_point(master, *this);
    if (master.finished()) break;  // a deferred error delivered after a checkpoint
    const double poll_begin = wall_seconds();
    const int arrived = m.poll();
    (arrived ? m.poll_time : m.empty_poll_time) += wall_seconds() - poll_begin;
    if (arrived > 0) {
      // Deliver in worker-index order; a worker whose header and payload both arrived is ready.
      for (int w = 0; w < m.workers && !master.finished(); ++w) m.handle(w, &master, this);
      last_activity = wall_seconds();  // after the master's code: its time is no silence
    }
    m.declare_overdue_lost(master, *this);
    if (arrived == 0 && !master.finished()) {
      m.check_progress(last_activity);
      m.transport.idle(m.options.poll_sleep_us);
    }
  }
  m.end_time = m.now();
  return outcome;
}

void RemoteCluster::shutdown(StopStatus status, double timeout_s) {
  Impl& m = *impl_;
  if (m.shut_down) return;
  m.shut_down = true;
  if (!m.receives_posted) m.post_receives();
  if (!m.started) m.end_time = m.now();
  const double limit = timeout_s > 0 ? timeout_s : m.options.drain_timeout_s;
  const double deadline = wall_seconds() + limit;
  std::string problem;
  try {
    for (int w = 0; w < m.workers; ++w) m.send_stop(w, status, limit);
    m.drain(deadline);
    const std::string missing = m.finish_stop(limit);
    m.have_reports = missing.empty();
    if (!missing.empty()) {
      problem = fmt::format(
          "{} engine: ranks {} did not acknowledge the stop within {} s (engine.drain_timeout_s)",
          m.transport.name(), missing, limit);
    }
  } catch (const Error& e) {
    problem = e.what();
  }
  if (!problem.empty()) {
    // Ranks that cannot be stopped cleanly would hang the job's end (MPI_Finalize): end it all.
    if (m.run_error.empty()) {
      std::fprintf(stderr, "pacer: error: %s; aborting the job\n", problem.c_str());
    } else {
      std::fprintf(stderr, "pacer: error: %s; then, stopping the workers: %s; aborting the job\n",
                   m.run_error.c_str(), problem.c_str());
    }
    m.transport.abort_job(1);
  }
}

void RemoteCluster::to_json(nlohmann::json& out) const {
  const Impl& m = *impl_;

  out["ranks"] = m.workers + 1;
  out["inject"] = inject_name(m.options.inject);
  out["poll_sleep_us"] = m.options.poll_sleep_us;
  out["timeout_s"] = m.options.timeout_s;
  m.worker_statistics().to_json(out);
  // The MPI engine's own per-worker keys: what the master saw of each round trip.
  std::vector<double> round_trip, comm, median_job;
  for (const Impl::Slot& s : m.slots) {
    const double r = s.replies ? static_cast<double>(s.replies) : 1.0;
    round_trip.push_back(s.round_trip / r);
    comm.push_back((s.round_trip - s.busy_time) / r);
    median_job.push_back(median(s.job_times));
  }
  out["median_job_time_per_worker"] = median_job;
  out["mean_round_trip_per_worker"] = round_trip;
  out["mean_message_overhead_per_worker"] = comm;
  out["messages_sent"] = m.messages_sent;
  out["messages_received"] = m.messages_received;
  out["float32_jobs"] = m.float32_jobs;
  out["float32_replies"] = m.float32_replies;
  out["bytes_sent"] = m.bytes_sent;
  out["bytes_received"] = m.bytes_received;
  out["polls"] = m.polls;
  out["empty_polls"] = m.empty_polls;
  out["master_receive_time"] = m.poll_time;
  out["master_empty_poll_time"] = m.empty_poll_time;
  out["master_assign_time"] = m.assign_time;
  out["master_method_time"] = m.master_time - m.assign_time;
  out["checkpoints"] = m.checkpoints;
  out["checkpoint_drain_time"] = m.drain_time;
  out["checkpoint_max_drain_time"] = m.max_drain_time;
  out["checkpoint_write_time"] = m.write_time;
  out["resumed_at"] = m.resumed_at >= 0 ? nlohmann::json(m.resumed_at) : nlohmann::json();
  m.losses_to_json(out);
  if (m.have_reports) {
    // A worker lost at shutdown said no goodbye: null.
    auto reported_json = [&](auto field) {
      nlohmann::json values = nlohmann::json::array();
      for (const Impl::Slot& s : m.slots) {
        values.push_back(s.said_bye ? nlohmann::json(field(s.reported)) : nlohmann::json());
      }
      return values;
    };
    nlohmann::json reported;
    reported["jobs"] = reported_json([](const WorkerStats& r) { return r.jobs; });
    reported["lifetime"] = reported_json([](const WorkerStats& r) { return r.lifetime; });
    reported["wait_time"] =
        reported_json([](const WorkerStats& r) { return std::max(0.0, r.lifetime - r.busy_time); });
    reported["pace_overruns"] = reported_json([](const WorkerStats& r) { return r.overruns; });
    reported["max_pace_overrun"] =
        reported_json([](const WorkerStats& r) { return r.max_overrun; });
    reported["dropped_jobs"] = reported_json([](const WorkerStats& r) { return r.dropped_jobs; });
    out["worker_reported"] = reported;
  }
}

}  // namespace pacer::cluster
