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
#include "pacer/run/checkpoint.h"
#include "pacer/report/job_log.h"
#include "pacer/report/plot.h"
#include "pacer/run/recorder.h"
#include "pacer/report/timeline.h"
#include "pacer/method/method.h"
#include "pacer/model/factory.h"
#include "pacer/timing/timing_model.h"

#ifdef PACER_HAVE_TORCH
#include "pacer/model/torch_models.h"
#endif

namespace pacer {
namespace {

int read_workers(const Config& config) {
  int64_t n = config.get_int("workers", 12);
  if (n <= 0 || n > 100000)
    config.fail_key("workers", "a positive integer (the number n of workers)");
  return static_cast<int>(n);
}

// Each worker's gradient rate 1/τ_i at its modelled mean unit time τ_i; empty when the timing
// model does not state every τ_i (> 0).
std::vector<double> gradient_rates(const TimingModel& timing) {
  std::vector<double> rates(timing.num_workers());
  for (int i = 0; i < timing.num_workers(); ++i) {
    std::optional<double> tau = timing.mean_unit_time(i);
    if (!tau || !(*tau > 0)) return {};
    rates[i] = 1.0 / *tau;
  }
  return rates;
}

// Weights w_i ∝ 1/τ_i of the objective F̃ that vanilla ASGD minimises (DESIGN.md section 3.2).
std::vector<double> frequency_weights(const TimingModel& timing) {
  std::vector<double> w = gradient_rates(timing);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& v : w) v /= total;
  return w;
}

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

uint64_t read_seed(const Config& config) {
  int64_t seed = config.get_int("seed", 1);
  if (seed < 0) config.fail_key("seed", "an integer >= 0");
  return static_cast<uint64_t>(seed);
}

namespace {

double dataset_bytes(const Dataset& data) { return 8.0 * data.rows() * (data.cols() + 1.0); }

// Refuses (core/memory.h), before the partitions are copied and any workspace is made, a run
// whose estimated memory exceeds the limit. The estimate is a lower bound of what a simulated run
// holds in its one process: the data, the partitions' copy of the training rows, one scratch per
// worker and one for the evaluation (a model workspace for the largest partition, a minibatch, a
// gradient), the test evaluation's workspace of 1024 rows, and a parameter vector per worker (its
// reply) plus three for the master (x, the update, the evaluation's gradient). Methods keep more
// (measured: 14.6 vectors for DGD with 4 workers where this counts 12; caches and tables for
// coded and asynchronous methods), so a run refused here cannot fit. An MPI rank holds the data
// and one worker's part, but ranks sharing a host add up, so the simulator's estimate is kept
// for both engines.
void check_run_memory(const Config& config, const Problem& problem, const Partition& partition,
                      const Model& model, int batch) {
  size_t largest = 0;
  for (const auto& part : partition) largest = std::max(largest, part.size());
  const int max_rows = static_cast<int>(largest);
  const Dataset& train = problem.data.train;
  const double params = static_cast<double>(model.num_params());
  const double workspace = model.workspace_bytes(max_rows);
  const double scratch = workspace + 8.0 * std::min(batch, max_rows) * (train.cols() + 1.0) +
                         8.0 * params + 4.0 * max_rows;
  const double vectors = 8.0 * params * (problem.workers + 3.0);
  // The data, and the partitions' copy of the training rows.
  const double data = 2 * dataset_bytes(train) + dataset_bytes(problem.data.test);
  const double test = problem.data.test.rows() > 0 ? model.workspace_bytes(1024) : 0.0;
  const double total = data + (problem.workers + 1) * scratch + test + vectors;
  // model.hidden is what makes an MLP's workspaces large (make_mlp has read it).
  const std::string chosen = model.name() == "mlp"
                                 ? fmt::format("model.hidden = {} (model.name = \"mlp\")",
                                               config.get_int("model.hidden", 128))
                                 : fmt::format("model.name = \"{}\"", model.name());
  MemoryLimit::from_config(config).check(
      total, fmt::format("{} with {:.0f} parameters, workers = {} and partitions of up to {} rows "
                         "(data and partition copies {}, {} workspaces of {}, {} parameter "
                         "vectors of {})",
                         chosen, params, problem.workers, max_rows, format_bytes(data),
                         problem.workers + 1, format_bytes(workspace), problem.workers + 3,
                         format_bytes(8 * params)));
}

}  // namespace

Problem build_problem(const Config& config, uint64_t seed) {
  Problem problem;
  problem.workers = read_workers(config);
  int64_t data_seed = config.get_int("data.seed", 1);
  if (data_seed < 0) config.fail_key("data.seed", "an integer >= 0");
  problem.data = load_data(config, static_cast<uint64_t>(data_seed));
  std::string scheme =
      config.get_choice("partition.scheme", "iid", {"iid", "contiguous", "by_class", "dirichlet"});
  double alpha = scheme == "dirichlet" ? config.get_double("partition.alpha", 0.5) : 0.0;
  if (scheme == "dirichlet" && !(alpha > 0))
    config.fail_key("partition.alpha", "a positive number");
  if (problem.data.train.rows() < problem.workers) {
    fail("{}: the training set has {} rows, fewer than workers = {}", problem.data.train.name,
         problem.data.train.rows(), problem.workers);
  }
  Rng partition_rng(seed, "partition");
  Partition partition =
      make_partition(scheme, problem.data.train, problem.workers, alpha, partition_rng);
  int64_t batch = config.get_int("training.batch", 0);
  if (batch < 0 || batch > std::numeric_limits<int>::max()) {
    config.fail_key("training.batch", "an integer >= 0 (0 = whole partition)");
  }
#ifdef PACER_HAVE_TORCH
  register_torch_models();  // once per process (idempotent)
#endif
  std::shared_ptr<const Model> model = make_model(config, problem.data.train);
  check_run_memory(config, problem, partition, *model, static_cast<int>(batch));
  problem.objective =
      std::make_shared<Objective>(model, problem.data.train, partition, static_cast<int>(batch));
  return problem;
}

namespace {

// Everything a run builds from its configuration. Rank 0 of an MPI job (and the simulator's
// single process) uses all of it; an MPI worker rank builds the same and uses its worker half.
struct RunSetup {
  uint64_t seed = 0;
  std::unique_ptr<Problem> own_problem;
  const Problem* problem = nullptr;
  int workers = 0;
  std::unique_ptr<TimingModel> timing;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Method> method;
  StopRules rules;
  OptimizerOptions optimizer;
  bool save_model = false;
  CheckpointPolicy checkpoints;
  JobLogOptions jobs;
  TimelineWindow timeline;
  int threads = 1;  // engine.threads: the recorder's evaluations (every engine)
};

RunSetup build_run(const Config& config, const Problem* shared) {
  RunSetup s;
  s.seed = read_seed(config);
  if (shared) {
    s.problem = shared;
    read_workers(config);  // the keys were read when the shared problem was built
  } else {
    s.own_problem = std::make_unique<Problem>(build_problem(config, s.seed));
    s.problem = s.own_problem.get();
  }
  s.workers = s.problem->workers;
  s.timing = make_timing_model(config, s.workers, s.seed);
  s.engine = make_engine(config, s.workers);
  MethodSetup method_setup{s.problem->objective,
                           s.engine->timing_describes_run() ? s.timing.get() : nullptr, s.workers,
                           s.seed};
  s.method = make_method(config, method_setup);
  s.rules = read_stop_rules(config, full_loss_reason(config, s.method->synchronous()));
  s.optimizer = read_optimizer_options(config, s.rules.max_steps);
  s.save_model = config.get_bool("save_model", false);
  s.checkpoints = read_checkpoint_policy(config);
  s.jobs = read_job_log_options(config);
  s.threads = read_engine_threads(config);
  s.timeline = read_timeline_window(config);
  return s;
}

// The engine's part of the run `s` builds, set up (for MPI: the worker ranks have the
// configuration and built their halves).
std::unique_ptr<EngineRun> start_engine(const Config& config, const RunSetup& s) {
  return s.engine->start(EngineInputs{.config = config,
                                      .timing = *s.timing,
                                      .method = *s.method,
                                      .workers = s.workers,
                                      .dim = s.problem->objective->dim(),
                                      .seed = s.seed,
                                      .max_time = s.rules.max_time});
}

// summary.json's description of the run's setup: version, seed, method, workers, model, data,
// timing model, engine, and the clock its times are on (the started engine's own answer).
nlohmann::json describe_setup(const RunSetup& s, const EngineRun& engine) {
  const Objective& objective = *s.problem->objective;
  nlohmann::json summary;
  summary["pacer_version"] = PACER_VERSION;
  summary["pacer_build"] = pacer_build_id();  // earlier_run.h: which runs a comparison may reuse
  summary["seed"] = s.seed;
  summary["method"] = s.method->name();
  summary["workers"] = s.workers;
  summary["model"] = objective.model().name();
  summary["parameters"] = objective.dim();
  summary["data"] = s.problem->data.train.name;
  summary["timing"] = s.timing->name();
  if (const std::string note = s.timing->describe(); !note.empty()) summary["timing_note"] = note;
  summary["engine"] = s.engine->name();
  summary["clock"] = clock_name(engine.wall_clock() ? Clock::kWall : Clock::kSimulated);
  summary["synchronous"] = s.method->synchronous();
  return summary;
}

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

// A dry run's summary (RunOptions::dry_run): what the run would do, for pacer compare's plan.
nlohmann::json dry_run_summary(const RunSetup& s) {
  nlohmann::json probe;
  probe["synchronous"] = s.method->synchronous();
  // Gradients per second that all workers deliver at their modelled mean speeds (Σ 1/τ_i), when
  // the timing model states every τ_i: pacer compare's default time budget.
  const std::vector<double> rates = gradient_rates(*s.timing);
  probe["gradients_per_second"] =
      rates.empty() ? nlohmann::json()
                    : nlohmann::json(std::accumulate(rates.begin(), rates.end(), 0.0));
  probe["max_steps"] = s.rules.max_steps;
  probe["max_time"] = s.rules.max_time;
  probe["targets"] = s.rules.targets;
  probe["target_on"] = s.rules.target_on_full_loss ? "full" : "train";
  probe["target_hold"] = s.rules.hold;
  probe["stop_at_targets"] = s.rules.stop_at_targets;
  return probe;
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

}  // namespace

// One run in phases (build, resume point, engine, outputs, checkpoints, drive, finish): the objects
// live on this frame because the snapshot and summary callbacks share them.
// Long: the run's objects are shared by its callbacks; splitting needs a RunParts type (#25).
RunOutcome run_experiment(const Config& run_config, const RunOptions& options) {
  RunSetup s = build_run(run_config, options.problem);
  // The configuration this run used: without the file keys that only a component an override
  // replaced reads (Config::drop_replaced_keys). It is what config.toml records and what the MPI
  // workers receive.
  Config config = run_config;
  const std::vector<Config::Switch> switches = config.drop_replaced_keys();
  if (options.reject_unknown_keys) {
    config.reject_unread_keys();
    for (const Config::Switch& change : switches) log_info("{}", change.describe(config.source()));
  }
  if (options.dry_run) {
    return RunOutcome{"validated", dry_run_summary(s), "", EarlierRun::Kind::kFresh};
  }
  // A resumed run: its checkpoint, read and checked before anything starts; a finished one
  // (RunOptions::continue_earlier) is not run again.
  EarlierRun start = starting_point(options, config);
  if (start.kind == EarlierRun::Kind::kFinished) {
    const std::string status = start.summary["status"].get<std::string>();
    return RunOutcome{status, std::move(start.summary), std::move(start.note), start.kind};
  }
  std::optional<Checkpoint>& saved = start.checkpoint;
  const std::string checkpoint_path = options.out_dir + "/checkpoint.bin";
  // The file the run started from (figure titles), and summary.json's resumed_with_changes.
  std::string source = config.source();
  nlohmann::json changes = nlohmann::json::array();
  if (saved) {
    changes = changes_json(saved->header.changes_json,
                           check_resumable(saved->header.config_toml, config, checkpoint_path));
    source = saved->header.config_source;
  }

  std::unique_ptr<EngineRun> engine = start_engine(config, s);
  EngineGuard guard(*engine);
  const Objective& objective = *s.problem->objective;
  Vec x0;
  Rng init_rng(s.seed, "init");
  objective.model().initialize(x0, init_rng);

  std::vector<double> tilde = s.method->synchronous() || !s.engine->timing_describes_run()
                                  ? std::vector<double>{}
                                  : frequency_weights(*s.timing);
  std::unique_ptr<TargetLossEstimator> target_loss;
  if (s.rules.target_on_full_loss && !s.rules.targets.empty()) {
    target_loss = std::make_unique<TargetLossEstimator>(objective, s.rules.target_sample);
  }
  Recorder recorder(s.rules, objective, s.problem->data.test, tilde,
                    options.label.empty() ? s.method->name() : options.label,
                    std::move(target_loss));
  recorder.set_threads(s.threads);
  if (engine->wall_clock()) {
    recorder.set_evaluation_listener([&engine](double seconds) { engine->exclude_time(seconds); });
  }
  Trainer trainer(x0, Optimizer(s.optimizer), recorder);
  std::unique_ptr<TrainingMaster> master = s.method->make_master(trainer);
  // jobs.csv (job_log.h): the engine drives the master through the job log's tap.
  std::optional<JobLog> jobs;
  if (s.jobs.enabled && !options.out_dir.empty()) {
    jobs.emplace(s.workers, s.jobs);
    recorder.set_unused_reply_listener([&jobs](int worker) { jobs->note_unused(worker); });
  }
  const std::unique_ptr<Master> tapped = jobs ? jobs->tap(*master) : nullptr;
  Master& driven = tapped ? *tapped : *master;

  auto describe_run = [&] {
    nlohmann::json summary = describe_setup(s, *engine);
    recorder.summarize(summary);
    nlohmann::json method_summary;
    master->summarize(method_summary);
    summary["method_stats"] = method_summary;
    summary["lost_workers"] = master->lost_workers_json();
    nlohmann::json engine_summary;
    engine->stats(engine_summary);
    summary["engine_stats"] = engine_summary;
    if (!changes.empty()) summary["resumed_with_changes"] = changes;
    if (jobs) jobs->summarize(summary["jobs_csv"]);
    return summary;
  };

  // The folder is replaced only now that everything is built and checked: a run that cannot
  // start leaves an earlier run's folder as it was.
  std::optional<RunFolder> folder;
  RunState state{*s.timing, *engine, trainer, *master, recorder, jobs ? &*jobs : nullptr};
  if (!options.out_dir.empty()) {
    if (saved) {
      folder = resume_outputs(options.out_dir, config, *saved, checkpoint_path, state);
    } else {
      nlohmann::json setup = describe_setup(s, *engine);
      recorder.summarize(setup);
      folder = start_outputs(options.out_dir, config, std::move(setup), recorder, state.jobs);
    }
    // On a wall clock the snapshot's time is taken out of the run, as an evaluation's is. Crash
    // point "outputs.snapshot" (core/crash_point.h): once per snapshot, the files written, so a
    // test can kill a run in the middle at a moment that depends on nothing but the run.
    auto snapshot = [&] {
      const auto begin = std::chrono::steady_clock::now();
      write_snapshot(*folder, recorder, describe_run());
      crash_point("outputs.snapshot");
      if (engine->wall_clock()) {
        engine->exclude_time(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
      }
    };
    recorder.set_snapshot_listener(snapshot);
    // A resumed run's folder describes the checkpoint from the start (not the later moment the
    // earlier attempt had reached).
    if (saved) snapshot();
  }
  std::optional<Checkpointer> checkpointer;
  if (folder && s.checkpoints.enabled()) {
    CheckpointHeader header;
    header.config_toml = config.to_toml();
    header.config_source = source;
    header.changes_json = changes.empty() ? "" : changes.dump();
    checkpointer.emplace(s.checkpoints, checkpoint_path, std::move(header), state);
    engine->set_checkpoint_hook(&*checkpointer);
  }

  bool interrupted = false;
  try {
    interrupted = engine->run(driven);
    // An interrupted run writes what it has first: the workers are stopped afterwards. With
    // checkpoints on, that includes one last checkpoint, so the interruption loses nothing.
    if (interrupted && checkpointer && engine->can_checkpoint_now()) {
      try {
        checkpointer->write();
      } catch (const Error& e) {
        log_warning("{} (the last checkpoint written before stays the one to resume from)",
                    e.what());
      }
    }
    if (interrupted) {
      guard.on_exception(EndKind::kInterrupted);
    } else {
      guard.release();
      engine->stop(EndKind::kOk);
    }
  } catch (const Error& e) {
    guard.release();
    engine->stop(EndKind::kError);
    if (!folder) throw;
    // Keep what the run produced up to the error (DESIGN.md section 7).
    if (jobs) {
      try {
        jobs->finish(engine->end_time());
      } catch (const Error& also) {
        log_warning("{}", also.what());
      }
    }
    write_error_outputs(*folder, recorder, source, describe_run(), e.what());
    if (!recorder.recorded()) throw;
    fail("{}; the log up to that point is in {}", e.what(), options.out_dir);
  }
  {
    // An interrupted run skips the final evaluation (it may take long; the process may be
    // killed).
    if (!interrupted) recorder.finish(trainer.x(), engine->end_time());
    if (jobs) jobs->finish(engine->end_time());
    nlohmann::json summary = describe_run();
    if (interrupted) summary["status"] = "interrupted";
    if (folder) {
      write_outputs(*folder, recorder, source, summary, s.save_model ? &trainer.x() : nullptr);
      // A figure is a convenience (plot.h): one that cannot be drawn is a warning.
      if (jobs && options.timeline_figure) {
        try {
          write_timeline(
              folder->dir(), folder->path("jobs.csv"),
              TimelineOptions{.window = s.timeline, .title = timeline_run_title(folder->dir())});
        } catch (const Error& e) {
          log_warning("the timeline figure was not drawn: {}", e.what());
        }
      }
    }
    if (interrupted) {
      guard.release();
      engine->stop(EndKind::kInterrupted);
    }
    return RunOutcome{interrupted ? "interrupted" : recorder.status(), std::move(summary),
                      std::move(start.note), start.kind};
  }
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
