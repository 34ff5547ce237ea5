// What judging targets on F costs (issue #24): the same comparison with the default criterion,
// the full training loss F resolved to the step (target.on = "full", run/target_watch.h),
// and with the reported minibatch loss (target.on = "train"), side by side in one process.
//
// Each round runs the comparison once per criterion, in turn, so that both see the same machine
// load, and a third arm: the F comparison's runs again, each stopped at the step where it stopped
// (max_steps) with no target, so without the watch's evaluations ("same runs"). That arm splits
// the ratio in two: full / same runs is what evaluating F costs on the same runs, same runs /
// train is what the runs' greater length costs (F reaches a threshold later than the minibatch
// loss does). The fastest round of each arm is kept (and the median printed beside it). At the
// end, for example (2026-12-04, docs/verdicts.md):
//   full: 11.07 s (median 11.10), train: 7.46 s (median 7.48): 1.49× the train criterion's time
//   (medians: 1.49×)
//   same runs without the watch: 7.93 s (median 7.94): full is 1.40× of it (medians 1.40×), it is
//   1.06× train (medians 1.06×); 15 of 15 runs ended with the watched run's final F
// (the last count checks that the third arm did rerun the same trajectories) and, for the F
// criterion, each method's steps to target with its 95 % interval as ± % of the
// geometric mean. With --truth it also runs the comparison with F evaluated exactly at every
// step (target.sample = 0, a check every step: slow) and prints, per method and seed, the step
// the default watch found against the every-step one.
// Run from the repository root:
//   build/bench/criterion_bench [--rounds=N] [--config=FILE] [--methods=LIST] [--seeds=K] [--truth]
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"
#include "pacer/core/process.h"
#include "pacer/run/experiment.h"
#include "pacer/study/compare.h"
#include "side_by_side.h"

namespace pacer {
namespace {

struct Options {
  int rounds = 3;
  int seeds = 5;
  bool truth = false;
  std::string methods = "dgd,pgc-fr,pgc-cr";
  std::string config = "configs/pgc-paper-softmax.toml";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&](const char* name) { return side_by_side::flag_value(argv[k], name); };
    if (const char* v = value("--rounds=")) {
      o.rounds = std::max(1, std::atoi(v));
    } else if (const char* v = value("--seeds=")) {
      o.seeds = std::max(1, std::atoi(v));
    } else if (const char* v = value("--methods=")) {
      o.methods = v;
    } else if (const char* v = value("--config=")) {
      o.config = v;
    } else if (arg == "--truth") {
      o.truth = true;
    } else {
      fail(
          "criterion_bench: unknown argument {} (expected --rounds=N, --seeds=K, --methods=LIST, "
          "--config=FILE, --truth)",
          arg);
    }
  }
  return o;
}

// The comparison with `settings` applied, into `dir`; returns it and, in `seconds`, its wall time.
Comparison run_once(const Options& o, const std::vector<std::string>& settings,
                    const std::string& dir, double& seconds) {
  std::filesystem::remove_all(dir);
  CompareOptions compare;
  compare.methods = split_method_list(o.methods);
  compare.seeds = o.seeds;
  compare.out_dir = dir;
  Config config = Config::load(o.config);
  for (const std::string& setting : settings) config.set(setting);
  const double begin = steady_seconds();
  Comparison c = run_comparison(config, compare).comparison;
  seconds = steady_seconds() - begin;
  return c;
}

// The runs of `watched` again, into `dir`, each with the spec's config at its seed, stopped at the
// step it stopped at and without a target: the same trajectories (the watch only reads them),
// built the way pacer compare builds them (each seed's problem once, shared by its methods).
// Returns the wall time; `same_final` counts the runs whose final F equals the watched run's.
double run_same_without_watch(const Options& o, const Comparison& watched, const std::string& dir,
                              int& same_final) {
  std::filesystem::remove_all(dir);
  const Config config = Config::load(o.config);
  same_final = 0;
  const double begin = steady_seconds();
  for (size_t k = 0; k < watched.seeds.size(); ++k) {
    const uint64_t seed = watched.seeds[k];
    Config shared = config;
    shared.set_int("seed", static_cast<int64_t>(seed));
    const Problem problem = build_problem(shared, seed);
    for (const MethodResult& m : watched.methods) {
      const SeedRun& r = m.runs[k];
      Config c = config_for(config, m.spec);
      c.set_int("seed", static_cast<int64_t>(seed));
      c.set("target.loss=[]");
      c.set_int("max_steps", static_cast<int64_t>(r.end_steps));
      c.set_double("max_time", 0.0);
      c.set_double("max_work", 0.0);
      // max_steps is also the cosine schedule's default horizon: keep the comparison's.
      if (c.get_string("optimizer.schedule", "constant") == "cosine" &&
          !c.has("optimizer.horizon") && watched.budget.kind == Budget::Kind::kSteps) {
        c.set_int("optimizer.horizon", static_cast<int64_t>(watched.budget.value));
      }
      RunOptions run;
      run.problem = &problem;
      run.reject_unknown_keys = false;
      run.out_dir = fmt::format("{}/{}/seed{}", dir, m.folder, seed);
      const RunOutcome outcome = run_experiment(c, run);
      const nlohmann::json& fin = outcome.summary["final"];
      if (fin.contains("full_loss") && fin["full_loss"].get<double>() == r.final_loss) {
        ++same_final;
      }
    }
  }
  return steady_seconds() - begin;
}

