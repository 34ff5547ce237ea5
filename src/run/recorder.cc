#include "pacer/run/recorder.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <numeric>
#include <string_view>

#include "pacer/core/error.h"
#include "pacer/core/log.h"
#include "pacer/core/state.h"
#include "pacer/core/stats.h"

namespace pacer {
namespace {

constexpr const char* kLogHeader =
    "time,step,work_units,loss,grad_norm,responders,staleness,stepsize,worker,wait,"
    "full_loss,grad_norm_sq,tilde_loss,test_loss,test_accuracy\n";
constexpr const char* kEvalsHeader =
    "time,step,work_units,full_loss,grad_norm_sq,tilde_loss,test_loss,test_accuracy\n";
constexpr const char* kTraceHeader = "time,step,work_units,loss\n";
// The evaluation columns of a log.csv row at which the model was not evaluated.
constexpr std::string_view kNoEvaluation = ",,,,,\n";

// Writes `v` at `out` exactly as fmt's "{}" does (the shortest text that reads back as `v`) and
// returns the end. Whole numbers below 10^15 in magnitude take the integer path, whose digits
// fmt's "{}" writes for them too (it switches to an exponent only from 10^16 on); -0 does not.
char* write_number(char* out, double v) {
  if (v >= -1e15 && v <= 1e15) {
    const int64_t i = static_cast<int64_t>(v);
    if (static_cast<double>(i) == v && (i != 0 || !std::signbit(v))) {
      return fmt::format_to(out, FMT_COMPILE("{}"), i);
    }
  }
  return fmt::format_to(out, FMT_COMPILE("{}"), v);
}

char* write_integer(char* out, int64_t v) { return fmt::format_to(out, FMT_COMPILE("{}"), v); }

}  // namespace

// One log.csv row being written, in a buffer that holds the longest row: 15 fields of at most 24
// characters ("-2.2250738585072014e-308") and their separators.
class Recorder::RowText {
 public:
  void number(double v) { end_ = write_number(end_, v); }
  // `v` as number() writes it, from the column's cache when the column's last value was `v`.
  void number(double v, NumberCache& cache) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (cache.size == 0 || bits != cache.bits) {
      cache.bits = bits;
      cache.size = static_cast<uint8_t>(write_number(cache.text, v) - cache.text);
    }
    std::memcpy(end_, cache.text, cache.size);
    end_ += cache.size;
  }
  void integer(int64_t v) { end_ = write_integer(end_, v); }
  void put(char c) { *end_++ = c; }
  void put(std::string_view text) {
    std::memcpy(end_, text.data(), text.size());
    end_ += text.size();
  }
  std::string_view text() const { return {buffer_, static_cast<size_t>(end_ - buffer_)}; }

 private:
  char buffer_[512];
  char* end_ = buffer_;
};

void LossTrace::add(const UpdateRecord& record) {
  open_.time = record.time;
  open_.step = record.step;
  open_.work_units = record.work_units;
  if (std::isfinite(record.loss)) {
    open_.loss_sum += record.loss;
    ++open_.count;
  }
  if (++open_.updates < stride_) return;
  blocks_.push_back(open_);
  open_ = Block{};
  if (blocks_.size() == 2 * kTraceBlocks) merge_pairs();
}

void LossTrace::merge_pairs() {
  for (size_t i = 0; i + 1 < blocks_.size(); i += 2) {
    Block& merged = blocks_[i / 2];
    const Block first = blocks_[i], second = blocks_[i + 1];
    merged = second;
    merged.loss_sum = first.loss_sum + second.loss_sum;
    merged.count = first.count + second.count;
    merged.updates = first.updates + second.updates;
  }
  blocks_.resize(blocks_.size() / 2);
  stride_ *= 2;
}

