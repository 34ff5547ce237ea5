// Ignore-stragglers gradient coding, IS-GC(c) with FR ("is-gc-fr") or CR ("is-gc-cr") placement:
// worker i sends the plain sum m_i = Σ_{p∈S_i} g_p(x_t) (c work units); the master closes the
// step with the fastest n − s messages, picks J, a largest subset of them whose S_i are pairwise
// disjoint (coding/decoder.h select_disjoint: FR the first arrival of each group, CR a maximum
// set of disjoint windows), and steps along the mean of the |J|·c partition gradients they
// cover: ĝ_t = (1/(|J|·c)) Σ_{i∈J} m_i.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "coded.h"
#include "method_factories.h"
#include "pacer/core/stats.h"
#include "pacer/method/coded_worker.h"

namespace pacer {
namespace {

class IsGcMaster : public CodedMaster {
 public:
  using CodedMaster::CodedMaster;

 protected:
  bool step_complete() const override {
    return num_arrived() == workers() - placement().stragglers();
  }

  void choose(std::vector<int>& used, std::vector<double>& weights) override {
    used = select_disjoint(placement(), arrival_order());
    const double covered = static_cast<double>(used.size() * placement().load());
    for (int i : used) weights[i] = 1.0 / covered;
    ++chosen_histogram_[static_cast<int>(used.size())];
  }

  // Lost workers are permanent stragglers: the run goes on while at most s are lost.
  std::string lost_requirement() const override {
    return fmt::format("at most s = {} workers lost (the step waits for n - s messages)",
                       placement().stragglers());
  }
  void checkpoint_method(StateArchive& a) override {
    a.section("is_gc");
    a.io(chosen_histogram_);
  }
  void summarize_decoder(nlohmann::json& out) const override {
    int64_t steps = 0, chosen = 0;
    for (const auto& [size, count] : chosen_histogram_) {
      steps += count;
      chosen += size * count;
    }
    out["rule"] = "largest pairwise-disjoint subset of the fastest n - s";
    out["chosen_workers_histogram"] = histogram_json(chosen_histogram_);
    out["chosen_workers_mean"] = steps ? static_cast<double>(chosen) / steps : 0.0;
    out["partitions_covered_mean"] =
        steps ? static_cast<double>(chosen * placement().load()) / steps : 0.0;
  }

 private:
  std::map<int, int64_t> chosen_histogram_;  // |J| -> steps
};

class IsGc : public CodedMethod {
 public:
  IsGc(const Config& config, const MethodSetup& setup, PlacementKind kind)
      : CodedMethod(config, setup, kind) {}
  std::string name() const override { return "is-gc-" + placement_name(placement_.kind()); }

  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<IsGcMaster>(trainer, placement_, dim(), policy_);
  }
  std::unique_ptr<Worker> make_worker(int worker) const override {
    const std::vector<int>& partitions = placement_.partitions(worker);
    return std::make_unique<CodedWorker>(setup_.objective, worker, setup_.seed, sampling_,
                                         partitions, std::vector<double>(partitions.size(), 1.0));
  }
};

}  // namespace

std::unique_ptr<Method> make_is_gc_fr(const Config& config, const MethodSetup& setup) {
  return std::make_unique<IsGc>(config, setup, PlacementKind::kFractional);
}

std::unique_ptr<Method> make_is_gc_cr(const Config& config, const MethodSetup& setup) {
  return std::make_unique<IsGc>(config, setup, PlacementKind::kCyclic);
}

}  // namespace pacer
