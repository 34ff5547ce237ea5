// The local engine (engine/local/local_engine.h): the cluster protocol with workers on threads in
// wall-clock time. It is held to what the MPI engine is held to in tests/mpi/mpi_checks.sh, on the
// same problems: a timing-independent trajectory equals the simulator's bit for bit, and paced
// jobs (engine.inject = pace) arrive in the simulator's order at the simulator's times, within
// the MPI check's margin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/engine/worker_statistics.h"
#include "pacer/run/experiment.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::read_csv_header;
using testing::read_csv_rows;
using testing::read_text;
using testing::TempDir;

// mpi_checks.sh's write_problem: least squares, 400 rows of 20 features, 4 workers, full batch.
std::string problem(int seed, int max_steps) {
  return fmt::format(R"(seed = {}
workers = 4
max_steps = {}
eval_every = 0
save_model = true
[data]
source = "synthetic"
generator = "least_squares"
samples = 400
features = 20
[model]
name = "least_squares"
[training]
batch = 0
)",
                     seed, max_steps);
}

RunOutcome run_on(const std::string& engine, const std::string& toml, const std::string& out,
                  std::initializer_list<std::string> settings = {}) {
  Config config = Config::parse(toml, "local_engine_test.toml");
  config.set("engine.name=" + engine);
  for (const std::string& s : settings) config.set(s);
  RunOptions options;
  options.out_dir = out;
  return run_experiment(config, options);
}

// The column `name` of a log.csv, every data row.
std::vector<std::string> column(const std::string& log, const std::string& name) {
  const std::vector<std::string> header = read_csv_header(log);
  const size_t c = std::find(header.begin(), header.end(), name) - header.begin();
  if (c == header.size()) ADD_FAILURE() << log << " has no column " << name;
  std::vector<std::string> out;
  for (const std::vector<std::string>& row : read_csv_rows(log)) {
    out.push_back(c < row.size() ? row[c] : "");
  }
  return out;
}

// DGD with full-batch gradients: the trajectory does not depend on timing, so the local run
// equals the simulated one bit for bit (mpi_checks.sh, dgd_matches_sim).
TEST(LocalEngine, DgdTrajectoryEqualsTheSimulatorsBitForBit) {
  TempDir dir;
  const std::string toml = problem(3, 40) +
                           "[optimizer]\nlr = 0.1\n[method]\nname = \"dgd\"\n"
                           "[timing]\nmodel = \"exponential\"\ntau = 0.01\n";
  const RunOutcome sim = run_on("sim", toml, dir.path() + "/sim");
  const RunOutcome local = run_on("local", toml, dir.path() + "/local");
  EXPECT_EQ(local.summary["engine"], "local");
  EXPECT_EQ(local.summary["clock"], "wall");
  // The per-worker statistics every engine writes (engine/worker_statistics.h), on both; MPI's
  // are checked under mpirun (tests/cluster/protocol_scenarios.h, mpi.engine.*).
  EXPECT_EQ(missing_worker_statistics(sim.summary["engine_stats"], 4), "");
  EXPECT_EQ(missing_worker_statistics(local.summary["engine_stats"], 4), "");
  EXPECT_EQ(local.summary["engine_stats"]["jobs_completed_per_worker"],
            nlohmann::json({40, 40, 40, 40}));
  EXPECT_EQ(read_text(dir.path() + "/sim/model.bin"), read_text(dir.path() + "/local/model.bin"));
  for (const char* name : {"step", "work_units", "loss", "grad_norm", "responders"}) {
    EXPECT_EQ(column(dir.path() + "/sim/log.csv", name),
              column(dir.path() + "/local/log.csv", name))
        << name;
  }
}

// Vanilla ASGD with fixed periods 0.70, 0.79, 1.13, 1.27 s, paced: mpi_checks.sh's
// async_arrivals_match_sim, whose periods keep every two completions of different workers at
// least 90 ms apart over 20 updates. The (worker, delay) arrival sequence, hence the trajectory,
// must equal the simulator's, and each arrival's wall clock lie within that 90 ms margin of the
// simulated one.
TEST(LocalEngine, PacedArrivalsMatchTheSimulatorWithinTheMpiChecksMargin) {
  TempDir dir;
  const std::string toml = problem(5, 20) +
                           "[optimizer]\nlr = 0.05\n[method]\nname = \"asgd\"\n"
                           "[timing]\nmodel = \"fixed\"\ntau = [0.70, 0.79, 1.13, 1.27]\n";
  run_on("sim", toml, dir.path() + "/sim");
  run_on("local", toml, dir.path() + "/local", {"engine.inject=pace", "engine.poll_sleep_us=50"});
  for (const char* name : {"step", "staleness", "worker"}) {
    EXPECT_EQ(column(dir.path() + "/sim/log.csv", name),
              column(dir.path() + "/local/log.csv", name))
        << name;
  }
  const std::vector<std::string> sim_time = column(dir.path() + "/sim/log.csv", "time");
  const std::vector<std::string> local_time = column(dir.path() + "/local/log.csv", "time");
  ASSERT_EQ(sim_time.size(), local_time.size());
  ASSERT_EQ(sim_time.size(), 20u);
  double drift = 0;
  for (size_t r = 0; r < sim_time.size(); ++r) {
    drift = std::max(drift, std::abs(std::stod(local_time[r]) - std::stod(sim_time[r])));
  }
  std::printf(
      "drift: largest |local clock - simulated clock| at an arrival: %.4f s (margin 0.09 s)\n",
      drift);
  EXPECT_LT(drift, 0.09) << "largest |local clock - simulated clock| at an arrival";
  EXPECT_EQ(read_text(dir.path() + "/sim/model.bin"), read_text(dir.path() + "/local/model.bin"));
}

TEST(LocalEngine, RefusesAFaultsTableNamingIt) {
  const std::string toml = problem(1, 5) +
                           "[method]\nname = \"dgd\"\n[timing]\nmodel = \"fixed\"\ntau = 0.001\n"
                           "[faults]\nkill_workers = [1]\nkill_at = 0.5\n";
  try {
    run_on("local", toml, "");
    FAIL() << "a [faults] table was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("faults"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("local"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pacer
