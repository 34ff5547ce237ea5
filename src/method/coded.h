// What the gradient-coding methods share (DESIGN.md section 3.1): reading s and the placement,
// the base of their Method objects, and the masters of the FR and CR schemes.
//
// Every coded master forms ĝ_t = Σ_i w_i m_i over a set of workers listed in increasing index
// order, so ĝ does not depend on the order in which the messages arrived.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <vector>

#include "pacer/coding/decoder.h"
#include "pacer/coding/encoding.h"
#include "pacer/coding/placement.h"
#include "pacer/method/gradient_worker.h"
#include "pacer/method/method.h"
#include "pacer/method/sync_master.h"

namespace pacer {

// Reads method.s (stragglers tolerated, default 1) and checks it against the placement: an Error
// naming method.s and the valid values otherwise (0 <= s < n; for FR, s + 1 dividing n).
int read_stragglers(const Config& config, PlacementKind kind, int workers);

// Reads method.code_construction ("auto", default: the random search up to kSearchMaxWorkers = 32
// workers and a circulant above; "search"; "circulant"), method.code_trials (>= 1, default 20)
// and method.code_refine (>= 0, default 1000; both for the search) and builds the CR encoding of
// make_cyclic_encoding (coding/encoding.h) from the run seed.
std::shared_ptr<const CyclicEncoding> read_cyclic_encoding(const Config& config,
                                                           const Placement& placement,
                                                           uint64_t seed);

// A synchronous coded method: its setup, straggler policy, minibatch sampling and placement.
class CodedMethod : public Method {
 public:
  bool synchronous() const override { return true; }

 protected:
  CodedMethod(const Config& config, const MethodSetup& setup, PlacementKind kind);
  int64_t dim() const { return setup_.objective->dim(); }

  MethodSetup setup_;
  StragglerPolicy policy_;
  MinibatchSampling sampling_;
  Placement placement_;
};

// A SyncMaster whose decoder is a choice of workers and weights.
class CodedMaster : public SyncMaster {
 public:
  CodedMaster(Trainer& trainer, Placement placement, int64_t dim, StragglerPolicy policy);

 protected:
  const Placement& placement() const { return placement_; }
  // The decoder of the current step: the workers whose messages it combines, in increasing index,
  // and their weights (`weights` has n entries, all zero on entry).
  virtual void choose(std::vector<int>& used, std::vector<double>& weights) = 0;
  // Decode statistics for summary.json.
  virtual void summarize_decoder(nlohmann::json& out) const = 0;

 private:
  void decode(Vec& g, std::vector<int>& used) final;
  void summarize_method(nlohmann::json& out) const final;

  Placement placement_;
  std::vector<double> weights_;
};

// GC-FR and PGC-FR. The step closes once a message from every group has arrived;
//   ĝ = (1/n) Σ_groups m_first (the first message to arrive from each group), or, with
//   group_average, (1/n) Σ_groups (mean of the group's messages received by the close).
//   Lost workers are permanent stragglers: the run goes on while every group keeps a survivor
//   (so up to s losses always, more when they fall in different groups).
class GroupMaster : public CodedMaster {
 public:
  GroupMaster(Trainer& trainer, Placement placement, int64_t dim, StragglerPolicy policy,
              bool group_average);

 protected:
  bool step_complete() const override;
  std::string lost_requirement() const override;
  void choose(std::vector<int>& used, std::vector<double>& weights) override;
  void summarize_decoder(nlohmann::json& out) const override;
  void checkpoint_method(StateArchive& a) override;

 private:
  bool group_average_;
  std::vector<int> heard_;  // per group: messages of the current step (updated in choose)
  int64_t steps_ = 0;
  int64_t messages_used_ = 0;
};

// GC-CR and PGC-CR. The step closes with the fastest n − s messages F;
//   exact    (an encoding is given)  ĝ = (1/n) Σ_{i∈F} a_i m_i, a_Fᵀ B_F = 1ᵀ;
//   relaxed  (no encoding)           ĝ = (1/n) · μ · Σ_{i∈F} m_i, μ = n / ((n − s)(s + 1));
//   adaptive (adaptive_every > 0)    ĝ = (1/n) Σ_{i∈F} w_i m_i, w = adaptive_relaxed_weights(ρ)
//            (coding/decoder.h), ρ_i the fraction of the steps so far whose F held worker i
//            ((n − s)/n before the first step). The weights of a step are computed before its F
//            is counted, so that they do not depend on it, and are re-solved when ρ has changed
//            and adaptive_every steps have passed since the last solve.
// Lost workers are permanent stragglers: the run goes on while at most s are lost, F is then the
// fastest n − s of the survivors, and exact decoding solves a_Fᵀ B_F = 1ᵀ for that set (adaptive
// decoding takes a lost worker's ρ_i as 0 while it is lost and reweights its partitions' other
// holders).
class CyclicMaster : public CodedMaster {
 public:
  CyclicMaster(Trainer& trainer, Placement placement, int64_t dim, StragglerPolicy policy,
               std::shared_ptr<const CyclicEncoding> encoding, int adaptive_every = 0);

 protected:
  bool step_complete() const override;
  std::string lost_requirement() const override;
  void choose(std::vector<int>& used, std::vector<double>& weights) override;
  void summarize_decoder(nlohmann::json& out) const override;
  void checkpoint_method(StateArchive& a) override;

 private:
  std::shared_ptr<const CyclicEncoding> encoding_;
  std::optional<ExactDecoder> exact_;
  std::vector<bool> responders_;
  // Adaptive decoding.
  void choose_adaptive(const std::vector<int>& used, std::vector<double>& weights);
  int adaptive_every_ = 0;
  int64_t adaptive_steps_ = 0;        // steps counted in responses_
  std::vector<int64_t> responses_;    // per worker: steps whose F held it
  std::vector<double> solved_rates_;  // ρ at the last solve (empty: none yet)
  int64_t solved_at_ = 0;             // adaptive_steps_ at the last solve
  int64_t solves_ = 0;
  AdaptiveRelaxedWeights adaptive_;
  // Relaxed and adaptive decoding: the extreme partition coefficients (μ·h_p(F), or
  // Σ_{i∈F holds p} w_i) met.
  double min_coefficient_ = std::numeric_limits<double>::infinity();
  double max_coefficient_ = 0;
};

}  // namespace pacer
