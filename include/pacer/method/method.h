// Training methods (DESIGN.md section 3): one file per method, each a factory of a master half
// and n worker halves that talk through method/protocol.h.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/method/protocol.h"
#include "pacer/method/trainer.h"
#include "pacer/model/objective.h"
#include "pacer/timing/timing_model.h"

namespace pacer {

// A master that also reports what it measured (decode statistics, staleness, stragglers...).
class TrainingMaster : public Master {
 public:
  bool finished() const override { return trainer_.finished(); }
  // Adds method-specific entries to summary.json.
  virtual void summarize(nlohmann::json& out) const = 0;
  // summary.json's lost_workers: one entry per loss, {worker, time, step} and, for a worker that
  // came back, rejoined_time.
  nlohmann::json lost_workers_json() const;
  // The record of losses; SyncMaster and AsyncMaster add theirs (call this first).
  void checkpoint(StateArchive& a) override;

 protected:
  explicit TrainingMaster(Trainer& trainer) : trainer_(trainer) {}
  // Bookkeeping every master does on Master::on_lost / on_rejoined (call first).
  void record_lost(int worker, const Cluster& cluster);
  void record_rejoined(int worker, const Cluster& cluster);
  // Ends the run with status "too_many_lost" and a message naming the workers lost now, what the
  // method needed (`needed`, e.g. "every group of s + 1 = 2 workers to keep one") and, when not
  // empty, `advice`.
  void stop_too_many_lost(const Cluster& cluster, const std::string& needed,
                          const std::string& advice = "");
  // A reply with ReplyStatus::kFailed: the run ends with an Error naming the worker and its
  // message (the engine's outputs are kept by the experiment layer).
  [[noreturn]] void fail_on_failed_reply(const Reply& reply) const;

  Trainer& trainer_;

 private:
  struct Loss {
    int worker;
    double time;
    int64_t step;
    double rejoined_time = -1;  // < 0: still lost
    void checkpoint(StateArchive& a) {
      a.io(worker);
      a.io(time);
      a.io(step);
      a.io(rejoined_time);
    }
  };
  std::vector<Loss> losses_;
};

// Everything a method may need to build its halves.
struct MethodSetup {
  std::shared_ptr<const Objective> objective;
  const TimingModel* timing = nullptr;  // the run's timing model (Rescaled ASGD's τ); may be null
  int workers = 0;
  uint64_t seed = 0;
};

class Method {
 public:
  virtual ~Method() = default;
  // The registry name ("dgd", "pgc-cr", ...).
  virtual std::string name() const = 0;
  // Synchronous methods update once per step; asynchronous ones on every arrival.
  virtual bool synchronous() const = 0;
  virtual std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const = 0;
  // Worker i's half. Every worker half draws only from its own seeded streams.
  virtual std::unique_ptr<Worker> make_worker(int worker) const = 0;
};

// Builds the method named by method.name, reading its method.* keys. Impossible parameters are
// Errors naming the key and saying what would be valid.
std::unique_ptr<Method> make_method(const Config& config, const MethodSetup& setup);
// Every registered method name, in the order `pacer compare` lists them.
std::vector<std::string> method_names();
// An Error unless `name` is one of method_names(): "<origin>: key 'method.name': expected one of
// ..., got "<name>"; did you mean ...?". `origin` says where the name was given (a config file,
// "--set ...", "--methods <spec>").
void check_method_name(const std::string& name, const std::string& origin);

// What `pacer methods` prints of a registered method: its name, whether it is synchronous, its
// main parameter ("s = 1", "k = 1", "R = n", "S = n"; "" for none) and one line of what it does
// (the update rules in full: DESIGN.md section 3).
struct MethodInfo {
  std::string name;
  bool synchronous = true;
  std::string parameter;
  std::string summary;
};
// Every registered method, in method_names()'s order.
std::vector<MethodInfo> method_infos();

}  // namespace pacer