std::string LossTrace::csv() const {
  std::string out = kTraceHeader;
  auto row = [&out](const Block& b) {
    if (b.updates == 0) return;
    if (b.count > 0) {
      fmt::format_to(std::back_inserter(out), "{},{},{},{}\n", b.time, b.step, b.work_units,
                     b.loss_sum / static_cast<double>(b.count));
    } else {
      fmt::format_to(std::back_inserter(out), "{},{},{},\n", b.time, b.step, b.work_units);
    }
  };
  for (const Block& b : blocks_) row(b);
  row(open_);
  return out;
}

std::string full_loss_reason(const Config& config, bool synchronous_method) {
  if (!synchronous_method) {
    return "an asynchronous method: each reported loss is one worker's minibatch loss on its own "
           "partition";
  }
  const std::string scheme = config.get_string("partition.scheme", "iid");
  if (scheme == "by_class" || scheme == "dirichlet") {
    return fmt::format(
        "partition.scheme = \"{}\": the responders' minibatch losses cover only their own "
        "classes",
        scheme);
  }
  return "";
}

namespace {

// divergence.factor (0 = off, else > 1) and divergence.hold (>= 1); the rule is StopRules'.
void read_divergence_rule(const Config& config, StopRules& r) {
  r.divergence_factor = config.get_double("divergence.factor", r.divergence_factor);
  if (!(r.divergence_factor == 0 || r.divergence_factor > 1) ||
      !std::isfinite(r.divergence_factor)) {
    config.fail_key("divergence.factor", "0 (off) or a finite number > 1");
  }
  r.divergence_hold = config.get_int("divergence.hold", r.divergence_hold);
  if (r.divergence_hold <= 0) config.fail_key("divergence.hold", "a positive integer");
}

}  // namespace

StopRules read_stop_rules(const Config& config, const std::string& full_loss_reason) {
  StopRules r;
  r.max_steps = config.get_int("max_steps", r.max_steps);
  if (r.max_steps <= 0) config.fail_key("max_steps", "a positive integer");
  r.max_time = config.get_double("max_time", 0.0);
  if (!(r.max_time >= 0)) config.fail_key("max_time", "a number >= 0 (0 = no limit)");
  r.max_work = config.get_double("max_work", 0.0);
  if (!(r.max_work >= 0)) config.fail_key("max_work", "a number >= 0 (0 = no limit)");
  r.eval_every = config.get_int("eval_every", r.eval_every);
  if (r.eval_every < 0) config.fail_key("eval_every", "an integer >= 0 (0 = off)");
  r.eval_every_s = config.get_double("eval_every_s", 0.0);
  if (!(r.eval_every_s >= 0) || !std::isfinite(r.eval_every_s)) {
    config.fail_key("eval_every_s", "a number of seconds >= 0 (0 = off)");
  }
  r.eval_final = config.get_bool("eval_final", true);
  if (config.has("target.loss")) {
    // A single number or a list.
    try {
      r.targets = {config.get_double("target.loss", 0)};
    } catch (const Error&) {
      r.targets = config.get_doubles("target.loss", {});
    }
    // The models' losses (cross-entropy, least squares, plus a non-negative L2 term) are >= 0:
    // a negative target could never be reached.
    for (double t : r.targets) {
      if (!(t >= 0) || !std::isfinite(t)) {
        config.fail_key("target.loss",
                        "finite numbers >= 0 (every model's loss is >= 0, so a negative target "
                        "can never be reached)");
      }
    }
  }
  r.hold = config.get_int("target.hold", 1);
  if (r.hold <= 0) config.fail_key("target.hold", "a positive integer");
  const bool explicit_on = config.has("target.on");
  r.target_on_full_loss = config.get_choice("target.on", "full", {"train", "full"}) == "full";
  if (explicit_on && !r.target_on_full_loss && !full_loss_reason.empty() && !r.targets.empty()) {
    log_warning(
        "target.on = \"train\" with {}: the target is checked on a loss that does not measure "
        "the full training loss F (target.on = \"full\", the default, judges F)",
        full_loss_reason);
  }
  r.target_check_every = config.get_double("target.check_every", r.target_check_every);
  if (!(r.target_check_every > 0) || !std::isfinite(r.target_check_every)) {
    config.fail_key("target.check_every",
                    "a positive number of work units per worker between checks of F");
  }
  r.target_sample = config.get_int("target.sample", r.target_sample);
  if (r.target_sample < 0) {
    config.fail_key("target.sample", "a number of training rows >= 0 (0 = every row: exact F)");
  }
  r.stop_at_targets = config.get_bool("target.stop", true);
  read_divergence_rule(config, r);
  return r;
}

