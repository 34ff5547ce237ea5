// describe_data_file: what a data file holds, detected from its content.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "internal.h"
#include "numpy.h"
#include "pacer/core/error.h"
#include "pacer/data/loaders.h"

namespace pacer {
namespace {

using data_internal::GzFile;

// Label histograms longer than this are cut, with a count of what was left out.
constexpr int kMaxHistogramEntries = 20;

std::string compression(bool compressed) { return compressed ? " (gzip-compressed)" : ""; }

std::string histogram(const std::map<double, int64_t>& counts) {
  std::string out;
  int shown = 0;
  for (const auto& [label, count] : counts) {
    if (shown == kMaxHistogramEntries) {
      out += fmt::format(", ... ({} more)", counts.size() - shown);
      break;
    }
    out += fmt::format("{}{:g}: {}", shown == 0 ? "" : ", ", label, count);
    ++shown;
  }
  return out;
}

// The "classes" and "labels" lines: a histogram when every label is an integer, else the range.
std::string label_lines(const std::vector<double>& labels) {
  const auto coding = data_internal::LabelCoding::fit({&labels});
  if (!coding.classification()) {
    const auto [low, high] = std::minmax_element(labels.begin(), labels.end());
    return fmt::format("  labels:   real-valued (regression), {:g} to {:g}\n", *low, *high);
  }
  std::map<double, int64_t> counts;
  for (double label : labels) ++counts[label];
  return fmt::format("  classes:  {}\n  labels:   {}\n", counts.size(), histogram(counts));
}

std::string value_line(const RowMatrix& features) {
  return fmt::format("  values:   {:g} to {:g}\n", features.minCoeff(), features.maxCoeff());
}

std::string describe_idx_images(const std::string& path) {
  const data_internal::IdxImages images = data_internal::read_idx_images(path);
  const auto [low, high] = std::minmax_element(
      reinterpret_cast<const unsigned char*>(images.pixels.data()),
      reinterpret_cast<const unsigned char*>(images.pixels.data() + images.pixels.size()));
  return fmt::format(
      "{}: IDX images{}\n  samples:  {}\n  features: {} ({}x{} pixels)\n  values:   {} to {}\n",
      path, compression(images.compressed), images.count, images.height * images.width,
      images.height, images.width, *low, *high);
}

std::string describe_idx_labels(const std::string& path) {
  const data_internal::IdxLabels file = data_internal::read_idx_labels(path);
  std::vector<double> labels;
  labels.reserve(file.labels.size());
  for (char label : file.labels) labels.push_back(static_cast<unsigned char>(label));
  return fmt::format("{}: IDX labels{}\n  samples:  {}\n{}", path, compression(file.compressed),
                     labels.size(), label_lines(labels));
}

std::string describe_cifar(const std::string& path) {
  const Dataset data = load_cifar10({path});
  std::vector<double> labels(data.labels.begin(), data.labels.end());
  return fmt::format("{}: CIFAR-10 binary batch\n  samples:  {}\n  features: {} (3x32x32)\n{}{}",
                     path, data.rows(), data.cols(), label_lines(labels),
                     value_line(data.features));
}

std::string describe_text(const std::string& path, bool libsvm, bool compressed) {
  const data_internal::RawTable table =
      libsvm ? data_internal::read_libsvm(path, 0) : data_internal::read_csv(path, -1);
  std::string out =
      fmt::format("{}: {}{}\n  samples:  {}\n  features: {}\n", path,
                  libsvm ? "LIBSVM text" : "CSV text (label in the last column)",
                  compression(compressed), table.labels.size(), table.features.cols());
  out += label_lines(table.labels);
  out += value_line(table.features);
  if (libsvm) {
    const auto nonzeros = static_cast<double>((table.features.array() != 0).count());
    out += fmt::format("  nonzero:  {:.1f}%\n", 100.0 * nonzeros / table.features.size());
  }
  return out;
}

// One .npy array: its dtype and shape; a 1-d array is described as labels, any other by its range.
std::string describe_npy(const std::string& path) {
  const data_internal::NpyArray array =
      data_internal::read_npy(path, path, MemoryLimit::system_default());
  std::string out = fmt::format("{}: NumPy .npy array\n  dtype:    '{}'\n  shape:    {}\n", path,
                                array.type.descr, array.shape_text());
  if (array.count() == 0) return out;
  if (array.shape.size() == 1) {
    std::vector<double> labels(array.count());
    array.to_doubles(0, labels.size(), labels.data());
    return out + label_lines(labels);
  }
  // The range in chunks, so that a large array is never held as doubles.
  constexpr uint64_t kChunk = 1 << 16;
  std::vector<double> chunk(kChunk);
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (uint64_t first = 0; first < array.count(); first += kChunk) {
    const uint64_t n = std::min(kChunk, array.count() - first);
    array.to_doubles(first, n, chunk.data());
    const auto [lo, hi] = std::minmax_element(chunk.begin(), chunk.begin() + n);
    low = std::min(low, *lo);
    high = std::max(high, *hi);
  }
  return out + fmt::format("  values:   {:g} to {:g}\n", low, high);
}

// An .npz archive holding a data set (arrays X and y).
std::string describe_npz(const std::string& path) {
  const data_internal::RawTable table =
      data_internal::read_numpy({path, "", "", ""}, MemoryLimit::system_default());
  return fmt::format(
      "{}: NumPy .npz archive (arrays X and y)\n  samples:  {}\n  features: {}\n{}{}", path,
      table.labels.size(), table.features.cols(), label_lines(table.labels),
      value_line(table.features));
}

// Text as written by hand or by a program: no control characters other than tab and line ends.
bool looks_like_text(std::string_view sample) {
  return std::none_of(sample.begin(), sample.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\t' && c != '\n' && c != '\r') || byte == 0x7f;
  });
}

// LIBSVM when an early line has an index:value token after its label.
bool looks_like_libsvm(std::string_view sample) {
  bool found = false;
  int lines = 0;
  data_internal::for_each_line(sample, [&](std::string_view line, int) {
    if (found || ++lines > 20) return;
    line = data_internal::trim(line);
    const size_t space = line.find_first_of(" \t");
    if (space == std::string_view::npos) return;
    const std::string_view rest = data_internal::trim(line.substr(space));
    const size_t colon = rest.find(':');
    found = colon != std::string_view::npos && colon > 0 &&
            std::all_of(rest.begin(), rest.begin() + colon,
                        [](char c) { return c >= '0' && c <= '9'; });
  });
  return found;
}

}  // namespace

std::string describe_data_file(const std::string& path) {
  const uint32_t magic = data_internal::idx_magic(path);
  if (magic == data_internal::kIdxImagesMagic) return describe_idx_images(path);
  if (magic == data_internal::kIdxLabelsMagic) return describe_idx_labels(path);

  if (data_internal::is_zip(path)) return describe_npz(path);
  GzFile file(path);
  const std::string sample = file.read_up_to(1 << 16);
  const bool compressed = file.compressed();
  if (sample.empty()) fail("{}: empty file", path);
  if (sample.rfind("\x93NUMPY", 0) == 0) return describe_npy(path);
  if (!looks_like_text(sample)) {
    std::error_code ec;
    const uint64_t size =
        compressed ? sample.size() + file.read_rest().size() : std::filesystem::file_size(path, ec);
    if (!ec && size % data_internal::kCifarRecordBytes == 0) return describe_cifar(path);
    fail(
        "{}: unrecognised format; expected IDX (magic 0x00000803 or 0x00000801), a CIFAR-10 "
        "binary batch (a multiple of 3073 bytes), NumPy .npy or .npz, LIBSVM or CSV text",
        path);
  }
  return describe_text(path, looks_like_libsvm(sample), compressed);
}

}  // namespace pacer
