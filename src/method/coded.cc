#include "coded.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "pacer/core/error.h"

namespace pacer {

int read_stragglers(const Config& config, PlacementKind kind, int workers) {
  const bool given = config.has("method.s");
  const int64_t s = config.get_int("method.s", 1);
  const int checked = s < 0 || s > workers ? -1 : static_cast<int>(s);
  std::string requirement = placement_requirement(kind, workers, checked);
  if (!requirement.empty()) {
    if (!given) requirement += " (method.s defaults to 1)";
    config.fail_key("method.s", requirement);
  }
  return checked;
}

std::shared_ptr<const CyclicEncoding> read_cyclic_encoding(const Config& config,
                                                           const Placement& placement,
                                                           uint64_t seed) {
  CyclicEncodingOptions options;
  const int64_t trials = config.get_int("method.code_trials", options.trials);
  if (trials < 1 || trials > 1000000) {
    config.fail_key("method.code_trials", "an integer from 1 to 1000000 (random encodings drawn)");
  }
  const int64_t refine = config.get_int("method.code_refine", options.refine_steps);
  if (refine < 0 || refine > 100000000) {
    config.fail_key("method.code_refine",
                    "an integer from 0 to 100000000 (local-search steps on the encoding)");
  }
  options.trials = static_cast<int>(trials);
  options.refine_steps = static_cast<int>(refine);
  const std::string construction =
      config.get_choice("method.code_construction", "auto", {"auto", "search", "circulant"});
  options.construction = construction == "search"      ? CyclicConstruction::kSearch
                         : construction == "circulant" ? CyclicConstruction::kCirculant
                                                       : CyclicConstruction::kAuto;
  return std::make_shared<const CyclicEncoding>(make_cyclic_encoding(placement, seed, options));
}

CodedMethod::CodedMethod(const Config& config, const MethodSetup& setup, PlacementKind kind)
    : setup_(setup),
      policy_(read_straggler_policy(config)),
      sampling_(read_minibatch_sampling(config)),
      placement_(kind, setup.workers, read_stragglers(config, kind, setup.workers)) {}

// ---- CodedMaster ----

CodedMaster::CodedMaster(Trainer& trainer, Placement placement, int64_t dim, StragglerPolicy policy)
    : SyncMaster(trainer, placement.workers(), dim, policy),
      placement_(std::move(placement)),
      weights_(placement_.workers(), 0.0) {}

void CodedMaster::decode(Vec& g, std::vector<int>& used) {
  std::fill(weights_.begin(), weights_.end(), 0.0);
  choose(used, weights_);
  const auto message_of = [this](int i) -> const Vec& { return message(i); };
  weighted_sum(used, weights_, message_of, g);
}

void CodedMaster::summarize_method(nlohmann::json& out) const {
  out["placement"] = placement_name(placement_.kind());
  out["s"] = placement_.stragglers();
  out["c"] = placement_.load();
  nlohmann::json decode = nlohmann::json::object();
  summarize_decoder(decode);
  out["decode"] = decode;
}

// ---- GroupMaster ----

GroupMaster::GroupMaster(Trainer& trainer, Placement placement, int64_t dim, StragglerPolicy policy,
                         bool group_average)
    : CodedMaster(trainer, std::move(placement), dim, policy),
      group_average_(group_average),
      heard_(this->placement().num_groups(), 0) {}

bool GroupMaster::step_complete() const {
  const int c = placement().load();
  for (int g = 0; g < placement().num_groups(); ++g) {
    bool any = false;
    for (int i = g * c; i < (g + 1) * c && !any; ++i) any = arrived(i);
    if (!any) return false;
  }
  return true;
}

std::string GroupMaster::lost_requirement() const {
  return fmt::format("a surviving worker in every group of s + 1 = {} workers", placement().load());
}

void GroupMaster::choose(std::vector<int>& used, std::vector<double>& weights) {
  const double n = workers();
  std::fill(heard_.begin(), heard_.end(), 0);
  for (int w : arrival_order()) {
    const int g = placement().group(w);
    if (group_average_ || heard_[g] == 0) used.push_back(w);
    ++heard_[g];
  }
  std::sort(used.begin(), used.end());
  for (int w : used) {
    const int g = placement().group(w);
    weights[w] = group_average_ ? 1.0 / (n * heard_[g]) : 1.0 / n;
  }
  ++steps_;
  messages_used_ += static_cast<int64_t>(used.size());
}

void GroupMaster::summarize_decoder(nlohmann::json& out) const {
  out["rule"] = group_average_ ? "group_average" : "first_per_group";
  out["groups"] = placement().num_groups();
  out["messages_used_per_group"] = steps_
                                       ? static_cast<double>(messages_used_) /
                                             static_cast<double>(steps_ * placement().num_groups())
                                       : 0.0;
}

void GroupMaster::checkpoint_method(StateArchive& a) {
  a.section("group_master");
  a.io(steps_);
  a.io(messages_used_);
}

// ---- CyclicMaster ----

CyclicMaster::CyclicMaster(Trainer& trainer, Placement placement, int64_t dim,
                           StragglerPolicy policy, std::shared_ptr<const CyclicEncoding> encoding,
                           int adaptive_every)
    : CodedMaster(trainer, std::move(placement), dim, policy),
      encoding_(std::move(encoding)),
      responders_(this->placement().workers(), false),
      adaptive_every_(adaptive_every),
      responses_(this->placement().workers(), 0) {
  PACER_CHECK(!(encoding_ && adaptive_every_ > 0) && adaptive_every_ >= 0);
  if (encoding_) {
    exact_.emplace(encoding_->matrix, this->placement().stragglers(), kExactDecodeTolerance,
                   encoding_->space);
  }
}

bool CyclicMaster::step_complete() const {
  return num_arrived() == workers() - placement().stragglers();
}

std::string CyclicMaster::lost_requirement() const {
  return fmt::format("at most s = {} workers lost (the step waits for n - s messages)",
                     placement().stragglers());
}

void CyclicMaster::choose(std::vector<int>& used, std::vector<double>& weights) {
  const double n = workers();
  for (int i = 0; i < workers(); ++i) {
    responders_[i] = arrived(i);
    if (arrived(i)) used.push_back(i);
  }
  if (exact_) {
    const ExactCoefficients& a = exact_->decode(responders_);
    for (int i : used) weights[i] = a.a[i] / n;
    return;
  }
  if (adaptive_every_ > 0) {
    choose_adaptive(used, weights);
    return;
  }
  const double mu = relaxed_mu(workers(), placement().stragglers());
  for (int i : used) weights[i] = mu / n;
  const std::vector<double> coefficients = relaxed_partition_coefficients(placement(), responders_);
  const auto [lo, hi] = std::minmax_element(coefficients.begin(), coefficients.end());
  min_coefficient_ = std::min(min_coefficient_, *lo);
  max_coefficient_ = std::max(max_coefficient_, *hi);
}

void CyclicMaster::choose_adaptive(const std::vector<int>& used, std::vector<double>& weights) {
  const int n = workers();
  std::vector<double> rates(n, static_cast<double>(n - placement().stragglers()) / n);
  if (adaptive_steps_ > 0) {
    for (int i = 0; i < n; ++i) rates[i] = static_cast<double>(responses_[i]) / adaptive_steps_;
  }
  // A lost worker answers no step until it rejoins: its rate is 0 now, not a slow decay from its
  // past (which would leave its partitions under-weighted for as long again).
  for (int i = 0; i < n; ++i) {
    if (lost(i)) rates[i] = 0;
  }
  const bool due = solved_rates_.empty() || adaptive_steps_ - solved_at_ >= adaptive_every_;
  if (due && rates != solved_rates_) {
    adaptive_ = adaptive_relaxed_weights(placement(), rates);
    solved_rates_ = std::move(rates);
    solved_at_ = adaptive_steps_;
    ++solves_;
  }
  std::vector<double> coefficients(n, 0.0);
  for (int i : used) {
    weights[i] = adaptive_.weights[i] / n;
    for (int p : placement().partitions(i)) coefficients[p] += adaptive_.weights[i];
  }
  const auto [lo, hi] = std::minmax_element(coefficients.begin(), coefficients.end());
  min_coefficient_ = std::min(min_coefficient_, *lo);
  max_coefficient_ = std::max(max_coefficient_, *hi);
  // This step's F counts from the next step on.
  for (int i : used) ++responses_[i];
  ++adaptive_steps_;
}

void CyclicMaster::checkpoint_method(StateArchive& a) {
  a.section("cyclic_master");
  bool exact = exact_.has_value();
  a.io(exact);
  if (exact != exact_.has_value()) a.mismatch("exact decoding in one run, relaxed in the other");
  if (exact_) exact_->checkpoint(a);
  a.io(min_coefficient_);
  a.io(max_coefficient_);
  if (adaptive_every_ > 0) {  // the configuration, hence adaptive_every_, is the same on resume
    a.section("adaptive_decoder");
    a.expect(static_cast<int64_t>(responses_.size()), "workers");
    a.io(responses_);
    a.io(adaptive_steps_);
    a.io(solved_rates_);
    a.io(solved_at_);
    a.io(solves_);
    a.io(adaptive_.weights);
    a.io(adaptive_.bias);
  }
}

void CyclicMaster::summarize_decoder(nlohmann::json& out) const {
  const int n = workers();
  const int s = placement().stragglers();
  if (adaptive_every_ > 0) {
    out["decoder"] = "adaptive";
    out["mu"] = relaxed_mu(n, s);
    out["regularization"] = kAdaptiveRegularization;
    out["resolve_every_steps"] = adaptive_every_;
    out["solves"] = solves_;
    out["response_rates"] = solved_rates_;
    out["weights"] = adaptive_.weights;
    out["remaining_bias"] = adaptive_.bias;
    if (max_coefficient_ > 0) {
      out["partition_coefficient_min_observed"] = min_coefficient_;
      out["partition_coefficient_max_observed"] = max_coefficient_;
    }
    return;
  }
  if (!exact_) {
    out["decoder"] = "relaxed";
    out["mu"] = relaxed_mu(n, s);
    out["max_partition_coefficient_bound"] = static_cast<double>(n) / (n - s);
    if (max_coefficient_ > 0) {
      out["partition_coefficient_min_observed"] = min_coefficient_;
      out["partition_coefficient_max_observed"] = max_coefficient_;
    }
    return;
  }
  out["decoder"] = "exact";
  const CyclicEncoding& e = *encoding_;
  nlohmann::json code;
  if (e.construction == CyclicConstruction::kSearch) {
    code["construction"] = "tandon: best of random H', then local search";
    code["trials"] = e.options.trials;
    code["refine_steps"] = e.options.refine_steps;
    code["kept_trial"] = e.trial;
    code["refine_improvements"] = e.improvements;
    code["worst_max_abs_a_single_draw"] = e.first_trial.worst_max_abs;
    code["worst_max_abs_a_best_of_trials"] = e.best_of_trials_max_abs;
  } else {
    code["construction"] = "circulant: roots of unity of order q";
    code["order"] = e.code->order;
    code["root_exponents"] = e.code->exponents;
    code["kept_code"] = e.trial;
    code["worst_max_abs_a_first_code"] = e.first_trial.worst_max_abs;
  }
  code["responder_sets_evaluated"] = e.quality.sets;
  code["exhaustive"] = e.quality.exhaustive;
  code["worst_max_abs_a"] = e.quality.worst_max_abs;
  code["worst_residual"] = e.quality.worst_residual;
  out["encoding"] = code;
  out["max_abs_a_observed"] = exact_->max_abs_seen();
  out["max_decode_residual_observed"] = exact_->max_residual_seen();
  out["responder_sets_decoded"] = exact_->cached_sets();
}

}  // namespace pacer
