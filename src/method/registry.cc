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
};

// Every method pacer knows, in the order `pacer compare` lists them. Adding a method: one file
// with its factory, one declaration in method_factories.h, one line here.
constexpr Entry kMethods[] = {
    {"dgd", make_dgd},
    {"is-sgd", make_is_sgd},
    {"gc-fr", make_gc_fr},
    {"gc-cr", make_gc_cr},
    {"is-gc-fr", make_is_gc_fr},
    {"is-gc-cr", make_is_gc_cr},
    {"pgc-fr", make_pgc_fr},
    {"pgc-cr", make_pgc_cr},
    {"asgd", make_asgd},
    {"rescaled-asgd", make_rescaled_asgd},
    {"delay-adaptive-asgd", make_delay_adaptive_asgd},
    {"ringmaster", make_ringmaster},
    {"rennala", make_rennala},
    {"malenia", make_malenia},
    {"ringleader", make_ringleader},
};

}  // namespace

std::vector<std::string> method_names() {
  std::vector<std::string> names;
  for (const Entry& e : kMethods) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<Method> make_method(const Config& config, const MethodSetup& setup) {
  std::string name = config.get_string("method.name", "dgd");
  for (const Entry& e : kMethods) {
    if (e.name == name) return e.factory(config, setup);
  }
  fail("{}: key 'method.name': expected one of {}, got \"{}\"{}", config.origin("method.name"),
       fmt::join(method_names(), ", "), name, did_you_mean(name, method_names()));
}

}  // namespace pacer
