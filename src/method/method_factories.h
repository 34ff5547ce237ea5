// Factories of the individual methods, gathered by the registry (registry.cc). Each is defined in
// the method's own file and reads only its own method.* keys.
#pragma once

#include <memory>

#include "pacer/method/method.h"

namespace pacer {

std::unique_ptr<Method> make_dgd(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_is_sgd(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_gc_fr(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_gc_cr(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_is_gc_fr(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_is_gc_cr(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_pgc_fr(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_pgc_cr(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_asgd(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_rescaled_asgd(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_delay_adaptive_asgd(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_ringmaster(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_rennala(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_malenia(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_ringleader(const Config& config, const MethodSetup& setup);

}  // namespace pacer
