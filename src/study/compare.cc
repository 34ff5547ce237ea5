#include "pacer/study/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/method/method.h"
#include "pacer/report/plot.h"
#include "pacer/report/report.h"
#include "pacer/report/verdict.h"
#include "pacer/run/experiment.h"

namespace pacer {

Config config_for(const Config& base, const std::string& spec) {
  Config config = base;
  size_t colon = spec.find(':');
  // Errors about the spec's keys name the spec, not the config file.
  const std::string origin = "--methods " + spec;
  const std::string name = spec.substr(0, colon);
  check_method_name(name, origin);
  config.set_string("method.name", name, origin);
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
    config.set(key.find('.') == std::string::npos ? "method." + assignment : assignment, origin);
    colon = next;
  }
  return config;
}

namespace {

// The folder of a spec's runs: the spec itself, with any '/' replaced.
std::string run_folder(std::string spec) {
  std::replace(spec.begin(), spec.end(), '/', '_');
  return spec;
}

// Steps that a time or work budget allows: no limit in practice (the budget ends the run).
constexpr int64_t kUnlimitedSteps = int64_t{1} << 50;

Budget parse_budget(const std::string& text) {
  const size_t eq = text.find('=');
  const std::string kind = text.substr(0, eq);
  double value = 0;
  try {
    size_t used = 0;
    value = eq == std::string::npos ? 0 : std::stod(text.substr(eq + 1), &used);
    if (used != text.size() - eq - 1) value = 0;
  } catch (const std::exception&) {
    value = 0;
  }
  Budget b;
  if (kind == "time") {
    b.kind = Budget::Kind::kTime;
  } else if (kind == "work") {
    b.kind = Budget::Kind::kWork;
  } else if (kind == "steps") {
    b.kind = Budget::Kind::kSteps;
  } else {
    fail("--budget '{}': expected time=SECONDS, work=UNITS or steps=UPDATES", text);
  }
  if (!(value > 0) || !std::isfinite(value) ||
      (b.kind == Budget::Kind::kSteps && value != std::floor(value))) {
    fail("--budget '{}': expected a positive {} after '='", text,
         b.kind == Budget::Kind::kSteps ? "integer" : "number");
  }
  b.value = value;
  return b;
}

// The default budget (CompareOptions::budget) from the validated probes' summaries.
Budget default_budget(const std::vector<nlohmann::json>& probes) {
  const nlohmann::json& first = probes.front();
  const bool any_async = std::any_of(probes.begin(), probes.end(), [](const nlohmann::json& p) {
    return !p["synchronous"].get<bool>();
  });
  Budget b;
  if (!any_async) {
    b.kind = Budget::Kind::kSteps;
    b.value = first["max_steps"].get<double>();
    return b;
  }
  b.kind = Budget::Kind::kTime;
  if (first["max_time"].get<double>() > 0) {
    b.value = first["max_time"].get<double>();
  } else if (first["gradients_per_second"].is_number()) {
    b.value = first["max_steps"].get<double>() / first["gradients_per_second"].get<double>();
  } else {
    fail(
        "asynchronous methods are compared at equal simulated time, and this timing model states "
        "no mean compute times to derive one from max_steps: set max_time or pass --budget time=T");
  }
  return b;
}

// Gives `config` the budget: its limit set, the other limits lifted.
void apply_budget(Config& config, const Budget& b) {
  const bool steps = b.kind == Budget::Kind::kSteps;
  if (!steps && config.get_string("optimizer.schedule", "constant") == "cosine" &&
      !config.has("optimizer.horizon")) {
    fail(
        "--budget {}: the cosine schedule's horizon is max_steps, which a time or work budget "
        "lifts; set optimizer.horizon",
        b.describe());
  }
  config.set_int("max_steps", steps ? static_cast<int64_t>(b.value) : kUnlimitedSteps);
  config.set_double("max_time", b.kind == Budget::Kind::kTime ? b.value : 0.0);
  config.set_double("max_work", b.kind == Budget::Kind::kWork ? b.value : 0.0);
}

double number_or_na(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : kNotAvailable;
}

SeedRun seed_run(const nlohmann::json& s, uint64_t seed, const std::string& folder) {
  SeedRun r;
  r.seed = seed;
  r.folder = folder;
  r.status = s["status"].get<std::string>();
  r.diverged = r.status == "diverged";
  const nlohmann::json& targets = s["targets"];
  if (!targets.empty() && targets[0]["reached"].get<bool>()) {
    r.reached = true;
    r.steps_to_target = targets[0]["steps"].get<double>();
    r.time_to_target = targets[0]["time"].get<double>();
    r.work_to_target = targets[0]["work_units"].get<double>();
  }
  r.end_steps = s["steps"].get<double>();
  r.end_time = s["time"].get<double>();
  r.end_work = s["work_units"].get<double>();
  r.step_time = s["mean_step_time"].get<double>();
  r.units_per_job = s["work_units_per_job"].get<double>();
  r.units_per_worker_step = s["work_units_per_step"].get<double>() / s["workers"].get<double>();
  const nlohmann::json& fin = s["final"];
  r.final_loss = number_or_na(fin, "full_loss");
  r.tilde_loss = number_or_na(fin, "tilde_loss");
  r.grad_norm_sq = number_or_na(fin, "grad_norm_sq");
  r.test_accuracy = number_or_na(fin, "test_accuracy");
  return r;
}

struct Table {
  std::string markdown, csv;
};

// The question a comparison's criterion answers, for the table's first line.
std::string describe_criterion(const Comparison& c) {
  if (c.targets.empty()) return "the final full training loss F at the common budget";
  const bool on_f = c.target_on == "full";
  return fmt::format(
      "the time to the first step at which {} is at or below {:g} for {} consecutive step{}{}",
      on_f ? "the full training loss F" : "the reported minibatch loss", c.targets.front(),
      c.target_hold, c.target_hold == 1 ? "" : "s",
      on_f ? ""
           : " (target.on = \"train\": the PGC paper's criterion, noisier than F and not "
             "method-neutral: each method averages a different number of minibatches)");
}

// The role of method m in the verdict, for compare.csv: "best", "leader" (undecided), "tie",
// "behind" (its interval against the leader excludes a tie), "" (no verdict).
std::string verdict_role(const Verdict& v, size_t m) {
  if (v.outcome == Verdict::Outcome::kNoneReached) return "";
  if (static_cast<int>(m) == v.leader) return v.decided() ? "best" : "leader";
  return v.is_tie[m] ? "tie" : "behind";
}

// compare.csv: one row per method, every estimate as mean, low, high, censored.
std::string table_csv(const Comparison& c, const Verdict& verdict) {
  std::string csv =
      "method,tuned,runs,reached,diverged,verdict,versus_leader_mean,versus_leader_low,"
      "versus_leader_high,versus_leader_censored,steps_to_target_mean,steps_to_target_low,"
      "steps_to_target_high,steps_to_target_censored,time_to_target_mean,time_to_target_low,"
      "time_to_target_high,time_to_target_censored,step_time_mean,step_time_low,step_time_high,"
      "step_time_censored,units_per_job_mean,units_per_job_low,units_per_job_high,"
      "units_per_job_censored,units_per_worker_step_mean,units_per_worker_step_low,"
      "units_per_worker_step_high,units_per_worker_step_censored,final_loss_mean,final_loss_low,"
      "final_loss_high,final_loss_censored,tilde_loss_mean,tilde_loss_low,tilde_loss_high,"
      "tilde_loss_censored,grad_norm_sq_mean,grad_norm_sq_low,grad_norm_sq_high,"
      "grad_norm_sq_censored,test_accuracy_mean,test_accuracy_low,test_accuracy_high,"
      "test_accuracy_censored\n";
  for (size_t i = 0; i < c.methods.size(); ++i) {
    const MethodResult& m = c.methods[i];
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", m.spec, m.tuned_value,
                       m.runs.size(), m.reached, m.diverged, verdict_role(verdict, i),
                       csv_estimate(verdict.versus_leader[i]), csv_estimate(m.steps_to_target),
                       csv_estimate(m.time_to_target), csv_estimate(m.step_time),
                       csv_estimate(m.units_per_job), csv_estimate(m.units_per_worker_step),
                       csv_estimate(m.final_loss), csv_estimate(m.tilde_loss),
                       csv_estimate(m.grad_norm_sq) + "," + csv_estimate(m.test_accuracy));
  }
  return csv;
}

