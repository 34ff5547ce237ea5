#include "pacer/data/loaders.h"

#include <gtest/gtest.h>

#include "data_fixtures.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::cifar_records;
using testing::contains;
using testing::counting_bytes;
using testing::error_of;
using testing::idx_bytes;
using testing::TempDir;
using testing::write_gzip;
using testing::write_idx_pair;
using testing::write_text;

void expect_small_idx(const Dataset& data) {
  ASSERT_EQ(data.rows(), 3);
  ASSERT_EQ(data.cols(), 6);
  EXPECT_EQ(data.num_classes, 3);  // 1 + largest label
  EXPECT_EQ(data.labels[0], 0);
  EXPECT_EQ(data.labels[1], 2);
  EXPECT_EQ(data.labels[2], 1);
  // Pixels are counting bytes, stored row-major, values as in the file.
  EXPECT_EQ(data.features(0, 0), 0);
  EXPECT_EQ(data.features(1, 2), 8);
  EXPECT_EQ(data.features(2, 5), 17);
}

TEST(LoadIdx, PlainRoundTrip) {
  TempDir dir;
  write_idx_pair(dir.file("images"), dir.file("labels"), 3, 2, 3, std::string("\0\2\1", 3), false);
  const Dataset data = load_idx(dir.file("images"), dir.file("labels"));
  expect_small_idx(data);
  EXPECT_EQ(data.name, dir.file("images"));
}

TEST(LoadIdx, GzipRoundTripDetectedFromContent) {
  TempDir dir;
  // One file named .gz, the other not: the format comes from the content.
  write_idx_pair(dir.file("images.gz"), dir.file("labels.bin"), 3, 2, 3, std::string("\0\2\1", 3),
                 true);
  expect_small_idx(load_idx(dir.file("images.gz"), dir.file("labels.bin")));
}

TEST(LoadIdx, TruncatedImagesNameFileAndSizes) {
  TempDir dir;
  write_text(dir.file("images"), idx_bytes(0x803, {5, 2, 3}, counting_bytes(7)));
  write_text(dir.file("labels"), idx_bytes(0x801, {5}, counting_bytes(5)));
  const std::string message = error_of([&] { load_idx(dir.file("images"), dir.file("labels")); });
  EXPECT_PRED2(contains, message, dir.file("images") + ": truncated");
  EXPECT_PRED2(contains, message, "header says 5 images of 2x3 (30 bytes)");
  EXPECT_PRED2(contains, message, "file has 7 bytes");
}

TEST(LoadIdx, TruncatedGzipLabels) {
  TempDir dir;
  write_text(dir.file("images"), idx_bytes(0x803, {4, 1, 1}, counting_bytes(4)));
  write_gzip(dir.file("labels.gz"), idx_bytes(0x801, {4}, counting_bytes(2)));
  const std::string message =
      error_of([&] { load_idx(dir.file("images"), dir.file("labels.gz")); });
  EXPECT_PRED2(contains, message, dir.file("labels.gz") + ": truncated: header says 4 labels");
}

TEST(LoadIdx, CutGzipStreamIsAnError) {
  TempDir dir;
  write_idx_pair(dir.file("images.gz"), dir.file("labels.gz"), 50, 8, 8, std::string(50, '\1'),
                 true);
  std::string compressed = testing::read_text(dir.file("images.gz"));
  write_text(dir.file("images.gz"), compressed.substr(0, compressed.size() / 2));
  const std::string message =
      error_of([&] { load_idx(dir.file("images.gz"), dir.file("labels.gz")); });
  EXPECT_PRED2(contains, message, dir.file("images.gz"));
  EXPECT_PRED2(contains, message, "truncated");
}

TEST(LoadIdx, CorruptGzipDataIsAnError) {
  TempDir dir;
  write_idx_pair(dir.file("images.gz"), dir.file("labels.gz"), 50, 8, 8, std::string(50, '\1'),
                 true);
  std::string compressed = testing::read_text(dir.file("images.gz"));
  for (size_t i = 12; i < compressed.size() - 8; ++i) compressed[i] = static_cast<char>(0xA5);
  write_text(dir.file("images.gz"), compressed);
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("images.gz"), dir.file("labels.gz")); }),
               dir.file("images.gz") + ": ");
}

TEST(LoadIdx, ExtraBytesAfterPayload) {
  TempDir dir;
  write_text(dir.file("images"), idx_bytes(0x803, {2, 1, 2}, counting_bytes(5)));
  write_text(dir.file("labels"), idx_bytes(0x801, {2}, counting_bytes(2)));
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("images"), dir.file("labels")); }),
               dir.file("images") + ": header says 2 images of 1x2 (4 bytes), but");
}

