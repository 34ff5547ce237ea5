// The built-in libtorch networks and the Model that runs any Network (contracts in
// pacer/model/torch_models.h and torch_net.h). With torchscript_model.cc, one of the two
// translation units of pacer that include torch.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <torch/torch.h>
#pragma GCC diagnostic pop

#include "pacer/core/error.h"
#include "pacer/model/torch_models.h"
#include "torch_net.h"

namespace pacer {
namespace {

namespace nn = torch::nn;
using torch_internal::Architecture;
using torch_internal::Loss;
using torch_internal::Network;
using torch_internal::ParamInit;
using torch_internal::torch_dtype;

// A built-in network: a torch::nn module mapping a batch of inputs (rows x row shape) to logits
// (rows x classes), its parameters in registration order.
class Net : public nn::Module, public Network {
 public:
  std::vector<std::pair<std::string, torch::Tensor>> named_parameters_in_order() override {
    std::vector<std::pair<std::string, torch::Tensor>> params;
    for (const auto& item : nn::Module::named_parameters()) {
      params.emplace_back(item.key(), item.value());
    }
    return params;
  }
};

class MlpNet final : public Net {
 public:
  MlpNet(int features, int hidden, int classes)
      : fc1_(register_module("fc1", nn::Linear(features, hidden))),
        fc2_(register_module("fc2", nn::Linear(hidden, classes))) {}

  torch::Tensor forward(const torch::Tensor& input) override {
    return fc2_->forward(torch::relu(fc1_->forward(input)));
  }

 private:
  nn::Linear fc1_, fc2_;
};

// Side of a square-or-not feature map after a valid 5x5 convolution and a 2x2 max-pool.
int64_t conv5_pool2(int64_t side) { return (side - 4) / 2; }

class CnnNet final : public Net {
 public:
  CnnNet(const ImageShape& shape, int hidden, int classes)
      : conv1_(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(shape.channels, 6, 5)))),
        conv2_(register_module("conv2", nn::Conv2d(nn::Conv2dOptions(6, 16, 5)))),
        fc1_(register_module("fc1", nn::Linear(16 * conv5_pool2(conv5_pool2(shape.height)) *
                                                   conv5_pool2(conv5_pool2(shape.width)),
                                               hidden))),
        fc2_(register_module("fc2", nn::Linear(hidden, classes))) {}

  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor h = torch::max_pool2d(torch::relu(conv1_->forward(input)), 2);
    h = torch::max_pool2d(torch::relu(conv2_->forward(h)), 2);
    h = torch::relu(fc1_->forward(h.flatten(1)));
    return fc2_->forward(h);
  }

 private:
  nn::Conv2d conv1_, conv2_;
  nn::Linear fc1_, fc2_;
};

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

// BatchNorm with batch statistics only (see the header): no running statistics are registered.
nn::BatchNorm2d batch_norm(int64_t channels) {
  return nn::BatchNorm2d(nn::BatchNorm2dOptions(channels).track_running_stats(false));
}

// relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)); the shortcut is a strided 1x1 conv +
// BatchNorm when the shape changes, the identity otherwise.
class BasicBlockImpl final : public nn::Module {
 public:
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module("conv1", conv3x3(in, out, stride))),
        bn1_(register_module("bn1", batch_norm(out))),
        conv2_(register_module("conv2", conv3x3(out, out, 1))),
        bn2_(register_module("bn2", batch_norm(out))) {
    if (stride != 1 || in != out) {
      downsample_ = register_module(
          "downsample",
          nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
                         batch_norm(out)));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = torch::relu(bn1_->forward(conv1_->forward(x)));
    h = bn2_->forward(conv2_->forward(h));
    return torch::relu(h + (downsample_ ? downsample_->forward(x) : x));
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(BasicBlock);

class ResNet18Net final : public Net {
 public:
  ResNet18Net(int channels, int classes)
      : conv1_(register_module("conv1", conv3x3(channels, 64, 1))),
        bn1_(register_module("bn1", batch_norm(64))),
        layer1_(register_module("layer1", stage(64, 64, 1))),
        layer2_(register_module("layer2", stage(64, 128, 2))),
        layer3_(register_module("layer3", stage(128, 256, 2))),
        layer4_(register_module("layer4", stage(256, 512, 2))),
        fc_(register_module("fc", nn::Linear(512, classes))) {}

  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor h = torch::relu(bn1_->forward(conv1_->forward(input)));
    h = layer4_->forward(layer3_->forward(layer2_->forward(layer1_->forward(h))));
    h = torch::adaptive_avg_pool2d(h, {1, 1}).flatten(1);
    return fc_->forward(h);
  }

 private:
  static nn::Sequential stage(int64_t in, int64_t out, int64_t stride) {
    return nn::Sequential(BasicBlock(in, out, stride), BasicBlock(out, out, 1));
  }

  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Sequential layer1_, layer2_, layer3_, layer4_;
  nn::Linear fc_;
};

struct InitPolicy {
  bool conv_fan_out = false;    // He-normal convolution weights over fan-out (else fan-in)
  bool linear_uniform = false;  // Linear weight and bias uniform ±1/sqrt(fan-in) (else
                                // He-normal weight over fan-in, zero bias)
};

