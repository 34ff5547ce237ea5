// NumPy data: .npy files and .npz archives written byte for byte as NumPy writes them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "data_fixtures.h"
#include "numpy_fixtures.h"
#include "pacer/data/loaders.h"
#include "pacer/data/source.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::contains;
using testing::error_of;
using testing::npy_bytes;
using testing::npz_bytes;
using testing::NpzStyle;
using testing::raw_bytes;
using testing::TempDir;
using testing::write_text;

// Three rows of two features (0.5, -1.25 / 3, 1e-300 / -7, 2.75) and labels 5, 3, 5.
const std::vector<double> kFeatures = {0.5, -1.25, 3.0, 1e-300, -7.0, 2.75};
const std::vector<int64_t> kLabels = {5, 3, 5};

std::string features_npy() { return npy_bytes("<f8", {3, 2}, raw_bytes(kFeatures)); }
std::string labels_npy() { return npy_bytes("<i8", {3}, raw_bytes(kLabels)); }

void expect_reference_set(const Dataset& data) {
  ASSERT_EQ(data.rows(), 3);
  ASSERT_EQ(data.cols(), 2);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(data.features(i / 2, i % 2), kFeatures[i]) << i;
  EXPECT_EQ(data.num_classes, 2);
  EXPECT_EQ(data.labels, (Vec(3) << 1, 0, 1).finished());  // 3 -> class 0, 5 -> class 1
}

TEST(Numpy, NpyFeaturesAndLabelsReadExactly) {
  TempDir dir;
  write_text(dir.file("X.npy"), features_npy());
  write_text(dir.file("y.npy"), labels_npy());
  const Dataset data = load_numpy(dir.file("X.npy"), dir.file("y.npy"));
  expect_reference_set(data);
  EXPECT_EQ(data.name, dir.file("X.npy"));
}

TEST(Numpy, FormatVersionsTwoAndThreeAndGzipReadTheSame) {
  TempDir dir;
  write_text(dir.file("y.npy"), labels_npy());
  for (int major : {2, 3}) {
    write_text(dir.file("X.npy"), npy_bytes("<f8", {3, 2}, raw_bytes(kFeatures), false, major));
    expect_reference_set(load_numpy(dir.file("X.npy"), dir.file("y.npy")));
  }
  testing::write_gzip(dir.file("X.npy.gz"), features_npy());
  expect_reference_set(load_numpy(dir.file("X.npy.gz"), dir.file("y.npy")));
}

TEST(Numpy, NpzStoredDeflatedAndZip64DirectoryReadTheSame) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"X.npy", features_npy()},
      {"extra.npy", npy_bytes("<f8", {1}, raw_bytes<double>({1}))},
      {"y.npy", labels_npy()}};
  for (const NpzStyle style : {NpzStyle{false, false}, NpzStyle{true, false}, NpzStyle{false, true},
                               NpzStyle{true, true}}) {
    write_text(dir.file("d.npz"), npz_bytes(entries, style));
    expect_reference_set(load_numpy(dir.file("d.npz")));
  }
}

