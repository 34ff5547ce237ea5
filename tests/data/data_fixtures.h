// Writers for small data files in the formats the loaders read, for the data tests.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pacer/core/error.h"
#include "test_util.h"

namespace pacer::testing {

// For EXPECT_PRED2(contains, text, part), which prints both on failure.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::string big_endian(uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
          static_cast<char>(value >> 8), static_cast<char>(value)};
}

// An IDX file: magic, the dimensions, then `payload` (written as is, so tests can cut it short).
inline std::string idx_bytes(uint32_t magic, const std::vector<uint32_t>& dims,
                             const std::string& payload) {
  std::string out = big_endian(magic);
  for (uint32_t d : dims) out += big_endian(d);
  return out + payload;
}

// Bytes 0, 1, 2, ... (mod 256).
inline std::string counting_bytes(size_t size) {
  std::string out(size, '\0');
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<char>(i % 256);
  return out;
}

inline void write_gzip(const std::string& path, const std::string& content) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, content.data(), static_cast<unsigned>(content.size())),
            static_cast<int>(content.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

// Writes an images file of `count` images of rows x cols with pixel bytes 0, 1, 2, ... and a
// labels file with `labels`.
inline void write_idx_pair(const std::string& images_path, const std::string& labels_path,
                           uint32_t count, uint32_t rows, uint32_t cols, const std::string& labels,
                           bool gzip) {
  const std::string images =
      idx_bytes(0x803, {count, rows, cols}, counting_bytes(count * rows * cols));
  const std::string label_file = idx_bytes(0x801, {static_cast<uint32_t>(labels.size())}, labels);
  if (gzip) {
    write_gzip(images_path, images);
    write_gzip(labels_path, label_file);
  } else {
    write_text(images_path, images);
    write_text(labels_path, label_file);
  }
}

// One CIFAR-10 record per label, pixel bytes label, label+1, ...
inline std::string cifar_records(const std::vector<int>& labels) {
  std::string out;
  for (int label : labels) {
    out += static_cast<char>(label);
    for (int i = 0; i < 3072; ++i) out += static_cast<char>((label + i) % 256);
  }
  return out;
}

// The message of the pacer::Error that `action` throws; a test failure if it throws none or its
// message is not one line.
template <typename Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "expected a pacer::Error";
  return "";
}

}  // namespace pacer::testing
