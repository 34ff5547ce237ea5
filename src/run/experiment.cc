#include "pacer/run/experiment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>

#include "pacer/core/compute_pool.h"
#include "pacer/core/crash_point.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"
#include "pacer/core/memory.h"
#include "pacer/core/run_folder.h"
#include "pacer/core/state.h"
#include "pacer/data/partition.h"
#include "pacer/data/source.h"
#include "pacer/engine/registry.h"
#include "pacer/method/method.h"
#include "pacer/model/factory.h"
#include "pacer/report/job_log.h"
#include "pacer/report/plot.h"
#include "pacer/report/timeline.h"
#include "pacer/run/checkpoint.h"
#include "pacer/run/recorder.h"
#include "pacer/timing/timing_model.h"
#include "run_setup.h"

namespace pacer {
namespace {

std::string summary_text(const nlohmann::json& summary) { return summary.dump(2) + "\n"; }

// The clock the summary says its times are on.
Clock figure_clock(const nlohmann::json& summary) {
  return parse_clock(summary.value("clock", std::string()));
}

// The figure's title: "<config name>: <method>, seed <k>, <steps> steps, <time> s of simulated
// time" (the config name left out when it is the method's; the length when the summary has
// none). `source` is the configuration file the run started from.
std::string figure_title(const std::string& source, const nlohmann::json& summary) {
  std::string name = source.substr(source.find_last_of('/') + 1);
  if (name.size() > 5 && name.substr(name.size() - 5) == ".toml") name.resize(name.size() - 5);
  const std::string method = summary.value("method", std::string("run"));
  std::string title =
      fmt::format("{}{}, seed {}", name.empty() || name == method ? "" : name + ": ", method,
                  summary.value("seed", 0));
  if (summary.contains("steps") && summary["steps"].is_number_integer() &&
      summary.contains("time") && summary["time"].is_number()) {
    title += ", " + describe_run_length(summary["steps"].get<int64_t>(),
                                        summary["time"].get<double>(), figure_clock(summary));
  }
  return title;
}

// The summary's target losses, and in `target_on` what they are checked on.
std::vector<double> figure_targets(const nlohmann::json& summary, std::string& target_on) {
  std::vector<double> targets;
  for (const nlohmann::json& t : summary.value("targets", nlohmann::json::array())) {
    targets.push_back(t["loss"].get<double>());
    target_on = t.value("on", target_on);
  }
  return targets;
}

// target.csv (Recorder::target_csv) when the targets are judged on F; otherwise an earlier run's is
// removed.
void write_target_csv(const RunFolder& folder, const Recorder& recorder) {
  const std::string text = recorder.target_csv();
  if (text.empty()) {
    folder.remove("target.csv");
  } else {
    folder.write("target.csv", text);
  }
}

// Writes the run's final files into its folder, each replaced atomically: the rest of log.csv,
// evals.csv, trace.csv, model.bin when `model` is given (the final x as raw native-endian
// doubles; else an earlier one is removed), summary.json, and the figure loss.{gp,png,svg}
// (plot.h; gnuplot draws it while summary.json and model.bin are written). config.toml was
// written when the folder was created. summary.json comes after the data it describes.
void write_outputs(const RunFolder& folder, Recorder& recorder, const std::string& source,
                   const nlohmann::json& summary, const Vec* model) {
  recorder.flush_log();
  folder.write("evals.csv", recorder.evals_csv());
  folder.write("trace.csv", recorder.trace_csv());
  write_target_csv(folder, recorder);
  // The run's figure (plot.h) reads evals.csv and trace.csv, never the full log.csv.
  std::string target_on = "train";
  const std::vector<double> targets = figure_targets(summary, target_on);
  RunFigureJob figure(folder.dir(), figure_title(source, summary), targets, target_on,
                      figure_clock(summary));
  if (model) {
    folder.write("model.bin",
                 std::string_view(reinterpret_cast<const char*>(model->data()),
                                  sizeof(double) * static_cast<size_t>(model->size())));
  } else {
    folder.remove("model.bin");  // a stale model of an earlier run would mislead
  }
  folder.write("summary.json", summary_text(summary));
  figure.finish();
}

// While the run goes on (Recorder::set_snapshot_listener; log.csv is flushed): evals.csv,
// trace.csv, then summary.json with "status": "running".
void write_snapshot(const RunFolder& folder, const Recorder& recorder, nlohmann::json summary) {
  folder.write("evals.csv", recorder.evals_csv());
  folder.write("trace.csv", recorder.trace_csv());
  write_target_csv(folder, recorder);
  summary["status"] = "running";
  folder.write("summary.json", summary_text(summary));
}

// PACER_STREAM_INTERVAL_S (seconds >= 0, default 2): how often a streaming run flushes log.csv
// at the latest, and rewrites summary.json at an evaluation at the most.
double stream_interval() {
  const char* text = std::getenv("PACER_STREAM_INTERVAL_S");
  if (!text || !*text) return 2;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds >= 0) || !std::isfinite(seconds)) {
    fail("PACER_STREAM_INTERVAL_S = '{}': expected a number of seconds >= 0", text);
  }
  return seconds;
}

}  // namespace

