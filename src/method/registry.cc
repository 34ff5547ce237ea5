#include <fmt/format.h>

#include <functional>
#include <string_view>

#include "method_factories.h"
#include "pacer/core/error.h"
#include "pacer/core/suggest.h"

namespace pacer {
namespace {

using Factory = std::unique_ptr<Method> (*)(const Config&, const MethodSetup&);

struct Entry {
  std::string_view name;
  Factory factory;
  bool synchronous;
  std::string_view parameter;  // MethodInfo::parameter
  std::string_view summary;    // MethodInfo::summary
};

// Every method pacer knows, in the order `pacer compare` lists them. Adding a method: one file
// with its factory, one declaration in method_factories.h, one entry here.
constexpr Entry kMethods[] = {
    {"dgd", make_dgd, true, "", "gradient descent: every worker's partition gradient, every step"},
    {"is-sgd", make_is_sgd, true, "k = 1",
     "ignores stragglers: each step averages the fastest n - k partition gradients"},
    {"gc-fr", make_gc_fr, true, "s = 1",
     "gradient coding, fractional repetition: s + 1 copies of each partition in groups; a step "
     "takes one message from every group"},
    {"gc-cr", make_gc_cr, true, "s = 1",
     "gradient coding, cyclic repetition: exact decoding from the fastest n - s workers"},
    {"is-gc-fr", make_is_gc_fr, true, "s = 1",
     "ignore-stragglers gradient coding on FR placement: the fastest n - s, averaged over a "
     "largest "
     "disjoint subset"},
    {"is-gc-cr", make_is_gc_cr, true, "s = 1",
     "ignore-stragglers gradient coding on CR placement: the fastest n - s, averaged over a "
     "largest "
     "disjoint subset"},
    {"pgc-fr", make_pgc_fr, true, "s = 1",
     "pipelined gradient coding, FR placement: each job computes one new partition gradient and "
     "sends a sum of cached ones; one message from every group"},
    {"pgc-cr", make_pgc_cr, true, "s = 1",
     "pipelined gradient coding, CR placement: the fastest n - s, relaxed decoding"},
    {"asgd", make_asgd, false, "", "asynchronous SGD: a step on every arriving gradient"},
    {"rescaled-asgd", make_rescaled_asgd, false, "",
     "asynchronous SGD with per-worker stepsizes proportional to compute time"},
    {"delay-adaptive-asgd", make_delay_adaptive_asgd, false, "",
     "asynchronous SGD with the stepsize scaled by min(1, n / delay)"},
    {"ringmaster", make_ringmaster, false, "R = n",
     "asynchronous SGD that discards gradients R or more updates old"},
    {"rennala", make_rennala, false, "S = n",
     "rounds at one model: a step on the mean of the first S gradients"},
    {"malenia", make_malenia, false, "S = n",
     "rounds at one model: a step on the mean of per-worker means, once enough arrived"},
    {"ringleader", make_ringleader, false, "",
     "asynchronous SGD that steps with the mean of a table of per-worker gradient means"},
};

// The entry named `name`; null when there is none.
const Entry* find_entry(std::string_view name) {
  for (const Entry& e : kMethods) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> method_names() {
  std::vector<std::string> names;
  for (const Entry& e : kMethods) names.emplace_back(e.name);
  return names;
}

std::vector<MethodInfo> method_infos() {
  std::vector<MethodInfo> infos;
  for (const Entry& e : kMethods) {
    infos.push_back(
        {std::string(e.name), e.synchronous, std::string(e.parameter), std::string(e.summary)});
  }
  return infos;
}

void check_method_name(const std::string& name, const std::string& origin) {
  if (find_entry(name) != nullptr) return;
  fail("{}: key 'method.name': expected one of {}, got \"{}\"{}", origin,
       fmt::join(method_names(), ", "), name, did_you_mean(name, method_names()));
}

std::unique_ptr<Method> make_method(const Config& config, const MethodSetup& setup) {
  const std::string name = config.get_string("method.name", "dgd");
  check_method_name(name, config.origin("method.name"));
  return find_entry(name)->factory(config, setup);
}

}  // namespace pacer
