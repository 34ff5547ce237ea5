// Pipelined gradient coding with cyclic repetition, PGC-CR(s) (Su & Li): worker i holds
// S_i = {i, ..., i+s} mod n, refreshes only p_i(t) = (i + t mod c) mod n in its pipeline cache
// each step (one work unit; c at the warm-up), so every partition is refreshed exactly once per
// step across the cluster, and sends the coded sum of its cache. The master closes the step with
// the fastest n − s messages F.
//   method.decoder = "relaxed" (default): 0/1 coefficients, ĝ_t = (1/n)·μ·Σ_{i∈F} m_i,
//     μ = n / ((n − s)(s + 1)).
//   method.decoder = "exact": the workers apply the rows of a Tandon encoding B to their cache and
//     the master decodes ĝ_t = (1/n) Σ_{i∈F} a_i m_i with a_Fᵀ B_F = 1ᵀ, as GC-CR does. The
//     large a_i amplify the differences between stale cached copies; this variant exists to show
//     it (method.code_trials and method.code_refine as for GC-CR).
//   method.decoder = "adaptive": relaxed decoding with per-worker weights w_i ≥ 0 chosen from the
//     observed response rates so that every partition's expected coefficient is 1 (coding/
//     decoder.h adaptive_relaxed_weights; coded.h CyclicMaster): unbiased under persistent
//     stragglers too, and μ under uniformly random ones. method.adaptive_every (default 1): the
//     weights are re-solved at most every that many steps (a solve costs up to O(n⁴)).
//
// Lost workers: permanent stragglers; the run goes on while at most s are lost (CyclicMaster,
// coded.h): a lost worker's partitions are still covered by the caches of the other s holders.
// With relaxed decoding a persistent loss biases ĝ like a persistent straggler does.
#include "coded.h"
#include "method_factories.h"
#include "pacer/method/coded_worker.h"

namespace pacer {
namespace {

class PgcCr : public CodedMethod {
 public:
  PgcCr(const Config& config, const MethodSetup& setup)
      : CodedMethod(config, setup, PlacementKind::kCyclic) {
    const std::string decoder =
        config.get_choice("method.decoder", "relaxed", {"relaxed", "exact", "adaptive"});
    if (decoder == "exact") encoding_ = read_cyclic_encoding(config, placement_, setup.seed);
    if (decoder == "adaptive") {
      const int64_t every = config.get_int("method.adaptive_every", 1);
      if (every < 1 || every > 1000000000) {
        config.fail_key(
            "method.adaptive_every",
            "an integer from 1 to 1000000000 (steps between two solves of the weights)");
      }
      adaptive_every_ = static_cast<int>(every);
    }
  }
  std::string name() const override { return "pgc-cr"; }

  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<CyclicMaster>(trainer, placement_, dim(), policy_, encoding_,
                                          adaptive_every_);
  }
  std::unique_ptr<Worker> make_worker(int worker) const override {
    const std::vector<int>& partitions = placement_.partitions(worker);
    std::vector<double> coefficients = encoding_
                                           ? row_coefficients(encoding_->matrix, placement_, worker)
                                           : std::vector<double>(partitions.size(), 1.0);
    return std::make_unique<PipelineWorker>(setup_.objective, worker, setup_.seed, sampling_,
                                            partitions, /*offset=*/0, std::move(coefficients));
  }

 private:
  std::shared_ptr<const CyclicEncoding> encoding_;  // null: relaxed or adaptive decoding
  int adaptive_every_ = 0;                          // > 0: adaptive decoding
};

}  // namespace

std::unique_ptr<Method> make_pgc_cr(const Config& config, const MethodSetup& setup) {
  return std::make_unique<PgcCr>(config, setup);
}

}  // namespace pacer
