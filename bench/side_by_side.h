// What the side-by-side benchmark programs (criterion_bench, checkpoint_bench, threads_bench)
// share: reading their `--name=value` arguments and summarising the rounds they time.
#pragma once

#include <algorithm>
#include <cstring>
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

}  // namespace pacer::side_by_side
