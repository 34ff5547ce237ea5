// Gradient coding with cyclic repetition, GC-CR(s) (Tandon et al. 2017): worker i holds
// S_i = {i, ..., i+s} mod n and sends m_i = Σ_{p∈S_i} B_ip g_p(x_t) (c work units); the master
// closes the step with the fastest n − s messages F and steps along the exact gradient
// ĝ_t = (1/n) Σ_{i∈F} a_i m_i, where a_Fᵀ B_F = 1ᵀ. B is the best-conditioned of several random
// Tandon encodings (method.code_trials, method.code_refine) up to 32 workers and the best
// circulant encoding above (method.code_construction; coding/encoding.h); summary.json reports
// its worst max|a| and the largest |a_i| and decode residual met during the run.
//
// Lost workers: permanent stragglers; the run goes on while at most s are lost, the exact decoder
// solving for the fastest n − s survivors (CyclicMaster, coded.h), else it stops with status
// too_many_lost.
#include "coded.h"
#include "method_factories.h"
#include "pacer/method/coded_worker.h"

namespace pacer {
namespace {

class GcCr : public CodedMethod {
 public:
  GcCr(const Config& config, const MethodSetup& setup)
      : CodedMethod(config, setup, PlacementKind::kCyclic),
        encoding_(read_cyclic_encoding(config, placement_, setup.seed)) {}
  std::string name() const override { return "gc-cr"; }

  std::unique_ptr<TrainingMaster> make_master(Trainer& trainer) const override {
    return std::make_unique<CyclicMaster>(trainer, placement_, dim(), policy_, encoding_);
  }
  std::unique_ptr<Worker> make_worker(int worker) const override {
    return std::make_unique<CodedWorker>(setup_.objective, worker, setup_.seed, sampling_,
                                         placement_.partitions(worker),
                                         row_coefficients(encoding_->matrix, placement_, worker));
  }

 private:
  std::shared_ptr<const CyclicEncoding> encoding_;
};

}  // namespace

std::unique_ptr<Method> make_gc_cr(const Config& config, const MethodSetup& setup) {
  return std::make_unique<GcCr>(config, setup);
}

}  // namespace pacer
