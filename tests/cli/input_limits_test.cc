// The last bad inputs that used to fall through (issue #9): configs that nest too deep, a config
// path that is a folder, an unknown command, unreachable targets, a loss that explodes without
// becoming non-finite, and inputs whose size would exhaust memory. Each must end with one
// `pacer: error:` line naming the key or file, a non-zero exit, and no crash; the memory checks
// refuse before allocating, so none of these tests allocates the sizes it names.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace pacer::testing {
namespace {

constexpr const char* kConfig = R"(
workers = 4
max_steps = 20
eval_every = 0
[data]
source = "synthetic"
generator = "blobs"
samples = 200
features = 5
[model]
name = "softmax"
[optimizer]
lr = 0.1
[method]
name = "dgd"
[timing]
model = "fixed"
)";

CommandResult run_config(const TempDir& dir, const std::string& text, const std::string& args) {
  write_text(dir.file("c.toml"), text);
  return run_pacer("run " + dir.file("c.toml") + " --out " + dir.file("out") + " " + args);
}

// The one error line pacer printed, checking that there is exactly one.
std::string error_line(const CommandResult& r) {
  const std::string marker = "pacer: error: ";
  const size_t at = r.output.find(marker);
  if (at == std::string::npos) return "";
  EXPECT_EQ(r.output.find(marker, at + 1), std::string::npos) << r.output;
  return r.output.substr(at, r.output.find('\n', at) - at);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string repeated_key(int parts) {
  std::string key = "a";
  for (int i = 1; i < parts; ++i) key += ".a";
  return key;
}

TEST(CliLimits, DottedKeyOfAHundredThousandPartsIsRefusedNamingTheLine) {
  TempDir dir;
  // A 200 KB line: toml++ and the config walk nested tables recursively, one frame per part.
  CommandResult r = run_config(dir, repeated_key(100000) + " = 1\n" + kConfig, "");
  EXPECT_EQ(r.exit_code, 1) << r.output.substr(0, 2000);
  const std::string line = error_line(r);
  EXPECT_TRUE(contains(line, dir.file("c.toml") + ":1:")) << line.substr(0, 500);
  EXPECT_TRUE(contains(line, "nested 101 levels deep")) << line.substr(0, 500);
}

TEST(CliLimits, DeepTableHeadersAndInlineValuesAreRefusedToo) {
  TempDir dir;
  const std::string header = std::string(kConfig) + "[" + repeated_key(150) + "]\nb = 1\n";
  CommandResult r = run_config(dir, header, "");
  EXPECT_EQ(r.exit_code, 1) << r.output.substr(0, 2000);
  EXPECT_TRUE(contains(error_line(r), "nested")) << r.output.substr(0, 2000);

  // A [table] of 60 parts holding a key of 60 parts: 120 levels together.
  const std::string both =
      std::string(kConfig) + "[" + repeated_key(60) + "]\n" + repeated_key(60) + " = 1\n";
  r = run_config(dir, both, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(error_line(r), ":19:")) << r.output.substr(0, 2000);

  std::string arrays = "x = ";
  for (int i = 0; i < 120; ++i) arrays += "[";
  for (int i = 0; i < 120; ++i) arrays += "]";
  r = run_config(dir, arrays + "\n" + kConfig, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(error_line(r), ":1: a key or value nested")) << r.output.substr(0, 2000);
}

TEST(CliLimits, KeysBelowTheNestingLimitAreParsed) {
  TempDir dir;
  // Dots inside strings, numbers and comments are not key parts; a 50-part key is read (and, as
  // no component reads it, reported as unknown).
  const std::string text = std::string(kConfig) + "[extra]\ns = \"a.b.c.d\" # x.y.z\n" +
                           "f = [1.5, 2.5, {k = 'v.w'}]\n" + repeated_key(50) + " = 1\n";
  CommandResult r = run_config(dir, text, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(error_line(r), "unknown key 'extra.a.a.a")) << r.output.substr(0, 2000);
}

TEST(CliLimits, ConfigPathThatIsADirectoryIsNamed) {
  TempDir dir;
  CommandResult r = run_pacer("run " + dir.path() + " --out " + dir.file("out"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(error_line(r), dir.path() + ": is a directory")) << r.output;
}

TEST(CliLimits, UnknownCommandIsNamedWithTheCommands) {
  CommandResult r = run_pacer("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(
      error_line(r),
      "pacer: error: unknown command 'frobnicate' (expected one of: run, compare, sweep, data, "
      "fit, stragglers, profile, advise, validate, claims, timeline, mpi-rank, methods, version)")
      << r.output;
  r = run_pacer("-q data frobnicate x");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(error_line(r),
            "pacer: error: unknown command 'data frobnicate' (expected one of: info)")
      << r.output;
}

struct Refused {
  const char* name;
  const char* args;      // --set overrides of kConfig
  const char* expected;  // in the one error line
};

class CliRefused : public ::testing::TestWithParam<Refused> {};

TEST_P(CliRefused, ExitsOneNamingTheKey) {
  TempDir dir;
  CommandResult r = run_config(dir, kConfig, GetParam().args);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(error_line(r), GetParam().expected)) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliRefused,
    ::testing::Values(
        Refused{"negative_target", "--set target.loss=-1",
                "key 'target.loss': expected finite "
                "numbers >= 0"},
        Refused{"negative_target_in_list", "--set 'target.loss=[0.5, -0.1]'", "target.loss"},
        Refused{"infinite_target", "--set target.loss=inf", "target.loss"},
        Refused{"nan_target", "--set target.loss=nan", "target.loss"},
        Refused{"divergence_factor", "--set divergence.factor=0.5", "divergence.factor"},
        Refused{"divergence_hold", "--set divergence.hold=0", "divergence.hold"},
        Refused{"memory_limit_zero", "--set memory_limit_gb=0", "memory_limit_gb"},
        // 1.6 EB: above half of any machine's memory, so the default limit refuses it.
        Refused{"synthetic_default_limit",
                "--set data.samples=100000000 --set data.features=1000000000",
                "data.samples = 100000000 with data.features = 1000000000 needs 1.6 EB, above "
                "the memory limit of"},
        Refused{"synthetic_1e8_x_1000",
                "--set data.samples=100000000 --set data.features=1000 "
                "--set memory_limit_gb=12",
                "data.samples = 100000000 with data.features = 1000 needs 1.6 TB, above the "
                "memory limit of 12 GB (memory_limit_gb)"},
        Refused{"mlp_hidden",
                "--set model.name=mlp --set model.hidden=100000 "
                "--set memory_limit_gb=0.1",
                "model.hidden = 100000 (model.name = \"mlp\") with "}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(CliLimits, LossThatExplodesWithoutBecomingNonFiniteDiverges) {
  TempDir dir;
  // Softmax with lr = 1e6 on overlapping blobs: the loss jumps from 1.1 to millions and stays
  // finite.
  CommandResult r =
      run_config(dir, kConfig, "--set optimizer.lr=1e6 --set max_steps=200 --set data.noise=5");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string line = error_line(r);
  EXPECT_TRUE(contains(line, "training diverged at step")) << r.output;
  EXPECT_TRUE(contains(line, "divergence.factor = 10000")) << r.output;
  EXPECT_TRUE(contains(read_text(dir.file("out/summary.json")), "\"status\": \"diverged\""));

  // With the rule off, the same run ends at max_steps.
  r = run_config(dir, kConfig,
                 "--set optimizer.lr=1e6 --set max_steps=200 --set data.noise=5 "
                 "--set divergence.factor=0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(read_text(dir.file("out/summary.json")), "\"status\": \"max_steps\""));
}

TEST(CliLimits, LibsvmFeatureIndexAboveTheMemoryLimitNamesTheFile) {
  TempDir dir;
  // 45 bytes that would make a 4 x 400 000 000 dense matrix (13 GB).
  write_text(dir.file("a.svm"), "1 1:1\n2 2:1\n1 3:1\n2 400000000:1\n");
  CommandResult r = run_config(dir, kConfig,
                               "--set data.source=libsvm --set data.features=0 --set data.train=" +
                                   dir.file("a.svm") + " --set memory_limit_gb=1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(error_line(r), dir.file("a.svm") + ": 4 samples x 400000000 features (the "
                                                          "largest feature index) as a dense "
                                                          "matrix needs 12.8 GB, above the memory "
                                                          "limit of 1 GB (memory_limit_gb)"))
      << r.output;

  // An index that the data fits but the model's parameter vectors do not.
  write_text(dir.file("b.svm"), "1 1:1\n2 2:1\n1 3:1\n2 1000000:1\n");
  r = run_config(dir, kConfig,
                 "--set data.source=libsvm --set data.features=0 --set data.train=" +
                     dir.file("b.svm") + " --set memory_limit_gb=0.2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(error_line(r), "model.name = \"softmax\" with 2000002 parameters"))
      << r.output;
}

TEST(CliLimits, IdxImagesAboveTheMemoryLimitAreRefusedAndALyingHeaderIsTruncation) {
  TempDir dir;
  const std::string idx_args =
      "--set data.source=idx --set data.train_images=" + dir.file("img.idx") +
      " --set data.train_labels=" + dir.file("lab.idx");
  write_text(dir.file("lab.idx"), std::string("\x00\x00\x08\x01\x00\x00\x00\x01\x03", 9));
  // 2^31 - 1 images of 4096 x 4096 pixels declared in a 16-byte file: read as far as the file
  // goes (nothing is allocated for what it does not hold) and reported as truncated.
  write_text(dir.file("img.idx"), std::string("\x00\x00\x08\x03\x7f\xff\xff\xff\x00\x00\x10\x00"
                                              "\x00\x00\x10\x00",
                                              16));
  CommandResult r = run_config(dir, kConfig, idx_args);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(error_line(r), dir.file("img.idx") + ": truncated")) << r.output;
  // 10 images of 4 x 4 that the file does hold, under a limit of 1 kB: refused once more than
  // the limit allows has been read, not after reading the whole payload.
  write_text(dir.file("img.idx"),
             std::string("\x00\x00\x08\x03\x00\x00\x00\x0a\x00\x00\x00\x04\x00\x00\x00\x04", 16) +
                 std::string(160, '\x01'));
  r = run_config(dir, kConfig, idx_args + " --set memory_limit_gb=1e-6");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(error_line(r), dir.file("img.idx") +
                                          ": header says 10 images of 4x4 pixels, which needs "
                                          "1.44 kB, above the memory limit of 1 kB "
                                          "(memory_limit_gb)"))
      << r.output;
}

