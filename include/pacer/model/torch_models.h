// Deep models on libtorch (DESIGN.md section 1, `model`): an MLP, a small CNN, ResNet-18 and a
// user's TorchScript module behind the Model interface. Built only when libtorch is found (the
// library pacer_model_torch defines PACER_HAVE_TORCH); this header does not include torch, so
// callers compile without it. pacer reaches them through its plugin (torch_plugin.h), so that
// only the processes that train a deep model load libtorch.
//
// Parameters. As for every Model, all trainable parameters live in the caller's flat vector x of
// doubles. A workspace owns one copy of the network whose parameters are views into one
// preallocated tensor of the model's dtype; every call copies x into that tensor (converting to
// float32 when dtype is float32), runs forward (and backward), and copies the gradient, which
// autograd accumulates into a second preallocated tensor, out into the flat grad. The flat layout
// is the network's parameters in registration order, each row-major in torch's shape
// (parameter_layout() lists them).
// With dtype float32 and no L2 term (which is computed from x in double) the model reads x only
// rounded to float: parameter_precision() is kFloat32, and its gradients are floats widened to
// double.
//
// Micro-batches. A batch is processed in consecutive micro-batches of at most micro_batch rows
// (the last one may be shorter); the loss is the mean over all rows, i.e. each micro-batch's mean
// weighted by its share of the rows. For the MLP and the CNN this only bounds memory and changes
// nothing but rounding. For ResNet-18 it also defines the BatchNorm statistics (below).
//
// BatchNorm (ResNet-18). Every BatchNorm layer normalises with the statistics of the micro-batch
// being processed ("training-mode" statistics, also when evaluating), and no running statistics
// are kept anywhere: the learnable scale and shift are ordinary entries of x, and nothing else is
// stored per worker. So loss(x, batch) is a pure function of (x, batch), equal to the loss that
// loss_and_gradient returns, and evaluation on the master (whose workspace never sees a training
// step, and which never receives workers' state) is well defined. Minibatches up to micro_batch
// rows (the PGC setting: 21 rows per partition) use plain BatchNorm over the minibatch; larger
// batches (whole partitions, evaluation) use ghost BatchNorm over micro-batches of micro_batch
// rows. Very small micro-batches give noisy statistics (one row: statistics over spatial positions
// only, which is why ResNet-18 needs images of at least 9×9: its last stage then has 2×2
// positions).
//
// Threads. torch's intra-op thread count (and OpenBLAS's, when OpenBLAS provides BLAS) is a
// process-wide setting: set_torch_threads() sets both. The config key model.threads does it when
// the model is built.
//
// Config keys (under "model."), read by the makers register_torch_models() installs:
//   name        "torch_mlp" | "torch_cnn" | "resnet18" | "torchscript"
//   dtype       "float32" (default) | "float64"; not for torchscript, whose dtype is its module's
//   file        torchscript: the module's file (torch.jit.save); a relative path is resolved
//               against the working directory, as data paths are
//   threads     torch intra-op threads, default 1
//   micro_batch rows per micro-batch, default 256
//   l2          (l2/2)·‖x‖² added to the loss, biases included, default 0
//   hidden      torch_mlp / torch_cnn: hidden units, default 128
//   channels, height, width   torch_cnn / resnet18: image shape of the flat rows; inferred when
//               absent (784 → 1×28×28, 3072 → 3×32×32, k² → 1×k×k). torchscript: when given
//               (all three), forward receives rows × channels × height × width; when absent,
//               rows × features
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pacer/core/vector.h"
#include "pacer/model/factory.h"
#include "pacer/model/model.h"

