// NumPy data from the command line: a run on .npy/.npz files is the run on the same data as CSV,
// bit for bit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "numpy_fixtures.h"
#include "test_util.h"

namespace pacer::testing {
namespace {

constexpr int kRows = 48, kTestRows = 16, kFeatures = 3;

// Feature values with full 53-bit mantissas (not short decimals), so that the CSV text must carry
// every digit for the two runs to agree.
double feature(int row, int col) { return std::sin(1.0 + 7.3 * row + 2.1 * col) * (col + 1); }

// Labels: classes -1, 2, 5 (coded to 0, 1, 2 by both loaders), or real regression targets.
double label(int row, bool classes) {
  if (classes) return std::vector<double>{-1, 2, 5}[(row * 7) % 3];
  return feature(row, 0) - 0.5 * feature(row, 2) + 0.01 * std::cos(3.0 * row);
}

// The rows [first, first + count) as CSV (a header, the label last), with every double printed
// in its shortest form that reads back exactly.
std::string csv(int first, int count, bool classes) {
  std::string out = "f0,f1,f2,label\n";
  for (int r = first; r < first + count; ++r) {
    for (int c = 0; c < kFeatures; ++c) out += fmt::format("{},", feature(r, c));
    out += fmt::format("{}\n", label(r, classes));
  }
  return out;
}

std::string features_npy(int first, int count) {
  std::vector<double> values;
  for (int r = first; r < first + count; ++r) {
    for (int c = 0; c < kFeatures; ++c) values.push_back(feature(r, c));
  }
  return npy_bytes("<f8", {static_cast<uint64_t>(count), kFeatures}, raw_bytes(values));
}

// Class labels as int64 (NumPy's default integer), regression targets as float64.
std::string labels_npy(int first, int count, bool classes) {
  std::vector<int64_t> ints;
  std::vector<double> reals;
  for (int r = first; r < first + count; ++r) {
    ints.push_back(static_cast<int64_t>(label(r, true)));
    reals.push_back(label(r, false));
  }
  const std::vector<uint64_t> shape = {static_cast<uint64_t>(count)};
  return classes ? npy_bytes("<i8", shape, raw_bytes(ints))
                 : npy_bytes("<f8", shape, raw_bytes(reals));
}

std::string config(const std::string& model, const std::string& normalize) {
  return fmt::format(R"(seed = 3
workers = 4
max_steps = 40
eval_every = 10
[data]
source = "csv"
train = "train.csv"
test = "test.csv"
normalize = "{}"
[model]
name = "{}"
[optimizer]
lr = 0.05
[training]
batch = 4
[method]
name = "dgd"
[timing]
model = "fixed"
)",
                     normalize, model);
}

void expect_same_log(const std::string& model, const std::string& normalize) {
  const bool classes = model != "least_squares";
  TempDir dir;
  write_text(dir.file("train.csv"), csv(0, kRows, classes));
  write_text(dir.file("test.csv"), csv(kRows, kTestRows, classes));
  write_text(dir.file("X.npy"), features_npy(0, kRows));
  write_text(dir.file("y.npy"), labels_npy(0, kRows, classes));
  write_text(dir.file("test.npz"), npz_bytes({{"X.npy", features_npy(kRows, kTestRows)},
                                              {"y.npy", labels_npy(kRows, kTestRows, classes)}},
                                             NpzStyle{true, false}));
  write_text(dir.file("c.toml"), config(model, normalize));
  const std::string in_dir = "cd " + dir.path() + " && ";
  const CommandResult from_csv = run_command(in_dir + PACER_BINARY + " run c.toml --out csv");
  ASSERT_EQ(from_csv.exit_code, 0) << from_csv.output;
  const CommandResult from_npy = run_command(
      in_dir + PACER_BINARY +
      " run c.toml --out npy --set data.source=npy --set data.train=X.npy --set data.labels=y.npy "
      "--set data.test=test.npz");
  ASSERT_EQ(from_npy.exit_code, 0) << from_npy.output;
  const std::string log = read_text(dir.file("csv/log.csv"));
  EXPECT_GT(std::count(log.begin(), log.end(), '\n'), 40) << log;
  EXPECT_EQ(read_text(dir.file("npy/log.csv")), log) << model << ", normalize " << normalize;
}

TEST(NumpyCli, SoftmaxRunOnNpyReproducesTheCsvRunBitForBit) {
  expect_same_log("softmax", "standard");
}

TEST(NumpyCli, LeastSquaresRunOnNpyReproducesTheCsvRunBitForBit) {
  expect_same_log("least_squares", "none");
}

TEST(NumpyCli, AWrongShapeIsOneLineNamingTheFile) {
  TempDir dir;
  write_text(dir.file("X.npy"), features_npy(0, kRows));
  write_text(dir.file("y.npy"), labels_npy(0, kRows - 1, true));
  write_text(dir.file("c.toml"), config("softmax", "none"));
  const CommandResult r = run_command(
      "cd " + dir.path() + " && " + PACER_BINARY +
      " run c.toml --out o --set data.source=npy --set data.train=X.npy --set data.labels=y.npy "
      "--unset data.test");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(fmt::format("pacer: error: data.labels: y.npy holds shape ({},); "
                                      "expected (rows,) with rows = {} as in X.npy\n",
                                      kRows - 1, kRows)),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace pacer::testing