namespace {

// Creates the run's folder (RunFolder::create: the earlier run there is replaced as a whole)
// with config.toml, log.csv's header and `summary` saying "running", and sends log.csv's rows to
// it from now on.
RunFolder start_outputs(const std::string& dir, const Config& config, nlohmann::json summary,
                        Recorder& recorder, JobLog* jobs) {
  summary["status"] = "running";
  RunFolder::Files files = {{"config.toml", config.to_toml()},
                            {"log.csv", std::string(Recorder::log_header())},
                            {"summary.json", summary_text(summary)}};
  if (jobs) files.emplace_back("jobs.csv", std::string(JobLog::header()));
  RunFolder folder = RunFolder::create(dir, files);
  recorder.stream_log(folder.path("log.csv"), stream_interval());
  if (jobs) jobs->stream(folder.path("jobs.csv"), stream_interval());
  return folder;
}

// After the run failed with `error`: writes its outputs with "status": "error" and the message.
// Throws an Error saying both when that fails too.
void write_error_outputs(const RunFolder& folder, Recorder& recorder, const std::string& source,
                         nlohmann::json summary, const std::string& error) {
  summary["status"] = "error";
  summary["error"] = error;
  try {
    write_outputs(folder, recorder, source, summary, nullptr);
  } catch (const Error& also) {
    fail("{}; and the outputs could not be written: {}", error, also.what());
  }
}

// The run's stateful components, in the order a checkpoint visits them, saving and loading alike.
struct RunState {
  TimingModel& timing;
  EngineRun& engine;
  Trainer& trainer;
  TrainingMaster& master;
  Recorder& recorder;
  JobLog* jobs;  // null: no jobs.csv

  void checkpoint(StateArchive& a) {
    a.section("run");
    timing.checkpoint(a);
    engine.checkpoint(a);
    trainer.checkpoint(a);
    master.checkpoint(a);
    recorder.checkpoint(a);
    if (jobs) jobs->checkpoint(a);
  }
};

// Writes <out>/checkpoint.bin whenever the policy says one is due (engine.h, CheckpointHook).
class Checkpointer : public CheckpointHook {
 public:
  // `header` gives the configuration, its source and the changes of earlier resumes.
  Checkpointer(CheckpointPolicy policy, std::string path, CheckpointHeader header, RunState state)
      : policy_(policy),
        path_(std::move(path)),
        header_(std::move(header)),
        state_(state),
        last_step_(state.trainer.steps()),
        last_wall_(std::chrono::steady_clock::now()) {}

  bool due() override {
    const int64_t step = state_.trainer.steps();
    if (step == last_step_) return false;  // nothing new since the last one
    if (policy_.every_steps > 0 && step >= last_step_ + policy_.every_steps) return true;
    // The clock is read every 64th quiet point only: the simulator has millions per second.
    if (policy_.every_s > 0 && ++calls_ % 64 == 0) {
      const std::chrono::duration<double> since = std::chrono::steady_clock::now() - last_wall_;
      return since.count() >= policy_.every_s;
    }
    return false;
  }

  void write() override {
    StateArchive a = StateArchive::for_saving();
    state_.checkpoint(a);
    header_.pacer_version = PACER_VERSION;
    header_.step = state_.trainer.steps();
    header_.time = state_.engine.end_time();
    write_checkpoint(path_, header_, a.bytes());
    last_step_ = state_.trainer.steps();
    last_wall_ = std::chrono::steady_clock::now();
  }

