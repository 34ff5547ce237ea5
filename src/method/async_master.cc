#include "pacer/method/async_master.h"

#include <fmt/format.h>

#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "pacer/core/error.h"
#include "pacer/core/stats.h"
#include "pacer/method/gradient_worker.h"

namespace pacer {

// ---------------------------------------------------------------------------------------------
// AsyncMaster

AsyncMaster::AsyncMaster(Trainer& trainer, int workers)
    : TrainingMaster(trainer),
      workers_(workers),
      arrivals_(workers, 0),
      updates_caused_(workers, 0),
      used_(workers, 0),
      discarded_(workers, 0),
      observed_mean_(workers, 0.0),
      live_(workers, true),
      live_workers_(workers) {}

void AsyncMaster::start(Cluster& cluster) {
  for (int i = 0; i < workers_; ++i) send_current(i, cluster);
}

void AsyncMaster::on_reply(const Reply& reply, Cluster& cluster) {
  if (reply.status == ReplyStatus::kFailed) fail_on_failed_reply(reply);
  const int w = reply.worker;
  trainer_.add_work(reply.units);
  if (arrivals_[w]++ == 0) ++reported_workers_;
  const double unit_time = reply.units > 0 ? reply.compute_time / reply.units : 0.0;
  observed_mean_[w] += (unit_time - observed_mean_[w]) / static_cast<double>(arrivals_[w]);
  if (trainer_.finished()) return;

  const int64_t delay = trainer_.steps() - reply.tag;
  ++delay_histogram_[delay];
  on_gradient(reply, delay, cluster);
  if (!trainer_.finished() && !cluster.busy(w)) send_current(w, cluster);
}

void AsyncMaster::on_lost(int worker, Cluster& cluster) {
  record_lost(worker, cluster);
  live_[worker] = false;
  --live_workers_;
  if (trainer_.finished()) return;
  if (live_workers_ == 0) {
    stop_too_many_lost(cluster, "at least one surviving worker");
    return;
  }
  on_worker_lost(worker, cluster);
}

void AsyncMaster::on_rejoined(int worker, Cluster& cluster) {
  record_rejoined(worker, cluster);
  live_[worker] = true;
  ++live_workers_;
  if (trainer_.finished()) return;
  on_worker_rejoined(worker);
  if (!cluster.busy(worker)) send_current(worker, cluster);
}

void AsyncMaster::send_current(int worker, Cluster& cluster) {
  const int64_t tag = trainer_.steps();
  cluster.assign(worker, Job{tag}, trainer_.x());
  on_assigned(worker, tag);
}

void AsyncMaster::restart(int worker, Cluster& cluster) {
  cluster.cancel(worker);
  ++cancelled_jobs_;
  send_current(worker, cluster);
}

void AsyncMaster::apply_gradient(const Reply& reply, int64_t delay, double lr_scale,
                                 const Cluster& cluster) {
  count_used(reply.worker, 1);
  apply_direction(*reply.payload, lr_scale, cluster, reply.worker, reply.loss, 1,
                  static_cast<double>(delay));
}

void AsyncMaster::apply_direction(const Vec& direction, double lr_scale, const Cluster& cluster,
                                  int worker, double loss, int64_t responders, double staleness) {
  UpdateRecord record;
  record.time = cluster.now();
  record.loss = loss;
  record.responders = static_cast<int>(responders);
  record.staleness = staleness;
  record.worker = worker;
  if (worker >= 0) ++updates_caused_[worker];
  trainer_.apply(direction, record, lr_scale);
}

void AsyncMaster::summarize(nlohmann::json& out) const {
  out["arrivals_per_worker"] = arrivals_;
  out["updates_per_worker"] = updates_caused_;
  out["gradients_used_per_worker"] = used_;
  out["gradients_discarded_per_worker"] = discarded_;
  out["cancelled_jobs"] = cancelled_jobs_;
  std::vector<double> unit_time(workers_);
  for (int i = 0; i < workers_; ++i) unit_time[i] = reported(i) ? observed_mean_[i] : 0.0;
  out["observed_unit_time_per_worker"] = unit_time;
  out["delay_histogram"] = histogram_json(delay_histogram_);
  summarize_method(out);
}

void AsyncMaster::checkpoint(StateArchive& a) {
  TrainingMaster::checkpoint(a);
  a.section("async_master");
  a.expect(workers_, "workers");
  a.io(arrivals_);
  a.io(updates_caused_);
  a.io(used_);
  a.io(discarded_);
  a.io(observed_mean_);
  a.io(reported_workers_);
  a.io(live_);
  a.io(live_workers_);
  a.io(cancelled_jobs_);
  a.io(delay_histogram_);
  checkpoint_method(a);
}

// ---------------------------------------------------------------------------------------------
// GradientTable
GradientTable::GradientTable(int workers, int64_t dim)
    : sum_(workers, Vec::Zero(dim)),
      count_(workers, 0),
      entry_loss_sum_(workers, 0.0),
      entry_tag_sum_(workers, 0.0),
      member_(workers, true),
      members_(workers) {}

void GradientTable::add(int worker, const Vec& g, double loss, int64_t tag) {
  PACER_CHECK(member_[worker]);
  sum_[worker] += g;
  if (count_[worker]++ == 0) ++filled_;
  ++total_;
  loss_sum_ += loss;
  tag_sum_ += static_cast<double>(tag);
  entry_loss_sum_[worker] += loss;
  entry_tag_sum_[worker] += static_cast<double>(tag);
}

void GradientTable::clear() {
  for (size_t i = 0; i < sum_.size(); ++i) {
    if (count_[i] > 0) sum_[i].setZero();
    count_[i] = 0;
    entry_loss_sum_[i] = 0;
    entry_tag_sum_[i] = 0;
  }
  total_ = 0;
  filled_ = 0;
  loss_sum_ = 0;
  tag_sum_ = 0;
}

void GradientTable::swap(GradientTable& other) noexcept {
  std::swap(sum_, other.sum_);
  std::swap(count_, other.count_);
  std::swap(entry_loss_sum_, other.entry_loss_sum_);
  std::swap(entry_tag_sum_, other.entry_tag_sum_);
  std::swap(member_, other.member_);
  std::swap(members_, other.members_);
  std::swap(total_, other.total_);
  std::swap(filled_, other.filled_);
  std::swap(loss_sum_, other.loss_sum_);
  std::swap(tag_sum_, other.tag_sum_);
}

void GradientTable::checkpoint(StateArchive& a) {
  a.section("gradient_table");
  a.expect(static_cast<int64_t>(sum_.size()), "workers");
  a.io(count_);
  for (size_t i = 0; i < sum_.size(); ++i) {
    if (count_[i] > 0) {
      a.io(sum_[i]);
    } else if (a.loading()) {
      sum_[i].setZero();
    }
  }
  a.io(entry_loss_sum_);
  a.io(entry_tag_sum_);
  a.io(member_);
  a.io(members_);
  a.io(total_);
  a.io(filled_);
  a.io(loss_sum_);
  a.io(tag_sum_);
}

void GradientTable::empty_entry(int worker) {
  if (count_[worker] == 0) return;
  --filled_;
  total_ -= count_[worker];
  loss_sum_ -= entry_loss_sum_[worker];
  tag_sum_ -= entry_tag_sum_[worker];
  sum_[worker].setZero();
  count_[worker] = 0;
  entry_loss_sum_[worker] = 0;
  entry_tag_sum_[worker] = 0;
}

void GradientTable::set_member(int worker, bool member) {
  if (member_[worker] == member) return;
  empty_entry(worker);
  member_[worker] = member;
  members_ += member ? 1 : -1;
}

bool GradientTable::harmonic_mean_count_reaches(double s) const {
  if (filled_ < workers()) return false;
  const double n = static_cast<double>(workers());
  double inverse_sum = 0;
  for (size_t i = 0; i < count_.size(); ++i) {
    if (member_[i]) inverse_sum += 1.0 / static_cast<double>(count_[i]);
  }
  // Each 1/B_i is rounded once (ε/2), the sum of n terms adds at most (n − 1)·ε/2 of the total and
  // the product one more ε/2: s · Σ computed is within (n + 1)·ε of s · Σ exact, relatively. n² is
  // exact in double. Outside a band twice that wide the double answer is the exact one.
  const double rhs = s * inverse_sum;
  const double band = 2.0 * (n + 1.0) * std::numeric_limits<double>::epsilon() * rhs;
  if (n * n > rhs + band) return true;
  if (n * n < rhs - band) return false;
  using Rational = boost::multiprecision::cpp_rational;
  Rational exact_sum = 0;
  for (size_t i = 0; i < count_.size(); ++i) {
    if (member_[i]) exact_sum += Rational(1, count_[i]);
  }
  return Rational(n * n) >= Rational(s) * exact_sum;  // a double converts exactly
}

void GradientTable::pooled_mean(Vec& out) const {
  PACER_CHECK(total_ > 0);
  out.setZero(sum_[0].size());
  for (size_t i = 0; i < sum_.size(); ++i) {
    if (count_[i] > 0) out += sum_[i];
  }
  out /= static_cast<double>(total_);
}

void GradientTable::mean_of_means(Vec& out) const {
  PACER_CHECK(filled_ == workers());
  out.setZero(sum_[0].size());
  for (size_t i = 0; i < sum_.size(); ++i) {
    if (member_[i]) out += sum_[i] / static_cast<double>(count_[i]);
  }
  out /= static_cast<double>(workers());
}

// ---------------------------------------------------------------------------------------------
// RoundMaster

RoundMaster::RoundMaster(Trainer& trainer, int workers, int64_t dim, double round_size,
                         bool cancel_busy)
    : AsyncMaster(trainer, workers),
      round_size_(round_size),
      table_(workers, dim),
      direction_(Vec::Zero(dim)),
      cancel_busy_(cancel_busy) {}

void RoundMaster::start(Cluster& cluster) {
  if (cancel_busy_ && !cluster.can_cancel()) {
    fail(
        "method.restart: 'cancel' needs an engine that can cancel jobs; use "
        "method.restart = \"discard\" with this engine");
  }
  AsyncMaster::start(cluster);
}

void RoundMaster::on_gradient(const Reply& reply, int64_t delay, Cluster& cluster) {
  const int w = reply.worker;
  if (delay > 0) {
    // Computed at an earlier round's model: not a gradient at x_k.
    count_discarded(w);
    ++stale_discarded_;
    return;
  }
  table_.add(w, *reply.payload, reply.loss, reply.tag);
  if (round_complete(table_)) close_round(w, cluster);
}

void RoundMaster::on_worker_lost(int worker, Cluster& cluster) {
  table_.set_member(worker, false);
  // The round closes because of the loss, not an arrival: no worker caused the update.
  if (table_.total() > 0 && round_complete(table_)) close_round(-1, cluster);
}

void RoundMaster::on_worker_rejoined(int worker) { table_.set_member(worker, true); }

void RoundMaster::close_round(int worker, Cluster& cluster) {
  direction(table_, direction_);
  for (int i = 0; i < workers(); ++i) count_used(i, table_.count(i));
  apply_direction(direction_, 1.0, cluster, worker, table_.mean_loss(), table_.total(), 0.0);
  table_.clear();
  if (trainer_.finished()) return;
  // Restart every worker at x_{k+1}. The replying worker is idle and gets it from on_reply.
  if (!cancel_busy_) return;
  for (int i = 0; i < workers(); ++i) {
    if (cluster.busy(i)) restart(i, cluster);
  }
}

void RoundMaster::checkpoint_method(StateArchive& a) {
  a.section("round_master");
  table_.checkpoint(a);
  a.io(stale_discarded_);
}

void RoundMaster::summarize_method(nlohmann::json& out) const {
  out["rounds"] = trainer_.steps();
  out["stale_gradients_discarded"] = stale_discarded_;
  out["S"] = round_size_;
}

// ---------------------------------------------------------------------------------------------
// AsyncMethod

AsyncMethod::AsyncMethod(const Config& config, const MethodSetup& setup) : setup_(setup) {
  if (setup.workers < 2) {
    config.fail_key("workers",
                    fmt::format("at least 2 workers for the asynchronous method '{}' (with one "
                                "worker it is plain SGD; use dgd)",
                                config.get_string("method.name", "")));
  }
  check_asynchronous_sampling(config);
}

std::unique_ptr<Worker> AsyncMethod::make_worker(int worker) const {
  return std::make_unique<GradientWorker>(setup_.objective, worker, setup_.seed,
                                          MinibatchSampling::kIndependent);
}

bool read_round_restart_cancels(const Config& config) {
  return config.get_choice("method.restart", "cancel", {"cancel", "discard"}) == "cancel";
}

double read_round_size(const Config& config, int workers) {
  const double s = config.get_double("method.S", static_cast<double>(workers));
  if (!(s > 0) || !std::isfinite(s)) {
    config.fail_key("method.S", "a positive number (the gradients a round gathers before a step)");
  }
  return s;
}

}  // namespace pacer
