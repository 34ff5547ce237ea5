// Building a DataSplit from the [data] table of a run configuration.
//
// Keys (all under "data."):
//   source     "fashion-mnist" (default; Debian's dataset-fashion-mnist under
//              /usr/share/datasets/fashion-mnist), "mnist", "idx", "cifar10", "libsvm", "csv",
//              "synthetic"
//   dir        folder holding the standard file names (mnist, fashion-mnist, cifar10)
//   train, test                      file paths (libsvm, csv)
//   train_images, train_labels, test_images, test_labels   (idx)
//   generator  "least_squares" | "logistic" | "blobs"  (synthetic), with samples, features,
//              classes, noise, condition_number, test_samples
//   max_train, max_test              keep only the first N rows (0 = all), for quick runs
//   normalize  "scale" (default for images), "standard", "none"
//   features   (libsvm) width, 0 = infer;  label_column (csv)
#pragma once

#include <cstdint>

#include "pacer/core/config.h"
#include "pacer/data/dataset.h"

namespace pacer {

DataSplit load_data(const Config& config, uint64_t seed);

}  // namespace pacer