 private:
  CheckpointPolicy policy_;
  std::string path_;
  CheckpointHeader header_;
  RunState state_;
  int64_t last_step_;
  std::chrono::steady_clock::time_point last_wall_;
  uint64_t calls_ = 0;
};

// The configuration `saved_toml` (a checkpoint's or config.toml) checked against `config`'s: only
// changes that extend the run may differ (checkpoint.h, change_extends_run), or checkpoint.* keys.
// Returns the changes that extend it (checkpoint.* changes nothing of the run's results and is not
// recorded). `path`: the file the saved configuration is from, for the error.
std::vector<ConfigChange> check_resumable(const std::string& saved_toml, const Config& config,
                                          const std::string& path) {
  std::vector<ConfigChange> changes;
  std::vector<std::string> refused;
  for (ConfigChange& change : config_changes(saved_toml, config.to_toml())) {
    if (is_checkpoint_key(change.key)) {
      log_info("resuming with {}", change.describe());
      continue;
    }
    if (!change_extends_run(change)) refused.push_back(change.describe());
    changes.push_back(std::move(change));
  }
  if (!refused.empty()) {
    fail(
        "{}: cannot resume with a changed configuration ({}); only raising max_steps, "
        "max_time or max_work and changing target.loss, target.hold, target.stop or "
        "checkpoint.* are allowed on resume",
        path, fmt::join(refused, "; "));
  }
  for (const ConfigChange& change : changes) log_info("resuming with {}", change.describe());
  return changes;
}

// RunOptions::resume: the checkpoint in `dir`, or, when the run there was stopped before its
// first one, nullopt (the run then starts again from step 0 in `dir`, its config.toml's changes
// checked as a checkpoint's would be). Throws Error for a damaged checkpoint.
std::optional<Checkpoint> checkpoint_to_resume(const std::string& dir, const Config& config) {
  const std::string path = dir + "/checkpoint.bin";
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    Checkpoint saved = read_checkpoint(path);
    log_info("{}: resuming from step {} (its checkpoint.bin)", dir, saved.header.step);
    return saved;
  }
  const std::string stored = dir + "/config.toml";
  check_resumable(read_file(stored), config, stored);
  log_info(
      "{}: no checkpoint (the run was stopped before its first one): starting it again from step "
      "0, which on the simulator gives the uninterrupted run's outputs",
      dir);
  return std::nullopt;
}

// Where a run starts: what an earlier run in out_dir left (RunOptions::continue_earlier,
// earlier_run.h), the checkpoint to resume from (RunOptions::resume; none: step 0 again), or
// step 0 (kFresh, no note).
EarlierRun starting_point(const RunOptions& options, const Config& config) {
  if (options.continue_earlier && !options.out_dir.empty()) {
    return find_earlier_run(options.out_dir, config.to_toml());
  }
  EarlierRun start;
  if (options.resume) {
    start.checkpoint = checkpoint_to_resume(options.out_dir, config);
    if (start.checkpoint) start.kind = EarlierRun::Kind::kResumable;
  }
  return start;
}

// Continues the run in `dir` (RunFolder::reopen) from `saved`: every component's state loaded,
// log.csv cut back to the checkpoint's last row and continued, then config.toml rewritten (with
// an extended run's keys; only once the checkpoint has loaded, so a refused one changes nothing).
RunFolder resume_outputs(const std::string& dir, const Config& config, Checkpoint& saved,
                         const std::string& checkpoint_path, RunState& state) {
  RunFolder folder = RunFolder::reopen(dir);
  state.recorder.stream_log(folder.path("log.csv"), stream_interval());
  if (state.jobs) state.jobs->stream(folder.path("jobs.csv"), stream_interval());
  StateArchive archive = StateArchive::for_loading(std::move(saved.state), checkpoint_path);
  state.checkpoint(archive);
  archive.expect_end();
  state.recorder.continue_log();
  if (state.jobs) state.jobs->continue_log();
  folder.write("config.toml", config.to_toml());
  return folder;
}

// summary.json's resumed_with_changes: the earlier resumes' (`earlier`, a JSON array's text or
// empty) and this one's.
nlohmann::json changes_json(const std::string& earlier, const std::vector<ConfigChange>& changes) {
  nlohmann::json out = earlier.empty() ? nlohmann::json::array() : nlohmann::json::parse(earlier);
  for (const ConfigChange& c : changes) {
    out.push_back({{"key", c.key},
                   {"before", c.before ? nlohmann::json(*c.before) : nlohmann::json()},
                   {"after", c.after ? nlohmann::json(*c.after) : nlohmann::json()}});
  }
  return out;
}

