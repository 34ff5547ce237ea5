// TorchScript modules for the tests, written from C++ (no Python): parameters registered on a
// torch::jit::Module (a dotted name "fc1.weight" puts "weight" on a submodule "fc1"), methods
// compiled from TorchScript source with Module::define, the whole saved with Module::save. Only
// script_modules.cc includes torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pacer/core/vector.h"
#include "pacer/model/torch_models.h"

namespace pacer::testing {

struct ScriptParam {
  std::string name;            // dotted: each component but the last names a submodule
  std::vector<int64_t> shape;  // entries row-major
  std::vector<double> values;  // product of shape entries
  TorchDtype dtype = TorchDtype::kFloat64;
};

// Saves to `path` a module with these parameters (registered in this order) whose methods are
// compiled from `source` (TorchScript, e.g. "def forward(self, x):\n    return x\n"; "" for no
// method). Throws std::runtime_error with torch's message when torch rejects the module.
void save_script_module(const std::string& path, const std::vector<ScriptParam>& params,
                        const std::string& source);

// The TorchScript twin of a make_torch_mlp_model network: submodules fc1 and fc2 holding weight
// and bias with the values of x in that model's layout, in `dtype`, and forward(x) =
// linear(relu(linear(x, fc1)), fc2) with the very ops of the built-in network (aten::linear, which
// is addmm for a 2-D input, and aten::relu).
void save_mlp_twin(const std::string& path, const TorchModel& mlp, const Vec& x, TorchDtype dtype);

// The source of that forward.
extern const char* const kMlpForward;

}  // namespace pacer::testing
