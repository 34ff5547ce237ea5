// make_timing_model and make_comm_model: the [timing] table of the config.
//
// Only the keys the chosen model uses are read, so the caller's reject_unread_keys() reports any
// other timing key (timing.q on a fixed model) as unknown.

#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "models.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

constexpr std::string_view kTau = "timing.tau";

// Reads `key` (default `fallback`) and fails naming the key with `expected` unless the value is
// finite and ok(value).
template <typename Ok>
double read_number(const Config& config, std::string_view key, double fallback, Ok ok,
                   std::string_view expected) {
  const double value = config.get_double(key, fallback);
  if (!std::isfinite(value) || !ok(value)) config.fail_key(key, expected);
  return value;
}

double read_positive(const Config& config, std::string_view key, double fallback) {
  return read_number(
      config, key, fallback, [](double v) { return v > 0; }, "a positive number");
}

double read_nonnegative(const Config& config, std::string_view key, double fallback) {
  return read_number(
      config, key, fallback, [](double v) { return v >= 0; }, "a number >= 0");
}

// Reads `key` as a list of n numbers that each satisfy ok(); fails naming the key with
// `expected` (what one entry must be) unless it is an array of n such numbers.
template <typename Ok>
std::vector<double> read_list(const Config& config, std::string_view key, int workers, Ok ok,
                              std::string_view expected) {
  std::vector<double> values;
  try {
    values = config.get_doubles(key, {});
  } catch (const Error&) {
    config.fail_key(key, fmt::format("{} or a list of n = {} of them", expected, workers));
  }
  if (values.size() != static_cast<size_t>(workers)) {
    config.fail_key(key, fmt::format("a number or a list of n = {} numbers, one per worker "
                                     "(this list has {})",
                                     workers, values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || !ok(values[i])) {
      config.fail_key(key, fmt::format("{} (entry {} is {})", expected, i, values[i]));
    }
  }
  return values;
}

// Reads `key` as one number for every worker (default `fallback`) or a list of n, each
// satisfying ok(); fails naming the key otherwise.
template <typename Ok>
std::vector<double> read_per_worker(const Config& config, std::string_view key, int workers,
                                    double fallback, Ok ok, std::string_view expected) {
  double scalar = 0;
  // Config has no type query: a number is tried first, a list second.
  try {
    scalar = config.get_double(key, fallback);
  } catch (const Error&) {
    return read_list(config, key, workers, ok, expected);
  }
  if (!std::isfinite(scalar) || !ok(scalar)) config.fail_key(key, expected);
  return std::vector<double>(workers, scalar);
}

// Reads timing.tau as a list of n numbers; fails naming the key unless it is an array of n.
std::vector<double> read_tau_list(const Config& config, int workers) {
  return read_list(
      config, kTau, workers, [](double v) { return v > 0; }, "positive numbers");
}

// τ from timing.tau (one number for every worker, or a list of n numbers; default 1) and
// timing.profile ("harmonic" multiplies the number by 2^floor(i/2): 1, 1, 2, 2, 4, 4, ...).
std::vector<double> read_tau(const Config& config, int workers) {
  const std::string profile =
      config.get_choice("timing.profile", "uniform", {"uniform", "harmonic"});
  double scalar = 0;
  // Config has no type query: a number is tried first, a list second.
  try {
    scalar = config.get_double(kTau, 1.0);
  } catch (const Error&) {
    if (profile == "harmonic") {
      config.fail_key(kTau, "a single number when timing.profile = \"harmonic\"");
    }
    return read_tau_list(config, workers);
  }
  if (!(scalar > 0) || !std::isfinite(scalar)) config.fail_key(kTau, "a positive number");
  std::vector<double> tau(workers, scalar);
  if (profile == "harmonic") {
    for (int i = 0; i < workers; ++i) tau[i] = std::ldexp(scalar, i / 2);
  }
  return tau;
}

double read_probability(const Config& config, std::string_view key, double fallback) {
  return read_number(
      config, key, fallback, [](double v) { return v >= 0 && v <= 1; }, "a probability in [0, 1]");
}

double read_jitter(const Config& config) {
  return read_number(
      config, "timing.jitter", 0.0, [](double v) { return v >= 0 && v <= timing::kMaxJitter; },
      "a relative jitter in [0, 0.25] (the compute factor 1 + jitter·N(0, 1) must stay positive)");
}

timing::StragglerOptions read_straggler_options(const Config& config, int workers, uint64_t seed) {
  timing::StragglerOptions options;
  options.seed = seed;
  const int64_t k = config.get_int("timing.k", 0);
  if (k < 0 || k > workers) {
    config.fail_key("timing.k", fmt::format("an integer in [0, n = {}]", workers));
  }
  options.k = static_cast<int>(k);
  if (options.k == 0) options.q = read_probability(config, "timing.q", options.q);
  options.delay_mean = read_nonnegative(config, "timing.delay_mean", options.delay_mean);
  options.jitter = read_jitter(config);
  return options;
}

// common_shock's keys, and persistent_stragglers' optional delays (`shocks` the default
// shock_probability: 0.1 for common_shock, 0 for persistent_stragglers, whose delay keys are read
// only when q or shock_probability turns them on).
timing::StragglerOptions read_shock_options(const Config& config, uint64_t seed, double shocks) {
  timing::StragglerOptions options;
  options.seed = seed;
  options.q = read_probability(config, "timing.q", 0.0);
  options.shock_probability = read_probability(config, "timing.shock_probability", shocks);
  const bool delays = shocks > 0 || options.q > 0 || options.shock_probability > 0;
  if (options.shock_probability > 0) {
    options.shock_share = read_probability(config, "timing.shock_share", 0.5);
  }
  if (delays) options.delay_mean = read_nonnegative(config, "timing.delay_mean", 1.0);
  options.jitter = read_jitter(config);
  return options;
}

// persistent_stragglers' chains: slowdown, p_slow, p_recover and host.
timing::SpellOptions read_spell_options(const Config& config, int workers) {
  timing::SpellOptions spells;
  spells.slowdown = read_per_worker(
      config, "timing.slowdown", workers, 3.0, [](double v) { return v >= 1; }, "a slowdown >= 1");
  spells.p_slow = read_per_worker(
      config, "timing.p_slow", workers, 0.01, [](double v) { return v >= 0 && v <= 1; },
      "a probability in [0, 1]");
  spells.p_recover = read_per_worker(
      config, "timing.p_recover", workers, 0.1, [](double v) { return v > 0 && v <= 1; },
      "a probability in (0, 1] (slow spells must end)");
  spells.host.resize(workers);
  std::iota(spells.host.begin(), spells.host.end(), 0);
  if (config.has("timing.host")) {
    const std::vector<double> host = read_list(
        config, "timing.host", workers,
        [&](double v) { return v >= 0 && v < workers && v == std::floor(v); },
        fmt::format("a host number, an integer in [0, n = {})", workers));
    for (int i = 0; i < workers; ++i) spells.host[i] = static_cast<int>(host[i]);
  }
  return spells;
}

// The trace model's replay options: timing.replay, timing.straggler_slowdown, and (bootstrap
// only) timing.straggler_frequency, with timing.straggler_threshold read only when the frequency
// is != 1 (the threshold matters nowhere else).
timing::TraceOptions read_trace_options(const Config& config, uint64_t seed) {
  timing::TraceOptions options;
  options.seed = seed;
  const std::string replay =
      config.get_choice("timing.replay", "order", {"order", "bootstrap", "sequential", "block"});
  options.replay = replay == "bootstrap"    ? timing::Replay::kBootstrap
                   : replay == "sequential" ? timing::Replay::kSequential
                   : replay == "block"      ? timing::Replay::kBlock
                                            : timing::Replay::kOrder;
  if (options.replay == timing::Replay::kBlock && config.has("timing.block_length")) {
    options.block_length = config.get_int("timing.block_length", 0);
    if (options.block_length < 1) {
      config.fail_key("timing.block_length",
                      "an integer >= 1 (steps per block; unset for the automatic choice)");
    }
  }
  options.slowdown = read_positive(config, "timing.straggler_slowdown", options.slowdown);
  options.frequency = read_positive(config, "timing.straggler_frequency", options.frequency);
  if (options.frequency == 1) return options;
  if (options.replay != timing::Replay::kBootstrap) {
    config.fail_key("timing.straggler_frequency",
                    "1 (the default) unless timing.replay = \"bootstrap\"; the other replays "
                    "keep each row's frequency");
  }
  options.threshold = read_number(
      config, "timing.straggler_threshold", options.threshold, [](double v) { return v > 1; },
      "a number > 1 (a multiple of the median duration)");
  return options;
}

}  // namespace