// The markdown table's columns and a row per method (the text before it: make_table).
std::string table_markdown(const Comparison& c, const Verdict& verdict) {
  const bool has_target = !c.targets.empty();
  const bool any_async = std::any_of(c.methods.begin(), c.methods.end(),
                                     [](const MethodResult& m) { return m.asynchronous; });
  const bool tuned = !c.tuned_key.empty();
  std::string markdown;
  std::string header = "| method |";
  std::string rule = "|---|";
  auto column = [&](const std::string& name) {
    header += " " + name + " |";
    rule += "---|";
  };
  if (tuned) column("tuned " + c.tuned_key);
  if (has_target) {
    column("reached");
    column("steps to target");
    column("time to target (s)");
  }
  column(has_target ? "time to target × leader" : "final F × leader");
  column("diverged");
  column("time/step (s)");
  column("units/job");
  column("units/worker/step");
  column("final F");
  if (any_async) column("final F̃");
  column("final ‖∇F‖²");
  column("test acc");
  markdown += header + "\n" + rule + "\n";
  for (size_t i = 0; i < c.methods.size(); ++i) {
    const MethodResult& m = c.methods[i];
    std::string row = "| " + m.spec + " |";
    auto cell = [&row](const std::string& text) { row += " " + text + " |"; };
    if (tuned) cell(m.tuned_value);
    if (has_target) {
      cell(fmt::format("{}/{}", m.reached, m.runs.size()));
      cell(format_estimate(m.steps_to_target, "{:.0f}"));
      cell(format_estimate(m.time_to_target, "{:.2f}"));
    }
    cell(format_versus_leader(verdict, i));
    cell(fmt::format("{}", m.diverged));
    cell(format_estimate(m.step_time, "{:.3f}"));
    cell(format_estimate(m.units_per_job, "{:.2f}"));
    cell(format_estimate(m.units_per_worker_step, "{:.2f}"));
    cell(format_estimate(m.final_loss, "{:.4g}"));
    if (any_async) cell(m.asynchronous ? format_estimate(m.tilde_loss, "{:.4g}") : "—");
    cell(format_estimate(m.grad_norm_sq, "{:.3g}"));
    cell(format_estimate(m.test_accuracy, "{:.4f}"));
    markdown += row + "\n";
  }
  markdown += "\nVerdict: " + describe_verdict(c, verdict) + "\n";
  return markdown;
}

