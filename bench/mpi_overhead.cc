// The MPI engine's overhead, measured (DESIGN.md sections 5 and 7). Run under mpirun with
// workers + 1 ranks (scripts/bench-mpi.sh does it):
//
//   mpirun -np 5 mpi_overhead [--dim D] [--tau SECONDS] [--steps N] [--reps R] [--rounds K]
//
// 1. For every synchronous method: least squares with D parameters (default 10^6), two rows per
//    partition, fixed timing with the same τ for every worker and engine.inject = pace, so every
//    job takes a well-defined u·τ seconds of (padded) compute. The overhead ratio is the real
//    median time per step divided by the decisive job's measured duration (the largest of the
//    workers' median job times: all jobs of a step take the same modelled time, and the median
//    skips a pipeline's warm-up job). 1.00 = no overhead. Rank 0's own time per step is split
//    into MPI polls (MPI_Testsome, which also copies the replies in), assign() (one snapshot of x
//    per model version, starting the sends) and the method's code (decoding, the optimizer step,
//    the recorder). MPI_Testsome's share includes the empty polls of the idle time between replies
//    (Open MPI copies a large reply in during the poll that sees it arrive, which may return
//    empty-handed).
//    Each method's MPI run is followed at once by the same run on the local engine (workers on
//    threads of rank 0, engine/local; the worker ranks sleep meanwhile): its overhead ratio, and
//    its ratio to MPI's, side by side.
// 2. Messages of the model's size, round trips between rank 0 and worker 0 (rank 1), in double
//    (8·D bytes each way) and in float32 (4·D bytes: a worker half that reads its model in
//    float32 and answers with a payload of exact floats): a plain blocking MPI ping-pong
//    (MPI_Send/MPI_Recv of that many bytes, mean of R round trips), then at once the engine's own
//    ping-pong (MpiCluster with a master that gives worker 0 its next job, of a new model version,
//    as soon as the reply is in, and a worker half that answers at once: assign's snapshot of x,
//    the job message, the reply and its payload, the conversions, and both sides' polling, mean of
//    R jobs); K such pairs in turn, and the medians and their ratio (the range of each over the K
//    rounds too); and the engine's cost per job inside a DGD run without injection (4 workers at
//    once, the master also decoding and stepping between replies). Engine figures are the master's
//    view of a job's round trip minus the worker's time on it.
// Prints one Markdown table per part. Ranks that take no part in a measurement wait in the
// engine's poll-sleep loops, so that they do not compete for the cores.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/log.h"
#include "pacer/core/stats.h"
#include "pacer/engine/mpi/mpi_cluster.h"
#include "pacer/engine/mpi/mpi_engine.h"
#include "pacer/engine/mpi/runtime.h"
#include "pacer/method/method.h"
#include "pacer/run/experiment.h"
#include "pacer/timing/timing_model.h"

namespace pacer {
namespace {

struct Options {
  int64_t dim = 1000000;
  double tau = 0.25;
  int steps = 12;
  int reps = 20;
  int rounds = 5;
  int poll_sleep_us = 100;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--dim") {
      o.dim = std::atoll(value);
    } else if (key == "--tau") {
      o.tau = std::atof(value);
    } else if (key == "--steps") {
      o.steps = std::atoi(value);
    } else if (key == "--poll-sleep-us") {
      o.poll_sleep_us = std::atoi(value);
    } else if (key == "--reps") {
      o.reps = std::atoi(value);
    } else if (key == "--rounds") {
      o.rounds = std::atoi(value);
    } else {
      fail("unknown option {} (expected --dim, --tau, --steps, --reps, --rounds, --poll-sleep-us)",
           key);
    }
  }
  if (o.dim < 1 || o.tau <= 0 || o.steps < 2 || o.reps < 1 || o.rounds < 1 || o.poll_sleep_us < 1) {
    fail("bad option value");
  }
  return o;
}

// Mean round trip (seconds) of `bytes`-byte messages between rank 0 and rank 1.
double ping_pong(int64_t bytes, int reps) {
  std::vector<char> buffer(static_cast<size_t>(bytes));
  const int r = mpi::rank();
  double start = 0;
  for (int i = -3; i < reps; ++i) {  // 3 warm-up round trips
    if (i == 0) start = MPI_Wtime();
    if (r == 0) {
      MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 7, MPI_COMM_WORLD);
      MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - start) / reps;
}

// Answers at once with a payload of the model's size (no copy, no math), saying that it reads
// its model in `precision`; its payload (zeros) is exactly float.
class EchoWorker : public Worker {
 public:
  explicit EchoWorker(Precision precision) : precision_(precision) {}
  Precision model_precision() const override { return precision_; }
  double units(const Job&) const override { return 1.0; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    if (out.payload.size() != x.size()) out.payload = Vec::Zero(x.size());
    out.loss = 0;
    out.versions.assign(1, job.tag);
  }

 private:
  Precision precision_;
};

