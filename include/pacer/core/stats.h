// Small summary statistics shared by the summaries of every engine and of pacer compare.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pacer {

// A histogram {value: count} as the JSON object summary.json uses: {"0": 12, "1": 7, ...}.
template <typename Value>
nlohmann::json histogram_json(const std::map<Value, int64_t>& histogram) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [value, count] : histogram) out[std::to_string(value)] = count;
  return out;
}

// The median of `values` (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> values);

}  // namespace pacer
