// A user's TorchScript module as a Network of TorchNetModel (contract in
// pacer/model/torch_models.h, make_torchscript_model). With torch_models.cc, one of the two
// translation units of pacer that include torch.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#pragma GCC diagnostic pop

#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/model/torch_models.h"
#include "torch_net.h"

namespace pacer {
namespace {

using torch_internal::Architecture;
using torch_internal::Loss;
using torch_internal::Network;

// The last non-empty line of a torch error without its C++ backtrace: the interpreter's errors
// start with "The following operation failed in the TorchScript interpreter." and a TorchScript
// traceback, and end with the message that says what went wrong.
std::string torch_message(const std::exception& e) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
  std::istringstream lines(torch_error ? torch_error->what_without_backtrace() : e.what());
  std::string line, last;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  }
  const size_t begin = last.find_first_not_of(" \t");
  return begin == std::string::npos ? std::string("no message") : last.substr(begin);
}

std::string shape_string(c10::IntArrayRef sizes) {
  return fmt::format("[{}]", fmt::join(sizes, ", "));
}

std::string dtype_name(c10::ScalarType type) {
  switch (type) {
    case torch::kFloat32:
      return "float32";
    case torch::kFloat64:
      return "float64";
    case torch::kFloat16:
      return "float16";
    case torch::kBFloat16:
      return "bfloat16";
    default:
      return c10::toString(type);
  }
}

// Why `bytes` are not a module, for the error message: torch.jit.save writes a zip archive with
// TorchScript code; torch.save writes a zip archive without it (or, in its legacy format, a
// pickle).
std::string why_not_a_module(const std::string& bytes, const std::exception& e) {
  if (bytes.rfind("PK\x03\x04", 0) != 0) return "not a zip archive";
  const std::string message = torch_message(e);
  if (message.find("constants.pkl") != std::string::npos) {
    return "an archive without TorchScript code, as torch.save writes";
  }
  return message;
}

torch::jit::Module load_module(const std::string& file, const std::string& bytes) {
  std::istringstream in(bytes);
  try {
    return torch::jit::load(in, torch::kCPU);
  } catch (const std::exception& e) {
    fail(
        "{}: not a TorchScript module ({}); expected a file written by torch.jit.save or "
        "ScriptModule.save, e.g. torch.jit.script(model).save(\"{}\")",
        file, why_not_a_module(bytes, e), file);
  }
}

// What forward must return for a batch: rows × classes logits (classes >= 2), or rows or rows × 1
// predictions (classes == 0).
struct OutputShape {
  std::string file;
  int classes = 0;

  bool fits(c10::IntArrayRef sizes, int64_t rows) const {
    if (classes > 0) return sizes.size() == 2 && sizes[0] == rows && sizes[1] == classes;
    return (sizes.size() == 1 && sizes[0] == rows) ||
           (sizes.size() == 2 && sizes[0] == rows && sizes[1] == 1);
  }

  std::string expected(int64_t rows) const {
    return classes > 0 ? fmt::format("[{}, {}] (one logit per class of the data set's {} classes)",
                                     rows, classes, classes)
                       : fmt::format(
                             "[{}] or [{}, 1] (one prediction per row of a regression "
                             "data set)",
                             rows, rows);
  }
};

// One copy of the module, in evaluation mode, every parameter requiring a gradient.
class ScriptNetwork final : public Network {
 public:
  ScriptNetwork(torch::jit::Module module, OutputShape output)
      : module_(std::move(module)), output_(std::move(output)) {
    module_.eval();
    for (const auto& param : module_.named_parameters(/*recurse=*/true)) {
      params_.emplace_back(param.name, param.value);
      params_.back().second.requires_grad_(true);
    }
  }

  std::vector<std::pair<std::string, torch::Tensor>> named_parameters_in_order() override {
    return params_;
  }

  // forward(input) in the interpreter with graph optimisation off (see torch_models.h); a failure
  // or an output of the wrong type or shape is an Error naming the file.
  torch::Tensor forward(const torch::Tensor& input) override {
    const int64_t rows = input.size(0);
    c10::IValue result;
    try {
      torch::jit::GraphOptimizerEnabledGuard interpreted(false);
      result = module_.forward({input});
    } catch (const std::exception& e) {
      fail(
          "{}: forward failed on a batch of shape {} ({}); expected forward to take a batch of "
          "rows of shape {} (model.channels, model.height and model.width set an image shape)",
          output_.file, shape_string(input.sizes()), torch_message(e),
          shape_string(input.sizes().slice(1)));
    }
    if (!result.isTensor()) {
      fail("{}: forward returned a {} for a batch of {} rows, expected a tensor of shape {}",
           output_.file, result.tagKind(), rows, output_.expected(rows));
    }
    torch::Tensor out = result.toTensor();
    if (!output_.fits(out.sizes(), rows)) {
      fail("{}: forward returned shape {} for a batch of {} rows, expected {}", output_.file,
           shape_string(out.sizes()), rows, output_.expected(rows));
    }
    return out;
  }