// Gives worker 0 job after job, `reps` of them (after 3 warm-up jobs).
class EchoMaster : public Master {
 public:
  EchoMaster(int64_t dim, int reps) : x_(Vec::Ones(dim)), total_(reps + 3) {}
  void start(Cluster& cluster) override { cluster.assign(0, Job{0}, x_); }
  void on_reply(const Reply& reply, Cluster& cluster) override {
    if (++replies_ == 3) timed_start_ = cluster.now();
    if (replies_ < total_) {
      cluster.assign(0, Job{reply.tag + 1}, x_);
    } else {
      per_job_ = (cluster.now() - timed_start_) / (total_ - 3);
    }
  }
  bool finished() const override { return replies_ >= total_; }
  double per_job() const { return per_job_; }

 private:
  Vec x_;
  int total_;
  int replies_ = 0;
  double timed_start_ = 0, per_job_ = 0;
};

// Rank 0: the engine ping-pong against worker ranks serving EchoWorkers; returns the mean round
// trip and the mean worker time per job.
std::pair<double, double> engine_ping_pong(const Options& o, int workers) {
  mpi::MpiOptions options;
  options.poll_sleep_us = o.poll_sleep_us;
  mpi::MpiCluster cluster(options, workers, o.dim);
  EchoMaster master(o.dim, o.reps);
  cluster.run(master, 0);
  cluster.shutdown(mpi::StopStatus::kOk);
  nlohmann::json stats;
  cluster.to_json(stats);
  const double job = stats["busy_time_per_worker"][0].get<double>() /
                     stats["jobs_completed_per_worker"][0].get<double>();
  return {master.per_job(), job};
}

Config base_config(const Options& o, int workers) {
  Config c =
      Config::parse(fmt::format(R"(seed = 1
workers = {}
max_steps = {}
eval_every = 0
[data]
source = "synthetic"
generator = "least_squares"
samples = {}
features = {}
[model]
name = "least_squares"
[training]
batch = 0
[optimizer]
lr = 0.01
[timing]
model = "fixed"
tau = {}
[engine]
name = "mpi"
poll_sleep_us = {}
)",
                                workers, o.steps, 2 * workers, o.dim, o.tau, o.poll_sleep_us),
                    "mpi_overhead");
  return c;
}