TEST(CliLimits, CifarBatchesAndCsvAboveTheMemoryLimitNameTheFile) {
  TempDir dir;
  const std::string record(3073, '\0');
  for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                           "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"}) {
    write_text(dir.file(name), record);
  }
  CommandResult r = run_config(
      dir, kConfig,
      "--set data.source=cifar10 --set data.dir=" + dir.path() + " --set memory_limit_gb=1e-5");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(error_line(r), dir.file("data_batch_1.bin") + ": 1 CIFAR-10 records"))
      << r.output;

  std::string csv;
  for (int i = 0; i < 20; ++i) csv += std::to_string(i % 2) + ",1.5,2.5\n";
  write_text(dir.file("a.csv"), csv);
  r = run_config(dir, kConfig,
                 "--set data.source=csv --set data.train=" + dir.file("a.csv") +
                     " --set memory_limit_gb=1e-7");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(error_line(r), dir.file("a.csv") + ": reading a text file of this size"))
      << r.output;
}

TEST(CliLimits, MemoryLimitKeyIsReadByRunAndCompare) {
  TempDir dir;
  CommandResult r = run_config(dir, kConfig, "--set memory_limit_gb=4");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(read_text(dir.file("out/config.toml")), "memory_limit_gb = 4"));
  // Without the key, config.toml does not record the machine's default.
  r = run_config(dir, kConfig, "");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(read_text(dir.file("out/config.toml")), "memory_limit_gb"));
  r = run_pacer("compare " + dir.file("c.toml") + " --methods dgd,is-sgd:k=1 --out " +
                dir.file("cmp") + " --set memory_limit_gb=4");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace pacer::testing
