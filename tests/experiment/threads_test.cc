// engine.threads (engine/sim/sim_engine.h): a run's files are byte-identical for 1, 2 and 7
// threads, for synchronous, coded, pipelined and asynchronous methods, with minibatches, with
// cancelled jobs and with lost workers; a bad value is refused naming the key.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/run/experiment.h"
#include "test_util.h"

namespace pacer {
namespace {

constexpr const char* kConfig = R"(
seed = 11
workers = 6
max_steps = 50
eval_every = 10
[data]
source = "synthetic"
generator = "blobs"
samples = 600
features = 8
classes = 3
test_samples = 120
[model]
name = "softmax"
[training]
batch = 16
[optimizer]
lr = 0.3
[timing]
model = "random_stragglers"
tau = 0.1
q = 0.3
delay_mean = 1.0
)";

// The files of a run with `method_table` (and any later tables) and engine.threads = threads.
std::string run_files(const std::string& method_table, int threads, testing::TempDir& dir) {
  Config config = Config::parse(std::string(kConfig) + "[method]\n" + method_table, "threads.toml");
  config.set(fmt::format("engine.threads={}", threads));
  // These jobs are too short for the automatic choice: every job is computed ahead.
  config.set("engine.compute_ahead=\"always\"");
  RunOptions options;
  options.out_dir = dir.file(fmt::format("t{}", threads));
  run_experiment(config, options);
  std::string all;
  for (const char* name : {"log.csv", "jobs.csv", "summary.json", "evals.csv"}) {
    all.append("==> ").append(name).append("\n");
    all.append(testing::read_text(options.out_dir + "/" + name));
  }
  return all;
}

class ThreadsByMethod : public ::testing::TestWithParam<const char*> {};

TEST_P(ThreadsByMethod, FilesAreByteIdenticalFor1And2And7Threads) {
  testing::TempDir dir;
  const std::string one = run_files(GetParam(), 1, dir);
  EXPECT_NE(one.find("==> jobs.csv\nworker"), std::string::npos);
  for (int threads : {2, 7}) {
    EXPECT_EQ(run_files(GetParam(), threads, dir), one) << threads << " threads";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Methods, ThreadsByMethod,
    ::testing::Values(
        // synchronous
        "name = \"dgd\"\n", "name = \"is-sgd\"\nk = 2\nstraggler_policy = \"cancel\"\n",
        // coded
        "name = \"gc-cr\"\ns = 2\n", "name = \"gc-fr\"\ns = 1\nstraggler_policy = \"cancel\"\n",
        "name = \"is-gc-cr\"\ns = 1\n",
        // pipelined
        "name = \"pgc-cr\"\ns = 2\n", "name = \"pgc-fr\"\ns = 1\nstraggler_policy = \"cancel\"\n",
        "name = \"pgc-cr\"\ns = 1\ndecoder = \"adaptive\"\n",
        "name = \"pgc-cr\"\ns = 2\nstraggler_policy = \"queue\"\n",
        // asynchronous (Ringmaster's stop variant, Rennala and Malenia cancel jobs)
        "name = \"asgd\"\n", "name = \"rescaled-asgd\"\ntau = \"estimate\"\n",
        "name = \"ringmaster\"\nR = 3\nvariant = \"stop\"\n", "name = \"rennala\"\n",
        "name = \"malenia\"\n", "name = \"ringleader\"\n",
        // lost workers, with and without their return
        "name = \"pgc-cr\"\ns = 1\n[faults]\nkill_workers = [2]\nkill_at = [0.35]\n",
        "name = \"asgd\"\n[faults]\nkill_workers = [1, 4]\nkill_at = [0.5, 1.0]\n"
        "rejoin_after = 0.7\n"));

TEST(EngineThreads, BadValuesAreRefusedNamingTheKey) {
  for (const char* value : {"0", "-2", "100000", "1.5", "\"two\""}) {
    Config config = Config::parse(std::string(kConfig) + "[method]\nname = \"dgd\"\n", "t.toml");
    config.set(std::string("engine.threads=") + value);
    try {
      run_experiment(config, RunOptions{});
      ADD_FAILURE() << "engine.threads = " << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("engine.threads"), std::string::npos) << e.what();
    }
  }
}

TEST(EngineThreads, TheDefaultIsNotWrittenIntoTheResolvedConfig) {
  testing::TempDir dir;
  Config config = Config::parse(std::string(kConfig) + "[method]\nname = \"dgd\"\n", "t.toml");
  RunOptions options;
  options.out_dir = dir.file("run");
  run_experiment(config, options);
  EXPECT_EQ(testing::read_text(options.out_dir + "/config.toml").find("threads"),
            std::string::npos);
}

}  // namespace
}  // namespace pacer