double mean_of(const nlohmann::json& values) {
  double sum = 0;
  for (const auto& v : values) sum += v.get<double>();
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// Plain ping-pongs and the engine's, side by side, one of each per round (seconds per round trip;
// the engine's less the worker's time on the job).
struct PingPong {
  std::vector<double> plain, engine;
};

// Ranks 0 and 1: the plain ping-pong of `value_bytes`·D-byte messages; rank 0 then the engine's
// (every worker rank serves it with an EchoWorker of that precision); o.rounds times.
PingPong measure_ping_pong(const Options& o, int workers, int value_bytes) {
  PingPong p;
  for (int round = 0; round < o.rounds; ++round) {
    if (mpi::rank() <= 1) p.plain.push_back(ping_pong(value_bytes * o.dim, o.reps));
    if (mpi::rank() == 0) {
      const auto [round_trip, worker] = engine_ping_pong(o, workers);
      p.engine.push_back(round_trip - worker);
      continue;
    }
    EchoWorker echo(value_bytes == 4 ? Precision::kFloat32 : Precision::kFloat64);
    // Durations are not injected (inject = none); the timing model is only for the signature.
    Config timing_config = Config::parse("[timing]\nmodel = \"fixed\"\n", "mpi_overhead");
    auto timing = make_timing_model(timing_config, workers, 1);
    mpi::MpiOptions echo_options;
    echo_options.poll_sleep_us = o.poll_sleep_us;
    mpi::serve_jobs(echo, *timing, mpi::rank() - 1, 1, echo_options, o.dim);
  }
  return p;
}

// "median ms (min–max)" of round-trip seconds.
std::string describe_ms(const std::vector<double>& seconds) {
  const auto [low, high] = std::minmax_element(seconds.begin(), seconds.end());
  return fmt::format("{:.2f} ({:.2f}–{:.2f})", 1e3 * median(seconds), 1e3 * *low, 1e3 * *high);
}

void print_ping_pong_row(const char* precision, int value_bytes, const Options& o,
                         const PingPong& p) {
  const double mb = value_bytes * static_cast<double>(o.dim) / 1e6;
  const double plain = median(p.plain), engine = median(p.engine);
  std::printf("| %s (%.1f MB) | %s | %.0f | %s | %.0f | %.2f |\n", precision, mb,
              describe_ms(p.plain).c_str(), 2 * mb / plain, describe_ms(p.engine).c_str(),
              2 * mb / engine, engine / plain);
}

// The slowest worker's median measured job time (compute + padding): every worker's jobs take
// the same modelled time once a pipeline's warm-up job is done.
double decisive_job(const nlohmann::json& engine_stats) {
  double job = 0;
  for (const auto& t : engine_stats["median_job_time_per_worker"]) {
    job = std::max(job, t.get<double>());
  }
  return job;
}

nlohmann::json paced_run(const Config& config, const std::string& label) {
  RunOptions run;
  run.label = label;
  return run_experiment(config, run).summary;
}

int run_rank0(const Options& o, int workers, const PingPong& p64, const PingPong& p32) {
  // The synchronous methods this build has, with the parameters the table uses.
  const std::vector<std::string> candidates = {"dgd",      "is-sgd",   "gc-fr",  "gc-cr",
                                               "is-gc-fr", "is-gc-cr", "pgc-fr", "pgc-cr"};
  const std::vector<std::string> registered = method_names();
  std::printf(
      "MPI engine overhead: %d workers, d = %lld (least squares, 2 rows per partition), "
      "fixed tau = %g s for every worker, inject = pace, %d steps per method\n\n",
      workers, static_cast<long long>(o.dim), o.tau, o.steps);
  std::printf(
      "| method | median step (s) | decisive job (s) | overhead ratio | overhead per step (ms) | "
      "rank 0 in MPI_Testsome (ms/step) | rank 0 assigning (ms/step) | rank 0 in method code "
      "(ms/step) | local engine: overhead ratio | local / MPI |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& name : candidates) {
    if (std::find(registered.begin(), registered.end(), name) == registered.end()) continue;
    Config config = base_config(o, workers);
    config.set_string("method.name", name);
    config.set_string("engine.inject", "pace");
    const nlohmann::json s = paced_run(config, name);
    const nlohmann::json& e = s["engine_stats"];
    const double job = decisive_job(e);
    const double step = s["median_step_time"].get<double>();
    const double steps = std::max(1.0, s["steps"].get<double>());
    // The same run on the local engine (workers on threads of rank 0; the worker ranks sleep
    // meanwhile), right after: side by side.
    config.set_string("engine.name", "local");
    const nlohmann::json l = paced_run(config, name + " (local)");
    const double local_ratio =
        l["median_step_time"].get<double>() / decisive_job(l["engine_stats"]);
    std::printf(
        "| %s | %.4f | %.4f | %.3f | %.1f | %.1f | %.1f | %.1f | %.3f | %.3f |\n", name.c_str(),
        step, job, step / job, 1e3 * (step - job),
        1e3 * (e["master_receive_time"].get<double>() + e["master_empty_poll_time"].get<double>()) /
            steps,
        1e3 * e["master_assign_time"].get<double>() / steps,
        1e3 * e["master_method_time"].get<double>() / steps, local_ratio,
        local_ratio / (step / job));
    std::fflush(stdout);
  }

  Config config = base_config(o, workers);
  config.set_string("method.name", "dgd");
  config.set_string("engine.inject", "none");
  RunOptions run;
  run.label = "dgd (no injection)";
  const nlohmann::json s = run_experiment(config, run).summary;
  const nlohmann::json& e = s["engine_stats"];
  const double per_job = mean_of(e["mean_message_overhead_per_worker"]);
  const double compute =
      mean_of(e["busy_time_per_worker"]) / std::max(1.0, mean_of(e["jobs_completed_per_worker"]));
  std::printf(
      "\nMessages of the model's size (the model and a gradient), rank 0 <-> rank 1, %d rounds "
      "of %d round trips each way, side by side: median ms per round trip (range over the "
      "rounds)\n\n",
      o.rounds, o.reps);
  std::printf(
      "| values | plain MPI ping-pong (ms) | MB/s | engine ping-pong, less worker time (ms) | "
      "MB/s | engine / plain (medians) |\n|---|---|---|---|---|---|\n");
  print_ping_pong_row("double", 8, o, p64);
  print_ping_pong_row("float32", 4, o, p32);
  const double mb = 8.0 * static_cast<double>(o.dim) / 1e6;
  std::printf(
      "\nEngine inside DGD without injection (doubles): job round trip minus worker time, mean "
      "over %d workers x %d jobs: %.2f ms (%.0f MB/s).\n",
      workers, o.steps, 1e3 * per_job, 2 * mb / per_job);
  std::printf("\n(DGD without injection: median step %.4f s, worker time per job %.4f s.)\n",
              s["median_step_time"].get<double>(), compute);
  return 0;
}

// This process as a worker of the MPI job it already started (the ping-pong needs MPI first):
// serves rank 0's runs (experiment.h, serve_job_worker); main() finalizes.
class ServingRank : public JobProcesses {
 public:
  bool is_worker() const override { return true; }
  int serve(const WorkerProcessBuilder& build) override { return mpi::serve_worker_ranks(build); }
  void finish(int) override {}
};

}  // namespace
}  // namespace pacer

int main(int argc, char** argv) {
  using namespace pacer;
  int status = 1;
  try {
    const Options o = parse(argc, argv);
    set_log_level(LogLevel::kWarning);
    mpi::init();
    const int workers = mpi::size() - 1;
    if (workers < 1) fail("run under mpirun with workers + 1 >= 2 ranks");
    const PingPong p64 = measure_ping_pong(o, workers, 8);
    const PingPong p32 = measure_ping_pong(o, workers, 4);
    if (mpi::rank() == 0) {
      status = run_rank0(o, workers, p64, p32);
    } else {
      ServingRank serving;
      status = serve_job_worker(serving);
      mpi::finalize();
      return status;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_overhead: error: %s\n", e.what());
    status = 1;
  }
  if (mpi::active()) {
    mpi::end_session(status);
    mpi::finalize();
  }
  return status;
}
