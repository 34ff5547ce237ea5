// The models defined by a per-worker unit time τ_i and a distribution (DESIGN.md section 4).

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <mutex>
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

// The straggler models: random_stragglers, common_shock and persistent_stragglers are one model
// whose parts are switched on by their options. A job of u units on worker i at step t takes
//   base  = u·τ_i·J            J = 1 + σZ, Z ~ N(0, 1) redrawn while J <= 0 (σ = jitter <= 1/4,
//                              so a redraw happens with probability Φ(−4) = 3.2e-5 at most)
//   extra = base·(S_t − 1) + D S_t = the worker's slowdown when its host's chain is slow at t,
//                              else 1; D = an Exp(delay_mean) delay (per job, whatever u) when
//                              the job straggles: by chance with probability q (or, k > 0, when
//                              the worker is among the k chosen for the step), or when t is a
//                              shock step and the job is hit (probability shock_share).
// Draws from the worker's Rng, in this order, whatever happens: a uniform (k = 0 only), an
// exponential, a uniform when shocks are on, normals when σ > 0. Shared choices (the k chosen,
// shock steps, the hosts' chains) derive from the run seed and the step alone.
class StragglerModel : public TauModel {
 public:
  StragglerModel(std::string name, std::vector<double> tau, const StragglerOptions& options,
                 SpellOptions spells)
      : TauModel(std::move(name), std::move(tau)), options_(options), spells_(std::move(spells)) {
    PACER_CHECK(options_.q >= 0 && options_.q <= 1);
    PACER_CHECK(options_.k >= 0 && options_.k <= num_workers());
    PACER_CHECK(options_.delay_mean >= 0);
    PACER_CHECK(options_.jitter >= 0 && options_.jitter <= kMaxJitter);
    PACER_CHECK(options_.shock_probability >= 0 && options_.shock_probability <= 1);
    PACER_CHECK(options_.shock_share >= 0 && options_.shock_share <= 1);
    if (!spells_.host.empty()) start_chains();
  }

  Duration compute_time(int worker, double units, int64_t step, Rng& rng) const override {
    const double compute = scaled(worker, units);
    const bool by_chance = options_.k == 0 && rng.uniform() < options_.q;
    const double delay = rng.exponential(options_.delay_mean);
    const bool hit = options_.shock_probability > 0 && rng.uniform() < options_.shock_share;
    const double base = compute * jitter_factor(rng);
    const bool straggles =
        (options_.k > 0 ? chosen(worker, step) : by_chance) || (hit && shock_step(step));
    const double slowdown = slow(worker, step) ? spells_.slowdown[worker] : 1.0;
    return {base, base * (slowdown - 1) + (straggles ? delay : 0.0)};
  }

  // The mean of a ONE-unit job: τ_i·E[J]·(1 + π_i(s_i − 1)) + p·m, with π_i the stationary share
  // of slow steps of the worker's host and p the probability that a job is delayed,
  // 1 − (1 − q)(1 − shock_probability·shock_share) (k/n instead of q when k > 0). The delay is
  // per job, so a job of u units has mean u times the first term plus p·m.
  std::optional<double> mean_unit_time(int worker) const override {
    const double chance =
        options_.k > 0 ? static_cast<double>(options_.k) / num_workers() : options_.q;
    const double p = 1 - (1 - chance) * (1 - options_.shock_probability * options_.shock_share);
    double slowdown = 1;
    if (!spells_.host.empty()) {
      slowdown +=
          stationary_slow(chain_owner_[spells_.host[worker]]) * (spells_.slowdown[worker] - 1);
    }
    return tau(worker) * jitter_mean() * slowdown + p * options_.delay_mean;
  }

 private:
  // One host's Markov chain, walked forward on demand (a pure function of the seed and the host,
  // cached: compute_time asks for steps in nearly increasing order).
  struct Chain {
    int64_t step = -1;
    bool slow = false;
    Rng rng{0, "unused"};
  };

  double jitter_factor(Rng& rng) const;
  double jitter_mean() const;
  bool chosen(int worker, int64_t step) const;
  bool shock_step(int64_t step) const;
  bool slow(int worker, int64_t step) const;
  double stationary_slow(int owner) const;
  void start_chains();

  StragglerOptions options_;
  SpellOptions spells_;
  std::vector<int> chain_owner_;  // per host: its first worker, whose probabilities drive it
  mutable std::mutex chains_mutex_;
  mutable std::vector<Chain> chains_;  // per host
};

double StragglerModel::jitter_factor(Rng& rng) const {
  if (options_.jitter == 0) return 1;
  double j = 0;
  while (!(j > 0)) j = 1 + options_.jitter * rng.normal();
  return j;
}