// Stops the engine with EndKind::kError when the run leaves by an exception, unless released:
// the engine's teardown on every path, in one place.
class EngineGuard {
 public:
  explicit EngineGuard(EngineRun& engine) : engine_(engine) {}
  ~EngineGuard() {
    if (armed_) engine_.stop(armed_end_);
  }
  EngineGuard(const EngineGuard&) = delete;
  EngineGuard& operator=(const EngineGuard&) = delete;
  // The run has stopped the engine itself (or handed the stop to someone else).
  void release() { armed_ = false; }
  // From now on an exception stops the engine as `end` (an interrupted run: kInterrupted).
  void on_exception(EndKind end) { armed_end_ = end; }

 private:
  EngineRun& engine_;
  bool armed_ = true;
  EndKind armed_end_ = EndKind::kError;
};

// One run, in phases (run_experiment): each phase a member function, the run's objects members,
// declared in the order they are built (and so destroyed in reverse: the engine guard after the
// master and the recorder, as the engine outlives them). The snapshot and summary callbacks
// capture `this`: a session is neither copied nor moved.
class RunSession {
 public:
  // Phase 1, build: reads and checks the configuration and builds the problem, the engine and
  // the method (Errors name the key); reads the checkpoint a resumed run starts from.
  RunSession(const Config& run_config, const RunOptions& options)
      : options_(options), s_(build_run(run_config, options.problem)), config_(run_config) {
    // The configuration this run used: without the file keys that only a component an override
    // replaced reads (Config::drop_replaced_keys). It is what config.toml records and what the
    // MPI workers receive.
    const std::vector<Config::Switch> switches = config_.drop_replaced_keys();
    if (options.reject_unknown_keys) {
      config_.reject_unread_keys();
      for (const Config::Switch& change : switches) {
        log_info("{}", change.describe(config_.source()));
      }
    }
    if (options.dry_run) return;
    // A resumed run: its checkpoint, read and checked before anything starts.
    start_ = starting_point(options, config_);
    source_ = config_.source();
    if (saved()) {
      changes_ =
          changes_json(saved()->header.changes_json,
                       check_resumable(saved()->header.config_toml, config_, checkpoint_path()));
      source_ = saved()->header.config_source;
    }
  }
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  // The outcome of a run that does not run: a dry run, or one that finished earlier
  // (RunOptions::continue_earlier).
  std::optional<RunOutcome> outcome_without_running() {
    if (options_.dry_run) {
      return RunOutcome{"validated", dry_run_summary(s_), "", EarlierRun::Kind::kFresh};
    }
    if (start_.kind != EarlierRun::Kind::kFinished) return std::nullopt;
    const std::string status = start_.summary["status"].get<std::string>();
    return RunOutcome{status, std::move(start_.summary), std::move(start_.note), start_.kind};
  }

  // Phase 2, start: the engine's part of the run (for MPI: the worker ranks build theirs), the
  // initial model, the recorder, the trainer and the method's master, and the job log's tap.
  void start() {
    engine_ = start_engine(config_, s_);
    guard_.emplace(*engine_);
    const Objective& objective = *s_.problem->objective;
    Vec x0;
    Rng init_rng(s_.seed, "init");
    objective.model().initialize(x0, init_rng);
    std::vector<double> tilde = s_.method->synchronous() || !s_.engine->timing_describes_run()
                                    ? std::vector<double>{}
                                    : frequency_weights(*s_.timing);
    std::unique_ptr<TargetLossEstimator> target_loss;
    if (s_.rules.target_on_full_loss && !s_.rules.targets.empty()) {
      target_loss = std::make_unique<TargetLossEstimator>(objective, s_.rules.target_sample);
    }
    recorder_.emplace(s_.rules, objective, s_.problem->data.test, tilde,
                      options_.label.empty() ? s_.method->name() : options_.label,
                      std::move(target_loss));
    recorder_->set_threads(s_.threads);
    if (engine_->wall_clock()) {
      recorder_->set_evaluation_listener(
          [this](double seconds) { engine_->exclude_time(seconds); });
    }
    trainer_.emplace(x0, Optimizer(s_.optimizer), *recorder_);
    master_ = s_.method->make_master(*trainer_);
    // jobs.csv (job_log.h): the engine drives the master through the job log's tap.
    if (s_.jobs.enabled && !options_.out_dir.empty()) {
      jobs_.emplace(s_.workers, s_.jobs);
      recorder_->set_unused_reply_listener([this](int worker) { jobs_->note_unused(worker); });
      tapped_ = jobs_->tap(*master_);
    }
    state_.emplace(
        RunState{*s_.timing, *engine_, *trainer_, *master_, *recorder_, jobs_ ? &*jobs_ : nullptr});
  }