namespace {

// Snapshots the target watch may keep: at most 512, and at most 256 MiB of them.
int64_t snapshot_window(int64_t params) {
  constexpr double kBytes = 256.0 * 1024 * 1024;
  const double fit = kBytes / (8.0 * static_cast<double>(std::max<int64_t>(params, 1)));
  return std::clamp<int64_t>(static_cast<int64_t>(fit), 2, 512);
}

}  // namespace

Recorder::Recorder(StopRules rules, const Objective& objective, const Dataset& test,
                   std::vector<double> tilde_weights, std::string label,
                   std::unique_ptr<TargetLossEstimator> target_loss)
    : rules_(std::move(rules)),
      objective_(objective),
      test_(test),
      tilde_weights_(std::move(tilde_weights)),
      scratch_(objective.make_scratch()),
      full_gradient_(Vec::Zero(objective.dim())),
      progress_(std::move(label)),
      log_(kLogHeader),
      evals_(kEvalsHeader),
      hold_count_(rules_.targets.size(), 0),
      reached_(rules_.targets.size()) {
  if (test_.rows() > 0) test_workspace_ = objective.model().make_workspace(1024);
  next_eval_time_ = rules_.eval_every_s;
  if (rules_.target_on_full_loss && !rules_.targets.empty()) {
    PACER_CHECK(target_loss != nullptr);
    target_loss_ = std::move(target_loss);
    watch_.emplace(TargetWatchOptions{.targets = rules_.targets,
                                      .hold = rules_.hold,
                                      .check_every = rules_.target_check_every,
                                      .window = snapshot_window(objective.dim()),
                                      .workers = objective.num_partitions()},
                   *target_loss_);
  }
}

void Recorder::Evaluated::write_csv(RowText& row) const {
  row.number(full_loss);
  row.put(',');
  row.number(grad_norm_sq);
  row.put(',');
  if (has_tilde) row.number(tilde_loss);
  row.put(',');
  if (has_test) {
    row.number(test_loss);
    row.put(',');
    row.number(test_accuracy);
  } else {
    row.put(',');
  }
  row.put('\n');
}

void Recorder::set_threads(int threads) {
  PACER_CHECK(threads >= 1);
  if (target_loss_) target_loss_->set_pool(nullptr, nullptr);
  slots_.clear();
  pool_.reset();
  if (threads == 1) return;
  pool_ = std::make_unique<ComputePool>(threads);
  for (int k = 0; k < threads; ++k) slots_.push_back(objective_.make_scratch());
  if (target_loss_) target_loss_->set_pool(pool_.get(), &slots_);
}

