// Checks shared by the coding tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "pacer/core/vector.h"

namespace pacer::testing {

// ‖aᵀ B − 1ᵀ‖_∞ computed densely from its definition, independently of the decoders (a is zero
// on the workers that did not respond, so this is ‖a_Fᵀ B_F − 1ᵀ‖_∞).
inline double definition_residual(const RowMatrix& b, const std::vector<double>& a) {
  double worst = 0;
  for (int p = 0; p < b.cols(); ++p) {
    double column = 0;
    for (int i = 0; i < b.rows(); ++i) column += a[i] * b(i, p);
    worst = std::max(worst, std::abs(column - 1.0));
  }
  return worst;
}

}  // namespace pacer::testing