Table make_table(const Comparison& c, const Verdict& verdict) {
  const bool has_target = !c.targets.empty();
  Table t;
  t.markdown = fmt::format(
      "Budget: {} per run{}. {} seed{} ({}). Criterion: {}. Each cell: geometric mean [95 % "
      "interval: Student t on the log scale] over seeds (test accuracy: mean [t interval]); "
      "\"≥\": some seeds did not reach the target within the budget, and their end values (lower "
      "bounds) are averaged in. \"× leader\": the paired ratio to the leading method over "
      "seeds.\n\n",
      c.budget.describe(), has_target && c.budget.stop_at_target ? ", stopping at the target" : "",
      c.seeds.size(), c.seeds.size() == 1 ? "" : "s", fmt::join(c.seeds, ", "),
      describe_criterion(c));
  t.markdown += table_markdown(c, verdict);
  t.csv = table_csv(c, verdict);
  return t;
}

// Stops the comparison after SIGINT/SIGTERM (core/interrupt.h): the runs completed so far are
// kept in their folders; the tables, figures and report are not written.
[[noreturn]] void stop_interrupted(const std::string& label, const std::string& out_dir) {
  throw Interrupted(fmt::format(
      "interrupted ({}) at {}: the comparison stopped{}; compare.md, compare.csv and report.md "
      "were not written",
      interrupt_signal_name(), label,
      out_dir.empty()
          ? std::string()
          : fmt::format(", the runs it completed are in {}/<method>/seed<k>/ (the same command "
                        "again reuses them and resumes this one)",
                        out_dir)));
}