TEST(LoadIdx, CorruptMagic) {
  TempDir dir;
  write_text(dir.file("images"), idx_bytes(0x804, {1, 1, 1}, "x"));
  write_text(dir.file("labels"), idx_bytes(0x801, {1}, std::string(1, '\0')));
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("images"), dir.file("labels")); }),
               dir.file("images") +
                   ": not an IDX images file: magic number is 0x00000804, expected "
                   "0x00000803");
}

TEST(LoadIdx, SwappedFilesAreNamed) {
  TempDir dir;
  write_idx_pair(dir.file("images"), dir.file("labels"), 1, 1, 1, std::string(1, '\0'), false);
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("labels"), dir.file("images")); }),
               dir.file("labels") + ": this is an IDX labels file, expected IDX images");
}

TEST(LoadIdx, MismatchedCountsNameBothFiles) {
  TempDir dir;
  write_idx_pair(dir.file("images"), dir.file("labels"), 3, 2, 2, std::string(4, '\0'), false);
  const std::string message = error_of([&] { load_idx(dir.file("images"), dir.file("labels")); });
  EXPECT_PRED2(contains, message, dir.file("labels") + ": 4 labels");
  EXPECT_PRED2(contains, message, dir.file("images") + " has 3 images");
}

TEST(LoadIdx, AbsurdHeaderIsRejectedWithoutAllocating) {
  TempDir dir;
  write_text(dir.file("labels"), idx_bytes(0x801, {1}, std::string(1, '\0')));
  write_text(dir.file("huge_count"), idx_bytes(0x803, {0xFFFFFFF0u, 28, 28}, "abc"));
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("huge_count"), dir.file("labels")); }),
               dir.file("huge_count") + ": header says 4294967280 images");
  write_text(dir.file("huge_image"), idx_bytes(0x803, {1, 100000, 100000}, "abc"));
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("huge_image"), dir.file("labels")); }),
               dir.file("huge_image") + ": header says images of 100000x100000");
  // Plausible sizes but almost no data: a truncation error, not a multi-gigabyte buffer.
  write_text(dir.file("short"), idx_bytes(0x803, {2000000, 28, 28}, "abc"));
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("short"), dir.file("labels")); }),
               "file has 3 bytes");
}

TEST(LoadIdx, MissingAndTinyFiles) {
  TempDir dir;
  write_text(dir.file("labels"), idx_bytes(0x801, {1}, std::string(1, '\0')));
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("nope"), dir.file("labels")); }),
               dir.file("nope") + ": cannot open file");
  write_text(dir.file("tiny"), "ab");
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.file("tiny"), dir.file("labels")); }),
               dir.file("tiny") + ": truncated: file has 2 bytes");
  EXPECT_PRED2(contains, error_of([&] { load_idx(dir.path(), dir.file("labels")); }),
               dir.path() + ": is a directory");
}

TEST(LoadCifar10, RoundTripOverSeveralBatches) {
  TempDir dir;
  write_text(dir.file("a.bin"), cifar_records({3, 9}));
  write_gzip(dir.file("b.bin.gz"), cifar_records({0}));
  const Dataset data = load_cifar10({dir.file("a.bin"), dir.file("b.bin.gz")});
  ASSERT_EQ(data.rows(), 3);
  ASSERT_EQ(data.cols(), 3072);
  EXPECT_EQ(data.num_classes, 10);
  EXPECT_EQ(data.labels[0], 3);
  EXPECT_EQ(data.labels[1], 9);
  EXPECT_EQ(data.labels[2], 0);
  EXPECT_EQ(data.features(0, 0), 3);
  EXPECT_EQ(data.features(0, 1024), (3 + 1024) % 256);  // first green pixel, channel-major
  EXPECT_EQ(data.features(1, 3071), (9 + 3071) % 256);
  EXPECT_EQ(data.features(2, 10), 10);
}

TEST(LoadCifar10, WrongSizeAndBadLabel) {
  TempDir dir;
  write_text(dir.file("short.bin"), cifar_records({1, 2}).substr(1));
  EXPECT_PRED2(contains, error_of([&] { load_cifar10({dir.file("short.bin")}); }),
               dir.file("short.bin") + ": size 6145 bytes is not a positive multiple");
  write_text(dir.file("empty.bin"), "");
  EXPECT_PRED2(contains, error_of([&] { load_cifar10({dir.file("empty.bin")}); }),
               dir.file("empty.bin") + ": size 0 bytes");
  write_text(dir.file("label.bin"), cifar_records({1, 12}));
  EXPECT_PRED2(contains, error_of([&] { load_cifar10({dir.file("label.bin")}); }),
               dir.file("label.bin") + ": record 1: label 12 is not in 0..9");
}

