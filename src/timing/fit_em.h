// The timing families fitted by the EM algorithm (fit.h states the models): random_stragglers,
// common_shock and persistent_stragglers. Internal to fit.cc.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "pacer/timing/fit.h"

namespace pacer::fit_em {

// The rows one fit covers. rows[w] is covered worker w's rows in step order; group[w] says which
// τ it shares (0..groups − 1: one group for a shared τ or a single worker, one per worker for
// τ_i). steps lists, per step of the trace, the (covered worker, row) pairs recorded at that step
// (common_shock).
struct Covered {
  std::vector<const std::vector<double>*> rows;
  std::vector<int> group;
  int groups = 1;
  std::vector<std::vector<std::pair<int, size_t>>> steps;
  // The smallest relative jitter σ the rows can show (jitter_floor).
  double sigma_floor = kResolution;
  size_t size() const;  // rows of all covered workers
};

// The smallest relative jitter σ that rows timed like `rows` can resolve: max(kResolution,
// tick / (√12 · median)) when the rows are on a timer's ticks, else kResolution. The tick is the
// smallest gap between two consecutive distinct rows, and the rows are on ticks when at least half
// of those gaps are multiples of it (within 1 %; continuous rows put about 2 % there by chance);
// tick/√12 is the standard deviation of rounding to it. Without it the normal jitter of the
// straggler families could shrink onto the rows that tie at one tick, and the likelihood grow
// without bound.
double jitter_floor(const std::vector<const std::vector<double>*>& rows);

// Each sets the family's parameters (tau one entry per covered worker), fits, note,
// log_likelihood and parameters of `fit`, whose family and scope are set. They do not set the AIC
// and the KS distance.
ModelFit fit_random_stragglers(const Covered& covered, ModelFit fit);
ModelFit fit_common_shock(const Covered& covered, ModelFit fit);
ModelFit fit_persistent_stragglers(const Covered& covered, ModelFit fit);

// The CDFs the ModelFit methods need: N(μ, s²), and the exponentially modified normal
// N(μ, s²) ∗ Exp(mean m) (s > 0, m > 0).
double normal_cdf(double x, double mu, double s);
double emg_cdf(double x, double mu, double s, double m);

}  // namespace pacer::fit_em
