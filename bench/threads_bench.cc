// The main job's wall time with 1, 2, 4, ... threads side by side in one process (engine.threads,
// core/compute_pool.h; issue #15): the speedup that computing the workers' jobs and the
// evaluations on a thread pool gives, for each power of two up to the processors available (and
// the processor count itself when it is not a power of two).
//
// The workload is scripts/run-main.sh's comparison: configs/fashion-mnist.toml (Debian's
// dataset-fashion-mnist), the nine synchronous methods of the README's table, one seed, written
// into a temporary folder (figures included, as `pacer compare` writes them). Each round runs the
// comparison once per thread count, in turn, so that every count sees the same machine load; the
// fastest round of each is kept. Every count must write the same compare.csv, byte for byte
// (results do not depend on the number of threads): the benchmark fails otherwise.
//
// At the end one line per thread count:
//   threads 2: 14.1 s, speedup 1.83 over 1 thread (1 thread: 25.8 s)
// Run with
//   build/bench/threads_bench [--rounds=N] [--methods=dgd,pgc-cr] [--config=FILE]
// from the repository root (the config path is relative to it).
#include <fmt/format.h>
#include <stdlib.h>

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

constexpr const char* kMainMethods =
    "dgd,is-sgd:k=2,gc-fr,gc-cr,is-gc-fr,is-gc-cr,pgc-fr,pgc-cr,pgc-cr:decoder=exact";

struct Options {
  int rounds = 2;
  std::string methods = kMainMethods;
  std::string config = "configs/fashion-mnist.toml";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&](const char* name) { return side_by_side::flag_value(argv[k], name); };
    if (const char* v = value("--rounds=")) {
      o.rounds = std::max(1, std::atoi(v));
    } else if (const char* v = value("--methods=")) {
      o.methods = v;
    } else if (const char* v = value("--config=")) {
      o.config = v;
    } else {
      fail(
          "threads_bench: unknown argument {} (expected --rounds=N, --methods=LIST, --config=FILE)",
          arg);
    }
  }
  return o;
}

// 1, 2, 4, ... up to `cores`, and `cores` itself.
std::vector<int> thread_counts(int cores) {
  std::vector<int> counts;
  for (int k = 1; k <= cores; k *= 2) counts.push_back(k);
  if (counts.back() != cores) counts.push_back(cores);
  return counts;
}

// Runs the comparison with `threads` threads into `dir`; returns wall seconds.
double run_once(const Options& o, int threads, const std::string& dir) {
  setenv("PACER_ENGINE_THREADS", std::to_string(threads).c_str(), /*overwrite=*/1);
  std::filesystem::remove_all(dir);
  CompareOptions compare;
  compare.methods = split_method_list(o.methods);
  compare.out_dir = dir;
  const Config config = Config::load(o.config);
  const double begin = steady_seconds();
  run_comparison(config, compare);
  return steady_seconds() - begin;
}

int bench(int argc, char** argv) {
  const Options o = parse(argc, argv);
  set_log_level(LogLevel::kWarning);  // no progress lines between the timings
  const std::vector<int> counts = thread_counts(available_processors());
  const std::string root =
      (std::filesystem::temp_directory_path() / "pacer-threads-bench").string();
  std::vector<double> best(counts.size(), std::numeric_limits<double>::infinity());
  std::string reference_csv;
  for (int round = 0; round < o.rounds; ++round) {
    for (size_t c = 0; c < counts.size(); ++c) {
      const std::string dir = fmt::format("{}/t{}", root, counts[c]);
      const double seconds = run_once(o, counts[c], dir);
      best[c] = std::min(best[c], seconds);
      std::printf("round %d, %d thread%s: %.2f s\n", round + 1, counts[c],
                  counts[c] == 1 ? "" : "s", seconds);
      std::fflush(stdout);
      const std::string csv = read_file(dir + "/compare.csv");
      if (reference_csv.empty()) reference_csv = csv;
      if (csv != reference_csv) {
        fail("threads_bench: compare.csv with {} threads differs from 1 thread's ({})", counts[c],
             dir);
      }
    }
  }
  std::filesystem::remove_all(root);
  std::printf(
      "main job (%s, methods %s), fastest of %d round%s; compare.csv identical for every "
      "count\n",
      o.config.c_str(), o.methods.c_str(), o.rounds, o.rounds == 1 ? "" : "s");
  for (size_t c = 0; c < counts.size(); ++c) {
    std::printf("threads %d: %.2f s, speedup %.2f over 1 thread (1 thread: %.2f s)\n", counts[c],
                best[c], best[0] / best[c], best[0]);
  }
  return 0;
}

}  // namespace
}  // namespace pacer

int main(int argc, char** argv) { return pacer::side_by_side::run_main(pacer::bench, argc, argv); }
