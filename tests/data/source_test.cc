#include "pacer/data/source.h"

#include <gtest/gtest.h>

#include <Eigen/QR>
#include <filesystem>

#include "data_fixtures.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::cifar_records;
using testing::contains;
using testing::error_of;
using testing::TempDir;
using testing::write_idx_pair;
using testing::write_text;

Config config_of(const std::string& toml) { return Config::parse(toml, "run.toml"); }

TEST(LoadData, SyntheticTrainAndTestFromOneProblem) {
  const Config config = config_of(R"(
[data]
source = "synthetic"
generator = "least_squares"
samples = 50
features = 4
noise = 0.0
test_samples = 20
)");
  const DataSplit split = load_data(config, 5);
  ASSERT_EQ(split.train.rows(), 50);
  ASSERT_EQ(split.test.rows(), 20);
  EXPECT_EQ(split.train.cols(), 4);
  EXPECT_EQ(split.test.cols(), 4);
  EXPECT_EQ(split.train.num_classes, 0);
  // Same x* for both sets: the x* fitted on train reproduces the noiseless test labels.
  const Eigen::MatrixXd a = split.train.features;
  const Vec solution = a.colPivHouseholderQr().solve(split.train.labels);
  EXPECT_LT((split.test.features * solution - split.test.labels).norm(), 1e-8);
  EXPECT_TRUE(config.unread_keys().empty());
  EXPECT_PRED2(contains, config.to_toml(), "normalize = 'none'");

  // Deterministic for a seed; the training set does not depend on the test set size.
  Config more_test = config;
  more_test.set_int("data.test_samples", 5);
  const DataSplit again = load_data(more_test, 5);
  EXPECT_EQ(again.train.features, split.train.features);
  EXPECT_EQ(again.train.labels, split.train.labels);
  EXPECT_EQ(again.test.rows(), 5);
  EXPECT_NE(load_data(config, 6).train.features, split.train.features);
}

TEST(LoadData, SyntheticBlobsWithTruncationAndStandardisation) {
  const Config config = config_of(R"(
[data]
source = "synthetic"
generator = "blobs"
samples = 90
classes = 3
max_train = 30
normalize = "standard"
)");
  const DataSplit split = load_data(config, 1);
  EXPECT_EQ(split.train.rows(), 30);
  EXPECT_EQ(split.train.num_classes, 3);
  EXPECT_EQ(split.test.rows(), 0);
  EXPECT_EQ(split.test.cols(), split.train.cols());
  EXPECT_NEAR(split.train.features.colwise().mean().cwiseAbs().maxCoeff(), 0.0, 1e-12);
}

TEST(LoadData, KeysOfOtherSourcesStayUnread) {
  Config config = config_of("[data]\nsource = \"synthetic\"\ndir = \"/tmp\"\nlabel_column = 0\n");
  load_data(config, 1);
  EXPECT_EQ(config.unread_keys(), (std::vector<std::string>{"data.dir", "data.label_column"}));
}

TEST(LoadData, InvalidValuesNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"source = \"synthetic\"\nsamples = 0", "key 'data.samples': expected a positive integer"},
      {"source = \"synthetic\"\nnoise = -1.0", "key 'data.noise'"},
      {"source = \"synthetic\"\ngenerator = \"blobs\"\nclasses = 1", "key 'data.classes'"},
      {"source = \"synthetic\"\ncondition_number = 0.5", "key 'data.condition_number'"},
      {"source = \"synthetic\"\nmax_train = -1", "key 'data.max_train'"},
      {"source = \"synthetic\"\nnormalize = \"minmax\"", "data.normalize"},
      {"source = \"imagenet\"", "data.source"},
      {"source = \"libsvm\"", "data.train"},
      {"source = \"idx\"\ntrain_images = \"a\"\ntrain_labels = \"b\"\ntest_images = \"c\"",
       "data.test_labels"},
  };
  for (const auto& [body, expected] : cases) {
    const Config config = config_of("[data]\n" + body + "\n");
    EXPECT_PRED2(contains, error_of([&] { load_data(config, 1); }), expected) << body;
  }
}

TEST(LoadData, IdxFilesWithOptionalTestSet) {
  TempDir dir;
  write_idx_pair(dir.file("ti.gz"), dir.file("tl.gz"), 4, 2, 2, std::string("\0\1\2\1", 4), true);
  write_idx_pair(dir.file("vi"), dir.file("vl"), 2, 2, 2, std::string("\3\0", 2), false);
  Config config = config_of("[data]\nsource = \"idx\"\n");
  config.set_string("data.train_images", dir.file("ti.gz"));
  config.set_string("data.train_labels", dir.file("tl.gz"));
  DataSplit split = load_data(config, 1);
  EXPECT_EQ(split.train.rows(), 4);
  EXPECT_EQ(split.test.rows(), 0);
  EXPECT_EQ(split.train.features.maxCoeff(), 1.0);  // "scale" is the default for images
  EXPECT_EQ(split.train.features(0, 1), 1.0 / 15);

  config.set_string("data.test_images", dir.file("vi"));
  config.set_string("data.test_labels", dir.file("vl"));
  split = load_data(config, 1);
  EXPECT_EQ(split.test.rows(), 2);
  EXPECT_EQ(split.train.num_classes, 4);  // the test set has label 3
  EXPECT_EQ(split.test.num_classes, 4);
  EXPECT_EQ(split.test.features(1, 3), 7.0 / 15);  // scaled with the training maximum
}

