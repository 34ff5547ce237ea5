// Config handling of make_timing_model and make_comm_model, and trace files.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/timing/timing_model.h"
#include "test_util.h"

namespace pacer {
namespace {

// Passes when `text` contains `part`, printing `text` otherwise.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The message of the Error that `build` throws; a test failure if it throws none.
template <typename Build>
std::string error_of(Build build) {
  try {
    build();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an Error";
  return "";
}

// The message of the Error that make_timing_model throws for `toml` with `workers` workers.
std::string model_error(const std::string& toml, int workers) {
  return error_of([&] { make_timing_model(Config::parse(toml, "t.toml"), workers, 1); });
}

struct BadValue {
  std::string toml;
  std::string key;
};

TEST(TimingConfig, BadValuesNameTheKey) {
  const std::vector<BadValue> cases = {
      {"model = \"lognormal\"", "timing.model"},
      {"tau = -1", "timing.tau"},
      {"tau = 0", "timing.tau"},
      {"tau = \"fast\"", "timing.tau"},
      {"tau = [1, -2, 3, 4]", "timing.tau"},
      {"tau = [1, \"x\", 3, 4]", "timing.tau"},
      {"tau = inf", "timing.tau"},
      {"tau = [1, 1, 1, 1]\nprofile = \"harmonic\"", "timing.tau"},
      {"profile = \"geometric\"", "timing.profile"},
      {"model = \"shifted_exponential\"\nlambda = 0", "timing.lambda"},
      {"model = \"pareto\"\nalpha = -1", "timing.alpha"},
      {"model = \"pareto\"\nalpha = nan", "timing.alpha"},
      {"model = \"random_stragglers\"\nq = 1.5", "timing.q"},
      {"model = \"random_stragglers\"\nq = -0.1", "timing.q"},
      {"model = \"random_stragglers\"\nk = 5", "timing.k"},
      {"model = \"random_stragglers\"\nk = -1", "timing.k"},
      {"model = \"random_stragglers\"\nk = 1.5", "timing.k"},
      {"model = \"random_stragglers\"\ndelay_mean = -1", "timing.delay_mean"},
      {"model = \"trace\"", "timing.file"},
  };
  for (const BadValue& c : cases) {
    const std::string message = model_error("[timing]\n" + c.toml + "\n", 4);
    EXPECT_TRUE(Contains(message, "'" + c.key + "'")) << c.toml;
    EXPECT_TRUE(Contains(message, "t.toml")) << c.toml;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(TimingConfig, TauListOfWrongLengthSaysN) {
  const std::string message = model_error("[timing]\ntau = [1, 2]\n", 3);
  EXPECT_TRUE(Contains(message, "timing.tau"));
  EXPECT_TRUE(Contains(message, "n = 3"));
}

TEST(TimingConfig, CommModelRejectsNegativeValues) {
  for (const std::string key : {"latency", "bandwidth"}) {
    const std::string message =
        error_of([&] { make_comm_model(Config::parse("[timing]\n" + key + " = -1\n", "t.toml")); });
    EXPECT_TRUE(Contains(message, "'timing." + key + "'"));
  }
}

// The timing keys that the model built from `toml` leaves unread.
std::vector<std::string> unread_after_build(const std::string& toml) {
  const Config config = Config::parse(toml, "t.toml");
  make_timing_model(config, 4, 1);
  return config.unread_keys();
}

TEST(TimingConfig, ReadsOnlyTheKeysOfTheChosenModel) {
  EXPECT_EQ(unread_after_build("[timing]\ntau = 2\nq = 0.1\nalpha = 3\n"),
            (std::vector<std::string>{"timing.alpha", "timing.q"}));
  EXPECT_EQ(unread_after_build("[timing]\nmodel = \"random_stragglers\"\nk = 2\nq = 0.1\n"),
            std::vector<std::string>{"timing.q"});
  EXPECT_EQ(unread_after_build("[timing]\nmodel = \"noisy_linear\"\ntau = 2\n"),
            std::vector<std::string>{"timing.tau"});
  EXPECT_TRUE(unread_after_build("[timing]\nmodel = \"random_stragglers\"\nq = 0.1\n"
                                 "delay_mean = 2\ntau = [1, 2, 3, 4]\n")
                  .empty());
}

TEST(TimingConfig, ResolvedConfigRecordsDefaults) {
  const Config config = Config::parse("[timing]\nmodel = \"shifted_exponential\"\n", "t.toml");
  make_timing_model(config, 2, 1);
  const std::string resolved = config.to_toml();
  EXPECT_TRUE(Contains(resolved, "lambda = 1"));
  EXPECT_TRUE(Contains(resolved, "profile = 'uniform'"));
}

class TraceTest : public ::testing::Test {
 protected:
  // Writes `content` as the trace and returns the config selecting it.
  Config trace_config(const std::string& content) {
    testing::write_text(path_, content);
    return Config::parse("[timing]\nmodel = \"trace\"\nfile = \"" + path_ + "\"\n", "t.toml");
  }
  std::string trace_error(const std::string& content, int workers) {
    return error_of([&] { make_timing_model(trace_config(content), workers, 1); });
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("durations.csv");
};

TEST_F(TraceTest, EachWorkerReplaysItsRowsInOrderAndCycles) {
  auto model = make_timing_model(
      trace_config("worker,duration\n0,1\n1,2\r\n0,3\n\n 1 , 4 \n0,5e-1\n"), 2, 1);
  EXPECT_EQ(model->name(), "trace");
  EXPECT_EQ(model->mean_unit_time(0), 1.5);
  EXPECT_EQ(model->mean_unit_time(1), 3.0);
  Rng rng(1, "duration", 0);
  const std::vector<std::pair<int, double>> calls = {{0, 2}, {1, 4}, {1, 8}, {0, 6}, {1, 4},
                                                     {0, 1}, {0, 2}, {1, 8}, {0, 6}};
  for (const auto& [worker, expected] : calls) {
    const Duration d = model->compute_time(worker, 2, 0, rng);
    EXPECT_EQ(d.base, 0.0);
    EXPECT_EQ(d.extra, expected) << "worker " << worker;
  }
}

TEST_F(TraceTest, BadFilesNameTheFileAndLine) {
  struct BadTrace {
    std::string content;
    std::string where;  // expected after the file name
  };
  const std::vector<BadTrace> cases = {
      {"", ": empty timing trace"},
      {"w,d\n0,1\n", ":1: expected the header"},
      {"worker,duration\n0,1\n1,abc\n", ":3: expected a duration"},
      {"worker,duration\n0,1\n1,\n", ":3: expected a duration"},
      {"worker,duration\n0,1\n1,-2\n", ":3: expected a duration"},
      {"worker,duration\n0,1\n1,0\n", ":3: expected a duration"},
      {"worker,duration\n0,1\n1,2,3\n", ":3: expected a duration"},
      {"worker,duration\n0,1\nx,2\n", ":3: expected a worker index"},
      {"worker,duration\n0,1\n\n2,1\n", ":4: worker index 2 out of range"},
      {"worker,duration\n0,1\n-1,1\n", ":3: worker index -1 out of range"},
      {"worker,duration\n0,1\n0,2\n", ": no rows for worker 1"},
  };
  for (const BadTrace& c : cases) {
    EXPECT_TRUE(Contains(trace_error(c.content, 2), path_ + c.where)) << c.content;
  }
}

TEST_F(TraceTest, MissingFileIsNamed) {
  const Config config =
      Config::parse("[timing]\nmodel = \"trace\"\nfile = \"" + path_ + "\"\n", "t.toml");
  EXPECT_TRUE(Contains(error_of([&] { make_timing_model(config, 2, 1); }), path_));
}

TEST_F(TraceTest, ReplayPositionIsPerWorker) {
  const std::string content = "worker,duration\n0,1\n0,2\n0,3\n1,10\n1,20\n";
  auto interleaved = make_timing_model(trace_config(content), 2, 1);
  auto alone = make_timing_model(trace_config(content), 2, 1);
  Rng rng(1, "duration", 0);
  std::vector<double> worker0;
  for (int j = 0; j < 7; ++j) worker0.push_back(alone->compute_time(0, 1, j, rng).total());
  for (int j = 0; j < 7; ++j) {
    interleaved->compute_time(1, 1, j, rng);
    EXPECT_EQ(interleaved->compute_time(0, 1, j, rng).total(), worker0[j]);
  }
  EXPECT_EQ(worker0, (std::vector<double>{1, 2, 3, 1, 2, 3, 1}));
}

}  // namespace
}  // namespace pacer