// E[J] = 1 + σ·φ(1/σ)/Φ(1/σ), the mean of N(1, σ²) truncated to (0, ∞).
double StragglerModel::jitter_mean() const {
  if (options_.jitter == 0) return 1;
  const boost::math::normal_distribution<double> z;
  const double a = 1 / options_.jitter;
  return 1 + options_.jitter * boost::math::pdf(z, a) / boost::math::cdf(z, a);
}

// Whether `worker` is among the k stragglers of `step`: the first k entries of a Fisher-Yates
// shuffle of 0..n−1 drawn from Rng(seed, "stragglers", step), a pure function of (seed, step).
bool StragglerModel::chosen(int worker, int64_t step) const {
  Rng pick(options_.seed, "stragglers", static_cast<uint64_t>(step));
  std::vector<int> order(num_workers());
  std::iota(order.begin(), order.end(), 0);
  for (int i = 0; i < options_.k; ++i) {
    std::swap(order[i], order[i + pick.uniform_int(order.size() - i)]);
    if (order[i] == worker) return true;
  }
  return false;
}

// Whether `step` is a shock step: Rng(seed, "shocks", step).uniform() < shock_probability.
bool StragglerModel::shock_step(int64_t step) const {
  return Rng(options_.seed, "shocks", static_cast<uint64_t>(step)).uniform() <
         options_.shock_probability;
}

double StragglerModel::stationary_slow(int owner) const {
  const double a = spells_.p_slow[owner], b = spells_.p_recover[owner];
  return a + b > 0 ? a / (a + b) : 0.0;
}

void StragglerModel::start_chains() {
  PACER_CHECK(spells_.host.size() == static_cast<size_t>(num_workers()));
  const int hosts = *std::max_element(spells_.host.begin(), spells_.host.end()) + 1;
  chain_owner_.assign(hosts, -1);
  for (int i = 0; i < num_workers(); ++i) {
    PACER_CHECK(spells_.host[i] >= 0);
    if (chain_owner_[spells_.host[i]] < 0) chain_owner_[spells_.host[i]] = i;
  }
  chains_.resize(hosts);
}

// The state of the worker's host at `step` (steps before 0 are step 0). The chain starts at step
// 0 from its stationary law (one uniform of Rng(seed, "slow_spells", host)) and moves once per
// step (one uniform: a slow host recovers with probability p_recover, a normal one turns slow
// with probability p_slow).
bool StragglerModel::slow(int worker, int64_t step) const {
  if (spells_.host.empty()) return false;
  const int host = spells_.host[worker];
  const int owner = chain_owner_[host];
  if (owner < 0) return false;
  const double a = spells_.p_slow[owner], b = spells_.p_recover[owner];
  step = std::max<int64_t>(step, 0);
  std::lock_guard<std::mutex> lock(chains_mutex_);
  Chain& c = chains_[host];
  if (c.step < 0 || c.step > step) {
    c.rng = Rng(options_.seed, "slow_spells", static_cast<uint64_t>(host));
    c.step = 0;
    c.slow = c.rng.uniform() < stationary_slow(owner);
  }
  for (; c.step < step; ++c.step) c.slow = c.rng.uniform() < (c.slow ? 1 - b : a);
  return c.slow;
}

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
  PACER_CHECK(options.shock_probability == 0);
  return std::make_unique<StragglerModel>("random_stragglers", std::move(tau), options,
                                          SpellOptions{});
}
std::unique_ptr<TimingModel> make_common_shock(std::vector<double> tau,
                                               const StragglerOptions& options) {
  PACER_CHECK(options.k == 0);
  return std::make_unique<StragglerModel>("common_shock", std::move(tau), options, SpellOptions{});
}
std::unique_ptr<TimingModel> make_persistent_stragglers(std::vector<double> tau,
                                                        const StragglerOptions& options,
                                                        SpellOptions spells) {
  PACER_CHECK(options.k == 0);
  const size_t n = tau.size();
  PACER_CHECK(spells.slowdown.size() == n && spells.p_slow.size() == n &&
              spells.p_recover.size() == n && spells.host.size() == n);
  for (size_t i = 0; i < n; ++i) {
    PACER_CHECK(spells.slowdown[i] >= 1 && spells.p_slow[i] >= 0 && spells.p_slow[i] <= 1 &&
                spells.p_recover[i] >= 0 && spells.p_recover[i] <= 1);
  }
  return std::make_unique<StragglerModel>("persistent_stragglers", std::move(tau), options,
                                          std::move(spells));
}

}  // namespace pacer::timing