// One run of a comparison: `config` at `seed` on that seed's problem, into <out_dir>/<run_dir>.
// What an earlier comparison left there is continued (RunOptions::continue_earlier), and the
// terminal told. Throws Interrupted when the run is or was interrupted (its folder then says
// "interrupted").
SeedRun run_one(const Config& config, const Problem& problem, uint64_t seed,
                const std::string& run_dir, const std::string& label, const std::string& out_dir,
                EarlierRuns& earlier) {
  if (interrupt_signal() != 0) stop_interrupted(label, out_dir);  // before touching its folder
  Config c = config;
  c.set_int("seed", static_cast<int64_t>(seed));
  RunOptions run;
  run.problem = &problem;
  run.reject_unknown_keys = false;
  run.label = fmt::format("{} seed {}", label, seed);
  if (!out_dir.empty()) run.out_dir = out_dir + "/" + run_dir;
  run.continue_earlier = true;  // the same command again reuses and resumes (earlier_run.h)
  const RunOutcome outcome = run_experiment(c, run);
  if (!outcome.earlier_note.empty()) {
    log_info("{}: {}", run.label, outcome.earlier_note);
    switch (outcome.earlier) {
      case EarlierRun::Kind::kFinished:
        ++earlier.reused;
        break;
      case EarlierRun::Kind::kResumable:
        ++earlier.resumed;
        break;
      case EarlierRun::Kind::kFresh:
        ++earlier.restarted;
        break;
    }
  }
  if (outcome.status == "interrupted") stop_interrupted(run.label, out_dir);
  if (outcome.status == "diverged") log_warning("{}: training diverged", run.label);
  return seed_run(outcome.summary, seed, run_dir);
}

// The problem (data, partitions, model) of one seed.
Problem problem_for_seed(const Config& shared, uint64_t seed) {
  Config seeded = shared;
  seeded.set_int("seed", static_cast<int64_t>(seed));
  return build_problem(seeded, seed);
}

// Sets the tuned key to one value of its grid; errors about it name --tune.
void set_tuned(Config& config, const Comparison& c, const std::string& value) {
  const std::string assignment = c.tuned_key + "=" + value;
  config.set(assignment, "--tune " + assignment);
}

// Splits "KEY=v1,v2,..." into the key and its values.
std::pair<std::string, std::vector<std::string>> parse_tune(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    fail("--tune '{}': expected KEY=v1,v2,... (e.g. optimizer.lr=0.01,0.03,0.1)", text);
  }
  std::vector<std::string> values;
  size_t start = eq + 1;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string value = text.substr(start, comma - start);
    if (value.empty()) fail("--tune '{}': an empty value in the list", text);
    values.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {text.substr(0, eq), values};
}

// One line of a method's tuning log: the value and its score on the tuning seeds.
std::string describe_trial(const Comparison& c, const std::string& value, const MethodResult& m) {
  std::string diverged = m.diverged ? fmt::format(", {} diverged", m.diverged) : std::string();
  if (!c.targets.empty()) {
    return fmt::format("{} = {}: time to target {} s, {}/{} reached{}", c.tuned_key, value,
                       format_estimate(m.time_to_target, "{:.2f}"), m.reached, m.runs.size(),
                       diverged);
  }
  return fmt::format("{} = {}: final F {}{}", c.tuned_key, value,
                     format_estimate(m.final_loss, "{:.4g}"), diverged);
}

