// The worker endpoints of the cluster protocol (remote_cluster.h: serve_jobs).

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "pacer/core/log.h"
#include "pacer/core/rng.h"
#include "pacer/core/stats.h"
#include "pacer/engine/cluster/remote_cluster.h"
#include "transport_wait.h"
#include "wire.h"

namespace pacer::cluster {

namespace {

// A worker declared lost leaves without waiting for its last reply's sends: rank 0 may never
// receive them (it may have ended). Until the process ends the transport may still read their
// buffers, so those of sends not yet complete are kept.
void keep_unfinished_sends(Transport& transport, Request (&sends)[2], std::vector<char> reply,
                           Vec payload, std::vector<float> narrowed) {
  static std::vector<std::vector<char>> kept_replies;
  static std::vector<Vec> kept_payloads;
  static std::vector<std::vector<float>> kept_narrowed;
  for (int i = 0; i < 2; ++i) {
    bool done = false;
    try {
      done = transport.test(sends[i], "the send of a reply");
    } catch (const Error&) {
      // Not known to be complete: its buffer is kept (the worker leaves either way).
    }
    if (done) continue;
    if (i == 0) kept_replies.push_back(std::move(reply));
    if (i == 1) {
      kept_payloads.push_back(std::move(payload));
      kept_narrowed.push_back(std::move(narrowed));
    }
  }
}

// A worker rank's side of one run (serve_jobs): one receive posted for the next job header and
// one for its model; replies, error reports, state answers and the goodbye go out as a header
// (+ trailer) in `reply_` and, for a reply or a saved state, a second message.
class WorkerLoop {
 public:
  WorkerLoop(Transport& transport, Worker& worker, TimingModel& timing, int index, uint64_t seed,
             const ClusterOptions& options, int64_t dim)
      : transport_(transport),
        worker_(worker),
        timing_(timing),
        index_(index),
        options_(options),
        dim_(dim),
        // Waiting for a job includes waiting for the other workers; rank 0 detects a silent
        // worker after timeout_s and then waits up to drain_timeout_s for the goodbyes, so it
        // reports first.
        job_timeout_(options.timeout_s > 0 ? 2 * options.timeout_s + options.drain_timeout_s : 0),
        rng_(seed, "duration", static_cast<uint64_t>(index)),
        x_(Vec::Zero(dim)),
        reads_float32_(worker.model_precision() == Precision::kFloat32),
        reply_(kReplyBufferBytes),
        born_(wall_seconds()) {}

  // Receives still posted when the loop ends early (an Error) are cancelled: they point into this
  // object, which the transport must not write into once it is gone.
  ~WorkerLoop() {
    for (Request* r : {&job_request_, &model_request_, &state_request_}) {
      try {
        transport_.cancel(*r);
      } catch (const std::exception&) {
      }
    }
  }
  WorkerLoop(const WorkerLoop&) = delete;
  WorkerLoop& operator=(const WorkerLoop&) = delete;

  StopStatus serve() {
    post_job_header();
    post_model();
    while (true) {
      wait_job();
      switch (job_header_.kind) {
        case JobHeader::kStop:
          return stop();
        case JobHeader::kSave:
          save_state();
          break;
        case JobHeader::kLoad:
          load_state();
          break;
        case JobHeader::kJob:
          run_job();
          break;
        default:
          fail("{}: rank {}: a job header of kind {} from rank 0", transport_.name(),
               transport_.rank(), job_header_.kind);
      }
    }
  }

 private:
  // The wall times of one job: received, computed, done (after the injected time).
  struct JobTimes {
    double start = 0, computed = 0, done = 0;
    double units = 0;
  };

