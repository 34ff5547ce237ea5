#include "pacer/engine/local/local_engine.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/log.h"
#include "pacer/engine/cluster/in_process_transport.h"
#include "pacer/engine/cluster/remote_cluster.h"

namespace pacer::local {
namespace {

using cluster::ClusterOptions;
using cluster::RemoteCluster;
using cluster::StopStatus;

// One worker half on its thread: its own timing model (a trace's replay position advances per
// worker), serving endpoint index + 1 until the master stops it.
struct WorkerThread {
  std::unique_ptr<Worker> worker;
  std::unique_ptr<TimingModel> timing;
  std::thread thread;
};

class LocalRun : public EngineRun {
 public:
  LocalRun(const EngineInputs& in, const ClusterOptions& options)
      : options_(options), max_time_(in.max_time), hub_(in.workers + 1, "local") {
    workers_.resize(static_cast<size_t>(in.workers));
    for (int i = 0; i < in.workers; ++i) {
      WorkerThread& w = workers_[static_cast<size_t>(i)];
      w.worker = in.method.make_worker(i);
      w.timing = make_timing_model(in.config, in.workers, in.seed);
    }
    cluster_ = std::make_unique<RemoteCluster>(hub_.endpoint(0), options_, in.workers, in.dim);
    try {
      for (int i = 0; i < in.workers; ++i) start_worker(i, in.seed, in.dim);
    } catch (...) {
      // A thread that could not start: the workers' endpoints die, as processes that ended, so
      // the threads already serving leave their loops and the cluster's shutdown sees them gone.
      for (int i = 0; i < in.workers; ++i) hub_.kill(i + 1);
      join_workers();
      throw;
    }
  }
  ~LocalRun() override {
    try {
      stop(EndKind::kError);
    } catch (const std::exception& e) {
      log_warning("{}", e.what());
    }
    join_workers();  // whatever stop() did: no joinable thread may be destroyed
  }

  bool run(Master& master) override {
    return cluster_->run(master, max_time_) == RemoteCluster::Outcome::kInterrupted;
  }
  void stop(EndKind end) override {
    if (stopped_) return;
    stopped_ = true;
    try {
      cluster_->shutdown(end == EndKind::kOk      ? StopStatus::kOk
                         : end == EndKind::kError ? StopStatus::kError
                                                  : StopStatus::kInterrupted);
    } catch (...) {
      join_workers();
      throw;
    }
    join_workers();
  }
  double end_time() const override { return cluster_->end_time(); }
  bool wall_clock() const override { return true; }
  void exclude_time(double seconds) override { cluster_->exclude_time(seconds); }
  void stats(nlohmann::json& out) const override {
    out["engine"] = "local";
    cluster_->to_json(out);
  }
  void set_checkpoint_hook(CheckpointHook* hook) override { cluster_->set_checkpoint_hook(hook); }
  bool can_checkpoint_now() const override { return cluster_->can_checkpoint_now(); }
  void checkpoint(StateArchive& a) override { cluster_->checkpoint(a); }

 private:
  // A worker still inside a job (one declared lost) leaves once that job ends.
  void join_workers() {
    for (WorkerThread& w : workers_) {
      if (w.thread.joinable()) w.thread.join();
    }
  }

  // A worker thread that fails outside its worker half (a transport timeout: the master went
  // silent) says so and leaves; its endpoint is then dead, which the master sees at shutdown.
  void start_worker(int i, uint64_t seed, int64_t dim) {
    WorkerThread& w = workers_[static_cast<size_t>(i)];
    w.thread = std::thread([this, &w, i, seed, dim] {
      try {
        cluster::serve_jobs(hub_.endpoint(i + 1), *w.worker, *w.timing, i, seed, options_, dim);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "pacer: error: local engine, worker %d: %s\n", i, e.what());
        hub_.kill(i + 1);
      }
    });
  }

  ClusterOptions options_;
  double max_time_;
  cluster::InProcessHub hub_;
  std::vector<WorkerThread> workers_;
  std::unique_ptr<RemoteCluster> cluster_;
  bool stopped_ = false;
};

class LocalEngine : public Engine {
 public:
  explicit LocalEngine(const Config& config) : options_(cluster::read_cluster_options(config)) {
    if (config.has("faults")) {
      config.fail_key("faults",
                      "no [faults] table with engine.name = \"local\": fault injection is the "
                      "simulator's; the local engine's workers are threads that do not fail");
    }
  }
  std::string name() const override { return "local"; }
  bool timing_describes_run() const override { return options_.inject != cluster::Inject::kNone; }
  std::unique_ptr<EngineRun> start(const EngineInputs& inputs) const override {
    return std::make_unique<LocalRun>(inputs, options_);
  }

 private:
  ClusterOptions options_;
};

}  // namespace

std::unique_ptr<Engine> make_local_engine(const Config& config, int /*workers*/) {
  return std::make_unique<LocalEngine>(config);
}

}  // namespace pacer::local
