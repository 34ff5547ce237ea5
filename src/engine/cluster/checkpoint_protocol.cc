// Rank 0's side of checkpoints (remote_cluster.h, "Checkpoints"): drain to a quiet point, fetch
// every worker's state, write, and on resume send the states back and continue.
#include "master.h"

namespace pacer::cluster {

void RemoteCluster::Impl::checkpoint(StateArchive& a) {
  if (!a.loading() && !writing) {
    fail(
        "{} engine: a run is checkpointed only at the engine's own drain, when every worker "
        "is idle (EngineRun::can_checkpoint_now is false now)",
        transport.name());
  }
  PACER_CHECK(!a.loading() || !started);
  // The section keeps the name of the first engine that used it, so that its checkpoints load.
  a.section("mpi_engine");
  a.expect(workers, "workers");
  a.expect(dim, "model parameters");
  a.io(cut_time);
  a.io(timer_armed);
  a.io(timer_at);
  a.io(longest_round_trip);
  a.io(messages_sent);
  a.io(messages_received);
  a.io(bytes_sent);
  a.io(bytes_received);
  a.io(polls);
  a.io(empty_polls);
  a.io(poll_time);
  a.io(empty_poll_time);
  a.io(assign_time);
  a.io(master_time);
  a.io(checkpoints);
  a.io(drain_time);
  a.io(max_drain_time);
  a.io(write_time);
  for (Slot& s : slots) s.checkpoint(a);
  if (!a.loading()) return;
  for (int w = 0; w < workers; ++w) check_loaded(a, w);
  resumed = true;
  resumed_at = cut_time;
  load_worker_states();
}

void RemoteCluster::Impl::receive_state_bytes(int w, int64_t bytes) {
  if (bytes < 0) fail("{}: rank {} announced a state of {} bytes", transport.name(), w + 1, bytes);
  check_state_size(static_cast<uint64_t>(bytes), w);
  Slot& s = slots[w];
  s.state.resize(static_cast<size_t>(bytes));
  Request request;
  transport.irecv(s.state.data(), bytes, w + 1, kTagState, request);
  wait_request(transport, request, "the receive of a worker's state", w + 1, kTagState,
               options.poll_sleep_us, options.timeout_s);
  ++messages_received;
  bytes_received += static_cast<double>(bytes);
}

void RemoteCluster::Impl::quiet_point(Master& master, Cluster& cluster) {
  if (!drain_if_due()) return;
  for (const Slot& s : slots) {
    if (s.busy && !s.held) return;
  }
  take_checkpoint(master, cluster);
}

void RemoteCluster::Impl::take_checkpoint(Master& master, Cluster& cluster) {
  const double idle_at = wall_seconds();
  cut_time = now();
  if (fetch_worker_states()) {
    ++checkpoints;
    const double drain = idle_at - drain_began;
    drain_time += drain;
    max_drain_time = std::max(max_drain_time, drain);
    writing = true;
    try {
      hook->write();
    } catch (...) {
      writing = false;
      throw;
    }
    writing = false;
  }
  for (Slot& s : slots) std::string().swap(s.state);
  // The fetch and the write are no part of the run: they leave its clock, like evaluations.
  const double spent = wall_seconds() - idle_at;
  write_time += spent;
  start += spent;
  draining = false;
  release_held();
  deliver_deferred_errors(master, cluster);
}

bool RemoteCluster::Impl::drain_if_due() {
  if (hook == nullptr) return false;
  if (!draining && hook->due()) {
    draining = true;
    drain_began = wall_seconds();
  }
  return draining;
}

void RemoteCluster::Impl::release_held() {
  for (int w = 0; w < workers; ++w) {
    if (!slots[w].held) continue;
    slots[w].held = false;
    send_job(w);
  }
}

void RemoteCluster::Impl::deliver_deferred_errors(Master& master, Cluster& cluster) {
  for (int w = 0; w < workers; ++w) {
    std::optional<std::pair<ReplyHeader, std::string>>& d = slots[w].deferred_error;
    if (!d) continue;
    const std::pair<ReplyHeader, std::string> error = std::move(*d);
    d.reset();
    report_error(w, error.first, error.second, master.finished() ? nullptr : &master, &cluster);
  }
}

bool RemoteCluster::Impl::fetch_worker_states() {
  for (int w = 0; w < workers; ++w) {
    if (!slots[w].lost) send_request(w, JobHeader::kSave);
  }
  bool complete = true;
  for (int w = 0; w < workers; ++w) {
    if (slots[w].lost) continue;
    await_state(w, true);
    complete = complete && !slots[w].deferred_error;
  }
  return complete;
}

void RemoteCluster::Impl::send_request(int w, JobHeader::Kind kind) {
  Slot& s = slots[w];
  PACER_CHECK((!s.busy || s.held) && !s.lost && !s.header_done);  // the worker is idle
  wait_sends(w, options.timeout_s);
  const bool load = kind == JobHeader::kLoad;
  if (load) check_state_size(s.state.size(), w);
  s.job_header =
      JobHeader{.kind = kind, .model_size = load ? static_cast<int64_t>(s.state.size()) : 0};
  transport.isend(&s.job_header, sizeof s.job_header, w + 1, kTagJob, s.sends[0]);
  ++messages_sent;
  bytes_sent += sizeof s.job_header;
  if (!load) return;
  transport.isend(s.state.data(), static_cast<int64_t>(s.state.size()), w + 1, kTagState,
                  s.sends[1]);
  ++messages_sent;
  bytes_sent += static_cast<double>(s.state.size());
}

void RemoteCluster::Impl::await_state(int w, bool saving) {
  Slot& s = slots[w];
  const char* what = saving ? "the receive of a worker's state" : "the receive of a load's answer";
  while (true) {
    wait_request(transport, requests[w], what, w + 1, kTagReply, options.poll_sleep_us,
                 options.timeout_s);
    ReplyHeader h;
    std::memcpy(&h, s.reply_buffer.data(), sizeof h);
    const size_t trailer_bytes =
        static_cast<size_t>(std::clamp<int64_t>(h.trailer_bytes, 0, kTrailerBytes));
    std::string trailer(s.reply_buffer.data() + sizeof h, trailer_bytes);
    ++messages_received;
    bytes_received += static_cast<double>(sizeof h + trailer_bytes);
    post_header_receive(w);
    if (h.kind == ReplyHeader::kError) {
      s.deferred_error.emplace(h, std::move(trailer));
      continue;
    }
    if (h.kind != ReplyHeader::kState) {
      fail("{}: rank {} answered a {} request with a message of kind {}", transport.name(), w + 1,
           saving ? "save" : "load", h.kind);
    }
    if (!trailer.empty()) {
      fail("{} engine: worker {} (rank {}) could not {} its state: {}", transport.name(), w, w + 1,
           saving ? "save" : "load", trailer);
    }
    if (saving) receive_state_bytes(w, h.payload_size);
    return;
  }
}

void RemoteCluster::Impl::check_loaded(const StateArchive& a, int w) const {
  const Slot& s = slots[w];
  if (s.held && (s.lost || s.model->x64.size() != dim)) {
    a.mismatch(fmt::format("worker {}'s held job", w));
  }
  // A worker not lost has a state (at least its section name); a lost one has none.
  if (s.lost != s.state.empty() || (s.lost && s.losses.empty())) {
    a.mismatch(fmt::format("worker {}'s state", w));
  }
}

void RemoteCluster::Impl::load_worker_states() {
  if (!receives_posted) post_receives();
  for (int w = 0; w < workers; ++w) {
    if (!slots[w].lost) send_request(w, JobHeader::kLoad);
  }
  for (int w = 0; w < workers; ++w) {
    if (!slots[w].lost) await_state(w, false);
  }
  for (int w = 0; w < workers; ++w) {
    Slot& s = slots[w];
    if (s.deferred_error) {
      fail("{} engine: while the run was resumed, rank {} (worker {}): {}", transport.name(), w + 1,
           w, s.deferred_error->second);
    }
    if (!s.lost) wait_sends(w, options.timeout_s);  // the state's buffer is free after
    std::string().swap(s.state);
  }
}

void RemoteCluster::Impl::continue_saved_run(Master& master, Cluster& cluster) {
  release_held();
  for (int w = 0; w < workers; ++w) {
    Slot& s = slots[w];
    if (!s.lost) continue;
    s.lost = false;
    ++s.rejoins;
    s.losses.back().rejoined = now();
    log_warning(
        "{} engine: worker {} (rank {}) was lost when the checkpoint was written; it is back "
        "on this job, with its worker half as the configuration builds it (its state at the "
        "loss was not saved)",
        transport.name(), w, w + 1);
    call_master([&] { master.on_rejoined(w, cluster); });
  }
}

}  // namespace pacer::cluster