  void post_job_header() {
    transport_.irecv(&job_header_, sizeof job_header_, 0, kTagJob, job_request_);
  }
  // Room for a model of doubles; one of floats fills its first half (wire.h).
  void post_model() { transport_.irecv(x_.data(), 8 * dim_, 0, kTagModel, model_request_); }
  void wait_replies_sent() {
    for (Request& r : sends_) {
      wait_request(transport_, r, "the send of a reply", 0, kTagReply, options_.poll_sleep_us,
                   options_.timeout_s);
    }
  }
  // Sends a header + trailer (the previous sends must be complete).
  void send(const ReplyHeader& h, const void* trailer) {
    std::memcpy(reply_.data(), &h, sizeof h);
    if (h.trailer_bytes > 0 && trailer != nullptr) {
      std::memcpy(reply_.data() + sizeof h, trailer, static_cast<size_t>(h.trailer_bytes));
    }
    transport_.isend(reply_.data(), static_cast<int64_t>(sizeof h) + h.trailer_bytes, 0, kTagReply,
                     sends_[0]);
  }
  // Sends `bytes` at `data` after a header (second message, tag `tag`).
  void send_data(const void* data, int64_t bytes, int tag) {
    transport_.isend(data, bytes, 0, tag, sends_[1]);
  }
  // Sends an error report (kError) or a failed state answer (kState) with `text`.
  void send_text(ReplyHeader::Kind kind, int64_t tag, std::string text) {
    if (text.size() > static_cast<size_t>(kTrailerBytes)) text.resize(kTrailerBytes);
    ReplyHeader h{.kind = kind, .tag = tag, .trailer_bytes = static_cast<int64_t>(text.size())};
    send(h, text.data());
  }

  // A SIGINT or SIGTERM that reaches this rank alone is reported to rank 0 as this worker's
  // error (rank 0 then ends the run naming this rank; under Ctrl-C rank 0 has it too and ends
  // the run as interrupted); this worker then drops its jobs until stop, like after any error.
  void report_interrupt() {
    wait_replies_sent();
    send_text(
        ReplyHeader::kError, -1,
        fmt::format("received {}: the worker stopped, so the run ends", interrupt_signal_name()));
    failed_ = true;
  }

  // Waits for the next job header (polling, as wait_request), watching for an interrupt and for
  // the end of rank 0's process.
  void wait_job() {
    const double start = wall_seconds();
    double next_check = start + kLivenessCheckS;
    while (true) {
      if (!failed_ && interrupt_requested()) report_interrupt();
      if (wait_polling(transport_, job_request_, "the receive of a job", options_.poll_sleep_us,
                       0.05)) {
        return;
      }
      if (wall_seconds() >= next_check) {
        next_check = wall_seconds() + kLivenessCheckS;
        if (transport_.peer_known_dead(0)) {
          fail_peer_gone(transport_, "the receive of a job", 0, kTagJob);
        }
      }
      if (job_timeout_ > 0 && wall_seconds() - start > job_timeout_) {
        fail(
            "{}: rank {}: the receive of a job from rank 0 ({} message, tag {}) did not complete "
            "within {} s (2 x engine.timeout_s + engine.drain_timeout_s)",
            transport_.name(), transport_.rank(), tag_name(kTagJob), kTagJob, job_timeout_);
      }
    }
  }

  // Stop: says goodbye with the statistics, unless rank 0 declared this worker lost.
  StopStatus stop() {
    const auto status = static_cast<StopStatus>(job_header_.stop_status);
    // Rank 0 sends no model after a stop.
    transport_.cancel(model_request_);
    if (job_header_.lost) {
      keep_unfinished_sends(transport_, sends_, std::move(reply_), std::move(out_.payload),
                            std::move(narrowed_));
      return status;
    }
    wait_replies_sent();
    stats_.lifetime = wall_seconds() - born_;
    ReplyHeader bye{.kind = ReplyHeader::kBye, .trailer_bytes = sizeof stats_};
    send(bye, &stats_);
    wait_replies_sent();
    return status;
  }

