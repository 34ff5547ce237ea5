// Synthetic problems with known structure.
//
// Each generator draws its problem parameters (x*, the covariance's rotation, the blob centres)
// from `rng` first and then the rows one at a time, so a call for N rows starts with exactly the
// rows of a call for fewer (same rng state): a test set can be generated in the same call and
// split off without changing the training set. Invalid options are Errors.
#pragma once

#include <cstdint>

#include "pacer/core/rng.h"
#include "pacer/data/dataset.h"

namespace pacer {

struct SyntheticOptions {
  int samples = 1000;
  int features = 20;
  int classes = 3;                // blobs only
  double noise = 0.1;             // label noise std (least squares), flip-probability-like logit
                                  // noise (logistic), cluster std (blobs)
  double condition_number = 1.0;  // of the feature covariance (least squares, logistic)
};

// Least squares: rows a_j ~ N(0, Σ) with Σ's eigenvalues spaced geometrically from 1 to
// 1/condition_number, y_j = a_j·x* + noise·N(0,1), x* ~ N(0, I). num_classes = 0.
Dataset make_least_squares(const SyntheticOptions& options, Rng& rng);

// Binary logistic: features as above, label 1 with probability sigmoid(a_j·x* + noise·N(0,1)).
Dataset make_logistic(const SyntheticOptions& options, Rng& rng);

// Gaussian blobs: `classes` centres ~ N(0, 4I); each sample is its class centre plus
// noise·N(0, I); classes equally frequent (every block of `classes` consecutive rows holds each
// class once, in random order).
Dataset make_blobs(const SyntheticOptions& options, Rng& rng);

}  // namespace pacer