TEST(LoadLibsvm, ParsesSparseRowsCommentsAndLabels) {
  TempDir dir;
  write_text(dir.file("a.svm"),
             "+1 1:0.5 3:2\r\n-1 2:1.5\n\n# a comment line\n+1 3:-1e-1 # trailing comment\n-1\n");
  const Dataset data = load_libsvm(dir.file("a.svm"));
  ASSERT_EQ(data.rows(), 4);
  ASSERT_EQ(data.cols(), 3);
  EXPECT_EQ(data.num_classes, 2);  // {-1, +1} -> {0, 1}
  EXPECT_EQ(data.labels[0], 1);
  EXPECT_EQ(data.labels[1], 0);
  EXPECT_EQ(data.labels[2], 1);
  EXPECT_EQ(data.labels[3], 0);
  EXPECT_EQ(data.features(0, 0), 0.5);
  EXPECT_EQ(data.features(0, 1), 0.0);
  EXPECT_EQ(data.features(0, 2), 2.0);
  EXPECT_EQ(data.features(1, 1), 1.5);
  EXPECT_EQ(data.features(2, 2), -0.1);
  EXPECT_EQ(data.features.row(3).squaredNorm(), 0.0);
}

TEST(LoadLibsvm, DeclaredWidthAndRegressionLabels) {
  TempDir dir;
  write_text(dir.file("r.svm"), "0.5 1:1\n2.25 2:1\n");
  const Dataset data = load_libsvm(dir.file("r.svm"), 5);
  EXPECT_EQ(data.cols(), 5);
  EXPECT_EQ(data.num_classes, 0);
  EXPECT_EQ(data.labels[0], 0.5);
  EXPECT_EQ(data.labels[1], 2.25);
  EXPECT_PRED2(contains, error_of([&] { load_libsvm(dir.file("r.svm"), 1); }),
               dir.file("r.svm") + ":2: feature index 2 exceeds the declared number");
}

TEST(LoadLibsvm, BadLinesNameTheLine) {
  TempDir dir;
  const std::string path = dir.file("bad.svm");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1 1:2\n1 3:abc\n", ":2: value 'abc' of feature 3"},
      {"1 1:2\n\n1 3:1 2:1\n", ":3: feature index 2 follows 3"},
      {"1 1:2\n1 3:1 3:1\n", ":2: feature index 3 follows 3"},
      {"1 1:2\n1 4\n", ":2: expected index:value, found '4'"},
      {"1 0:2\n", ":1: feature index '0' is not a positive integer"},
      {"1 x:2\n", ":1: feature index 'x' is not a positive integer"},
      {"1 1:2\nyes 1:1\n", ":2: label 'yes' is not a finite number"},
      {"1 1:nan\n", ":1: value 'nan' of feature 1 is not a finite number"},
  };
  for (const auto& [content, expected] : cases) {
    write_text(path, content);
    EXPECT_PRED2(contains, error_of([&] { load_libsvm(path); }), path + expected) << content;
  }
  write_text(path, "# only a comment\n");
  EXPECT_PRED2(contains, error_of([&] { load_libsvm(path); }), path + ": no samples");
}

TEST(LoadCsv, HeaderAndLastColumnLabel) {
  TempDir dir;
  write_text(dir.file("a.csv"), "x, y ,label\n1,2,0\n3, 4.5 ,7\n\n-1,0,0\n");
  const Dataset data = load_csv(dir.file("a.csv"));
  ASSERT_EQ(data.rows(), 3);
  ASSERT_EQ(data.cols(), 2);
  EXPECT_EQ(data.num_classes, 2);  // {0, 7} -> {0, 1}
  EXPECT_EQ(data.labels[1], 1);
  EXPECT_EQ(data.features(1, 1), 4.5);
  EXPECT_EQ(data.features(2, 0), -1);
}

TEST(LoadCsv, NoHeaderAndFirstColumnLabel) {
  TempDir dir;
  write_text(dir.file("a.csv"), "0.5,1,2\n1.5,3,4\n");
  const Dataset data = load_csv(dir.file("a.csv"), 0);
  ASSERT_EQ(data.rows(), 2);
  ASSERT_EQ(data.cols(), 2);
  EXPECT_EQ(data.num_classes, 0);
  EXPECT_EQ(data.labels[1], 1.5);
  EXPECT_EQ(data.features(1, 0), 3);
  EXPECT_EQ(data.features(1, 1), 4);
}