 private:
  torch::jit::Module module_;
  OutputShape output_;
  std::vector<std::pair<std::string, torch::Tensor>> params_;
};

// The module's parameters as one flat vector of doubles, after checking that there are some and
// that they share one floating-point dtype, which is returned in dtype.
Vec checked_parameters(const torch::jit::Module& module, const std::string& file,
                       TorchDtype* dtype) {
  std::vector<std::pair<std::string, torch::Tensor>> params;
  for (const auto& param : module.named_parameters(/*recurse=*/true)) {
    params.emplace_back(param.name, param.value);
  }
  if (params.empty()) {
    fail(
        "{}: the module has no parameters; expected a module with trainable parameters "
        "(nn.Parameter, nn.Linear, ...), which pacer trains",
        file);
  }
  const auto& [first_name, first] = params.front();
  for (const auto& [name, tensor] : params) {
    if (tensor.scalar_type() != first.scalar_type()) {
      fail(
          "{}: parameters of mixed dtypes ({} is {}, {} is {}); expected all float32 or all "
          "float64 (call .float() or .double() on the module before saving it)",
          file, first_name, dtype_name(first.scalar_type()), name,
          dtype_name(tensor.scalar_type()));
    }
  }
  if (first.scalar_type() != torch::kFloat32 && first.scalar_type() != torch::kFloat64) {
    fail(
        "{}: parameters of dtype {}; expected float32 or float64 (call .float() or .double() "
        "on the module before saving it)",
        file, dtype_name(first.scalar_type()));
  }
  *dtype = first.scalar_type() == torch::kFloat64 ? TorchDtype::kFloat64 : TorchDtype::kFloat32;
  int64_t total = 0;
  for (const auto& item : params) total += item.second.numel();
  Vec x(total);
  int64_t offset = 0;
  for (const auto& item : params) {
    const torch::Tensor values = item.second.detach().to(torch::kFloat64).contiguous().view({-1});
    std::copy_n(values.data_ptr<double>(), values.numel(), x.data() + offset);
    offset += values.numel();
  }
  return x;
}

// Runs forward on a batch of two zero rows (ScriptNetwork::forward checks what it returns).
void probe_forward(torch::jit::Module module, const OutputShape& output,
                   const std::vector<int64_t>& row_shape, torch::Dtype dtype) {
  std::vector<int64_t> shape{2};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  torch::NoGradGuard no_grad;
  ScriptNetwork(std::move(module), output).forward(torch::zeros(shape, torch::dtype(dtype)));
}

}  // namespace

std::unique_ptr<TorchModel> make_torchscript_model(const std::string& file,
                                                   const std::vector<int64_t>& row_shape,
                                                   int classes, const TorchModelOptions& options) {
  PACER_CHECK(!row_shape.empty() && (classes == 0 || classes >= 2));
  auto bytes = std::make_shared<const std::string>(read_file(file));
  torch::jit::Module module = load_module(file, *bytes);
  if (!module.find_method("forward")) {
    fail(
        "{}: the module has no forward method; expected forward(x) mapping a batch of inputs to "
        "outputs",
        file);
  }
  TorchModelOptions resolved = options;
  Architecture arch;
  arch.initial = checked_parameters(module, file, &resolved.dtype);
  const OutputShape output{file, classes};
  probe_forward(std::move(module), output, row_shape, torch_internal::torch_dtype(resolved.dtype));

  arch.name = "torchscript";
  arch.row_shape = row_shape;
  arch.loss = classes > 0 ? Loss::kCrossEntropy : Loss::kSquaredError;
  arch.classes = classes;
  // Every workspace loads its own copy from the bytes read here, so a later change of the file
  // cannot reach a run, and no two networks share a parameter tensor.
  arch.build = [bytes, output](torch::Dtype dtype) -> std::shared_ptr<Network> {
    auto net = std::make_shared<ScriptNetwork>(load_module(output.file, *bytes), output);
    for (const auto& item : net->named_parameters_in_order()) {
      PACER_CHECK(item.second.scalar_type() == dtype);
    }
    return net;
  };
  return torch_internal::make_torch_net_model(std::move(arch), resolved);
}

}  // namespace pacer
