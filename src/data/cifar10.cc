// CIFAR-10 binary batches.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "internal.h"
#include "pacer/core/error.h"
#include "pacer/data/loaders.h"

namespace pacer {

Dataset load_cifar10(const std::vector<std::string>& batch_paths, const MemoryLimit& limit) {
  using data_internal::kCifarRecordBytes;
  if (batch_paths.empty()) fail("CIFAR-10: no batch files given");
  // A record's bytes while the files are held, and its 3072 pixels as doubles.
  constexpr double kBytesPerRecord = kCifarRecordBytes + 8.0 * (kCifarRecordBytes - 1);
  const auto check_memory = [&](const std::string& path, double records) {
    limit.check(records * kBytesPerRecord,
                fmt::format("{}: {:.0f} CIFAR-10 records{}", path, records,
                            batch_paths.size() > 1 ? " (with the other batch files)" : ""));
  };
  {
    // Plain files are measured before any is read.
    double records = 0;
    for (const std::string& path : batch_paths) {
      std::error_code ec;
      const uintmax_t size = std::filesystem::file_size(path, ec);
      if (!ec) records += static_cast<double>(size / kCifarRecordBytes);
      if (!ec) check_memory(path, records);
    }
  }
  std::vector<std::string> contents;
  int64_t total_records = 0;
  const auto check_size = [](const std::string& path, uint64_t size) {
    if (size == 0 || size % kCifarRecordBytes != 0) {
      fail(
          "{}: size {} bytes is not a positive multiple of the CIFAR-10 record size {} (1 label "
          "byte + 3072 pixel bytes)",
          path, size, kCifarRecordBytes);
    }
  };
  for (const std::string& path : batch_paths) {
    data_internal::GzFile file(path);
    // A plain file is checked before it is read, so a wrong (possibly huge) file fails at once.
    std::error_code ec;
    const uintmax_t plain_size = std::filesystem::file_size(path, ec);
    if (!file.compressed() && !ec) check_size(path, plain_size);
    std::string bytes = file.read_rest();
    check_size(path, bytes.size());
    const int64_t records = static_cast<int64_t>(bytes.size() / kCifarRecordBytes);
    for (int64_t r = 0; r < records; ++r) {
      const auto label = static_cast<unsigned char>(bytes[r * kCifarRecordBytes]);
      if (label > 9) fail("{}: record {}: label {} is not in 0..9", path, r, label);
    }
    total_records += records;
    contents.push_back(std::move(bytes));
    check_memory(path, static_cast<double>(total_records));  // a gzip file's size is known now
  }

  Dataset data;
  data.name = batch_paths.size() == 1 ? batch_paths[0]
                                      : fmt::format("{} and {} more CIFAR-10 batches",
                                                    batch_paths[0], batch_paths.size() - 1);
  data.num_classes = 10;
  constexpr int kPixels = kCifarRecordBytes - 1;
  data.features.resize(total_records, kPixels);
  data.labels.resize(total_records);
  int64_t row = 0;
  for (const std::string& bytes : contents) {
    const auto* record = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto* end = record + bytes.size();
    for (; record < end; record += kCifarRecordBytes, ++row) {
      data.labels[row] = record[0];
      double* out = data.features.row(row).data();
      for (int i = 0; i < kPixels; ++i) out[i] = record[1 + i];
    }
  }
  return data;
}

}  // namespace pacer
