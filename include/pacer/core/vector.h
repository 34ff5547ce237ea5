// Flat parameter vectors.
//
// Every model exposes its parameters as one contiguous vector of doubles. Methods, decoders and
// engines only ever see this flat view; a model maps it onto its own layout.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace pacer {

using Vec = Eigen::VectorXd;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace pacer