TEST(LoadData, StandardDirectoriesNameMissingFiles) {
  TempDir dir;
  Config config = config_of("[data]\nsource = \"mnist\"\n");
  config.set_string("data.dir", dir.path());
  EXPECT_PRED2(contains, error_of([&] { load_data(config, 1); }),
               dir.file("train-images-idx3-ubyte.gz") + ": file not found");

  // Plain and compressed names are both accepted; the content decides how a file is read.
  write_idx_pair(dir.file("train-images-idx3-ubyte"), dir.file("train-labels-idx1-ubyte.gz"), 3, 1,
                 2, std::string("\0\1\1", 3), false);
  EXPECT_PRED2(contains, error_of([&] { load_data(config, 1); }),
               dir.file("t10k-images-idx3-ubyte.gz") + ": file not found");
  write_idx_pair(dir.file("t10k-images-idx3-ubyte.gz"), dir.file("t10k-labels-idx1-ubyte"), 2, 1, 2,
                 std::string("\0\1", 2), true);
  const DataSplit split = load_data(config, 1);
  EXPECT_EQ(split.train.rows(), 3);
  EXPECT_EQ(split.test.rows(), 2);

  Config cifar = config_of("[data]\nsource = \"cifar10\"\n");
  cifar.set_string("data.dir", dir.path());
  for (int b = 1; b <= 5; ++b) {
    write_text(dir.file("data_batch_" + std::to_string(b) + ".bin"), cifar_records({b, 0}));
  }
  EXPECT_PRED2(contains, error_of([&] { load_data(cifar, 1); }),
               dir.file("test_batch.bin") + ": file not found");
  write_text(dir.file("test_batch.bin"), cifar_records({9}));
  const DataSplit images = load_data(cifar, 1);
  EXPECT_EQ(images.train.rows(), 10);
  EXPECT_EQ(images.test.rows(), 1);
  EXPECT_EQ(images.train.labels[2], 2);
  EXPECT_LE(images.train.features.maxCoeff(), 1.0);
}

TEST(LoadData, LibsvmTrainAndTestShareClassesAndWidth) {
  TempDir dir;
  write_text(dir.file("train"), "1 1:1\n5 3:1\n9 2:1\n");
  write_text(dir.file("test"), "9 1:2\n");  // lacks classes 1 and 5, and feature 3
  Config config = config_of("[data]\nsource = \"libsvm\"\n");
  config.set_string("data.train", dir.file("train"));
  config.set_string("data.test", dir.file("test"));
  const DataSplit split = load_data(config, 1);
  EXPECT_EQ(split.train.num_classes, 3);
  EXPECT_EQ(split.test.num_classes, 3);
  EXPECT_EQ(split.test.labels[0], 2);  // 9 is class 2 in both files
  EXPECT_EQ(split.test.cols(), 3);
  EXPECT_EQ(split.test.features(0, 0), 2.0);  // normalize defaults to none for text data
}

TEST(LoadData, CsvWidthsMustAgree) {
  TempDir dir;
  write_text(dir.file("train.csv"), "1,2,0\n3,4,1\n");
  write_text(dir.file("test.csv"), "1,0\n");
  Config config = config_of("[data]\nsource = \"csv\"\nlabel_column = -1\n");
  config.set_string("data.train", dir.file("train.csv"));
  config.set_string("data.test", dir.file("test.csv"));
  EXPECT_PRED2(contains, error_of([&] { load_data(config, 1); }),
               dir.file("test.csv") + ": 1 features, but the training set " +
                   dir.file("train.csv") + " has 2");
}

TEST(LoadData, FashionMnistDefault) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist")) {
    GTEST_SKIP() << "Fashion-MNIST is not installed";
  }
  const Config config = config_of("[data]\nmax_train = 1000\nmax_test = 500\n");
  const DataSplit split = load_data(config, 1);
  ASSERT_EQ(split.train.rows(), 1000);
  ASSERT_EQ(split.test.rows(), 500);
  EXPECT_EQ(split.train.cols(), 784);
  EXPECT_EQ(split.test.cols(), 784);
  EXPECT_EQ(split.train.num_classes, 10);
  EXPECT_GE(split.train.features.minCoeff(), 0.0);
  EXPECT_DOUBLE_EQ(split.train.features.maxCoeff(), 1.0);
  EXPECT_GE(split.test.features.minCoeff(), 0.0);
  EXPECT_LE(split.test.features.maxCoeff(), 1.0);
  for (int j = 0; j < split.train.rows(); ++j) {
    ASSERT_GE(split.train.labels[j], 0);
    ASSERT_LE(split.train.labels[j], 9);
  }
}

}  // namespace
}  // namespace pacer