// Tunes every method's key over the grid on the tuning seeds (seed-major, so each seed's problem
// is built once), then sets the best value in each config and records the choices in `c`.
void tune(const Config& shared, std::vector<Config>& configs, Comparison& c,
          const std::string& out_dir, EarlierRuns& earlier) {
  const bool has_target = !c.targets.empty();
  const size_t methods = configs.size(), values = c.tuned_grid.size();
  std::vector<std::vector<MethodResult>> trials(methods, std::vector<MethodResult>(values));
  for (uint64_t seed : c.tuning_seeds) {
    const Problem problem = problem_for_seed(shared, seed);
    for (size_t m = 0; m < methods; ++m) {
      for (size_t v = 0; v < values; ++v) {
        Config trial = configs[m];
        set_tuned(trial, c, c.tuned_grid[v]);
        const std::string& spec = c.methods[m].spec;
        trials[m][v].runs.push_back(
            run_one(trial, problem, seed,
                    fmt::format("tuning/{}/{}/seed{}", run_folder(spec), c.tuned_grid[v], seed),
                    fmt::format("{} ({} = {}, tuning)", spec, c.tuned_key, c.tuned_grid[v]),
                    out_dir, earlier));
      }
    }
  }
  for (size_t m = 0; m < methods; ++m) {
    MethodResult& result = c.methods[m];
    std::pair<int, double> best_score;
    for (size_t v = 0; v < values; ++v) {
      MethodResult& scored = trials[m][v];
      summarize_method(scored, has_target);
      const std::pair<int, double> score = criterion_score(scored, has_target);
      result.tuning_log.push_back(describe_trial(c, c.tuned_grid[v], scored));
      if (result.tuned_value.empty() || score < best_score) {  // ties keep the earlier value
        best_score = score;
        result.tuned_value = c.tuned_grid[v];
      }
    }
    set_tuned(configs[m], c, result.tuned_value);
  }
}

}  // namespace

std::string EarlierRuns::describe() const {
  return fmt::format("{} run{} reused, {} resumed, {} started afresh", reused,
                     reused == 1 ? "" : "s", resumed, restarted);
}

void check_baseline(const std::vector<std::string>& methods, const std::string& baseline) {
  if (!baseline.empty() && std::find(methods.begin(), methods.end(), baseline) == methods.end()) {
    fail("--baseline {}: expected one of the --methods specs as written ({})", baseline,
         fmt::join(methods, ","));
  }
}

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

// Logs which keys of the config the specs' switched components dropped (and for which specs: a
// long list names the first few and counts the rest), once per process for the same message.
void log_dropped_keys(
    const Config& config,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& dropped_by) {
  if (dropped_by.empty()) return;
  {
    std::vector<std::string> parts;
    for (const auto& [keys, specs] : dropped_by) {
      // A long list (advise's dozens of specs) names the first few and counts the rest.
      constexpr size_t kNamed = 4;
      const std::vector<std::string> named(specs.begin(),
                                           specs.begin() + std::min(specs.size(), kNamed));
      const std::string more =
          specs.size() > kNamed ? fmt::format(" and {} more", specs.size() - kNamed) : "";
      parts.push_back(fmt::format("{} (for {}{})", keys, fmt::join(named, ", "), more));
    }
    const std::string message = fmt::format(
        "the method specs dropped keys of {} that a spec's switched component does not read: {}",
        config.source().empty() ? "the config" : config.source(), fmt::join(parts, "; "));
    // A process that runs many comparisons of the same specs (advise: tuning, budgets, scenarios)
    // says it once. Not thread-safe: a process runs its comparisons one at a time.
    static auto* const said = new std::set<std::string>();
    if (said->insert(message).second) log_info("{}", message);
  }
}

