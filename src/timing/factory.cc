// make_timing_model and make_comm_model: the [timing] table of the config.
//
// Only the keys the chosen model uses are read, so the caller's reject_unread_keys() reports any
// other timing key (timing.q on a fixed model) as unknown.

#include <fmt/format.h>

#include <cmath>

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

// Reads timing.tau as a list of n numbers; fails naming the key unless it is an array of n.
std::vector<double> read_tau_list(const Config& config, int workers) {
  std::vector<double> tau;
  try {
    tau = config.get_doubles(kTau, {});
  } catch (const Error&) {
    config.fail_key(kTau,
                    fmt::format("a positive number or a list of n = {} positive numbers", workers));
  }
  if (tau.size() != static_cast<size_t>(workers)) {
    config.fail_key(kTau, fmt::format("a number or a list of n = {} numbers, one per worker "
                                      "(this list has {})",
                                      workers, tau.size()));
  }
  for (size_t i = 0; i < tau.size(); ++i) {
    if (!(tau[i] > 0) || !std::isfinite(tau[i])) {
      config.fail_key(kTau, fmt::format("positive numbers (entry {} is {})", i, tau[i]));
    }
  }
  return tau;
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

timing::StragglerOptions read_straggler_options(const Config& config, int workers, uint64_t seed) {
  timing::StragglerOptions options;
  options.seed = seed;
  const int64_t k = config.get_int("timing.k", 0);
  if (k < 0 || k > workers) {
    config.fail_key("timing.k", fmt::format("an integer in [0, n = {}]", workers));
  }
  options.k = static_cast<int>(k);
  if (options.k == 0) {
    options.q = read_number(
        config, "timing.q", options.q, [](double v) { return v <= 1 && v >= 0; },
        "a probability in [0, 1]");
  }
  options.delay_mean = read_nonnegative(config, "timing.delay_mean", options.delay_mean);
  return options;
}

// The trace model's replay options: timing.replay, timing.straggler_slowdown, and (bootstrap
// only) timing.straggler_frequency, with timing.straggler_threshold read only when the frequency
// is != 1 (the threshold matters nowhere else).
timing::TraceOptions read_trace_options(const Config& config) {
  timing::TraceOptions options;
  options.bootstrap =
      config.get_choice("timing.replay", "order", {"order", "bootstrap"}) == "bootstrap";
  options.slowdown = read_positive(config, "timing.straggler_slowdown", options.slowdown);
  options.frequency = read_positive(config, "timing.straggler_frequency", options.frequency);
  if (options.frequency == 1) return options;
  if (!options.bootstrap) {
    config.fail_key("timing.straggler_frequency",
                    "1 (the default) unless timing.replay = \"bootstrap\"; order replay keeps "
                    "each row's frequency");
  }
  options.threshold = read_number(
      config, "timing.straggler_threshold", options.threshold, [](double v) { return v > 1; },
      "a number > 1 (a multiple of the median duration)");
  return options;
}

}  // namespace

std::unique_ptr<TimingModel> make_timing_model(const Config& config, int workers, uint64_t seed) {
  PACER_CHECK(workers > 0);
  const std::string model =
      config.get_choice("timing.model", "fixed",
                        {"fixed", "exponential", "shifted_exponential", "random_stragglers",
                         "pareto", "noisy_linear", "trace"});
  if (model == "noisy_linear") return timing::make_noisy_linear(workers);
  if (model == "trace") {
    const std::string file = config.require_string("timing.file");
    return timing::make_trace(file, workers, read_trace_options(config));
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