TEST(LoadCsv, BadLinesNameTheLine) {
  TempDir dir;
  const std::string path = dir.file("bad.csv");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a,b\n1,2\n3,x\n", ":3: field 2 ('x') is not a finite number"},
      {"1,2,3\n1,2\n", ":2: expected 3 fields, found 2"},
      {"1,2\n1,,2\n", ":2: expected 2 fields, found 3"},
      {"1,2\n1,\n", ":2: field 2 ('') is not a finite number"},
      {"5\n", ":1: found 1 column"},
  };
  for (const auto& [content, expected] : cases) {
    write_text(path, content);
    EXPECT_PRED2(contains, error_of([&] { load_csv(path); }), path + expected) << content;
  }
  write_text(path, "1,2\n");
  EXPECT_PRED2(contains, error_of([&] { load_csv(path, 2); }),
               path + ":1: label column 2 is out of range for 2 columns");
  write_text(path, "a,b\n");
  EXPECT_PRED2(contains, error_of([&] { load_csv(path); }), path + ": no data rows");
}

TEST(DescribeDataFile, IdxImagesAndLabels) {
  TempDir dir;
  write_idx_pair(dir.file("img.gz"), dir.file("lab"), 3, 2, 3, std::string("\0\2\2", 3), true);
  const std::string images = describe_data_file(dir.file("img.gz"));
  EXPECT_PRED2(contains, images, "IDX images (gzip-compressed)");
  EXPECT_PRED2(contains, images, "samples:  3");
  EXPECT_PRED2(contains, images, "features: 6 (2x3 pixels)");
  EXPECT_PRED2(contains, images, "values:   0 to 17");
  const std::string labels = describe_data_file(dir.file("lab"));
  EXPECT_PRED2(contains, labels, "IDX labels (gzip-compressed)\n");
  EXPECT_PRED2(contains, labels, "classes:  2");
  EXPECT_PRED2(contains, labels, "labels:   0: 1, 2: 2");
}

TEST(DescribeDataFile, CifarLibsvmCsv) {
  TempDir dir;
  write_text(dir.file("batch"), cifar_records({4, 4, 1}));
  const std::string cifar = describe_data_file(dir.file("batch"));
  EXPECT_PRED2(contains, cifar, "CIFAR-10 binary batch");
  EXPECT_PRED2(contains, cifar, "samples:  3");
  EXPECT_PRED2(contains, cifar, "labels:   1: 1, 4: 2");
  EXPECT_PRED2(contains, cifar, "values:   0 to 255");
  write_gzip(dir.file("batch.gz"), cifar_records({2}));
  EXPECT_PRED2(contains, describe_data_file(dir.file("batch.gz")), "labels:   2: 1");

  write_text(dir.file("data.txt"), "-1 1:0.5 4:2\n+1 2:3\n");
  const std::string libsvm = describe_data_file(dir.file("data.txt"));
  EXPECT_PRED2(contains, libsvm, "LIBSVM text");
  EXPECT_PRED2(contains, libsvm, "features: 4");
  EXPECT_PRED2(contains, libsvm, "labels:   -1: 1, 1: 1");
  EXPECT_PRED2(contains, libsvm, "nonzero:  37.5%");

  write_text(dir.file("data.csv"), "a,b,y\n1,2,0.5\n3,4,1.5\n");
  const std::string csv = describe_data_file(dir.file("data.csv"));
  EXPECT_PRED2(contains, csv, "CSV text");
  EXPECT_PRED2(contains, csv, "samples:  2");
  EXPECT_PRED2(contains, csv, "features: 2");
  EXPECT_PRED2(contains, csv, "labels:   real-valued (regression), 0.5 to 1.5");
  EXPECT_PRED2(contains, csv, "values:   1 to 4");
}

TEST(DescribeDataFile, UnknownAndEmptyFiles) {
  TempDir dir;
  write_text(dir.file("blob"), std::string("\x01\x02\x00\x7f", 4));
  EXPECT_PRED2(contains, error_of([&] { describe_data_file(dir.file("blob")); }),
               dir.file("blob") + ": unrecognised format");
  write_text(dir.file("empty"), "");
  EXPECT_PRED2(contains, error_of([&] { describe_data_file(dir.file("empty")); }),
               dir.file("empty") + ": empty file");
}

}  // namespace
}  // namespace pacer
