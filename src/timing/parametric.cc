// The models defined by a per-worker unit time τ_i and a distribution (DESIGN.md section 4).

#include <cmath>
#include <numbers>
#include <numeric>
#include <utility>

#include "models.h"
#include "pacer/core/error.h"

namespace pacer::timing {
namespace {

// Base of the models below: owns the name and τ, and checks compute_time's preconditions.
class TauModel : public TimingModel {
 public:
  TauModel(std::string name, std::vector<double> tau)
      : name_(std::move(name)), tau_(std::move(tau)) {
    PACER_CHECK(!tau_.empty());
    for (double t : tau_) PACER_CHECK(t > 0 && std::isfinite(t));
  }
  std::string name() const override { return name_; }
  int num_workers() const override { return static_cast<int>(tau_.size()); }

 protected:
  double tau(int worker) const { return tau_[worker]; }
  // u·τ_worker, after checking 0 <= worker < n and units > 0.
  double scaled(int worker, double units) const {
    PACER_CHECK(worker >= 0 && worker < num_workers());
    PACER_CHECK(units > 0);
    return units * tau_[worker];
  }

 private:
  std::string name_;
  std::vector<double> tau_;
};

// u·τ_i, no randomness.
class FixedModel : public TauModel {
 public:
  explicit FixedModel(std::vector<double> tau) : TauModel("fixed", std::move(tau)) {}
  Duration compute_time(int worker, double units, int64_t, Rng&) const override {
    return {scaled(worker, units), 0.0};
  }
  std::optional<double> mean_unit_time(int worker) const override { return tau(worker); }
};

// Exp(mean u·τ_i), all of it random.
class ExponentialModel : public TauModel {
 public:
  explicit ExponentialModel(std::vector<double> tau) : TauModel("exponential", std::move(tau)) {}
  Duration compute_time(int worker, double units, int64_t, Rng& rng) const override {
    return {0.0, rng.exponential(scaled(worker, units))};
  }
  std::optional<double> mean_unit_time(int worker) const override { return tau(worker); }
};

// u·τ_i + Exp(mean u·τ_i·λ).
class ShiftedExponentialModel : public TauModel {
 public:
  ShiftedExponentialModel(std::vector<double> tau, double lambda)
      : TauModel("shifted_exponential", std::move(tau)), lambda_(lambda) {
    PACER_CHECK(lambda_ > 0);
  }
  Duration compute_time(int worker, double units, int64_t, Rng& rng) const override {
    const double base = scaled(worker, units);
    return {base, rng.exponential(base * lambda_)};
  }
  std::optional<double> mean_unit_time(int worker) const override {
    return tau(worker) * (1.0 + lambda_);
  }

 private:
  double lambda_;
};

// u·τ_i·P with P ~ Pareto(α), scale 1: base u·τ_i, extra u·τ_i·(P − 1).
class ParetoModel : public TauModel {
 public:
  ParetoModel(std::vector<double> tau, double alpha)
      : TauModel("pareto", std::move(tau)), alpha_(alpha) {
    PACER_CHECK(alpha_ > 0);
  }
  Duration compute_time(int worker, double units, int64_t, Rng& rng) const override {
    const double base = scaled(worker, units);
    return {base, base * (rng.pareto(alpha_) - 1.0)};
  }
  // E[P] = α/(α − 1) for α > 1; infinite otherwise.
  std::optional<double> mean_unit_time(int worker) const override {
    if (alpha_ <= 1) return std::nullopt;
    return tau(worker) * alpha_ / (alpha_ - 1.0);
  }

