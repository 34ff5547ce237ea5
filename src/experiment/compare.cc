#include "pacer/experiment/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"
#include "pacer/experiment/experiment.h"
#include "pacer/experiment/plot.h"

namespace pacer {
namespace {

// The config of one method spec: method.name and its method.* keys set.
Config config_for(const Config& base, const std::string& spec) {
  Config config = base;
  size_t colon = spec.find(':');
  config.set_string("method.name", spec.substr(0, colon));
  while (colon != std::string::npos) {
    size_t next = spec.find(':', colon + 1);
    std::string assignment = spec.substr(colon + 1, next - colon - 1);
    if (assignment.find('=') == std::string::npos) {
      fail("--methods: '{}' in '{}': expected key=value after ':'", assignment, spec);
    }
    // "k=2" sets method.k; a dotted key ("optimizer.lr=0.01") is set as written.
    const std::string key = assignment.substr(0, assignment.find('='));
    // The data, partitions and model are shared by every method of a comparison.
    for (const char* shared : {"workers", "seed", "data.", "partition.", "model.", "training."}) {
      if (key.rfind(shared, 0) == 0) {
        fail(
            "--methods: '{}' in '{}': {} is shared by every compared method; set it in the "
            "config or with --set",
            assignment, spec, key);
      }
    }
    config.set(key.find('.') == std::string::npos ? "method." + assignment : assignment);
    colon = next;
  }
  return config;
}

// The folder of a spec's runs: the spec itself, with any '/' replaced.
std::string run_folder(std::string spec) {
  std::replace(spec.begin(), spec.end(), '/', '_');
  return spec;
}

// The values of one column over a comparison's seeds.
struct Stat {
  std::vector<double> values;
  void add(double v) { values.push_back(v); }
  double mean() const {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  }
  // Sample standard deviation; 0 for a single value.
  double sd() const {
    if (values.size() < 2) return 0.0;
    const double m = mean();
    double var = 0;
    for (double v : values) var += (v - m) * (v - m);
    return std::sqrt(var / static_cast<double>(values.size() - 1));
  }
  // "mean ± sd" with `spec` for each number ("mean" alone for one value, "—" for none).
  std::string format(const char* spec) const {
    if (values.empty()) return "—";
    if (values.size() == 1) return fmt::format(fmt::runtime(spec), mean());
    return fmt::format(fmt::runtime(std::string(spec) + " ± " + spec), mean(), sd());
  }
  std::string csv() const { return values.empty() ? "," : fmt::format("{},{}", mean(), sd()); }
};

struct Row {
  std::string spec;
  int runs = 0, reached = 0, diverged = 0;
  Stat steps, time, step_time, units_per_worker_step, units_per_job, accuracy, final_loss;
};

}  // namespace

std::vector<std::string> split_method_list(const std::string& list) {
  std::vector<std::string> specs;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string spec = list.substr(start, comma - start);
    if (spec.empty()) fail("--methods '{}': empty method name", list);
    specs.push_back(spec);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return specs;
}

CompareResult run_comparison(const Config& config, const CompareOptions& options) {
  if (options.methods.empty()) fail("--methods: expected at least one method");
  if (options.seeds <= 0) fail("--seeds: expected a positive integer, got {}", options.seeds);
  const uint64_t first_seed = read_seed(config);

  // Validate every spec and the keys it reads before running anything: a key is unknown only
  // if no method of the comparison reads it.
  std::vector<Config> configs;
  for (const std::string& spec : options.methods) configs.push_back(config_for(config, spec));
  Problem problem = build_problem(configs[0], first_seed);
  // A key is unknown when every compared config that holds it leaves it unread: a key of the
  // shared config must be read by some method, a key a spec sets by that spec's method.
  std::map<std::string, size_t> unread_count;
  for (size_t m = 0; m < configs.size(); ++m) {
    Config probe = configs[m];
    RunOptions dry;
    dry.problem = &problem;
    dry.reject_unknown_keys = false;
    dry.dry_run = true;
    run_experiment(probe, dry);
    for (const std::string& key : probe.unread_keys()) ++unread_count[key];
  }
  for (const auto& [key, unread] : unread_count) {
    size_t holders = 0;
    for (const Config& c : configs) holders += c.has(key) ? 1 : 0;
    if (unread < holders) continue;
    fail("{}: unknown key '{}' (misspelt, or not used by {})",
         config.source().empty() ? "config" : config.source(), key,
         holders == configs.size() ? "any compared method" : "the method whose spec sets it");
  }

  std::vector<Row> rows(options.methods.size());
  for (int k = 0; k < options.seeds; ++k) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(k);
    if (k > 0) {
      Config seeded = configs[0];
      seeded.set_int("seed", static_cast<int64_t>(seed));
      problem = build_problem(seeded, seed);
    }
    for (size_t m = 0; m < options.methods.size(); ++m) {
      Row& row = rows[m];
      row.spec = options.methods[m];
      Config c = configs[m];
      c.set_int("seed", static_cast<int64_t>(seed));
      RunOptions run;
      run.problem = &problem;
      run.reject_unknown_keys = false;
      run.label = fmt::format("{} seed {}", row.spec, seed);
      if (!options.out_dir.empty()) {
        run.out_dir = fmt::format("{}/{}/seed{}", options.out_dir, run_folder(row.spec), seed);
      }
      ++row.runs;
      RunOutcome outcome;
      try {
        outcome = run_experiment(c, run);
      } catch (const DivergedError& e) {
        log_warning("{}", e.what());
        ++row.diverged;
        continue;
      }
      const nlohmann::json& s = outcome.summary;
      const nlohmann::json& targets = s["targets"];
      if (!targets.empty() && targets[0]["reached"].get<bool>()) {
        ++row.reached;
        row.steps.add(targets[0]["steps"].get<double>());
        row.time.add(targets[0]["time"].get<double>());
      }
      row.step_time.add(s["mean_step_time"].get<double>());
      row.units_per_worker_step.add(s["work_units_per_step"].get<double>() /
                                    s["workers"].get<double>());
      row.units_per_job.add(s["work_units_per_job"].get<double>());
      const nlohmann::json& fin = s["final"];
      if (fin.contains("test_accuracy")) row.accuracy.add(fin["test_accuracy"].get<double>());
      if (fin.contains("full_loss")) row.final_loss.add(fin["full_loss"].get<double>());
    }
  }

