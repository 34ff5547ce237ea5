// Building a run from its configuration (run_setup.h).
#include "run_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "pacer/core/compute_pool.h"
#include "pacer/core/error.h"
#include "pacer/core/log.h"
#include "pacer/core/memory.h"
#include "pacer/data/partition.h"
#include "pacer/data/source.h"
#include "pacer/engine/registry.h"
#include "pacer/method/method.h"
#include "pacer/model/factory.h"
#include "pacer/timing/timing_model.h"

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

// Weights w_i ∝ 1/τ_i of the objective F̃ that vanilla ASGD minimises (DESIGN.md section 3.2).
std::vector<double> frequency_weights(const TimingModel& timing) {
  std::vector<double> w = gradient_rates(timing);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& v : w) v /= total;
  return w;
}

uint64_t read_seed(const Config& config) {
  int64_t seed = config.get_int("seed", 1);
  if (seed < 0) config.fail_key("seed", "an integer >= 0");
  return static_cast<uint64_t>(seed);
}

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
  std::shared_ptr<const Model> model = make_model(config, problem.data.train);
  check_run_memory(config, problem, partition, *model, static_cast<int>(batch));
  problem.objective =
      std::make_shared<Objective>(model, problem.data.train, partition, static_cast<int>(batch));
  return problem;
}

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

}  // namespace pacer
