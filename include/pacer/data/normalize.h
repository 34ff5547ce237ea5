// Feature normalisation, fitted on the training set and applied to both sets.
#pragma once

#include <string>

#include "pacer/data/dataset.h"

namespace pacer {

// "none": unchanged. "scale": divide every feature by the largest absolute training value (so
// pixels 0..255 become 0..1). "standard": per-feature zero mean and unit variance on the
// training set (features with zero variance are only centred).
// Unknown names are an Error listing the valid ones.
void normalize(const std::string& method, DataSplit& split);

}  // namespace pacer