int64_t row_size(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// The per-parameter initialisation of `net`, by parameter name, from the type of the module that
// owns each parameter.
std::map<std::string, ParamInit> init_rules(nn::Module& net, const InitPolicy& policy) {
  std::map<std::string, ParamInit> rules;
  for (const auto& item : net.named_modules()) {
    const std::string& prefix = item.key();
    nn::Module& module = *item.value();
    for (const auto& param : module.named_parameters(/*recurse=*/false)) {
      const std::string name = prefix.empty() ? param.key() : prefix + "." + param.key();
      const bool is_weight = param.key() == "weight";
      const torch::Tensor& p = param.value();
      ParamInit rule;
      if (module.as<nn::Conv2d>() != nullptr) {
        if (is_weight) {
          // (out, in, kh, kw): fan-in = in·kh·kw, fan-out = out·kh·kw. Biases start at 0.
          const double receptive = static_cast<double>(p.numel()) / (p.size(0) * p.size(1));
          const double fan = (policy.conv_fan_out ? p.size(0) : p.size(1)) * receptive;
          rule = {ParamInit::kNormal, std::sqrt(2.0 / fan)};
        }
      } else if (auto* linear = module.as<nn::Linear>()) {
        const double fan_in = static_cast<double>(linear->options.in_features());
        if (policy.linear_uniform) {
          rule = {ParamInit::kUniform, 1.0 / std::sqrt(fan_in)};
        } else if (is_weight) {
          rule = {ParamInit::kNormal, std::sqrt(2.0 / fan_in)};
        }
      } else if (module.as<nn::BatchNorm2d>() != nullptr) {
        rule = {ParamInit::kConstant, is_weight ? 1.0 : 0.0};
      } else {
        PACER_CHECK(false && "a parameter of an unexpected module type");
      }
      rules[name] = rule;
    }
  }
  return rules;
}

// One worker's network: parameters and gradients are views into two flat tensors, plus the
// input and target buffers of one micro-batch (class indices under cross-entropy, values of the
// network's dtype under squared error).
class TorchWorkspace final : public Workspace {
 public:
  TorchWorkspace(const Architecture& arch, torch::Dtype dtype, int max_rows, int micro_batch,
                 int64_t num_params)
      : max_rows_(max_rows),
        target_dtype_(arch.loss == Loss::kCrossEntropy ? torch::kInt64 : dtype),
        net_(arch.build(dtype)) {
    flat_params_ = torch::zeros({num_params}, torch::TensorOptions().dtype(dtype));
    flat_grads_ = torch::zeros({num_params}, torch::TensorOptions().dtype(dtype));
    int64_t offset = 0;
    for (auto& [name, p] : net_->named_parameters_in_order()) {
      PACER_CHECK(p.dtype() == dtype);
      const int64_t n = p.numel();
      p.set_data(flat_params_.narrow(0, offset, n).view(p.sizes()));
      p.mutable_grad() = flat_grads_.narrow(0, offset, n).view(p.sizes());
      params_.push_back(p);
      offset += n;
    }
    PACER_CHECK(offset == num_params);
    row_shape_ = arch.row_shape;
    reserve(std::max(1, std::min(max_rows, micro_batch)));
  }

  int max_rows() const override { return max_rows_; }
  int capacity() const { return static_cast<int>(targets_.size(0)); }

  // Input and target buffers for micro-batches of `rows` rows: allocated here for
  // min(max_rows, micro_batch) rows, and again only when evaluate() meets a larger micro-batch.
  void reserve(int rows) {
    if (targets_.defined() && rows <= capacity()) return;
    std::vector<int64_t> input_shape{rows};
    input_shape.insert(input_shape.end(), row_shape_.begin(), row_shape_.end());
    input_ = torch::empty(input_shape, torch::TensorOptions().dtype(flat_params_.dtype()));
    targets_ = torch::empty({rows}, torch::TensorOptions().dtype(target_dtype_));
  }

  Network& net() { return *net_; }
  torch::Tensor& flat_params() { return flat_params_; }
  torch::Tensor& flat_grads() { return flat_grads_; }
  torch::Tensor& input() { return input_; }
  torch::Tensor& targets() { return targets_; }

  // Whether every parameter's .grad is still the view of flat_grads it was given (autograd
  // accumulates into an existing gradient in place).
  bool gradients_in_place() const {
    int64_t offset = 0;
    const auto* base = static_cast<const char*>(flat_grads_.data_ptr());
    for (const torch::Tensor& p : params_) {
      const torch::Tensor& g = p.grad();
      if (!g.defined() || g.data_ptr() != base + offset * flat_grads_.element_size()) {
        return false;
      }
      offset += p.numel();
    }
    return true;
  }

 private:
  int max_rows_;
  torch::Dtype target_dtype_;
  std::vector<int64_t> row_shape_;
  std::shared_ptr<Network> net_;
  std::vector<torch::Tensor> params_;
  torch::Tensor flat_params_, flat_grads_, input_, targets_;
};

// Copies n values, converting between double and the workspace dtype.
template <typename From, typename To>
void convert(const From* from, int64_t n, To* to) {
  for (int64_t i = 0; i < n; ++i) to[i] = static_cast<To>(from[i]);
}

class TorchNetModel final : public TorchModel {
 public:
  TorchNetModel(Architecture arch, const TorchModelOptions& options)
      : arch_(std::move(arch)), options_(options) {
    PACER_CHECK(options.micro_batch > 0);
    PACER_CHECK(options.l2 >= 0);
    PACER_CHECK(arch_.loss == Loss::kCrossEntropy ? arch_.classes >= 2 : arch_.classes == 0);
    // A template network, only to read the layout.
    std::shared_ptr<Network> net = arch_.build(torch_dtype(options_.dtype));
    int64_t offset = 0;
    for (const auto& [name, tensor] : net->named_parameters_in_order()) {
      TorchParam param;
      param.name = name;
      param.shape = tensor.sizes().vec();
      param.offset = offset;
      param.size = tensor.numel();
      offset += param.size;
      layout_.push_back(std::move(param));
    }
    num_params_ = offset;
    PACER_CHECK(arch_.initial.size() == 0 ? arch_.init.size() == layout_.size()
                                          : arch_.initial.size() == num_params_);
  }

  std::string name() const override { return arch_.name; }
  int64_t num_params() const override { return num_params_; }
  TorchDtype dtype() const override { return options_.dtype; }
  int micro_batch() const override { return options_.micro_batch; }
  const std::vector<TorchParam>& parameter_layout() const override { return layout_; }

  // The architecture's initial point, or parameters in layout order, each drawn (normal or
  // uniform) or set as its rule says.
  void initialize(Vec& x, Rng& rng) const override {
    if (arch_.initial.size() != 0) {
      x = arch_.initial;
      return;
    }
    x.setZero(num_params_);
    for (size_t k = 0; k < layout_.size(); ++k) {
      double* out = x.data() + layout_[k].offset;
      const ParamInit& rule = arch_.init[k];
      for (int64_t i = 0; i < layout_[k].size; ++i) {
        switch (rule.kind) {
          case ParamInit::kConstant:
            out[i] = rule.value;
            break;
          case ParamInit::kNormal:
            out[i] = rule.value * rng.normal();
            break;
          case ParamInit::kUniform:
            out[i] = rule.value * (2.0 * rng.uniform() - 1.0);
            break;
        }
      }
    }
  }

  std::unique_ptr<Workspace> make_workspace(int max_rows) const override {
    PACER_CHECK(max_rows >= 0);
    return std::make_unique<TorchWorkspace>(arch_, torch_dtype(options_.dtype), max_rows,
                                            options_.micro_batch, num_params_);
  }

  double loss(const Vec& x, const Batch& batch, Workspace& ws) const override {
    check_arguments(x, batch, ws);
    return run(x, batch, as_torch(ws), nullptr, nullptr) + penalty(x);
  }

  double loss_and_gradient(const Vec& x, const Batch& batch, Vec& grad,
                           Workspace& ws) const override {
    check_arguments(x, batch, ws);
    PACER_CHECK(grad.size() == num_params_);
    const double value = run(x, batch, as_torch(ws), &grad, nullptr);
    if (options_.l2 > 0) grad.noalias() += options_.l2 * x;
    return value + penalty(x);
  }

  // One pass over the data in micro-batches (as loss() of the whole set would group them) for the
  // loss and the predictions together; any number of rows.
  Evaluation evaluate(const Vec& x, const Dataset& data, Workspace& ws) const override {
    PACER_CHECK(x.size() == num_params_);
    PACER_CHECK(data.cols() == row_size(arch_.row_shape));
    if (data.rows() == 0) return {std::nan(""), std::nan("")};
    if (arch_.loss == Loss::kSquaredError) {
      return {run(x, Batch::of(data), as_torch(ws), nullptr, nullptr) + penalty(x), std::nan("")};
    }
    std::vector<int> predicted(data.rows());
    const double value = run(x, Batch::of(data), as_torch(ws), nullptr, predicted.data());
    int64_t correct = 0;
    for (int i = 0; i < data.rows(); ++i)
      correct += predicted[i] == static_cast<int>(data.labels[i]);
    return {value + penalty(x), static_cast<double>(correct) / data.rows()};
  }

  // A float32 network sees x only as load_parameters rounds it (static_cast<float>), but the L2
  // term is computed from x in double: only without it does the model read x in float32.
  Precision parameter_precision() const override {
    return options_.dtype == TorchDtype::kFloat32 && options_.l2 == 0 ? Precision::kFloat32
                                                                      : Precision::kFloat64;
  }

  void load_parameters(const Vec& x, Workspace& ws) const override {
    PACER_CHECK(x.size() == num_params_);
    torch::Tensor& flat = as_torch(ws).flat_params();
    if (options_.dtype == TorchDtype::kFloat64) {
      std::copy_n(x.data(), num_params_, flat.data_ptr<double>());
    } else {
      convert(x.data(), num_params_, flat.data_ptr<float>());
    }
  }

  void store_parameters(Workspace& ws, Vec& x) const override {
    x.resize(num_params_);
    read_flat(as_torch(ws).flat_params(), x);
  }

 protected:
  bool predict(const Vec& x, const Batch& batch, Workspace& ws, int* out) const override {
    if (arch_.loss == Loss::kSquaredError) return false;
    check_arguments(x, batch, ws);
    run(x, batch, as_torch(ws), nullptr, out);
    return true;
  }

 private:
  static TorchWorkspace& as_torch(Workspace& ws) {
    auto* concrete = dynamic_cast<TorchWorkspace*>(&ws);
    PACER_CHECK(concrete != nullptr);
    return *concrete;
  }

  void check_arguments(const Vec& x, const Batch& batch, const Workspace& ws) const {
    PACER_CHECK(x.size() == num_params_);
    PACER_CHECK(batch.cols == row_size(arch_.row_shape));
    PACER_CHECK(batch.rows >= 0 && batch.rows <= ws.max_rows());
  }

  double penalty(const Vec& x) const {
    return options_.l2 > 0 ? 0.5 * options_.l2 * x.squaredNorm() : 0.0;
  }

  // Copies a flat tensor of the workspace dtype into v (num_params() entries).
  void read_flat(const torch::Tensor& flat, Vec& v) const {
    if (options_.dtype == TorchDtype::kFloat64) {
      std::copy_n(flat.data_ptr<double>(), num_params_, v.data());
    } else {
      convert(flat.data_ptr<float>(), num_params_, v.data());
    }
  }

  // The mean loss of one micro-batch: outputs of the network for it against its targets.
  torch::Tensor mean_loss(const torch::Tensor& outputs, const torch::Tensor& targets) const {
    if (arch_.loss == Loss::kCrossEntropy) {
      return torch::nn::functional::cross_entropy(outputs, targets);
    }
    return 0.5 * torch::mse_loss(outputs.reshape({-1}), targets);
  }

  // Copies rows start.. start+rows-1 of batch into the workspace's input and target buffers,
  // converting to the network's dtype (targets: class indices or values, as the loss needs).
  void copy_rows(const Batch& batch, int start, int rows, TorchWorkspace& ws) const {
    const int64_t cols = batch.cols;
    const double* features = batch.features + static_cast<int64_t>(start) * cols;
    const double* labels = batch.labels + start;
    torch::Tensor& targets = ws.targets();
    if (options_.dtype == TorchDtype::kFloat64) {
      std::copy_n(features, rows * cols, ws.input().data_ptr<double>());
    } else {
      convert(features, rows * cols, ws.input().data_ptr<float>());
    }
    if (arch_.loss == Loss::kCrossEntropy) {
      convert(labels, rows, targets.data_ptr<int64_t>());
    } else if (options_.dtype == TorchDtype::kFloat64) {
      std::copy_n(labels, rows, targets.data_ptr<double>());
    } else {
      convert(labels, rows, targets.data_ptr<float>());
    }
  }

  // Loads x, then runs the batch through the network micro-batch by micro-batch. Returns the mean
  // loss over the rows (0 for an empty batch). With grad, writes its gradient there (over
  // the whole batch; overwritten). With predicted, writes each row's arg-max class. Input rows are
  // copied (and converted) into the workspace's buffers; torch allocates the activations.
  // Micro-batches are consecutive runs of micro_batch rows whatever the workspace's size, so the
  // result depends only on (x, batch, micro_batch).
  double run(const Vec& x, const Batch& batch, TorchWorkspace& ws, Vec* grad,
             int* predicted) const {
    load_parameters(x, ws);
    const bool want_gradient = grad != nullptr;
    std::optional<torch::NoGradGuard> no_grad;
    if (!want_gradient) no_grad.emplace();
    if (want_gradient) ws.flat_grads().zero_();

    const int group = options_.micro_batch;
    double total = 0;
    for (int start = 0; start < batch.rows; start += group) {
      const int rows = std::min(group, batch.rows - start);
      ws.reserve(rows);
      copy_rows(batch, start, rows, ws);
      const torch::Tensor logits = ws.net().forward(ws.input().narrow(0, 0, rows));
      const torch::Tensor target = ws.targets().narrow(0, 0, rows);
      // This micro-batch's mean loss weighted by its share of the rows.
      const torch::Tensor share =
          mean_loss(logits, target) * (static_cast<double>(rows) / batch.rows);
      if (want_gradient) share.backward();
      total += share.item<double>();
      if (predicted != nullptr) {
        const torch::Tensor best = logits.argmax(1);
        const int64_t* b = best.data_ptr<int64_t>();
        for (int i = 0; i < rows; ++i) predicted[start + i] = static_cast<int>(b[i]);
      }
    }
    if (want_gradient) {
      PACER_CHECK(ws.gradients_in_place());
      read_flat(ws.flat_grads(), *grad);
    }
    return total;
  }

  Architecture arch_;
  TorchModelOptions options_;
  std::vector<TorchParam> layout_;
  int64_t num_params_ = 0;
};

// The Architecture of a built-in network for `classes` classes: `make` builds one in float32 with
// torch's default initialisation; each built copy is converted to the requested dtype and put in
// training mode. The initialisation rules are read from a template copy.
Architecture builtin(std::string name, std::vector<int64_t> row_shape, int classes,
                     std::function<std::shared_ptr<Net>()> make, const InitPolicy& policy) {
  Architecture arch;
  arch.name = std::move(name);
  arch.row_shape = std::move(row_shape);
  arch.loss = Loss::kCrossEntropy;
  arch.classes = classes;
  const std::shared_ptr<Net> net = make();
  const std::map<std::string, ParamInit> rules = init_rules(*net, policy);
  for (const auto& item : net->named_parameters_in_order())
    arch.init.push_back(rules.at(item.first));
  arch.build = [make = std::move(make)](torch::Dtype dtype) -> std::shared_ptr<Network> {
    std::shared_ptr<Net> copy = make();
    copy->to(dtype);
    copy->train();
    return copy;
  };
  return arch;
}

}  // namespace