Recorder::Evaluated Recorder::evaluate(const Vec& x, const UpdateRecord& at, bool at_anchor) {
  const double begin = steady_seconds();
  Evaluated e;
  // The test set goes first, as a task of its own when there is a pool: nothing else reads its
  // workspace or writes its results.
  ComputePool::Ticket test_task;
  std::exception_ptr test_failure;  // a pool task keeps its exception for the waiter
  auto evaluate_test = [this, &x, &e, &test_failure] {
    try {
      const Evaluation t = objective_.model().evaluate(x, test_, *test_workspace_);
      e.test_loss = t.loss;
      e.test_accuracy = t.accuracy;
      e.has_test = true;
    } catch (...) {
      test_failure = std::current_exception();
    }
  };
  if (test_workspace_ && pool_) test_task = pool_->submit(-1, evaluate_test);
  try {
    if (at_anchor) {  // the target watch evaluated F and ∇F at this very model
      e.full_loss = target_loss_->anchor_loss();
      e.grad_norm_sq = target_loss_->anchor_grad_norm_sq();
    } else {
      e.full_loss = pool_ ? objective_.full_gradient(x, full_gradient_, *pool_, slots_)
                          : objective_.full_gradient(x, full_gradient_, *scratch_);
      e.grad_norm_sq = full_gradient_.squaredNorm();
    }
    if (!tilde_weights_.empty()) {
      std::vector<double> losses = pool_ ? objective_.partition_losses(x, *pool_, slots_)
                                         : objective_.partition_losses(x, *scratch_);
      e.tilde_loss = 0;
      for (size_t i = 0; i < losses.size(); ++i) e.tilde_loss += tilde_weights_[i] * losses[i];
      e.has_tilde = true;
    }
  } catch (...) {
    if (test_task) pool_->drop(test_task);  // it writes into this frame: it may not outlive it
    throw;
  }
  if (test_task) {
    pool_->wait(test_task);
  } else if (test_workspace_) {
    evaluate_test();
  }
  if (test_failure) std::rethrow_exception(test_failure);
  RowText row;
  write_position(row, at);
  e.write_csv(row);
  evals_ += row.text();
  ++evaluations_;
  const double seconds = steady_seconds() - begin;
  evaluation_seconds_ += seconds;
  if (evaluation_listener_) evaluation_listener_(seconds);
  return e;
}

bool Recorder::evaluation_due(const UpdateRecord& record) {
  bool due = rules_.eval_every > 0 && record.step % rules_.eval_every == 0;
  if (rules_.eval_every_s > 0 && record.time >= next_eval_time_) {
    due = true;
    next_eval_time_ = (std::floor(record.time / rules_.eval_every_s) + 1) * rules_.eval_every_s;
  }
  return due;
}

void Recorder::write_position(RowText& row, const UpdateRecord& r) {
  row.number(r.time, column_cache_[0]);
  row.put(',');
  row.integer(r.step);
  row.put(',');
  row.number(r.work_units, column_cache_[1]);
  row.put(',');
}

void Recorder::append_row(const UpdateRecord& r, const Evaluated* e) {
  RowText row;
  write_position(row, r);
  row.number(r.loss);
  row.put(',');
  row.number(r.grad_norm);
  row.put(',');
  row.integer(r.responders);
  row.put(',');
  row.number(r.staleness, column_cache_[2]);
  row.put(',');
  row.number(r.stepsize, column_cache_[3]);
  row.put(',');
  if (r.worker >= 0) row.integer(r.worker);
  row.put(',');
  if (!std::isnan(r.wait)) row.number(r.wait, column_cache_[4]);
  if (e) {
    row.put(',');
    e->write_csv(row);
  } else {
    row.put(kNoEvaluation);
  }
  last_row_.assign(row.text());
  last_row_start_ = static_cast<int64_t>(log_length());
  append_log(last_row_);
}

std::string_view Recorder::log_header() { return kLogHeader; }

uint64_t Recorder::log_length() const {
  return log_file_.is_open() ? log_file_.size() : log_.size();
}

void Recorder::append_log(std::string_view text) {
  if (log_file_.is_open()) {
    log_file_.append(text);
  } else {
    log_ += text;
  }
}

void Recorder::cut_log(uint64_t length) {
  if (log_file_.is_open()) {
    log_file_.truncate(length);
  } else {
    log_.resize(static_cast<size_t>(length));
  }
}

void Recorder::stream_log(const std::string& path, double interval_s) {
  log_file_.open(path);
  log_.clear();
  log_.shrink_to_fit();
  stream_interval_s_ = interval_s;
  last_flush_wall_ = last_snapshot_wall_ = coarse_steady_seconds();
}

uint64_t Recorder::flush_log() {
  if (!log_file_.is_open()) return 0;
  last_flush_wall_ = coarse_steady_seconds();
  return log_file_.flush();
}

