// Small summary statistics shared by the summaries of every engine and of pacer compare.
#pragma once

#include <vector>

namespace pacer {

// The median of `values` (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> values);

}  // namespace pacer
