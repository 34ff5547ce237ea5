#include "pacer/data/source.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "internal.h"
#include "numpy.h"
#include "pacer/core/error.h"
#include "pacer/data/loaders.h"
#include "pacer/data/normalize.h"
#include "pacer/data/synthetic.h"

namespace pacer {
namespace {

constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
constexpr const char* kMnistDir = "/usr/share/datasets/mnist";
constexpr const char* kCifar10Dir = "/usr/share/datasets/cifar10";

// An integer key that must lie in [minimum, INT_MAX].
int int_key(const Config& config, std::string_view key, int fallback, int minimum) {
  const int64_t value = config.get_int(key, fallback);
  if (value < minimum || value > std::numeric_limits<int>::max()) {
    config.fail_key(key, minimum == 1 ? std::string("a positive integer")
                                      : fmt::format("an integer >= {}", minimum));
  }
  return static_cast<int>(value);
}

// A path key that may be absent ("" then).
std::string optional_path(const Config& config, std::string_view key) {
  return config.has(key) ? config.require_string(key) : std::string();
}

// Checks, once every key is read (a config mistake is reported before a missing file), that the
// paths the present `keys` name exist (Config::require_existing_path).
void require_existing(const Config& config, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (config.has(key)) config.require_existing_path(key);
  }
}

// A folder key with a default: given, it must exist, so a relative path that does not is
// reported with the folder it was resolved against.
std::string folder_key(const Config& config, std::string_view key, std::string_view fallback) {
  return config.has(key) ? config.require_existing_path(key) : config.get_string(key, fallback);
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

// `dir/name.gz`, or `dir/name` when only the uncompressed file is there.
std::string standard_file(const std::string& dir, const std::string& name,
                          const std::string& source) {
  const std::string plain = dir + "/" + name;
  if (is_file(plain + ".gz")) return plain + ".gz";
  if (is_file(plain)) return plain;
  fail("{}.gz: file not found (nor {}); data.dir must name the folder holding the {} files", plain,
       plain, source);
}

// A test set with no rows but the training set's width and classes.
Dataset empty_like(const Dataset& train) {
  Dataset test;
  test.features.resize(0, train.cols());
  test.num_classes = train.num_classes;
  return test;
}

void check_same_width(const DataSplit& split) {
  if (split.test.cols() != split.train.cols()) {
    fail("{}: {} features, but the training set {} has {}", split.test.name, split.test.cols(),
         split.train.name, split.train.cols());
  }
}

// Both sets share one class count: labels are class indices and the larger count covers both.
void share_classes(DataSplit& split) {
  const int classes = std::max(split.train.num_classes, split.test.num_classes);
  split.train.num_classes = split.test.num_classes = classes;
}

DataSplit load_image_dir(const Config& config, const std::string& source,
                         const MemoryLimit& limit) {
  const std::string dir =
      folder_key(config, "data.dir", source == "mnist" ? kMnistDir : kFashionMnistDir);
  // Every file is located before any is read, so a missing one is reported at once.
  const std::string train_images = standard_file(dir, "train-images-idx3-ubyte", source);
  const std::string train_labels = standard_file(dir, "train-labels-idx1-ubyte", source);
  const std::string test_images = standard_file(dir, "t10k-images-idx3-ubyte", source);
  const std::string test_labels = standard_file(dir, "t10k-labels-idx1-ubyte", source);
  DataSplit split;
  split.train = load_idx(train_images, train_labels, limit);
  split.test = load_idx(test_images, test_labels, limit);
  return split;
}

DataSplit load_idx_files(const Config& config, const MemoryLimit& limit) {
  // Keys are all read before any file, so a config mistake is reported before an I/O one.
  const std::string train_images = config.require_string("data.train_images");
  const std::string train_labels = config.require_string("data.train_labels");
  const bool has_test = config.has("data.test_images") || config.has("data.test_labels");
  const std::string test_images = has_test ? config.require_string("data.test_images") : "";
  const std::string test_labels = has_test ? config.require_string("data.test_labels") : "";
  require_existing(
      config, {"data.train_images", "data.train_labels", "data.test_images", "data.test_labels"});
  DataSplit split;
  split.train = load_idx(train_images, train_labels, limit);
  split.test = has_test ? load_idx(test_images, test_labels, limit) : empty_like(split.train);
  return split;
}

DataSplit load_cifar_dir(const Config& config, const MemoryLimit& limit) {
  const std::string dir = folder_key(config, "data.dir", kCifar10Dir);
  const auto file = [&](const std::string& name) {
    const std::string path = dir + "/" + name;
    if (!is_file(path)) {
      fail(
          "{}: file not found; data.dir must name the folder holding the CIFAR-10 binary batches "
          "data_batch_1.bin .. data_batch_5.bin and test_batch.bin",
          path);
    }
    return path;
  };
  std::vector<std::string> train_files;
  for (int b = 1; b <= 5; ++b) train_files.push_back(file(fmt::format("data_batch_{}.bin", b)));
  const std::string test_file = file("test_batch.bin");
  DataSplit split;
  split.train = load_cifar10(train_files, limit);
  split.test = load_cifar10({test_file}, limit);
  return split;
}

// Train and test (none when test_name is empty) with their labels coded together, so a class
// missing from one file does not shift the other's class indices.
DataSplit coded_split(data_internal::RawTable train, const std::string& train_name,
                      data_internal::RawTable test, const std::string& test_name) {
  const auto coding = data_internal::LabelCoding::fit({&train.labels, &test.labels});
  DataSplit split;
  split.train = data_internal::to_dataset(std::move(train), coding, train_name);
  if (test_name.empty()) {
    split.test = empty_like(split.train);
  } else {
    split.test = data_internal::to_dataset(std::move(test), coding, test_name);
  }
  return split;
}

// LIBSVM or CSV: train and test are read raw and their labels coded together, so a class missing
// from one file does not shift the other's class indices.
DataSplit load_text(const Config& config, bool libsvm, const MemoryLimit& limit) {
  const int width = libsvm ? int_key(config, "data.features", 0, 0) : 0;
  const int label_column =
      libsvm ? 0 : int_key(config, "data.label_column", -1, std::numeric_limits<int>::min());
  const auto read = [&](const std::string& path) {
    return libsvm ? data_internal::read_libsvm(path, width, limit)
                  : data_internal::read_csv(path, label_column, limit);
  };
  const std::string train_path = config.require_string("data.train");
  const std::string test_path = optional_path(config, "data.test");
  require_existing(config, {"data.train", "data.test"});
  data_internal::RawTable train = read(train_path);
  data_internal::RawTable test;
  if (!test_path.empty()) {
    test = read(test_path);
    // LIBSVM files infer their width from the largest index each one uses.
    const Eigen::Index cols = std::max(train.features.cols(), test.features.cols());
    limit.check(
        8.0 * static_cast<double>(train.features.rows() + test.features.rows()) *
            static_cast<double>(cols),
        fmt::format("{} and {}: {} + {} samples x {} features as dense matrices", train_path,
                    test_path, train.features.rows(), test.features.rows(), cols));
    for (data_internal::RawTable* table : {&train, &test}) {
      if (libsvm && table->features.cols() < cols) {
        table->features.conservativeResizeLike(RowMatrix::Zero(table->features.rows(), cols));
      }
    }
  }
  return coded_split(std::move(train), train_path, std::move(test), test_path);
}

// NumPy arrays: data.train and data.labels (.npy files) or data.train alone (an .npz holding X
// and y), and the same for data.test and data.test_labels.
DataSplit load_numpy_files(const Config& config, const MemoryLimit& limit) {
  // Keys are all read before any file, so a config mistake is reported before an I/O one.
  const data_internal::NumpyFiles train{config.require_string("data.train"),
                                        optional_path(config, "data.labels"), "data.train",
                                        "data.labels"};
  const bool has_test = config.has("data.test") || config.has("data.test_labels");
  const data_internal::NumpyFiles test{has_test ? config.require_string("data.test") : "",
                                       optional_path(config, "data.test_labels"), "data.test",
                                       "data.test_labels"};
  require_existing(config, {"data.train", "data.labels", "data.test", "data.test_labels"});
  data_internal::RawTable train_table = data_internal::read_numpy(train, limit);
  data_internal::RawTable test_table;
  if (has_test) test_table = data_internal::read_numpy(test, limit);
  return coded_split(std::move(train_table), train.path, std::move(test_table), test.path);
}

// What the generator and the split after it hold at once: the rows and labels twice (generated,
// then copied into train and test), a correlated covariance's rotation and the Gaussian matrix it
// comes from, the blob centres.
void check_synthetic_memory(const std::string& generator, const SyntheticOptions& options,
                            int test_rows, const MemoryLimit& limit) {
  const double features = options.features;
  double bytes = 16.0 * options.samples * (features + 1);
  if (generator != "blobs" && options.condition_number != 1) bytes += 16.0 * features * features;
  if (generator == "blobs") bytes += 8.0 * options.classes * features;
  limit.check(
      bytes, fmt::format("data.samples = {}{} with data.features = {}", options.samples - test_rows,
                         test_rows > 0 ? fmt::format(" + data.test_samples = {}", test_rows)
                                       : std::string(),
                         options.features));
}

// One generator call for train and test together, split afterwards: both sets come from the
// same problem (x*, centres), and the training rows do not depend on test_samples.
DataSplit load_synthetic(const Config& config, uint64_t seed, const MemoryLimit& limit) {
  const std::string generator =
      config.get_choice("data.generator", "least_squares", {"least_squares", "logistic", "blobs"});
  SyntheticOptions options;
  options.samples = int_key(config, "data.samples", options.samples, 1);
  options.features = int_key(config, "data.features", options.features, 1);
  if (generator == "blobs") {
    options.classes = int_key(config, "data.classes", options.classes, 2);
  }
  options.noise = config.get_double("data.noise", options.noise);
  if (!(options.noise >= 0) || !std::isfinite(options.noise)) {
    config.fail_key("data.noise", "a finite number >= 0");
  }
  if (generator != "blobs") {
    options.condition_number = config.get_double("data.condition_number", 1.0);
    if (!(options.condition_number >= 1) || !std::isfinite(options.condition_number)) {
      config.fail_key("data.condition_number", "a finite number >= 1");
    }
  }
  const int train_rows = options.samples;
  const int test_rows = int_key(config, "data.test_samples", 0, 0);
  if (int64_t{train_rows} + test_rows > std::numeric_limits<int>::max()) {
    config.fail_key("data.test_samples", "a total with data.samples below 2^31");
  }
  options.samples = train_rows + test_rows;
  check_synthetic_memory(generator, options, test_rows, limit);

  Rng rng(seed, "data.synthetic");
  Dataset all = generator == "least_squares" ? make_least_squares(options, rng)
                : generator == "logistic"    ? make_logistic(options, rng)
                                             : make_blobs(options, rng);
  const auto rows = [&](int first, int count, const char* part) {
    Dataset out;
    out.features = all.features.middleRows(first, count);
    out.labels = all.labels.segment(first, count);
    out.num_classes = all.num_classes;
    out.name = all.name + part;
    return out;
  };
  DataSplit split;
  split.train = rows(0, train_rows, " (train)");
  split.test = rows(train_rows, test_rows, " (test)");
  return split;
}

void keep_first(Dataset& data, int rows) {
  if (rows == 0 || rows >= data.rows()) return;
  data.features.conservativeResize(rows, Eigen::NoChange);
  data.labels.conservativeResize(rows);
}

}  // namespace

DataSplit load_data(const Config& config, uint64_t seed) {
  const std::string source = config.get_choice(
      "data.source", "fashion-mnist",
      {"fashion-mnist", "mnist", "idx", "cifar10", "libsvm", "csv", "npy", "synthetic"});
  const bool images =
      source == "fashion-mnist" || source == "mnist" || source == "idx" || source == "cifar10";
  // Keys are read before any file, so a config mistake is reported before an I/O one.
  const int max_train = int_key(config, "data.max_train", 0, 0);
  const int max_test = int_key(config, "data.max_test", 0, 0);
  const std::string method =
      config.get_choice("data.normalize", images ? "scale" : "none", {"none", "scale", "standard"});
  const MemoryLimit limit = MemoryLimit::from_config(config);

  DataSplit split;
  if (source == "fashion-mnist" || source == "mnist") {
    split = load_image_dir(config, source, limit);
  } else if (source == "idx") {
    split = load_idx_files(config, limit);
  } else if (source == "cifar10") {
    split = load_cifar_dir(config, limit);
  } else if (source == "libsvm" || source == "csv") {
    split = load_text(config, source == "libsvm", limit);
  } else if (source == "npy") {
    split = load_numpy_files(config, limit);
  } else {
    split = load_synthetic(config, seed, limit);
  }
  if (split.test.rows() > 0) check_same_width(split);
  share_classes(split);
  keep_first(split.train, max_train);
  keep_first(split.test, max_test);
  normalize(method, split);
  return split;
}

}  // namespace pacer