  CompareResult result;
  result.markdown =
      "| method | reached | steps to target | time to target | time/step | units/job | "
      "units/worker/step | final loss | test acc |\n|---|---|---|---|---|---|---|---|---|\n";
  result.csv =
      "method,runs,reached,diverged,steps_mean,steps_sd,time_mean,time_sd,step_time_mean,"
      "step_time_sd,units_per_job_mean,units_per_job_sd,units_per_worker_step_mean,"
      "units_per_worker_step_sd,final_loss_mean,"
      "final_loss_sd,test_accuracy_mean,test_accuracy_sd\n";
  for (const Row& r : rows) {
    std::string reached = fmt::format("{}/{}", r.reached, r.runs);
    if (r.diverged) reached += fmt::format(" ({} diverged)", r.diverged);
    result.markdown +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.spec, reached,
                    r.steps.format("{:.0f}"), r.time.format("{:.2f}"), r.step_time.format("{:.3f}"),
                    r.units_per_job.format("{:.2f}"), r.units_per_worker_step.format("{:.2f}"),
                    r.final_loss.format("{:.4f}"), r.accuracy.format("{:.4f}"));
    result.csv +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", r.spec, r.runs, r.reached, r.diverged,
                    r.steps.csv(), r.time.csv(), r.step_time.csv(), r.units_per_job.csv(),
                    r.units_per_worker_step.csv(), r.final_loss.csv(), r.accuracy.csv());
  }
  if (!options.out_dir.empty()) {
    make_directories(options.out_dir);
    write_file_atomic(options.out_dir + "/compare.md", result.markdown);
    write_file_atomic(options.out_dir + "/compare.csv", result.csv);
    std::vector<PlotSeries> series;
    for (const Row& r : rows) {
      series.push_back({r.spec, fmt::format("{}/seed{}/log.csv", run_folder(r.spec), first_seed)});
    }
    write_loss_plot(options.out_dir, "compare",
                    fmt::format("{} (seed {})", config.source(), first_seed), series);
  }
  return result;
}

}  // namespace pacer
