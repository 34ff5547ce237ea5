// What the side-by-side benchmark programs (criterion_bench, checkpoint_bench, threads_bench)
// share: reading their `--name=value` arguments and summarising the rounds they time.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

namespace pacer::side_by_side {

// The value of `arg` when it starts with `name` (which ends in '='), else null.
inline const char* flag_value(const char* arg, const char* name) {
  const size_t n = std::strlen(name);
  return std::strncmp(arg, name, n) == 0 ? arg + n : nullptr;
}

// The median of the rounds' values (the mean of the middle two for an even count); v not empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The fastest round; v not empty.
inline double fastest(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

// A benchmark program's main(): runs `bench` and turns an exception into one line and exit 1.
inline int run_main(int (*bench)(int, char**), int argc, char** argv) {
  try {
    return bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

}  // namespace pacer::side_by_side