// Validates every spec and the keys it reads before anything runs, by a dry run of each config
// on the shared problem; returns each dry run's summary (what the run will do). A key is unknown
// only if no method of the comparison reads it; the tuned key must be read by every method.
std::vector<nlohmann::json> validate_specs(const Config& config, const std::vector<Config>& configs,
                                           Problem& problem, const CompareOptions& options,
                                           const Comparison& c) {
  // A spec that switches a component (its method, or a timing.model it sets) drops the file's
  // keys of that component that its run leaves unread, as pacer run does for --set
  // (Config::drop_replaced_keys; run_experiment drops them from each run's config.toml).
  // A key is unknown when every compared config that still holds it leaves it unread: a key of
  // the shared config must be read by some method, a key a spec sets by that spec's method.
  std::map<std::string, size_t> unread_count;
  std::vector<Config> probes;
  std::vector<nlohmann::json> probe_summaries;
  // The dropped keys ("method.decoder, method.s") and the specs that dropped them, in spec order.
  std::vector<std::pair<std::string, std::vector<std::string>>> dropped_by;
  for (size_t m = 0; m < configs.size(); ++m) {
    Config& probe = probes.emplace_back(configs[m]);
    if (!c.tuned_key.empty()) set_tuned(probe, c, c.tuned_grid.front());
    RunOptions dry;
    dry.problem = &problem;
    dry.reject_unknown_keys = false;
    dry.dry_run = true;
    probe_summaries.push_back(run_experiment(probe, dry).summary);
    std::vector<std::string> dropped;
    for (const Config::Switch& change : probe.drop_replaced_keys()) {
      dropped.insert(dropped.end(), change.dropped.begin(), change.dropped.end());
    }
    if (!dropped.empty()) {
      const std::string keys = fmt::format("{}", fmt::join(dropped, ", "));
      auto same = std::find_if(dropped_by.begin(), dropped_by.end(),
                               [&](const auto& entry) { return entry.first == keys; });
      if (same == dropped_by.end()) same = dropped_by.insert(dropped_by.end(), {keys, {}});
      same->second.push_back(options.methods[m]);
    }
    for (const std::string& key : probe.unread_keys()) {
      if (key == c.tuned_key) {
        fail("--tune {}: {} does not read {}{}", options.tune, options.methods[m], c.tuned_key,
             probe.suggest_key(key));
      }
      ++unread_count[key];
    }
  }
  for (const auto& [key, unread] : unread_count) {
    size_t holders = 0;
    for (const Config& probe : probes) holders += probe.has(key) ? 1 : 0;
    if (unread < holders) continue;
    const auto holder = std::find_if(probes.begin(), probes.end(),
                                     [&](const Config& probe) { return probe.has(key); });
    fail("{}: unknown key '{}' (misspelt, or not used by {}){}", holder->origin(key), key,
         holders == configs.size() ? "any compared method" : "the method whose spec sets it",
         holder->suggest_key(key));
  }
  log_dropped_keys(config, dropped_by);
  return probe_summaries;
}

// What the validated runs will do: the budget (applied to each config), targets, seeds and each
// method's entry, from the dry runs' summaries.
void plan_runs(Comparison& c, std::vector<Config>& configs,
               const std::vector<nlohmann::json>& probe_summaries, const CompareOptions& options,
               uint64_t first_seed) {
  const nlohmann::json& first = probe_summaries.front();
  c.budget =
      options.budget.empty() ? default_budget(probe_summaries) : parse_budget(options.budget);
  c.budget.stop_at_target = first["stop_at_targets"].get<bool>();
  c.targets = first["targets"].get<std::vector<double>>();
  c.target_on = first["target_on"].get<std::string>();
  c.target_hold = first["target_hold"].get<int64_t>();
  c.criterion = c.targets.empty() ? "final F" : "time to target";
  for (Config& method_config : configs) apply_budget(method_config, c.budget);
  for (int k = 0; k < options.seeds; ++k) c.seeds.push_back(first_seed + k);
  for (size_t m = 0; m < options.methods.size(); ++m) {
    MethodResult& result = c.methods.emplace_back();
    result.spec = options.methods[m];
    result.folder = run_folder(result.spec);
    result.asynchronous = !probe_summaries[m]["synchronous"].get<bool>();
  }
}

