// What default checkpointing costs (issue #27): the README's main job (pacer compare
// configs/fashion-mnist.toml over the main job's methods) with the default checkpoints
// (checkpoint.every_s = 60, run/checkpoint.h) and with checkpoints off (every_s = 0,
// every_steps = 0), side by side in one process.
//
// Each round runs the comparison once per setting, in turn, the order turning from round to
// round, so that all see the same machine load; the fastest round of each is kept (and the median
// printed beside it), with the runs that wrote a checkpoint. Both the wall time and the process's
// CPU time (every thread, CLOCK_PROCESS_CPUTIME_ID) are measured: on a machine that other jobs
// load, the CPU time varies far less than the wall time. At the end, per setting:
//   default: wall 16.52 s (median 16.80), CPU 30.10 s (median 30.31): 1.003× off's wall time,
//   1.001× its CPU time (medians: ...)
// With --every-s=S a third setting checkpoints every S seconds of wall time, to show what the
// checkpoints themselves cost when a run is long enough to write some.
// Run from the repository root:
//   build/bench/checkpoint_bench [--rounds=N] [--config=FILE] [--methods=LIST] [--every-s=S]
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/log.h"
#include "pacer/core/process.h"
#include "pacer/study/compare.h"
#include "side_by_side.h"

namespace pacer {
namespace {

struct Options {
  int rounds = 3;
  double every_s = 0;  // 0: no third setting
  // The main job's methods (scripts/run-main.sh).
  std::string methods =
      "dgd,is-sgd:k=2,gc-fr,gc-cr,is-gc-fr,is-gc-cr,pgc-fr,pgc-cr,pgc-cr:decoder=exact";
  std::string config = "configs/fashion-mnist.toml";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&](const char* name) { return side_by_side::flag_value(argv[k], name); };
    if (const char* v = value("--rounds=")) {
      o.rounds = std::max(1, std::atoi(v));
    } else if (const char* v = value("--every-s=")) {
      o.every_s = std::max(0.0, std::atof(v));
    } else if (const char* v = value("--methods=")) {
      o.methods = v;
    } else if (const char* v = value("--config=")) {
      o.config = v;
    } else {
      fail(
          "checkpoint_bench: unknown argument {} (expected --rounds=N, --every-s=S, "
          "--methods=LIST, --config=FILE)",
          arg);
    }
  }
  return o;
}

struct Setting {
  std::string name;
  std::vector<std::string> keys;
  std::vector<double> seconds, cpu_seconds;
  int checkpoints = 0;  // checkpoint.bin files its last round left
};

// checkpoint.bin files under `dir`: the runs that wrote at least one checkpoint.
int count_checkpoints(const std::string& dir) {
  int n = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    n += entry.path().filename() == "checkpoint.bin" ? 1 : 0;
  }
  return n;
}

// This process's CPU time so far, every thread's.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The comparison with `s`'s keys, into a fresh `dir`; records its wall and CPU time.
void run_once(const Options& o, Setting& s, const std::string& dir) {
  std::filesystem::remove_all(dir);  // an earlier round's runs would be reused
  CompareOptions compare;
  compare.methods = split_method_list(o.methods);
  compare.out_dir = dir;
  Config config = Config::load(o.config);
  for (const std::string& key : s.keys) config.set(key);
  const double begin = steady_seconds(), cpu_begin = cpu_seconds();
  run_comparison(config, compare);
  s.seconds.push_back(steady_seconds() - begin);
  s.cpu_seconds.push_back(cpu_seconds() - cpu_begin);
  s.checkpoints = count_checkpoints(dir);
}

using side_by_side::median;

double best(const std::vector<double>& v) { return side_by_side::fastest(v); }

int bench(int argc, char** argv) {
  const Options o = parse(argc, argv);
  set_log_level(LogLevel::kWarning);  // no progress lines between the timings
  const std::string root =
      (std::filesystem::temp_directory_path() / "pacer-checkpoint-bench").string();
  std::vector<Setting> settings(2);
  settings[0].name = "default";
  settings[1].name = "off";
  settings[1].keys = {"checkpoint.every_s=0", "checkpoint.every_steps=0"};
  if (o.every_s > 0) {
    Setting& often = settings.emplace_back();
    often.name = fmt::format("every {:g} s", o.every_s);
    often.keys = {fmt::format("checkpoint.every_s={}", o.every_s)};
  }
  for (int round = 0; round < o.rounds; ++round) {
    std::string line = fmt::format("round {}:", round + 1);
    for (size_t k = 0; k < settings.size(); ++k) {
      // The order turns from round to round, so that no setting always goes first.
      Setting& s = settings[(k + static_cast<size_t>(round)) % settings.size()];
      run_once(o, s, root + "/run");
      line += fmt::format(" {} {:.2f} s, CPU {:.2f} s ({} runs checkpointed);", s.name,
                          s.seconds.back(), s.cpu_seconds.back(), s.checkpoints);
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  const Setting& off = settings[1];
  std::printf("%s, methods %s, fastest of %d round%s:\n", o.config.c_str(), o.methods.c_str(),
              o.rounds, o.rounds == 1 ? "" : "s");
  for (const Setting& s : settings) {
    std::printf(
        "%s: wall %.2f s (median %.2f), CPU %.2f s (median %.2f): %.3f× off's wall time, %.3f× "
        "its CPU time (medians: %.3f×, %.3f×)\n",
        s.name.c_str(), best(s.seconds), median(s.seconds), best(s.cpu_seconds),
        median(s.cpu_seconds), best(s.seconds) / best(off.seconds),
        best(s.cpu_seconds) / best(off.cpu_seconds), median(s.seconds) / median(off.seconds),
        median(s.cpu_seconds) / median(off.cpu_seconds));
  }
  std::filesystem::remove_all(root);
  return 0;
}

}  // namespace
}  // namespace pacer

int main(int argc, char** argv) { return pacer::side_by_side::run_main(pacer::bench, argc, argv); }