void Recorder::continue_log() {
  PACER_CHECK(log_file_.is_open());
  const uint64_t keep =
      last_row_start_ >= 0 ? static_cast<uint64_t>(last_row_start_) : saved_log_length_;
  if (log_file_.size() < keep) {
    fail("{}: {} bytes long, shorter than the {} bytes recorded before the checkpoint's last row",
         log_file_.path(), log_file_.size(), keep);
  }
  log_file_.truncate(keep);
  if (last_row_start_ >= 0) append_log(last_row_);
  if (flush_log() != saved_log_length_) {
    fail("{}: the checkpoint's last row does not end where the checkpoint says the log ended",
         log_file_.path());
  }
}

void Recorder::stream(bool evaluated) {
  if (!log_file_.is_open()) return;
  constexpr uint64_t kMaxPending = 1 << 20;    // bytes collected before a flush at the latest
  const double now = coarse_steady_seconds();  // read at every update: the cheap clock
  if (evaluated || now - last_flush_wall_ >= stream_interval_s_ ||
      log_file_.pending() >= kMaxPending) {
    log_file_.flush();
    last_flush_wall_ = now;
  }
  if (evaluated && snapshot_listener_ && now - last_snapshot_wall_ >= stream_interval_s_) {
    last_snapshot_wall_ = now;
    snapshot_listener_();
  }
}

void Recorder::fill_last_row(const Evaluated& e) {
  if (last_row_start_ < 0 || !last_row_.ends_with(kNoEvaluation)) return;
  last_row_.resize(last_row_.size() - kNoEvaluation.size());
  RowText columns;
  columns.put(',');
  e.write_csv(columns);
  last_row_ += columns.text();
  cut_log(static_cast<uint64_t>(last_row_start_));
  append_log(last_row_);
}

double Recorder::budget_done(const UpdateRecord& r) const {
  double done = static_cast<double>(r.step) / static_cast<double>(rules_.max_steps);
  if (rules_.max_time > 0) done = std::max(done, r.time / rules_.max_time);
  if (rules_.max_work > 0) done = std::max(done, r.work_units / rules_.max_work);
  return std::clamp(done, 0.0, 1.0);
}

void Recorder::show_progress(const UpdateRecord& r) {
  if (!progress_.due()) return;  // the status is built only when it is shown
  progress_.update(fmt::format("step {}  t={:.1f}  loss {:.4f}", r.step, r.time, r.loss),
                   budget_done(r));
}

bool Recorder::loss_grew_too_much(double loss) {
  if (rules_.divergence_factor == 0) return false;
  if (std::isnan(first_loss_)) first_loss_ = loss;
  const double threshold = rules_.divergence_factor * std::max(first_loss_, 1.0);
  grown_updates_ = loss > threshold ? grown_updates_ + 1 : 0;
  if (grown_updates_ < rules_.divergence_hold) return false;
  divergence_ = fmt::format(
      "the reported loss rose from {:.4g} (first update) to {:.4g}, above divergence.factor = {:g} "
      "times max(first loss, 1) for divergence.hold = {} consecutive updates",
      first_loss_, loss, rules_.divergence_factor, rules_.divergence_hold);
  return true;
}

void Recorder::check_target(double loss, const UpdateRecord& record) {
  for (size_t k = 0; k < rules_.targets.size(); ++k) {
    if (reached_[k]) continue;
    hold_count_[k] = loss <= rules_.targets[k] ? hold_count_[k] + 1 : 0;
    if (hold_count_[k] >= rules_.hold) reached_[k] = record;
  }
}

bool Recorder::on_update(const UpdateRecord& record, const Vec& x) {
  step_times_.push_back(record.time - last_.time);
  last_ = record;
  responders_total_ += record.responders;
  staleness_total_ += record.staleness;

  trace_.add(record);
  const bool due = evaluation_due(record);
  std::optional<Evaluated> eval;
  if (due) eval = evaluate(x, record);
  last_evaluated_ = due;
  if (eval) final_ = eval;
  append_row(record, eval ? &*eval : nullptr);
  const bool going_on = keep_running(record, x);
  if (going_on) stream(due);  // a run that ends now is written whole by run_experiment
  return going_on;
}

