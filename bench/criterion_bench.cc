// What judging targets on F costs (issue #24): the same comparison with the default criterion,
// the full training loss F resolved to the step (target.on = "full", run/target_watch.h),
// and with the reported minibatch loss (target.on = "train"), side by side in one process.
//
// Each round runs the comparison once per criterion, in turn, so that both see the same machine
// load; the fastest round of each is kept (and the median printed beside it). At the end:
//   full: 13.5 s (median 13.9), train: 11.9 s (median 12.2): 1.14× the train criterion's time
// and, for the F criterion, each method's steps to target with its 95 % interval as ± % of the
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

using side_by_side::median;

// Per method: steps to target, geometric mean [95 % interval] and its half-width in % of it.
void print_intervals(const Comparison& c) {
  for (const MethodResult& m : c.methods) {
    const Estimate& e = m.steps_to_target;
    const double half = e.has_interval() ? 50.0 * (e.high - e.low) / e.mean : 0;
    std::printf("  %-12s steps to target %s (%d/%zu reached): ±%.1f %%\n", m.spec.c_str(),
                format_estimate(e, "{:.1f}").c_str(), m.reached, m.runs.size(), half);
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
  std::vector<double> full, train;
  Comparison watched;
  for (int round = 0; round < o.rounds; ++round) {
    double seconds = 0;
    watched = run_once(o, {"target.on=\"full\""}, root + "/full", seconds);
    full.push_back(seconds);
    run_once(o, {"target.on=\"train\""}, root + "/train", seconds);
    train.push_back(seconds);
    std::printf("round %d: full %.2f s, train %.2f s\n", round + 1, full.back(), train.back());
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
