#include "pacer/engine/mpi/mpi_engine.h"

#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pacer/core/error.h"
#include "pacer/engine/mpi/mpi_cluster.h"
#include "pacer/engine/mpi/runtime.h"

namespace pacer::mpi {
namespace {

// Rank 0 of an MPI job. Constructing it starts the run on the worker ranks.
class MpiRun : public EngineRun {
 public:
  MpiRun(const EngineInputs& in, const MpiOptions& options) : max_time_(in.max_time) {
    init();
    if (rank() != 0) {
      fail(
          "engine.name = \"mpi\": a run is started on rank 0 only; ranks 1..n serve it "
          "(serve_worker_ranks)");
    }
    begin_run(
        in.config.source() + "\n" + in.config.to_toml(), in.workers,
        SessionOptions{.timeout_s = options.timeout_s, .poll_sleep_us = options.poll_sleep_us});
    cluster_ = std::make_unique<MpiCluster>(options, in.workers, in.dim);
  }
  bool run(Master& master) override {
    return cluster_->run(master, max_time_) == MpiCluster::Outcome::kInterrupted;
  }
  void stop(EndKind end) override {
    switch (end) {
      case EndKind::kOk:
        cluster_->shutdown(StopStatus::kOk);
        break;
      case EndKind::kError:
        cluster_->shutdown(StopStatus::kError);
        break;
      case EndKind::kInterrupted:
        // mpirun follows its SIGTERM with SIGKILL within seconds: do not wait long.
        cluster_->shutdown(StopStatus::kInterrupted, 2.0);
        break;
    }
  }
  double end_time() const override { return cluster_->end_time(); }
  bool wall_clock() const override { return true; }
  void exclude_time(double seconds) override { cluster_->exclude_time(seconds); }
  void stats(nlohmann::json& out) const override {
    out["engine"] = "mpi";
    cluster_->to_json(out);
  }
  // Checkpoints (mpi_cluster.h): the cluster drains before it calls hook->write(), and saving is
  // possible only inside that call (so never after an interrupt: the run is resumed from its last
  // periodic checkpoint).
  void set_checkpoint_hook(CheckpointHook* hook) override { cluster_->set_checkpoint_hook(hook); }
  bool can_checkpoint_now() const override { return cluster_->can_checkpoint_now(); }
  void checkpoint(StateArchive& a) override { cluster_->checkpoint(a); }

 private:
  double max_time_;
  std::unique_ptr<MpiCluster> cluster_;
};

class MpiEngine : public Engine {
 public:
  explicit MpiEngine(const Config& config) : options_(read_mpi_options(config)) {
    if (config.has("faults")) {
      config.fail_key("faults",
                      "no [faults] table with engine.name = \"mpi\": fault injection is the "
                      "simulator's; on MPI a worker fails for real (kill its rank; docs/mpi.md)");
    }
  }
  std::string name() const override { return "mpi"; }
  bool timing_describes_run() const override { return options_.inject != Inject::kNone; }
  std::unique_ptr<EngineRun> start(const EngineInputs& inputs) const override {
    return std::make_unique<MpiRun>(inputs, options_);
  }
  const MpiOptions& options() const { return options_; }

 private:
  MpiOptions options_;
};

// The configuration rank 0 sent: its source name on the first line, then the resolved TOML.
Config parse_sent_config(const std::string& text) {
  const size_t newline = text.find('\n');
  const std::string source = text.substr(0, newline);
  return Config::parse(newline == std::string::npos ? "" : text.substr(newline + 1),
                       source.empty() ? "config" : source);
}

}  // namespace

std::unique_ptr<Engine> make_mpi_engine(const Config& config, int /*workers*/) {
  return std::make_unique<MpiEngine>(config);
}

int serve_worker_ranks(const WorkerProcessBuilder& build) {
  init();
  const int this_rank = rank();
  if (this_rank == 0) fail("serve_worker_ranks: rank 0 runs the master, not a worker");
  const int index = this_rank - 1;
  while (true) {
    Command command = wait_command();
    if (command.kind == Command::kExit) return command.exit_status;
    std::optional<WorkerProcess> process;
    const MpiEngine* engine = nullptr;
    std::string error;
    try {
      process.emplace(build(parse_sent_config(command.config_toml), index));
      engine = dynamic_cast<const MpiEngine*>(process->engine);
      if (!engine) fail("the configuration does not choose engine.name = \"mpi\"");
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "unknown error";
    }
    // A signal that reached this rank alone, between runs: the worker has stopped (runtime.h).
    if (error.empty() && interrupt_requested()) {
      error = fmt::format("received {}: the worker stopped", interrupt_signal_name());
    }
    if (!report_setup(error, engine ? engine->options().poll_sleep_us : 200)) continue;
    try {
      serve_jobs(*process->worker, *process->timing, index, process->seed, engine->options(),
                 process->dim);
    } catch (const std::exception& e) {
      // Rank 0 cannot be reached (a timeout, a broken communicator): say so here and end the job.
      std::fprintf(stderr, "pacer: error: rank %d (worker %d): %s; aborting the job\n", this_rank,
                   index, e.what());
      abort_job(1);
    }
  }
}

namespace {

// The processes of an MPI job (registry.h): rank 0 runs the command, ranks 1..n serve it.
class MpiJob : public JobProcesses {
 public:
  ~MpiJob() override { finalize(); }
  bool is_worker() const override { return rank() != 0; }
  int serve(const WorkerProcessBuilder& build) override { return serve_worker_ranks(build); }
  void finish(int exit_status) override { end_session(exit_status); }
};

// engine.startup_timeout_s, read before MPI starts since it bounds the start. A bad value gets
// the default here; the run then reports the error (read_mpi_options checks the key).
double startup_timeout(const Config* config) {
  if (!config) return kDefaultStartupTimeoutS;
  try {
    const double seconds = config->get_double("engine.startup_timeout_s", kDefaultStartupTimeoutS);
    if (seconds >= 0 && seconds < 1e9) return seconds;
  } catch (const std::exception&) {
  }
  return kDefaultStartupTimeoutS;
}

}  // namespace

std::unique_ptr<JobProcesses> start_mpi_job(const Config* config) {
  start(startup_timeout(config));
  return std::make_unique<MpiJob>();
}

}  // namespace pacer::mpi