const char* Recorder::budget_reached(const UpdateRecord& record) const {
  if (record.step >= rules_.max_steps) return "max_steps";
  if (rules_.max_time > 0 && record.time >= rules_.max_time) return "max_time";
  if (rules_.max_work > 0 && record.work_units >= rules_.max_work) return "max_work";
  return "";
}

void Recorder::take_watch_hits() {
  for (size_t k = 0; k < reached_.size(); ++k) {
    if (!reached_[k] && watch_->hit(k)) reached_[k] = watch_->hit(k)->record;
  }
}

bool Recorder::keep_running(const UpdateRecord& record, const Vec& x) {
  if (!std::isfinite(record.loss) || !x.allFinite()) {
    status_ = "diverged";
    divergence_ = "the loss or the model became non-finite";
    return false;
  }
  if (loss_grew_too_much(record.loss)) {
    status_ = "diverged";
    return false;
  }
  const std::string_view budget = budget_reached(record);
  if (watch_) {
    watch_->on_update(record, x);
    if (!budget.empty()) watch_->on_run_end();  // the last update: decided before the run ends
    take_watch_hits();
  } else {
    check_target(record.loss, record);
  }
  show_progress(record);

  const bool all_reached =
      !reached_.empty() &&
      std::all_of(reached_.begin(), reached_.end(), [](const auto& r) { return r.has_value(); });
  if (all_reached && rules_.stop_at_targets) {
    status_ = "target_reached";
    return false;
  }
  if (!budget.empty()) {
    status_ = budget;
    return false;
  }
  return true;
}

void Recorder::on_stopped(std::string_view status, std::string_view reason) {
  status_ = status;
  stop_reason_ = reason;
}

void Recorder::finish(const Vec& x, double end_time) {
  progress_.clear();
  if (status_ == "stopped" && rules_.max_time > 0 && end_time >= rules_.max_time) {
    status_ = "max_time";
  }
  if (watch_ && status_ != "diverged") {
    watch_->on_run_end();  // a run the engine ended (max_time between updates, lost workers)
    take_watch_hits();
  }
  if (last_evaluated_ || status_ == "diverged" || !rules_.eval_final) return;
  // A run that stopped where the target watch anchored has F and ∇F there already (F̃, for
  // asynchronous runs, needs the partitions' losses: evaluated anew).
  const bool at_anchor = watch_ && watch_->anchored_at() == last_.step && tilde_weights_.empty();
  final_ = evaluate(x, last_, at_anchor);
  last_evaluated_ = true;
  // The last row of log.csv was written without evaluation columns: fill them in.
  fill_last_row(*final_);
}

std::string Recorder::target_csv() const {
  if (!watch_) return "";
  return "time,step,work_units,estimate,se,rows,kind\n" + watch_->evaluations_csv();
}

