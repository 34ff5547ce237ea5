// Internal to src/model/torch: the Model that runs any libtorch network (TorchNetModel, defined in
// torch_models.cc), and what a network must provide to be run by it. The built-in networks
// (torch_models.cc) and TorchScript modules (torchscript_model.cc) are both Networks. Includes
// torch: only the translation units that already need libtorch include this header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <torch/types.h>
#pragma GCC diagnostic pop

#include "pacer/core/vector.h"
#include "pacer/model/torch_models.h"

namespace pacer::torch_internal {

// One network: a workspace owns one, and TorchNetModel replaces each parameter's storage by a view
// into the workspace's flat parameter tensor (Tensor::set_data), so the network must compute with
// the very tensors parameters() returns.
class Network {
 public:
  virtual ~Network() = default;
  // The trainable parameters with their dotted names, in the order of the flat layout.
  virtual std::vector<std::pair<std::string, torch::Tensor>> named_parameters_in_order() = 0;
  // Outputs for a batch of inputs (rows × row shape): rows × classes logits under cross-entropy,
  // rows (or rows × 1) predictions under squared error.
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
};

// The loss of a TorchNetModel, chosen by the data: cross-entropy of softmax(logits) for a
// classification set, ½(prediction − y)² for a regression set (as make_least_squares_model).
enum class Loss { kCrossEntropy, kSquaredError };

// How one parameter tensor is initialised from the pacer Rng.
struct ParamInit {
  enum Kind { kConstant, kNormal, kUniform } kind = kConstant;
  double value = 0;  // kConstant: the value; kNormal: standard deviation; kUniform: bound
};

// What a TorchNetModel runs: a network builder and how to feed and initialise it.
struct Architecture {
  std::string name;                // Model::name()
  std::vector<int64_t> row_shape;  // the shape of one input row, e.g. {d} or {C, H, W}
  Loss loss = Loss::kCrossEntropy;
  int classes = 0;  // >= 2 under cross-entropy, 0 under squared error
  // A new network whose parameters have the given dtype, ready to compute (training or
  // evaluation mode as the network needs). Called once for the layout and once per workspace.
  std::function<std::shared_ptr<Network>(torch::Dtype)> build;
  // The initial point: `initial` when it is not empty (num_params() entries; the Rng is not used),
  // else `init`, one rule per parameter in layout order.
  std::vector<ParamInit> init;
  Vec initial;
};

torch::Dtype torch_dtype(TorchDtype dtype);

// The Model that runs arch with these options (micro-batches, L2 term, dtype: see torch_models.h).
std::unique_ptr<TorchModel> make_torch_net_model(Architecture arch,
                                                 const TorchModelOptions& options);

}  // namespace pacer::torch_internal