  // Phase 3, outputs: the run's folder, replaced only now that everything is built and checked
  // (a run that cannot start leaves an earlier run's folder as it was), and its snapshots.
  void open_outputs() {
    if (options_.out_dir.empty()) return;
    if (saved()) {
      folder_ = resume_outputs(options_.out_dir, config_, *saved(), checkpoint_path(), *state_);
    } else {
      nlohmann::json setup = describe_setup(s_, *engine_);
      recorder_->summarize(setup);
      folder_ =
          start_outputs(options_.out_dir, config_, std::move(setup), *recorder_, state_->jobs);
    }
    recorder_->set_snapshot_listener([this] { snapshot(); });
    // A resumed run's folder describes the checkpoint from the start (not the later moment the
    // earlier attempt had reached).
    if (saved()) snapshot();
  }

  // Phase 4, checkpoints: the engine calls the checkpointer at its quiet points.
  void attach_checkpoints() {
    if (!folder_ || !s_.checkpoints.enabled()) return;
    CheckpointHeader header;
    header.config_toml = config_.to_toml();
    header.config_source = source_;
    header.changes_json = changes_.empty() ? "" : changes_.dump();
    checkpointer_.emplace(s_.checkpoints, checkpoint_path(), std::move(header), *state_);
    engine_->set_checkpoint_hook(&*checkpointer_);
  }

  // Phase 5, drive: the engine runs the master to its end; returns whether it was interrupted.
  // An interrupted run writes one last checkpoint (the workers are stopped afterwards, by
  // finish()); a finished one stops the engine. On an Error the engine is stopped and what the
  // run produced up to the error is kept (DESIGN.md section 7), then the Error is thrown again.
  bool drive() {
    try {
      const bool interrupted = engine_->run(tapped_ ? *tapped_ : *master_);
      if (interrupted) {
        write_last_checkpoint();
        guard_->on_exception(EndKind::kInterrupted);
      } else {
        guard_->release();
        engine_->stop(EndKind::kOk);
      }
      return interrupted;
    } catch (const Error& e) {
      guard_->release();
      engine_->stop(EndKind::kError);
      if (!folder_) throw;
      keep_outputs_after(e);
      if (!recorder_->recorded()) throw;
      fail("{}; the log up to that point is in {}", e.what(), options_.out_dir);
    }
  }

  // Phase 6, finish: the final evaluation (skipped after an interrupt: it may take long, and the
  // process may be killed), the outputs and the timeline; an interrupted run's engine is stopped
  // last.
  RunOutcome finish(bool interrupted) {
    if (!interrupted) recorder_->finish(trainer_->x(), engine_->end_time());
    if (jobs_) jobs_->finish(engine_->end_time());
    nlohmann::json summary = describe_run();
    if (interrupted) summary["status"] = "interrupted";
    if (folder_) {
      write_outputs(*folder_, *recorder_, source_, summary,
                    s_.save_model ? &trainer_->x() : nullptr);
      if (jobs_ && options_.timeline_figure) draw_timeline();
    }
    if (interrupted) {
      guard_->release();
      engine_->stop(EndKind::kInterrupted);
    }
    return RunOutcome{interrupted ? "interrupted" : recorder_->status(), std::move(summary),
                      std::move(start_.note), start_.kind};
  }

 private:
  std::optional<Checkpoint>& saved() { return start_.checkpoint; }
  std::string checkpoint_path() const { return options_.out_dir + "/checkpoint.bin"; }

  // summary.json as it stands.
  nlohmann::json describe_run() {
    nlohmann::json summary = describe_setup(s_, *engine_);
    recorder_->summarize(summary);
    nlohmann::json method_summary;
    master_->summarize(method_summary);
    summary["method_stats"] = method_summary;
    summary["lost_workers"] = master_->lost_workers_json();
    nlohmann::json engine_summary;
    engine_->stats(engine_summary);
    summary["engine_stats"] = engine_summary;
    if (!changes_.empty()) summary["resumed_with_changes"] = changes_;
    if (jobs_) jobs_->summarize(summary["jobs_csv"]);
    return summary;
  }