void Recorder::summarize(nlohmann::json& out) const {
  out["status"] = status_;
  if (!divergence_.empty()) out["divergence"] = divergence_;
  if (!stop_reason_.empty()) out["error"] = stop_reason_;
  out["steps"] = last_.step;
  out["time"] = last_.time;
  out["work_units"] = last_.work_units;
  const double steps = static_cast<double>(std::max<int64_t>(1, last_.step));
  out["work_units_per_step"] = last_.work_units / steps;
  out["jobs"] = last_.jobs;
  // The cost of one job: 1 for DGD and PGC (after PGC's warm-up), s+1 for gradient coding.
  out["work_units_per_job"] = last_.jobs > 0 ? last_.work_units / last_.jobs : 0.0;
  out["responders_per_step"] = responders_total_ / steps;
  out["mean_staleness"] = staleness_total_ / steps;
  double total = std::accumulate(step_times_.begin(), step_times_.end(), 0.0);
  out["mean_step_time"] = step_times_.empty() ? 0.0 : total / step_times_.size();
  out["median_step_time"] = median(step_times_);
  // Wall seconds spent evaluating; no engine's clock (time, step times, targets) includes them.
  // Only where the clock is a wall clock (a listener takes the time out of it): a simulated run's
  // summary holds no wall time, so that it is the same bit for bit on every run.
  if (evaluation_listener_) out["evaluation_time"] = evaluation_seconds_;
  out["evaluations"] = evaluations_;

  nlohmann::json targets = nlohmann::json::array();
  for (size_t k = 0; k < rules_.targets.size(); ++k) {
    nlohmann::json t;
    t["loss"] = rules_.targets[k];
    t["on"] = rules_.target_on_full_loss ? "full" : "train";
    t["hold"] = rules_.hold;
    t["reached"] = reached_[k].has_value();
    if (reached_[k]) {
      t["steps"] = reached_[k]->step;
      t["time"] = reached_[k]->time;
      t["work_units"] = reached_[k]->work_units;
      if (watch_) {  // F there, or its estimate and standard error
        t["full_loss"] = watch_->hit(k)->loss.value;
        t["full_loss_se"] = watch_->hit(k)->loss.se;
      }
    } else {
      t["steps"] = nullptr;
      t["time"] = nullptr;
      t["work_units"] = nullptr;
    }
    targets.push_back(t);
  }
  out["targets"] = targets;
  if (watch_) out["target_estimate"] = watch_->describe();

  nlohmann::json final_metrics;
  final_metrics["train_loss"] = last_.loss;
  if (final_) {
    final_metrics["full_loss"] = final_->full_loss;
    final_metrics["grad_norm_sq"] = final_->grad_norm_sq;
    if (final_->has_tilde) final_metrics["tilde_loss"] = final_->tilde_loss;
    if (final_->has_test) {
      final_metrics["test_loss"] = final_->test_loss;
      final_metrics["test_accuracy"] = final_->test_accuracy;
    }
  }
  out["final"] = final_metrics;
}

void LossTrace::checkpoint(StateArchive& a) {
  a.section("loss_trace");
  a.io(blocks_);
  open_.checkpoint(a);
  a.io(stride_);
}

void Recorder::checkpoint(StateArchive& a) {
  a.section("recorder");
  a.io(evals_);
  trace_.checkpoint(a);
  a.io(evaluation_seconds_);
  a.io(evaluations_);
  a.io(next_eval_time_);
  a.io(status_);
  a.io(divergence_);
  a.io(stop_reason_);
  a.io(first_loss_);
  a.io(grown_updates_);
  last_.checkpoint(a);
  a.io(last_evaluated_);
  a.io(step_times_);
  a.io(responders_total_);
  a.io(staleness_total_);
  // The targets' progress, keyed by the target's value (an extended run may add targets).
  std::vector<double> targets = rules_.targets;
  std::vector<int64_t> hold = hold_count_;
  std::vector<std::optional<UpdateRecord>> reached = reached_;
  a.io(targets);
  a.io(hold);
  a.io(reached);
  a.io(final_);
  if (watch_) watch_->checkpoint(a);
  // log.csv: its length and its last row, as they are now (continue_log).
  uint64_t log_bytes = a.loading() ? 0 : flush_log();
  a.io(log_bytes);
  a.io(last_row_start_);
  a.io(last_row_);
  if (!a.loading()) return;
  saved_log_length_ = log_bytes;
  if (hold.size() != targets.size() || reached.size() != targets.size()) {
    a.mismatch("the targets' counters do not match the targets");
  }
  for (size_t i = 0; i < rules_.targets.size(); ++i) {
    hold_count_[i] = 0;
    reached_[i].reset();
    for (size_t j = 0; j < targets.size(); ++j) {
      if (targets[j] != rules_.targets[i]) continue;
      hold_count_[i] = hold[j];
      reached_[i] = reached[j];
    }
  }
}

}  // namespace pacer