namespace torch_internal {

torch::Dtype torch_dtype(TorchDtype dtype) {
  return dtype == TorchDtype::kFloat64 ? torch::kFloat64 : torch::kFloat32;
}

std::unique_ptr<TorchModel> make_torch_net_model(Architecture arch,
                                                 const TorchModelOptions& options) {
  return std::make_unique<TorchNetModel>(std::move(arch), options);
}

}  // namespace torch_internal

std::unique_ptr<TorchModel> make_torch_mlp_model(int features, int hidden, int classes,
                                                 const TorchModelOptions& options) {
  PACER_CHECK(features > 0 && hidden > 0 && classes >= 2);
  Architecture arch = builtin(
      "torch_mlp", {features}, classes,
      [=] { return std::make_shared<MlpNet>(features, hidden, classes); }, InitPolicy{});
  return std::make_unique<TorchNetModel>(std::move(arch), options);
}

std::unique_ptr<TorchModel> make_torch_cnn_model(const ImageShape& shape, int hidden, int classes,
                                                 const TorchModelOptions& options) {
  PACER_CHECK(shape.channels > 0 && shape.height >= 16 && shape.width >= 16);
  PACER_CHECK(hidden > 0 && classes >= 2);
  Architecture arch = builtin(
      "torch_cnn", {shape.channels, shape.height, shape.width}, classes,
      [=] { return std::make_shared<CnnNet>(shape, hidden, classes); }, InitPolicy{});
  return std::make_unique<TorchNetModel>(std::move(arch), options);
}

std::unique_ptr<TorchModel> make_resnet18_model(const ImageShape& shape, int classes,
                                                const TorchModelOptions& options) {
  PACER_CHECK(shape.channels > 0 && shape.height >= 9 && shape.width >= 9);
  PACER_CHECK(classes >= 2);
  InitPolicy policy;
  policy.conv_fan_out = true;
  policy.linear_uniform = true;
  Architecture arch = builtin(
      "resnet18", {shape.channels, shape.height, shape.width}, classes,
      [=] { return std::make_shared<ResNet18Net>(shape.channels, classes); }, policy);
  return std::make_unique<TorchNetModel>(std::move(arch), options);
}

}  // namespace pacer