  // On a wall clock the snapshot's time is taken out of the run, as an evaluation's is. Crash
  // point "outputs.snapshot" (core/crash_point.h): once per snapshot, the files written, so a
  // test can kill a run in the middle at a moment that depends on nothing but the run.
  void snapshot() {
    const auto begin = std::chrono::steady_clock::now();
    write_snapshot(*folder_, *recorder_, describe_run());
    crash_point("outputs.snapshot");
    if (engine_->wall_clock()) {
      engine_->exclude_time(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    }
  }

  // An interrupted run's last checkpoint, where the engine can take one now: the interruption
  // then loses nothing.
  void write_last_checkpoint() {
    if (!checkpointer_ || !engine_->can_checkpoint_now()) return;
    try {
      checkpointer_->write();
    } catch (const Error& e) {
      log_warning("{} (the last checkpoint written before stays the one to resume from)", e.what());
    }
  }

  // The outputs of a run that failed with `e`, with its log up to the error.
  void keep_outputs_after(const Error& e) {
    if (jobs_) {
      try {
        jobs_->finish(engine_->end_time());
      } catch (const Error& also) {
        log_warning("{}", also.what());
      }
    }
    write_error_outputs(*folder_, *recorder_, source_, describe_run(), e.what());
  }

  // A figure is a convenience (plot.h): one that cannot be drawn is a warning.
  void draw_timeline() {
    try {
      write_timeline(
          folder_->dir(), folder_->path("jobs.csv"),
          TimelineOptions{.window = s_.timeline, .title = timeline_run_title(folder_->dir())});
    } catch (const Error& e) {
      log_warning("the timeline figure was not drawn: {}", e.what());
    }
  }

  const RunOptions& options_;
  RunSetup s_;
  Config config_;
  EarlierRun start_;
  std::string source_;  // the file the run started from (figure titles)
  nlohmann::json changes_ = nlohmann::json::array();  // summary.json's resumed_with_changes
  std::unique_ptr<EngineRun> engine_;
  std::optional<EngineGuard> guard_;
  std::optional<Recorder> recorder_;
  std::optional<Trainer> trainer_;
  std::unique_ptr<TrainingMaster> master_;
  std::optional<JobLog> jobs_;
  std::unique_ptr<Master> tapped_;  // jobs_'s tap around master_, when jobs.csv is written
  std::optional<RunState> state_;
  std::optional<RunFolder> folder_;
  std::optional<Checkpointer> checkpointer_;
};

}  // namespace

RunOutcome run_experiment(const Config& run_config, const RunOptions& options) {
  RunSession session(run_config, options);
  if (std::optional<RunOutcome> outcome = session.outcome_without_running()) return *outcome;
  session.start();
  session.open_outputs();
  session.attach_checkpoints();
  const bool interrupted = session.drive();
  return session.finish(interrupted);
}

std::string profile_jobs(const Config& config, int jobs) {
  if (jobs < 1) fail("--jobs {}: expected at least 1 job per worker", jobs);
  RunSetup s = build_run(config, nullptr);
  Vec x;
  Rng init_rng(s.seed, "init");
  s.problem->objective->model().initialize(x, init_rng);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < s.workers; ++i) workers.push_back(s.method->make_worker(i));
  std::string csv = "worker,duration\n";
  WorkerOutput out;
  for (int k = 0; k < jobs; ++k) {
    for (int i = 0; i < s.workers; ++i) {
      const Job job{k};
      const auto begin = std::chrono::steady_clock::now();
      const double units = workers[i]->units(job);
      workers[i]->compute(job, x, out);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      // A clock tick of 0 would be no duration: the trace needs positive ones.
      const double per_unit = std::max(seconds, 1e-9) / std::max(units, 1e-12);
      fmt::format_to(std::back_inserter(csv), "{},{}\n", i, per_unit);
    }
  }
  return csv;
}

int serve_job_worker(JobProcesses& job) {
  // Each run's worker half, from the configuration rank 0 sent: the same problem and method.
  const WorkerProcessBuilder build = [](const Config& config, int index) {
    auto setup = std::make_shared<RunSetup>(build_run(config, nullptr));
    if (index >= setup->workers) {
      fail("there is no worker {} in this run: workers = {}", index, setup->workers);
    }
    WorkerProcess process;
    process.worker = setup->method->make_worker(index);
    process.timing = setup->timing.get();
    process.engine = setup->engine.get();
    process.seed = setup->seed;
    process.dim = setup->problem->objective->dim();
    process.workers = setup->workers;
    process.owner = std::move(setup);
    return process;
  };
  return job.serve(build);
}

}  // namespace pacer
