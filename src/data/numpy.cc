// NumPy data sets: features and labels from .npy files or an .npz archive.
#include "numpy.h"

#include <cmath>

#include "pacer/core/error.h"
#include "pacer/data/loaders.h"

namespace pacer {
namespace data_internal {
namespace {

// "data.train: X.npy", or the path alone outside a config.
std::string describe(const std::string& key, const std::string& path) {
  return key.empty() ? path : key + ": " + path;
}

// The features and labels arrays of one set, shapes not yet checked.
std::pair<NpyArray, NpyArray> read_arrays(const NumpyFiles& files, const MemoryLimit& limit) {
  const std::string name = describe(files.key, files.path);
  const std::string labels_key = files.labels_key.empty() ? "a labels file" : files.labels_key;
  if (is_zip(files.path)) {
    if (!files.labels_path.empty()) {
      fail("{} is an .npz archive, which holds its labels (array y); {} is for .npy features only",
           name, labels_key);
    }
    auto arrays = read_npz(files.path, name, {"X", "y"}, limit);
    return {std::move(arrays.at("X")), std::move(arrays.at("y"))};
  }
  if (files.labels_path.empty()) {
    fail(
        "{}: an .npy file holds one array (the features); the labels need {} (or save both with "
        "np.savez(file, X=features, y=labels))",
        name, labels_key);
  }
  NpyArray features = read_npy(files.path, name, limit);
  NpyArray labels =
      read_npy(files.labels_path, describe(files.labels_key, files.labels_path), limit);
  return {std::move(features), std::move(labels)};
}

// The index of the first element that is not finite, or -1.
int64_t first_not_finite(const double* values, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) return i;
  }
  return -1;
}

}  // namespace

RawTable read_numpy(const NumpyFiles& files, const MemoryLimit& limit) {
  const auto [features, labels] = read_arrays(files, limit);
  if (features.shape.size() < 2 || features.shape[0] == 0 || features.count() == 0) {
    fail(
        "{} holds shape {}; expected (rows, features) or (rows, d1, d2, ...) with rows >= 1 and "
        "at least one feature",
        features.name, features.shape_text());
  }
  const uint64_t rows = features.shape[0], cols = features.count() / rows;
  if (labels.shape.size() != 1 || labels.shape[0] != rows) {
    fail("{} holds shape {}; expected (rows,) with rows = {} as in {}", labels.name,
         labels.shape_text(), rows, features.file);
  }
  if (rows > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
      cols > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    fail("{} holds shape {}; pacer reads at most 2^31 - 1 rows and features", features.name,
         features.shape_text());
  }
  limit.check(
      8.0 * static_cast<double>(rows) * static_cast<double>(cols + 1),
      fmt::format("{}: {} rows x {} features as a dense matrix", features.name, rows, cols));
  RawTable table;
  table.features.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  features.to_doubles(0, rows * cols, table.features.data());
  if (const int64_t bad = first_not_finite(table.features.data(), table.features.size());
      bad >= 0) {
    fail("{}: row {}, feature {} is {}; expected finite numbers", features.name, bad / cols,
         bad % cols, table.features.data()[bad]);
  }
  table.labels.resize(rows);
  labels.to_doubles(0, rows, table.labels.data());
  if (const int64_t bad = first_not_finite(table.labels.data(), rows); bad >= 0) {
    fail("{}: row {} is {}; expected finite numbers", labels.name, bad, table.labels[bad]);
  }
  return table;
}

}  // namespace data_internal

Dataset load_numpy(const std::string& path, const std::string& labels_path,
                   const MemoryLimit& limit) {
  data_internal::RawTable raw = data_internal::read_numpy({path, labels_path, "", ""}, limit);
  const auto coding = data_internal::LabelCoding::fit({&raw.labels});
  return data_internal::to_dataset(std::move(raw), coding, path);
}

}  // namespace pacer