// Every element type NumPy writes by default or on request converts to the same doubles.
TEST(Numpy, EveryNumericDtypeConverts) {
  TempDir dir;
  write_text(dir.file("y.npy"), npy_bytes("|b1", {2}, std::string("\x01\x00", 2)));
  const auto check = [&](const std::string& descr, const std::string& data, Vec expected) {
    write_text(dir.file("X.npy"), npy_bytes(descr, {2, 2}, data));
    const Dataset set = load_numpy(dir.file("X.npy"), dir.file("y.npy"));
    EXPECT_EQ(Vec(set.features.reshaped<Eigen::RowMajor>()), expected) << descr;
    EXPECT_EQ(set.labels, (Vec(2) << 1, 0).finished()) << descr;
  };
  const Vec signed_values = (Vec(4) << -128, -1, 0, 127).finished();
  const Vec unsigned_values = (Vec(4) << 0, 1, 200, 255).finished();
  check("<f8", raw_bytes<double>({-128, -1, 0, 127}), signed_values);
  check("<f4", raw_bytes<float>({-128, -1, 0, 127}), signed_values);
  check("<i8", raw_bytes<int64_t>({-128, -1, 0, 127}), signed_values);
  check("<i4", raw_bytes<int32_t>({-128, -1, 0, 127}), signed_values);
  check("<i2", raw_bytes<int16_t>({-128, -1, 0, 127}), signed_values);
  check("|i1", raw_bytes<int8_t>({-128, -1, 0, 127}), signed_values);
  check("<u8", raw_bytes<uint64_t>({0, 1, 200, 255}), unsigned_values);
  check("<u4", raw_bytes<uint32_t>({0, 1, 200, 255}), unsigned_values);
  check("<u2", raw_bytes<uint16_t>({0, 1, 200, 255}), unsigned_values);
  check("|u1", raw_bytes<uint8_t>({0, 1, 200, 255}), unsigned_values);
  check("|b1", std::string("\x01\x00\x00\x01", 4), (Vec(4) << 1, 0, 0, 1).finished());
  // Big-endian: the bytes of 1.5 (0x3ff8000000000000) and of 258 (0x00000102) most significant
  // first.
  check(">f8", std::string("\x3f\xf8\0\0\0\0\0\0", 8) + std::string(24, '\0'),
        (Vec(4) << 1.5, 0, 0, 0).finished());
  check(">i4", std::string("\0\0\x01\x02", 4) + std::string(12, '\0'),
        (Vec(4) << 258, 0, 0, 0).finished());
}

