#include "script_modules.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <torch/script.h>
#pragma GCC diagnostic pop

namespace pacer::testing {

const char* const kMlpForward = R"(
def forward(self, x):
    h = torch.relu(torch.linear(x, self.fc1.weight, self.fc1.bias))
    return torch.linear(h, self.fc2.weight, self.fc2.bias)
)";

namespace {

torch::Tensor tensor_of(const ScriptParam& param) {
  torch::Tensor t = torch::tensor(param.values, torch::dtype(torch::kFloat64)).reshape(param.shape);
  return param.dtype == TorchDtype::kFloat64 ? t : t.to(torch::kFloat32);
}

}  // namespace

void save_script_module(const std::string& path, const std::vector<ScriptParam>& params,
                        const std::string& source) {
  try {
    torch::jit::Module root("__torch__.TestNet");
    // Submodules by name, registered on the root when their first parameter comes.
    std::map<std::string, torch::jit::Module> children;
    std::vector<std::string> order;
    for (const ScriptParam& param : params) {
      const size_t dot = param.name.find('.');
      if (dot == std::string::npos) {
        root.register_parameter(param.name, tensor_of(param), /*is_buffer=*/false);
        continue;
      }
      const std::string child = param.name.substr(0, dot);
      auto it = children.find(child);
      if (it == children.end()) {
        it = children.emplace(child, torch::jit::Module("__torch__.TestNet_" + child)).first;
        order.push_back(child);
      }
      it->second.register_parameter(param.name.substr(dot + 1), tensor_of(param), false);
    }
    for (const std::string& child : order) root.register_module(child, children.at(child));
    if (!source.empty()) root.define(source);
    root.save(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot write the TorchScript module " + path + ": " +
                             e.what_without_backtrace());
  }
}

void save_mlp_twin(const std::string& path, const TorchModel& mlp, const Vec& x, TorchDtype dtype) {
  std::vector<ScriptParam> params;
  for (const TorchParam& p : mlp.parameter_layout()) {
    params.push_back({p.name, p.shape,
                      std::vector<double>(x.data() + p.offset, x.data() + p.offset + p.size),
                      dtype});
  }
  save_script_module(path, params, kMlpForward);
}

}  // namespace pacer::testing