CompareResult run_comparison(const Config& config, const CompareOptions& options) {
  if (options.methods.empty()) fail("--methods: expected at least one method");
  if (options.seeds <= 0) fail("--seeds: expected a positive integer, got {}", options.seeds);
  if (!options.tune.empty() && options.tuning_seeds <= 0) {
    fail("--tune-seeds: expected a positive integer, got {}", options.tuning_seeds);
  }
  const uint64_t first_seed = read_seed(config);
  Comparison c;
  c.config_path = config.source();
  c.name = config.source().empty() ? "comparison"
                                   : std::filesystem::path(config.source()).stem().string();
  if (!options.tune.empty()) std::tie(c.tuned_key, c.tuned_grid) = parse_tune(options.tune);
  check_baseline(options.methods, options.baseline);
  EarlierRuns earlier;  // what the runs found of an earlier comparison in out_dir
  c.baseline = options.baseline;

  // The data, partitions and model are shared, and no spec may set their keys: build them once
  // from the config, before the specs' configs are copied from it, so that each of those has
  // read (and resolved) the problem's keys too.
  Config shared = config;
  Problem problem = build_problem(shared, first_seed);
  // Validate every spec and the keys it reads before running anything: a key is unknown only
  // if no method of the comparison reads it.
  std::vector<Config> configs;
  for (const std::string& spec : options.methods) configs.push_back(config_for(shared, spec));
  const std::vector<nlohmann::json> probe_summaries =
      validate_specs(config, configs, problem, options, c);
  plan_runs(c, configs, probe_summaries, options, first_seed);
  if (!c.tuned_key.empty()) {
    for (int k = 0; k < options.tuning_seeds; ++k) {
      c.tuning_seeds.push_back(first_seed + options.seeds + k);
    }
    tune(shared, configs, c, options.out_dir, earlier);
  }

  // The reported runs, seed-major so that each seed's problem is built once.
  for (uint64_t seed : c.seeds) {
    const Problem seed_problem =
        seed == first_seed ? std::move(problem) : problem_for_seed(shared, seed);
    for (size_t m = 0; m < configs.size(); ++m) {
      MethodResult& result = c.methods[m];
      result.runs.push_back(run_one(configs[m], seed_problem, seed,
                                    fmt::format("{}/seed{}", result.folder, seed), result.spec,
                                    options.out_dir, earlier));
    }
  }
  for (MethodResult& m : c.methods) summarize_method(m, !c.targets.empty());
  CompareResult result = finish_comparison(std::move(c), options.out_dir);
  result.earlier = earlier;
  return result;
}

CompareResult finish_comparison(Comparison c, const std::string& out_dir) {
  CompareResult result;
  result.verdict = decide(c);
  const Table table = make_table(c, result.verdict);
  result.markdown = table.markdown;
  result.csv = table.csv;
  if (!out_dir.empty()) {
    make_directories(out_dir);
    remove_stale_temp_files(out_dir);  // what a killed comparison left
    write_file_atomic(out_dir + "/compare.md", result.markdown);
    write_file_atomic(out_dir + "/compare.csv", result.csv);
    write_file_atomic(out_dir + "/runs.csv", seed_runs_csv(c));
    if (!c.baseline.empty()) {
      write_file_atomic(out_dir + "/against.csv", against_baseline_csv(c));
    } else {
      std::filesystem::remove(out_dir + "/against.csv");  // an earlier comparison's
    }
    const std::vector<Figure> figures = write_comparison_figures(out_dir, c);
    write_file_atomic(out_dir + "/report.md",
                      comparison_report(c, result.verdict, table.markdown, figures));
  }
  result.comparison = std::move(c);
  return result;
}

}  // namespace pacer