  // A job: computes it (unless this worker failed earlier) and replies.
  void run_job() {
    wait_request(transport_, model_request_, "the receive of a model", 0, kTagModel,
                 options_.poll_sleep_us, options_.timeout_s);
    if (failed_) {
      stats_.dropped_jobs += 1;
      post_job_header();
      post_model();
      return;
    }
    JobTimes t{.start = wall_seconds()};
    wait_replies_sent();  // out_.payload is about to be overwritten
    const Job job{.tag = job_header_.tag};
    std::string error = compute(job, t);
    // x_ and the header are free again: the next job may arrive while the reply travels.
    post_job_header();
    post_model();
    if (!error.empty()) {
      failed_ = true;
      send_text(ReplyHeader::kError, job.tag, fmt::format("job {}: {}", job.tag, error));
      return;
    }
    const bool as_float = narrow_payload();
    const int64_t value_bytes = as_float ? 4 : 8;
    ReplyHeader h{.kind = ReplyHeader::kReply,
                  .tag = job.tag,
                  .payload_size = dim_,
                  .trailer_bytes = static_cast<int64_t>(out_.versions.size() * 8),
                  .payload_bytes = value_bytes,
                  .model_bytes = reads_float32_ ? 4 : 8,
                  .loss = out_.loss,
                  .units = t.units,
                  .job_time = t.done - t.start,
                  .compute_time = t.computed - t.start,
                  .injected_time = t.done - t.computed};
    send(h, out_.versions.data());
    send_data(as_float ? static_cast<const void*>(narrowed_.data()) : out_.payload.data(),
              value_bytes * dim_, kTagPayload);
    stats_.jobs += 1;
    stats_.compute_time += t.computed - t.start;
    stats_.injected_time += t.done - t.computed;
    stats_.busy_time += wall_seconds() - t.start;
  }

  // Whether the payload goes in float32: when this worker reads its model in float32 and every
  // value is exactly a float (then in narrowed_; wire.h). A float32 model's own gradients are;
  // sums and coded combinations of them mostly are not, and go in double.
  bool narrow_payload() {
    if (!reads_float32_) return false;
    narrowed_.resize(static_cast<size_t>(dim_));
    return narrow_exact(out_.payload.data(), dim_, narrowed_.data());
  }

  // Computes `job` into out_ and imposes the modelled time (engine.inject); returns the error of
  // the worker half, empty if none.
  std::string compute(const Job& job, JobTimes& t) {
    t.computed = t.done = t.start;
    try {
      if (job_header_.model_size != dim_ ||
          (job_header_.model_bytes != 4 && job_header_.model_bytes != 8)) {
        fail("a job for a model of {} values of {} bytes; this worker's model has {}",
             job_header_.model_size, job_header_.model_bytes, dim_);
      }
      if (job_header_.model_bytes == 4) widen_in_place(x_.data(), dim_);
      t.units = worker_.units(job);
      const Duration modelled = timing_.compute_time(index_, t.units, job.tag, rng_);
      worker_.compute(job, x_, out_);
      t.computed = wall_seconds();
      if (options_.inject == Inject::kDelay) {
        sleep_until(t.computed + modelled.extra);
      } else if (options_.inject == Inject::kPace) {
        const double target = modelled.total();
        if (t.computed - t.start > target) {
          stats_.overruns += 1;
          stats_.max_overrun = std::max(stats_.max_overrun, t.computed - t.start - target);
        } else {
          sleep_until(t.start + target);
        }
      }
      t.done = wall_seconds();
      if (out_.payload.size() != dim_) {
        fail("the worker half produced a payload of {} values for a model of {}",
             out_.payload.size(), dim_);
      }
      if (static_cast<int64_t>(out_.versions.size()) * 8 > kTrailerBytes) {
        fail("the reply lists {} versions; a reply carries at most {}", out_.versions.size(),
             kTrailerBytes / 8);
      }
    } catch (const std::exception& e) {
      return e.what()[0] ? e.what() : "unknown error";
    }
    return {};
  }