using side_by_side::median;

// Per method: steps to target, geometric mean [95 % interval] and its half-width in % of it;
// where a seed missed the target the mean is a lower bound, and no half-width is printed.
void print_intervals(const Comparison& c) {
  for (const MethodResult& m : c.methods) {
    const Estimate& e = m.steps_to_target;
    const bool censored = m.reached < static_cast<int>(m.runs.size());
    const std::string half = censored ? "no half-width: a lower bound"
                             : e.has_interval()
                                 ? fmt::format("±{:.1f} %", 50.0 * (e.high - e.low) / e.mean)
                                 : "no interval";
    std::printf("  %-12s steps to target %s (%d/%zu reached): %s\n", m.spec.c_str(),
                format_estimate(e, "{:.1f}").c_str(), m.reached, m.runs.size(), half.c_str());
  }
}

// Per method and seed: the step the default watch found against the every-step one.
void print_truth(const Comparison& watched, const Comparison& truth) {
  int same = 0, total = 0;
  for (size_t i = 0; i < watched.methods.size(); ++i) {
    std::string line = fmt::format("  {:<12}", watched.methods[i].spec);
    for (size_t k = 0; k < watched.methods[i].runs.size(); ++k) {
      const double a = watched.methods[i].runs[k].steps_to_target;
      const double b = truth.methods[i].runs[k].steps_to_target;
      same += a == b ? 1 : 0;
      ++total;
      line += fmt::format(" {}/{}", a, b);
    }
    std::printf("%s\n", line.c_str());
  }
  std::printf("the watch found the every-step step in %d of %d runs\n", same, total);
}

int bench(int argc, char** argv) {
  const Options o = parse(argc, argv);
  set_log_level(LogLevel::kWarning);  // no progress lines between the timings
  const std::string root =
      (std::filesystem::temp_directory_path() / "pacer-criterion-bench").string();
  std::vector<double> full, train, same;
  Comparison watched;
  int same_final = 0;
  for (int round = 0; round < o.rounds; ++round) {
    double seconds = 0;
    watched = run_once(o, {"target.on=\"full\""}, root + "/full", seconds);
    full.push_back(seconds);
    run_once(o, {"target.on=\"train\""}, root + "/train", seconds);
    train.push_back(seconds);
    same.push_back(run_same_without_watch(o, watched, root + "/same", same_final));
    std::printf("round %d: full %.2f s, train %.2f s, same runs without the watch %.2f s\n",
                round + 1, full.back(), train.back(), same.back());
    std::fflush(stdout);
  }
  const double best_full = *std::min_element(full.begin(), full.end());
  const double best_train = *std::min_element(train.begin(), train.end());
  std::printf(
      "%s, methods %s, %d seeds, fastest of %d round%s:\nfull: %.2f s (median %.2f), train: "
      "%.2f s (median %.2f): %.2f× the train criterion's time (medians: %.2f×)\n",
      o.config.c_str(), o.methods.c_str(), o.seeds, o.rounds, o.rounds == 1 ? "" : "s", best_full,
      median(full), best_train, median(train), best_full / best_train,
      median(full) / median(train));
  const double best_same = *std::min_element(same.begin(), same.end());
  std::printf(
      "same runs without the watch: %.2f s (median %.2f): full is %.2f× of it (medians %.2f×), "
      "it is %.2f× train (medians %.2f×); %d of %zu runs ended with the watched run's final F\n",
      best_same, median(same), best_full / best_same, median(full) / median(same),
      best_same / best_train, median(same) / median(train), same_final,
      watched.seeds.size() * watched.methods.size());
  print_intervals(watched);
  if (o.truth) {
    double seconds = 0;
    const Comparison truth =
        run_once(o, {"target.on=\"full\"", "target.sample=0", "target.check_every=0.000001"},
                 root + "/truth", seconds);
    std::printf("F exactly at every step (%.0f s): watch step / every-step step per seed:\n",
                seconds);
    print_truth(watched, truth);
    print_intervals(truth);
  }
  std::filesystem::remove_all(root);
  return 0;
}

}  // namespace
}  // namespace pacer

int main(int argc, char** argv) { return pacer::side_by_side::run_main(pacer::bench, argc, argv); }
