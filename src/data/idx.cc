// IDX files (MNIST, Fashion-MNIST): a big-endian header of a magic number and the dimensions,
// then unsigned bytes.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "internal.h"
#include "pacer/core/error.h"
#include "pacer/data/loaders.h"

namespace pacer {
namespace data_internal {
namespace {

uint32_t big_endian(const unsigned char* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

const char* idx_kind(uint32_t magic) { return magic == kIdxImagesMagic ? "images" : "labels"; }

// Reads the magic number and the `dims` dimensions that follow it, failing unless the magic
// number is `expected`.
std::vector<uint32_t> read_header(GzFile& file, uint32_t expected, int dims) {
  const size_t header_bytes = 4 * (1 + static_cast<size_t>(dims));
  unsigned char header[16];
  const size_t got = file.read(header, header_bytes);
  if (got < 4) {
    fail("{}: truncated: file has {} bytes, too short for an IDX header", file.path(), got);
  }
  const uint32_t magic = big_endian(header);
  if (magic != expected) {
    if (magic == kIdxImagesMagic || magic == kIdxLabelsMagic) {
      fail("{}: this is an IDX {} file, expected IDX {} (magic 0x{:08x})", file.path(),
           idx_kind(magic), idx_kind(expected), expected);
    }
    fail("{}: not an IDX {} file: magic number is 0x{:08x}, expected 0x{:08x}", file.path(),
         idx_kind(expected), magic, expected);
  }
  if (got < header_bytes) {
    fail("{}: truncated: file has {} bytes, the IDX {} header needs {}", file.path(), got,
         idx_kind(expected), header_bytes);
  }
  std::vector<uint32_t> sizes;
  for (int d = 0; d < dims; ++d) sizes.push_back(big_endian(header + 4 * (1 + d)));
  return sizes;
}

// Reads exactly `bytes` bytes of payload, failing if the file holds fewer or more. Reads at most
// `cap` + 1 bytes: if the file holds more than `cap` of the `bytes` its header promises, calls
// `refuse` (which throws), so that a header that lies is still reported as a truncated file and
// a payload too large for the memory limit is never read.
std::string read_payload(GzFile& file, uint64_t bytes, const std::string& what,
                         uint64_t cap = UINT64_MAX - 1,
                         const std::function<void()>& refuse = nullptr) {
  std::string payload = file.read_up_to(std::min(bytes, cap) + 1);
  if (payload.size() > cap && payload.size() <= bytes) refuse();
  if (payload.size() < bytes) {
    fail("{}: truncated: header says {} ({} bytes), file has {} bytes after the header",
         file.path(), what, bytes, payload.size());
  }
  if (payload.size() > bytes) {
    fail("{}: header says {} ({} bytes), but the file has more data after them", file.path(), what,
         bytes);
  }
  return payload;
}

void check_count(const GzFile& file, uint32_t count, const char* what) {
  if (count == 0) fail("{}: header says 0 {}", file.path(), what);
  if (count > static_cast<uint32_t>(std::numeric_limits<int>::max())) {
    fail("{}: header says {} {}, more than the {} pacer can hold", file.path(), count, what,
         std::numeric_limits<int>::max());
  }
}

}  // namespace

uint32_t idx_magic(const std::string& path) {
  GzFile file(path);
  unsigned char bytes[4];
  return file.read(bytes, 4) == 4 ? big_endian(bytes) : 0;
}

IdxImages read_idx_images(const std::string& path, const MemoryLimit& limit) {
  GzFile file(path);
  const std::vector<uint32_t> dims = read_header(file, kIdxImagesMagic, 3);
  check_count(file, dims[0], "images");
  // Bounds the payload size before any allocation that depends on it.
  constexpr uint64_t kMaxPixels = uint64_t{1} << 24;
  if (dims[1] == 0 || dims[2] == 0 || uint64_t{dims[1]} * dims[2] > kMaxPixels) {
    fail("{}: header says images of {}x{} pixels, expected 1 to {} pixels per image", path, dims[1],
         dims[2], kMaxPixels);
  }
  IdxImages images;
  images.count = static_cast<int>(dims[0]);
  images.height = static_cast<int>(dims[1]);
  images.width = static_cast<int>(dims[2]);
  images.compressed = file.compressed();
  const uint64_t bytes = uint64_t{dims[0]} * dims[1] * dims[2];
  // The pixel bytes and the doubles load_idx makes of them must fit the memory limit.
  constexpr double kBytesPerPixel = 9;
  const auto refuse = [&] {
    limit.check(kBytesPerPixel * static_cast<double>(bytes),
                fmt::format("{}: header says {} images of {}x{} pixels, which", path, images.count,
                            images.height, images.width));
  };
  images.pixels = read_payload(
      file, bytes, fmt::format("{} images of {}x{}", images.count, images.height, images.width),
      static_cast<uint64_t>(limit.bytes() / kBytesPerPixel), refuse);
  return images;
}

IdxLabels read_idx_labels(const std::string& path) {
  GzFile file(path);
  const std::vector<uint32_t> dims = read_header(file, kIdxLabelsMagic, 1);
  check_count(file, dims[0], "labels");
  IdxLabels labels;
  labels.compressed = file.compressed();
  labels.labels = read_payload(file, dims[0], fmt::format("{} labels", dims[0]));
  return labels;
}

}  // namespace data_internal

Dataset load_idx(const std::string& images_path, const std::string& labels_path,
                 const MemoryLimit& limit) {
  const data_internal::IdxImages images = data_internal::read_idx_images(images_path, limit);
  const data_internal::IdxLabels labels = data_internal::read_idx_labels(labels_path);
  const auto label_count = static_cast<int64_t>(labels.labels.size());
  if (label_count != images.count) {
    fail("{}: {} labels, but the images file {} has {} images", labels_path, label_count,
         images_path, images.count);
  }
  Dataset data;
  data.name = images_path;
  const int cols = images.height * images.width;
  data.features.resize(images.count, cols);
  const auto* pixels = reinterpret_cast<const unsigned char*>(images.pixels.data());
  double* out = data.features.data();
  const int64_t total = static_cast<int64_t>(images.count) * cols;
  for (int64_t i = 0; i < total; ++i) out[i] = pixels[i];
  data.labels.resize(images.count);
  int largest = 0;
  for (int i = 0; i < images.count; ++i) {
    const int label = static_cast<unsigned char>(labels.labels[i]);
    data.labels[i] = label;
    largest = std::max(largest, label);
  }
  data.num_classes = largest + 1;
  return data;
}

}  // namespace pacer
