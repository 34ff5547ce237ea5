// Factories of the individual methods, gathered by the registry (registry.cc). Each is defined in
// the method's own file and reads only its own method.* keys.
#pragma once

#include <memory>

#include "pacer/method/method.h"

namespace pacer {

std::unique_ptr<Method> make_dgd(const Config& config, const MethodSetup& setup);
std::unique_ptr<Method> make_is_sgd(const Config& config, const MethodSetup& setup);

}  // namespace pacer