std::unique_ptr<TimingModel> make_timing_model(const Config& config, int workers, uint64_t seed) {
  PACER_CHECK(workers > 0);
  const std::string model = config.get_choice(
      "timing.model", "fixed",
      {"fixed", "exponential", "shifted_exponential", "random_stragglers", "common_shock",
       "persistent_stragglers", "pareto", "noisy_linear", "trace"});
  if (model == "noisy_linear") return timing::make_noisy_linear(workers);
  if (model == "trace") {
    const std::string file = config.require_string("timing.file");
    return timing::make_trace(file, workers, read_trace_options(config, seed));
  }
  std::vector<double> tau = read_tau(config, workers);
  if (model == "fixed") return timing::make_fixed(std::move(tau));
  if (model == "exponential") return timing::make_exponential(std::move(tau));
  if (model == "shifted_exponential") {
    return timing::make_shifted_exponential(std::move(tau),
                                            read_positive(config, "timing.lambda", 1.0));
  }
  if (model == "pareto") {
    return timing::make_pareto(std::move(tau), read_positive(config, "timing.alpha", 2.0));
  }
  if (model == "common_shock") {
    return timing::make_common_shock(std::move(tau), read_shock_options(config, seed, 0.1));
  }
  if (model == "persistent_stragglers") {
    timing::SpellOptions spells = read_spell_options(config, workers);
    return timing::make_persistent_stragglers(std::move(tau), read_shock_options(config, seed, 0),
                                              std::move(spells));
  }
  return timing::make_random_stragglers(std::move(tau),
                                        read_straggler_options(config, workers, seed));
}

CommModel make_comm_model(const Config& config) {
  CommModel comm;
  comm.latency = read_nonnegative(config, "timing.latency", comm.latency);
  comm.bandwidth = read_nonnegative(config, "timing.bandwidth", comm.bandwidth);
  return comm;
}

}  // namespace pacer
