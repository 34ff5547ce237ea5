// Building a DataSplit from the [data] table of a run configuration.
//
// Keys (all under "data."); only the keys of the chosen source are read, so a key meant for
// another source is left unread and reported by Config::reject_unread_keys:
//   source     "fashion-mnist" (default; Debian's dataset-fashion-mnist under
//              /usr/share/datasets/fashion-mnist), "mnist", "idx", "cifar10", "libsvm", "csv",
//              "npy", "synthetic"
//   dir        folder holding the standard file names: fashion-mnist and mnist (defaults
//              /usr/share/datasets/fashion-mnist and /usr/share/datasets/mnist):
//              {train,t10k}-{images-idx3,labels-idx1}-ubyte, each with or without ".gz";
//              cifar10 (default /usr/share/datasets/cifar10): data_batch_1.bin .. data_batch_5.bin
//              and test_batch.bin. A missing file is an Error naming it.
//   train, test                      file paths (libsvm, csv, npy); test is optional
//   labels, test_labels              (npy) the labels' .npy files; absent when train (test) is an
//                                    .npz archive holding arrays X and y (loaders.h: load_numpy)
//   train_images, train_labels, test_images, test_labels   (idx); the test pair is optional
//   generator  "least_squares" (default) | "logistic" | "blobs"  (synthetic), with samples
//              (1000), features (20), classes (3, blobs only), noise (0.1), condition_number (1,
//              least_squares and logistic only), test_samples (0)
//   max_train, max_test              keep only the first N rows (0 = all), for quick runs
//   normalize  "scale" (default for image sources), "standard", "none" (default otherwise);
//              fitted on the (truncated) training set, applied to both
//   features   (libsvm) width, 0 = infer;  label_column (csv, default -1 = last)
// and the top-level memory_limit_gb (core/memory.h): every loader and generator refuses, before
// allocating it, a data set that needs more memory than that limit. A path that does not exist
// is an Error naming the key and, for a relative path, the folder it was resolved against (the
// working directory). docs/data.md documents every source with an example.
//
// Both sets always have the same width and num_classes. LIBSVM/CSV/NumPy labels are mapped to
// classes over train and test together, so a class absent from one file keeps its index in the
// other.
// A synthetic test set comes from the same problem (x*, blob centres) as the training set: one
// generator call on the stream Rng(seed, "data.synthetic") makes samples + test_samples rows,
// the first `samples` of them are the training set, and they do not change with test_samples.
#pragma once

#include <cstdint>

#include "pacer/core/config.h"
#include "pacer/data/dataset.h"

namespace pacer {

DataSplit load_data(const Config& config, uint64_t seed);

}  // namespace pacer
