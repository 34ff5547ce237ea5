#include "pacer/experiment/experiment.h"

#include <fmt/format.h>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/data/partition.h"
#include "pacer/data/source.h"
#include "pacer/engine/sim/simulator.h"
#include "pacer/experiment/recorder.h"
#include "pacer/method/method.h"
#include "pacer/model/factory.h"
#include "pacer/timing/timing_model.h"

namespace pacer {
namespace {

int read_workers(const Config& config) {
  int64_t n = config.get_int("workers", 12);
  if (n <= 0 || n > 100000) config.fail_key("workers", "a positive integer (the number n of workers)");
  return static_cast<int>(n);
}

// Weights w_i ∝ 1/τ_i of the objective F̃ that vanilla ASGD minimises (DESIGN.md section 3.2).
std::vector<double> frequency_weights(const TimingModel& timing) {
  std::vector<double> w(timing.num_workers());
  double total = 0;
  for (int i = 0; i < timing.num_workers(); ++i) {
    std::optional<double> tau = timing.mean_unit_time(i);
    if (!tau || !(*tau > 0)) return {};
    w[i] = 1.0 / *tau;
    total += w[i];
  }
  for (double& v : w) v /= total;
  return w;
}

void write_outputs(const std::string& dir, const Config& config, const std::string& log,
                   const nlohmann::json& summary) {
  make_directories(dir);
  write_file_atomic(dir + "/config.toml", config.to_toml());
  write_file_atomic(dir + "/log.csv", log);
  write_file_atomic(dir + "/summary.json", summary.dump(2) + "\n");
}

}  // namespace

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
  if (scheme == "dirichlet" && !(alpha > 0)) config.fail_key("partition.alpha", "a positive number");
  if (problem.data.train.rows() < problem.workers) {
    fail("{}: the training set has {} rows, fewer than workers = {}", problem.data.train.name,
         problem.data.train.rows(), problem.workers);
  }
  Rng partition_rng(seed, "partition");
  Partition partition =
      make_partition(scheme, problem.data.train, problem.workers, alpha, partition_rng);
  int64_t batch = config.get_int("training.batch", 0);
  if (batch < 0) config.fail_key("training.batch", "an integer >= 0 (0 = whole partition)");
  std::shared_ptr<const Model> model = make_model(config, problem.data.train);
  problem.objective = std::make_shared<Objective>(model, problem.data.train, partition,
                                                  static_cast<int>(batch));
  return problem;
}

RunOutcome run_experiment(const Config& config, const RunOptions& options) {
  const uint64_t seed = read_seed(config);
  std::unique_ptr<Problem> own_problem;
  const Problem* problem = options.problem;
  if (!problem) {
    own_problem = std::make_unique<Problem>(build_problem(config, seed));
    problem = own_problem.get();
  } else {
    read_workers(config);  // the keys were read when the shared problem was built
  }
  const int n = problem->workers;

  std::unique_ptr<TimingModel> timing = make_timing_model(config, n, seed);
  CommModel comm = make_comm_model(config);
  MethodSetup setup{problem->objective, timing.get(), n, seed};
  std::unique_ptr<Method> method = make_method(config, setup);
  StopRules rules = read_stop_rules(config);
  OptimizerOptions optimizer_options = read_optimizer_options(config, rules.max_steps);
  std::string engine = config.get_choice("engine.name", "sim", {"sim"});
  if (options.reject_unknown_keys) config.reject_unread_keys();
  if (options.dry_run) return RunOutcome{"validated", {}};

  Vec x0;
  Rng init_rng(seed, "init");
  problem->objective->model().initialize(x0, init_rng);

  std::vector<double> tilde = method->synchronous() ? std::vector<double>{}
                                                    : frequency_weights(*timing);
  Recorder recorder(rules, *problem->objective, problem->data.test, tilde,
                    options.label.empty() ? method->name() : options.label);
  Trainer trainer(x0, Optimizer(optimizer_options), recorder);
  std::unique_ptr<TrainingMaster> master = method->make_master(trainer);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < n; ++i) workers.push_back(method->make_worker(i));

  Simulator simulator(*timing, comm, seed,
                      rules.max_time > 0 ? rules.max_time
                                         : std::numeric_limits<double>::infinity());
  simulator.run(*master, workers);
  recorder.finish(trainer.x(), simulator.now());

  nlohmann::json summary;
  summary["pacer_version"] = PACER_VERSION;
  summary["seed"] = seed;
  summary["method"] = method->name();
  summary["workers"] = n;
  summary["model"] = problem->objective->model().name();
  summary["parameters"] = problem->objective->dim();
  summary["data"] = problem->data.train.name;
  summary["timing"] = timing->name();
  recorder.summarize(summary);
  nlohmann::json method_summary;
  master->summarize(method_summary);
  summary["method_stats"] = method_summary;
  nlohmann::json engine_summary;
  simulator.stats().to_json(engine_summary);
  summary["engine_stats"] = engine_summary;

  if (!options.out_dir.empty()) {
    write_outputs(options.out_dir, config, recorder.log_csv(), summary);
  }
  if (recorder.status() == "diverged") {
    fail("training diverged at step {}: the loss or the model became non-finite (try a smaller "
         "optimizer.lr){}",
         summary["steps"].get<int64_t>(),
         options.out_dir.empty() ? "" : "; the log up to that point is in " + options.out_dir);
  }
  return RunOutcome{recorder.status(), std::move(summary)};
}

}  // namespace pacer