TEST(Numpy, ImagesAreFlattenedInCOrderAndFloatLabelsMakeARegressionSet) {
  TempDir dir;
  std::vector<uint8_t> pixels(2 * 2 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(10 * i);
  write_text(dir.file("X.npy"), npy_bytes("|u1", {2, 2, 3}, raw_bytes(pixels)));
  write_text(dir.file("y.npy"), npy_bytes("<f4", {2}, raw_bytes<float>({0.25, -3})));
  const Dataset data = load_numpy(dir.file("X.npy"), dir.file("y.npy"));
  ASSERT_EQ(data.cols(), 6);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(data.features(i / 6, i % 6), 10 * i);
  EXPECT_EQ(data.num_classes, 0);
  EXPECT_EQ(data.labels, (Vec(2) << 0.25, -3).finished());
}

struct BadFile {
  const char* name;
  std::string features;               // X.npy's bytes
  std::string labels;                 // y.npy's bytes
  std::vector<std::string> expected;  // substrings of the one-line error
};

std::vector<BadFile> bad_files() {
  const std::string x = features_npy(), y = labels_npy();
  return {
      {"unicode_dtype",
       npy_bytes("<U3", {3, 2}, std::string(72, 'a')),
       y,
       {"X.npy holds dtype '<U3'; expected float64, float32"}},
      {"half_float", npy_bytes("<f2", {3, 2}, std::string(12, '\0')), y, {"dtype '<f2'"}},
      {"structured", npy_bytes("[('a', '<f8')]", {3, 2}, ""), y, {"structured dtype"}},
      {"fortran_order",
       npy_bytes("<f8", {3, 2}, raw_bytes(kFeatures), true),
       y,
       {"X.npy holds a Fortran-ordered", "C order"}},
      {"labels_two_columns",
       x,
       npy_bytes("<i8", {3, 2}, raw_bytes<int64_t>({1, 2, 3, 4, 5, 6})),
       {"y.npy holds shape (3, 2); expected (rows,) with rows = 3 as in ", "X.npy"}},
      {"rows_mismatch",
       x,
       npy_bytes("<i8", {2}, raw_bytes<int64_t>({1, 2})),
       {"y.npy holds shape (2,); expected (rows,) with rows = 3 as in "}},
      {"features_one_dimensional",
       npy_bytes("<f8", {6}, raw_bytes(kFeatures)),
       y,
       {"X.npy holds shape (6,); expected (rows, features) or (rows, d1, d2, ...)"}},
      {"truncated_data",
       x.substr(0, x.size() - 3),
       y,
       {"X.npy is truncated", "shape (3, 2) of '<f8' (48 bytes of data), the file holds 45"}},
      {"truncated_header", x.substr(0, 40), y, {"X.npy is truncated"}},
      {"trailing_bytes", x + "zz", y, {"X.npy has bytes past its array"}},
      {"not_npy", "a,b\n1,2\n", y, {"X.npy: not a NumPy .npy file"}},
      {"version_4",
       npy_bytes("<f8", {3, 2}, raw_bytes(kFeatures), false, 4),
       y,
       {"format version 4.0; expected 1.0, 2.0 or 3.0"}},
      {"not_finite",
       npy_bytes("<f8", {3, 2}, raw_bytes<double>({0, 1, 2, NAN, 4, 5})),
       y,
       {"X.npy: row 1, feature 1 is nan; expected finite numbers"}},
      {"labels_not_finite",
       x,
       npy_bytes("<f8", {3}, raw_bytes<double>({0, INFINITY, 1})),
       {"y.npy: row 1 is inf"}},
  };
}

class NumpyBadFile : public ::testing::TestWithParam<BadFile> {};

TEST_P(NumpyBadFile, IsOneErrorNamingTheFileAndWhatWasExpected) {
  TempDir dir;
  write_text(dir.file("X.npy"), GetParam().features);
  write_text(dir.file("y.npy"), GetParam().labels);
  const std::string message = error_of([&] { load_numpy(dir.file("X.npy"), dir.file("y.npy")); });
  for (const std::string& part : GetParam().expected) EXPECT_PRED2(contains, message, part);
}

INSTANTIATE_TEST_SUITE_P(Cases, NumpyBadFile, ::testing::ValuesIn(bad_files()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Numpy, BadArchivesAreOneErrorNamingTheFile) {
  TempDir dir;
  const std::string path = dir.file("d.npz");
  const auto message = [&](const std::string& bytes) {
    write_text(path, bytes);
    return error_of([&] { load_numpy(path); });
  };
  EXPECT_PRED2(contains, message(npz_bytes({{"X.npy", features_npy()}, {"w.npy", labels_npy()}})),
               "d.npz holds arrays [X, w]; expected X and y, as np.savez(file, X=features, "
               "y=labels) writes");
  const std::string good = npz_bytes({{"X.npy", features_npy()}, {"y.npy", labels_npy()}});
  EXPECT_PRED2(contains, message(good.substr(0, good.size() - 30)),
               "d.npz is a truncated or corrupt zip archive");
  std::string flipped = good;
  flipped[100] ^= 1;  // inside the entry X.npy
  EXPECT_PRED2(contains, message(flipped), "d.npz, array X is corrupt: its CRC-32 does not match");
  // Labels of an archive come from it; an .npy needs its labels file.
  write_text(path, good);
  write_text(dir.file("y.npy"), labels_npy());
  EXPECT_PRED2(contains, error_of([&] { load_numpy(path, dir.file("y.npy")); }),
               "d.npz is an .npz archive, which holds its labels (array y)");
  write_text(dir.file("X.npy"), features_npy());
  EXPECT_PRED2(contains, error_of([&] { load_numpy(dir.file("X.npy")); }),
               "X.npy: an .npy file holds one array (the features); the labels need");
}

TEST(Numpy, DataInfoDescribesArraysAndArchives) {
  TempDir dir;
  write_text(dir.file("X.npy"), features_npy());
  const std::string features = describe_data_file(dir.file("X.npy"));
  EXPECT_PRED2(contains, features, "NumPy .npy array\n  dtype:    '<f8'\n  shape:    (3, 2)\n");
  EXPECT_PRED2(contains, features, "values:   -7 to 3\n");
  write_text(dir.file("y.npy"), labels_npy());
  EXPECT_PRED2(contains, describe_data_file(dir.file("y.npy")),
               "classes:  2\n  labels:   3: 1, 5: 2");
  write_text(dir.file("d.npz"), npz_bytes({{"X.npy", features_npy()}, {"y.npy", labels_npy()}}));
  const std::string archive = describe_data_file(dir.file("d.npz"));
  EXPECT_PRED2(contains, archive,
               "NumPy .npz archive (arrays X and y)\n  samples:  3\n  features: 2");
  EXPECT_PRED2(contains, archive, "labels:   3: 1, 5: 2");
}

Config config_of(const std::string& toml) { return Config::parse(toml, "run.toml"); }

// load_data: train and test code their labels together and truncate as every source does.
TEST(Numpy, LoadDataReadsTrainAndTestWithSharedClasses) {
  TempDir dir;
  write_text(dir.file("X.npy"), features_npy());
  write_text(dir.file("y.npy"), labels_npy());
  write_text(dir.file("test.npz"),
             npz_bytes({{"X.npy", npy_bytes("<f4", {2, 2}, raw_bytes<float>({1, 2, 3, 4}))},
                        {"y.npy", npy_bytes("<i4", {2}, raw_bytes<int32_t>({7, 5}))}},
                       NpzStyle{true, false}));
  Config config = config_of(fmt::format(R"([data]
source = "npy"
train = "{0}/X.npy"
labels = "{0}/y.npy"
test = "{0}/test.npz"
max_train = 2
)",
                                        dir.path()));
  const DataSplit split = load_data(config, 1);
  EXPECT_TRUE(config.unread_keys().empty());
  EXPECT_EQ(split.train.rows(), 2);
  EXPECT_EQ(split.train.labels, (Vec(2) << 1, 0).finished());  // classes 3, 5, 7
  EXPECT_EQ(split.test.labels, (Vec(2) << 2, 1).finished());
  EXPECT_EQ(split.train.num_classes, 3);
  EXPECT_EQ(split.test.features, (RowMatrix(2, 2) << 1, 2, 3, 4).finished());
  EXPECT_PRED2(contains, config.to_toml(), "normalize = 'none'");
}

TEST(Numpy, LoadDataErrorsNameTheKey) {
  TempDir dir;
  write_text(dir.file("X.npy"), features_npy());
  write_text(dir.file("y.npy"), npy_bytes("<i8", {2}, raw_bytes<int64_t>({1, 2})));
  const std::string table =
      fmt::format("[data]\nsource = \"npy\"\ntrain = \"{}/X.npy\"\n", dir.path());
  EXPECT_PRED2(contains, error_of([&] {
                 load_data(config_of(table + fmt::format("labels = \"{}/y.npy\"\n", dir.path())),
                           1);
               }),
               "data.labels: " + dir.file("y.npy") +
                   " holds shape (2,); expected (rows,) with rows = 3 as in " + dir.file("X.npy"));
  EXPECT_PRED2(contains, error_of([&] { load_data(config_of(table), 1); }),
               "data.train: " + dir.file("X.npy") +
                   ": an .npy file holds one array (the features); the labels need data.labels");
}

// A relative path that does not exist is reported with the folder it was resolved against.
TEST(Numpy, AMissingRelativePathNamesTheFolderItWasResolvedAgainst) {
  const std::string message = error_of(
      [] { load_data(config_of("[data]\nsource = \"npy\"\ntrain = \"no-such-dir/x.npy\"\n"), 1); });
  EXPECT_PRED2(contains, message,
               "run.toml: data.train: \"no-such-dir/x.npy\" not found (resolved against " +
                   std::filesystem::current_path().string() + ")");
  EXPECT_PRED2(contains, error_of([] {
                 load_data(config_of("[data]\nsource = \"csv\"\ntrain = \"/no-such/x.csv\"\n"), 1);
               }),
               "run.toml: data.train: \"/no-such/x.csv\" not found");
  EXPECT_PRED2(contains, error_of([] {
                 load_data(config_of("[data]\nsource = \"mnist\"\ndir = \"nowhere\"\n"), 1);
               }),
               "data.dir: \"nowhere\" not found (resolved against ");
}

}  // namespace
}  // namespace pacer