 private:
  double alpha_;
};

// u·(τ_i + |N(0, τ_i)|) with τ_i = i + 1 (the second argument of N is the variance).
class NoisyLinearModel : public TauModel {
 public:
  explicit NoisyLinearModel(std::vector<double> tau) : TauModel("noisy_linear", std::move(tau)) {}
  Duration compute_time(int worker, double units, int64_t, Rng& rng) const override {
    return {scaled(worker, units), units * std::sqrt(tau(worker)) * std::abs(rng.normal())};
  }
  // E|N(0, v)| = sqrt(2v/π).
  std::optional<double> mean_unit_time(int worker) const override {
    return tau(worker) + std::sqrt(2.0 * tau(worker) / std::numbers::pi);
  }
};

// u·τ_i, plus an Exp(mean m) delay per job (not per unit) on the jobs that straggle: each job
// with probability q, or (k > 0) the jobs of the k workers chosen for the job's step.
class RandomStragglersModel : public TauModel {
 public:
  RandomStragglersModel(std::vector<double> tau, const StragglerOptions& options)
      : TauModel("random_stragglers", std::move(tau)), options_(options) {
    PACER_CHECK(options_.q >= 0 && options_.q <= 1);
    PACER_CHECK(options_.k >= 0 && options_.k <= num_workers());
    PACER_CHECK(options_.delay_mean >= 0);
  }

  // Every call draws the same numbers from `rng` (q mode: one uniform, then one exponential;
  // k mode: one exponential) whether or not the job straggles, so a worker's later durations do
  // not depend on which of its earlier jobs straggled.
  Duration compute_time(int worker, double units, int64_t step, Rng& rng) const override {
    const double base = scaled(worker, units);
    const bool by_chance = options_.k == 0 && rng.uniform() < options_.q;
    const double delay = rng.exponential(options_.delay_mean);
    const bool straggles = options_.k > 0 ? chosen(worker, step) : by_chance;
    return {base, straggles ? delay : 0.0};
  }

  // Mean of a ONE-unit job, τ_i + p·m with p = q (or k/n): the delay is per job, so a job of u
  // units has mean u·τ_i + p·m, not u times this.
  std::optional<double> mean_unit_time(int worker) const override {
    const double p = options_.k > 0 ? static_cast<double>(options_.k) / num_workers() : options_.q;
    return tau(worker) + p * options_.delay_mean;
  }

 private:
  // Whether `worker` is among the k stragglers of `step`: the first k entries of a Fisher-Yates
  // shuffle of 0..n−1 drawn from Rng(seed, "stragglers", step), a pure function of (seed, step).
  bool chosen(int worker, int64_t step) const {
    Rng pick(options_.seed, "stragglers", static_cast<uint64_t>(step));
    std::vector<int> order(num_workers());
    std::iota(order.begin(), order.end(), 0);
    for (int i = 0; i < options_.k; ++i) {
      std::swap(order[i], order[i + pick.uniform_int(order.size() - i)]);
      if (order[i] == worker) return true;
    }
    return false;
  }

  StragglerOptions options_;
};

}  // namespace

std::unique_ptr<TimingModel> make_fixed(std::vector<double> tau) {
  return std::make_unique<FixedModel>(std::move(tau));
}
std::unique_ptr<TimingModel> make_exponential(std::vector<double> tau) {
  return std::make_unique<ExponentialModel>(std::move(tau));
}
std::unique_ptr<TimingModel> make_shifted_exponential(std::vector<double> tau, double lambda) {
  return std::make_unique<ShiftedExponentialModel>(std::move(tau), lambda);
}
std::unique_ptr<TimingModel> make_pareto(std::vector<double> tau, double alpha) {
  return std::make_unique<ParetoModel>(std::move(tau), alpha);
}
std::unique_ptr<TimingModel> make_noisy_linear(int workers) {
  PACER_CHECK(workers > 0);
  std::vector<double> tau(workers);
  std::iota(tau.begin(), tau.end(), 1.0);
  return std::make_unique<NoisyLinearModel>(std::move(tau));
}
std::unique_ptr<TimingModel> make_random_stragglers(std::vector<double> tau,
                                                    const StragglerOptions& options) {
  return std::make_unique<RandomStragglersModel>(std::move(tau), options);
}

}  // namespace pacer::timing