  // What a checkpoint records of this rank (remote_cluster.h): the duration stream, the timing
  // model's own state (a trace's replay position: this rank's copy is the one that advances), the
  // statistics and the worker half's own state.
  void checkpoint(StateArchive& a) {
    a.section("mpi_worker");
    a.expect(index_, "worker index");
    rng_.checkpoint(a);
    timing_.checkpoint(a);
    a.io(stats_.jobs);
    a.io(stats_.compute_time);
    a.io(stats_.injected_time);
    a.io(stats_.busy_time);
    a.io(stats_.overruns);
    a.io(stats_.max_overrun);
    a.io(stats_.dropped_jobs);
    double lifetime = wall_seconds() - born_;
    a.io(lifetime);
    if (a.loading()) born_ = wall_seconds() - lifetime;
    worker_.checkpoint(a);
  }

  // A save request: answers with the state's size, then sends its bytes (or says why it could
  // not save it), and waits until both have gone, so that the state's buffer is free again.
  void save_state() {
    post_job_header();  // the model's receive stays posted: no model follows a request
    wait_replies_sent();
    std::string error;
    try {
      StateArchive a = StateArchive::for_saving();
      checkpoint(a);
      check_state_size(a.bytes().size(), index_);
      state_ = a.bytes();
    } catch (const std::exception& e) {
      error = e.what()[0] ? e.what() : "unknown error";
    }
    if (!error.empty()) {
      send_text(ReplyHeader::kState, -1, error);
    } else {
      ReplyHeader h{.kind = ReplyHeader::kState,
                    .tag = -1,
                    .payload_size = static_cast<int64_t>(state_.size())};
      send(h, nullptr);
      send_data(state_.data(), static_cast<int64_t>(state_.size()), kTagState);
    }
    wait_replies_sent();
    std::string().swap(state_);
  }

  // A load request: receives the state, loads it, and answers (saying why, if it does not fit).
  void load_state() {
    const int64_t bytes = job_header_.model_size;
    post_job_header();
    if (bytes < 0 || bytes > INT_MAX) {
      fail("{}: rank {}: a state of {} bytes", transport_.name(), transport_.rank(), bytes);
    }
    state_.resize(static_cast<size_t>(bytes));
    transport_.irecv(state_.data(), bytes, 0, kTagState, state_request_);
    wait_request(transport_, state_request_, "the receive of a state", 0, kTagState,
                 options_.poll_sleep_us, options_.timeout_s);
    std::string error;
    try {
      StateArchive a = StateArchive::for_loading(
          std::move(state_), fmt::format("the checkpoint's state of worker {}", index_));
      checkpoint(a);
      a.expect_end();
    } catch (const std::exception& e) {
      error = e.what()[0] ? e.what() : "unknown error";
    }
    std::string().swap(state_);
    wait_replies_sent();
    if (error.empty()) {
      send(ReplyHeader{.kind = ReplyHeader::kState, .tag = -1}, nullptr);
    } else {
      send_text(ReplyHeader::kState, -1, error);
    }
  }

  Transport& transport_;
  Worker& worker_;
  TimingModel& timing_;  // a trace model's replay position is checkpointed
  const int index_;
  const ClusterOptions& options_;
  const int64_t dim_;
  const double job_timeout_;
  Rng rng_;  // the modelled durations, Rng(seed, "duration", index)
  JobHeader job_header_;
  Vec x_;                     // receives doubles, or floats widened in place (wire.h)
  const bool reads_float32_;  // Worker::model_precision(): rank 0 may send x in float32
  WorkerOutput out_;
  std::vector<float> narrowed_;  // the payload in float32, when it fits exactly
  std::vector<char> reply_;
  std::string state_;  // a state being sent or received
  Request job_request_, model_request_, state_request_;
  Request sends_[2];
  WorkerStats stats_;
  double born_;
  bool failed_ = false;  // reported an error: drops its jobs until stop
};

}  // namespace

StopStatus serve_jobs(Transport& transport, Worker& worker, TimingModel& timing, int index,
                      uint64_t seed, const ClusterOptions& options, int64_t dim) {
  PACER_CHECK(transport.rank() == index + 1 && dim > 0 && dim <= kMaxDim);
  return WorkerLoop(transport, worker, timing, index, seed, options, dim).serve();
}

}  // namespace pacer::cluster