namespace pacer {

enum class TorchDtype { kFloat32, kFloat64 };

// Channel-major images: a flat row holds channels·height·width values, channel by channel, each
// channel row by row (the CIFAR-10 and IDX layouts).
struct ImageShape {
  int channels = 0;
  int height = 0;
  int width = 0;
  int64_t size() const { return static_cast<int64_t>(channels) * height * width; }
};

struct TorchModelOptions {
  TorchDtype dtype = TorchDtype::kFloat32;
  int micro_batch = 256;  // > 0
  double l2 = 0;          // >= 0
};

// One entry of the flat parameter layout.
struct TorchParam {
  std::string name;            // torch's dotted name, e.g. "layer1.0.conv1.weight"
  std::vector<int64_t> shape;  // torch's shape; the entries are stored row-major
  int64_t offset = 0;          // first index in the flat vector
  int64_t size = 0;            // number of entries
};

// A Model computed by libtorch, with access to its layout and to the parameter copy a workspace
// holds (for tests and tools; training needs only the Model interface).
class TorchModel : public Model {
 public:
  virtual TorchDtype dtype() const = 0;
  virtual int micro_batch() const = 0;
  // The flat layout: consecutive, covering 0..num_params().
  virtual const std::vector<TorchParam>& parameter_layout() const = 0;
  // Copies x (num_params() entries) into ws's network, converting to dtype().
  virtual void load_parameters(const Vec& x, Workspace& ws) const = 0;
  // Copies ws's network parameters into x (resized to num_params()).
  virtual void store_parameters(Workspace& ws, Vec& x) const = 0;
};

// Two-layer perceptron with exactly the layout, initialisation (He-normal weights drawn from the
// Rng in layout order, zero biases) and loss of make_mlp_model from eigen_models.h: W1 (h×d),
// b1 (h), W2 (K×h), b2 (K); cross-entropy of softmax(W2 relu(W1 a + b1) + b2).
std::unique_ptr<TorchModel> make_torch_mlp_model(int features, int hidden, int classes,
                                                 const TorchModelOptions& options);

// LeNet-like CNN: conv 5×5 (6 channels), ReLU, max-pool 2, conv 5×5 (16), ReLU, max-pool 2,
// fully connected (hidden), ReLU, fully connected (classes); no padding. Needs height and width of
// at least 16. Init: He-normal weights (fan-in), zero biases.
std::unique_ptr<TorchModel> make_torch_cnn_model(const ImageShape& shape, int hidden, int classes,
                                                 const TorchModelOptions& options);

// ResNet-18 for small images (the CIFAR variant): 3×3 conv stem (64 channels, stride 1, no
// max-pool), BasicBlocks [2, 2, 2, 2] with 64-128-256-512 channels (stride 2 and a 1×1 conv +
// BatchNorm shortcut at the start of stages 2-4), global average pool, fully connected.
// Init as torchvision: conv weights He-normal (fan-out), BatchNorm scale 1 and shift 0, final layer
// uniform ±1/sqrt(fan-in) for weight and bias. 11,173,962 parameters for 10 classes. Needs height
// and width of at least 9.
std::unique_ptr<TorchModel> make_resnet18_model(const ImageShape& shape, int classes,
                                                const TorchModelOptions& options);

// A TorchScript module read from `file` (written by torch.jit.save or ScriptModule.save), trained
// as it is:
//   * forward(input) takes one tensor of shape rows × row_shape in the dtype of the module's
//     parameters and returns rows × classes logits when classes >= 2 (loss: cross-entropy of their
//     softmax, accuracy: arg-max), or rows (or rows × 1) predictions when classes == 0 (loss:
//     ½(prediction − y)², as make_least_squares_model; no accuracy);
//   * the flat layout is the module's parameters() in order (named_parameters(), recursively, as
//     PyTorch orders them); every parameter is trained, whatever its requires_grad; buffers are
//     kept as saved and never trained;
//   * dtype() is the parameters' dtype, float32 or float64 (options.dtype is not used);
//   * initialize() returns the module's saved parameters (widened to double), whatever the Rng:
//     the initial point is the one the user exported;
//   * forward runs in evaluation mode (module.eval(): dropout off, BatchNorm with the saved
//     running statistics, which are never updated), so that loss(x, batch) is a pure function of
//     (x, batch) like every Model's; and op by op in the TorchScript interpreter with graph
//     optimisation off (no fusion, no JIT autodiff), so that the arithmetic is eager PyTorch's
//     whatever the number of calls so far: a module scripted from the same ops as a built-in
//     network computes bit for bit what that network computes.
// Errors (pacer::Error, naming the file and what was expected): a file that cannot be read or is
// not a TorchScript module, no forward method, no parameters, parameters of mixed or non-float
// dtypes, and a forward that fails on, or returns the wrong shape for, a batch of two zero rows.
std::unique_ptr<TorchModel> make_torchscript_model(const std::string& file,
                                                   const std::vector<int64_t>& row_shape,
                                                   int classes, const TorchModelOptions& options);

// Registers "torch_mlp", "torch_cnn", "resnet18" and "torchscript" with the model factory
// (factory.h). Idempotent. For programs linked with this library (the torch tests and benchmarks);
// pacer itself loads them from its plugin (torch_plugin.h).
void register_torch_models();
// Calls add(name, maker) for each of those four: the plugin's registration (torch_plugin.h).
void for_each_torch_model(void (*add)(const std::string& name, ModelMaker maker));

// Sets torch's intra-op thread count, and OpenBLAS's when OpenBLAS is loaded. Requires threads > 0.
void set_torch_threads(int threads);

// One line per item: libtorch version, the library that provides BLAS (sgemm_) to libtorch and
// the BLAS libraries mapped into the process, the OpenBLAS configuration when loaded, torch's
// intra-op thread count, whether oneDNN (mkldnn) is available.
std::string torch_build_info();

}  // namespace pacer
