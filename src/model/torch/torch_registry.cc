// Config makers for the libtorch models, thread settings and build information (contract in
// pacer/model/torch_models.h). Deliberately free of <torch/torch.h>: only the light ATen headers
// for threads and version are included here.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/version.h>
#pragma GCC diagnostic pop

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/model/factory.h"
#include "pacer/model/torch_models.h"

namespace pacer {
namespace {

constexpr int64_t kMaxHidden = 1 << 20;
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxMicroBatch = 1 << 20;

// The OpenBLAS entry point `name` if a loaded library provides it, else nullptr.
template <typename Function>
Function* find_symbol(const char* name) {
  return reinterpret_cast<Function*>(dlsym(RTLD_DEFAULT, name));
}

// The real path of the loaded library that defines `symbol`, or "" when none does.
std::string library_of(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info;
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  std::error_code error;
  const std::filesystem::path real = std::filesystem::canonical(info.dli_fname, error);
  return error ? std::string(info.dli_fname) : real.string();
}

// Paths of the BLAS / LAPACK libraries mapped into this process (from /proc/self/maps).
std::vector<std::string> mapped_blas_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string file = std::filesystem::path(path).filename().string();
    if (file.find("blas") != std::string::npos || file.find("lapack") != std::string::npos) {
      found.insert(path);
    }
  }
  return {found.begin(), found.end()};
}

// model.threads (applied here), model.micro_batch and model.l2.
TorchModelOptions read_common_options(const Config& config) {
  TorchModelOptions options;
  const int64_t threads = config.get_int("model.threads", 1);
  if (threads < 1 || threads > kMaxThreads) {
    config.fail_key("model.threads", fmt::format("an integer in 1..{}", kMaxThreads));
  }
  set_torch_threads(static_cast<int>(threads));
  const int64_t micro_batch = config.get_int("model.micro_batch", options.micro_batch);
  if (micro_batch < 1 || micro_batch > kMaxMicroBatch) {
    config.fail_key("model.micro_batch", fmt::format("an integer in 1..{}", kMaxMicroBatch));
  }
  options.micro_batch = static_cast<int>(micro_batch);
  options.l2 = config.get_double("model.l2", 0.0);
  if (!(options.l2 >= 0 && std::isfinite(options.l2))) {
    config.fail_key("model.l2", "a finite number >= 0");
  }
  return options;
}

// The common options and model.dtype.
TorchModelOptions read_options(const Config& config) {
  TorchModelOptions options = read_common_options(config);
  options.dtype = config.get_choice("model.dtype", "float32", {"float32", "float64"}) == "float64"
                      ? TorchDtype::kFloat64
                      : TorchDtype::kFloat32;
  return options;
}

int read_hidden(const Config& config) {
  const int64_t hidden = config.get_int("model.hidden", 128);
  if (hidden <= 0 || hidden > kMaxHidden) {
    config.fail_key("model.hidden", fmt::format("a positive integer up to {}", kMaxHidden));
  }
  return static_cast<int>(hidden);
}

// A classification set with at least two classes whose labels are class indices.
void check_classification(const Config& config, const Dataset& train, const std::string& model) {
  if (train.num_classes < 2 || train.cols() == 0) {
    config.fail_key("model.name",
                    fmt::format("a model that fits data set '{}' ({} classes, {} columns): {} "
                                "needs a classification data set (num_classes >= 2)",
                                train.name, train.num_classes, train.cols(), model));
  }
  for (int i = 0; i < train.rows(); ++i) {
    const double y = train.labels[i];
    if (!(y >= 0 && y < train.num_classes && y == std::floor(y))) {
      fail("data set '{}': row {} has label {}, expected a class index in 0..{}", train.name, i, y,
           train.num_classes - 1);
    }
  }
}

// model.channels/height/width when given (all three, matching the row width), else inferred from
// the row width: 784 → 1×28×28, 3072 → 3×32×32, k² → 1×k×k.
ImageShape read_shape(const Config& config, const Dataset& train, int min_side,
                      const std::string& model) {
  const int cols = train.cols();
  ImageShape shape;
  const bool given =
      config.has("model.channels") || config.has("model.height") || config.has("model.width");
  if (given) {
    for (const char* key : {"model.channels", "model.height", "model.width"}) {
      const int64_t v = config.get_int(key, 0);
      if (v <= 0 || v > cols) {
        config.fail_key(key, fmt::format("a positive integer (model.channels, model.height and "
                                         "model.width together give the image shape of the {} "
                                         "values per row of data set '{}')",
                                         cols, train.name));
      }
    }
    shape = {static_cast<int>(config.get_int("model.channels", 0)),
             static_cast<int>(config.get_int("model.height", 0)),
             static_cast<int>(config.get_int("model.width", 0))};
    if (shape.size() != cols) {
      config.fail_key(
          "model.channels",
          fmt::format("channels·height·width = {} (the row width of data set '{}'), "
                      "got {}×{}×{} = {}",
                      cols, train.name, shape.channels, shape.height, shape.width, shape.size()));
    }
  } else if (cols == 784) {
    shape = {1, 28, 28};
  } else if (cols == 3072) {
    shape = {3, 32, 32};
  } else {
    const int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(cols))));
    if (side * side != cols) {
      config.fail_key("model.channels",
                      fmt::format("an image shape for data set '{}', whose rows have {} values "
                                  "(not 784, 3072 or a square, so it cannot be inferred): set "
                                  "model.channels, model.height and model.width",
                                  train.name, cols));
    }
    shape = {1, side, side};
  }
  if (shape.height < min_side || shape.width < min_side) {
    config.fail_key(
        given ? "model.height" : "model.name",
        fmt::format("images of at least {}×{} for {}, got {}×{}×{} (data set '{}')", min_side,
                    min_side, model, shape.channels, shape.height, shape.width, train.name));
  }
  return shape;
}

std::shared_ptr<const Model> make_mlp_from_config(const Config& config, const Dataset& train) {
  const int hidden = read_hidden(config);
  const TorchModelOptions options = read_options(config);
  check_classification(config, train, "torch_mlp");
  return make_torch_mlp_model(train.cols(), hidden, train.num_classes, options);
}

std::shared_ptr<const Model> make_cnn_from_config(const Config& config, const Dataset& train) {
  const int hidden = read_hidden(config);
  const TorchModelOptions options = read_options(config);
  check_classification(config, train, "torch_cnn");
  const ImageShape shape = read_shape(config, train, 16, "torch_cnn");
  return make_torch_cnn_model(shape, hidden, train.num_classes, options);
}

std::shared_ptr<const Model> make_resnet18_from_config(const Config& config, const Dataset& train) {
  const TorchModelOptions options = read_options(config);
  check_classification(config, train, "resnet18");
  const ImageShape shape = read_shape(config, train, 9, "resnet18");
  return make_resnet18_model(shape, train.num_classes, options);
}

// model.file as a path: relative paths are resolved against the working directory, as data paths
// are; a file that is not there is an Error naming the key and the folder it was looked for in.
std::string read_model_file(const Config& config) {
  const std::string file = config.require_string("model.file");
  std::error_code error;
  if (std::filesystem::is_regular_file(file, error)) return file;
  const std::filesystem::path absolute = std::filesystem::absolute(file, error);
  config.fail_key("model.file",
                  fmt::format("a TorchScript module file (torch.jit.save); {} does not exist{}",
                              absolute.string(),
                              std::filesystem::path(file).is_relative()
                                  ? " (a relative path is resolved against the working directory)"
                                  : ""));
}

// A classification set trains with cross-entropy over its classes, a regression set (no classes)
// with squared error; the module's input rows have the image shape model.channels/height/width
// when those are given, else one dimension of train.cols() features.
std::shared_ptr<const Model> make_torchscript_from_config(const Config& config,
                                                          const Dataset& train) {
  const std::string file = read_model_file(config);
  const TorchModelOptions options = read_common_options(config);
  if (train.num_classes != 0) check_classification(config, train, "torchscript");
  if (train.cols() == 0) {
    config.fail_key("model.name", fmt::format("a model that fits data set '{}': torchscript needs "
                                              "at least one feature column",
                                              train.name));
  }
  std::vector<int64_t> row_shape{train.cols()};
  if (config.has("model.channels") || config.has("model.height") || config.has("model.width")) {
    const ImageShape shape = read_shape(config, train, 1, "torchscript");
    row_shape = {shape.channels, shape.height, shape.width};
  }
  return make_torchscript_model(file, row_shape, train.num_classes, options);
}

}  // namespace

void for_each_torch_model(void (*add)(const std::string& name, ModelMaker maker)) {
  add("torch_mlp", make_mlp_from_config);
  add("torch_cnn", make_cnn_from_config);
  add("resnet18", make_resnet18_from_config);
  add("torchscript", make_torchscript_from_config);
}

void register_torch_models() {
  static std::once_flag once;
  std::call_once(once, [] { for_each_torch_model(&register_model); });
}

void set_torch_threads(int threads) {
  PACER_CHECK(threads > 0);
  at::set_num_threads(threads);
  // libtorch sets OpenMP's (and MKL's) thread count, not OpenBLAS's own pthreads pool.
  using SetThreads = void(int);
  if (auto* set_openblas = find_symbol<SetThreads>("openblas_set_num_threads")) {
    set_openblas(threads);
  }
}

std::string torch_build_info() {
  std::string info = fmt::format("libtorch {}\n", TORCH_VERSION);
  const std::string sgemm = library_of("sgemm_");
  info += fmt::format("torch blas (sgemm_ from): {}\n", sgemm.empty() ? "none found" : sgemm);
  const std::vector<std::string> mapped = mapped_blas_libraries();
  info += fmt::format(
      "blas/lapack libraries loaded: {}\n",
      mapped.empty() ? std::string("none") : fmt::format("{}", fmt::join(mapped, ", ")));
  using GetConfig = char*();
  using GetThreads = int();
  if (auto* get_config = find_symbol<GetConfig>("openblas_get_config")) {
    auto* get_threads = find_symbol<GetThreads>("openblas_get_num_threads");
    auto* get_core = find_symbol<GetConfig>("openblas_get_corename");
    // The kernel set OpenBLAS picked for this CPU (OPENBLAS_CORETYPE overrides it).
    info += fmt::format("openblas: {} ({} threads; kernels: {})\n", get_config(),
                        get_threads != nullptr ? get_threads() : -1,
                        get_core != nullptr ? get_core() : "unknown");
  }
  // The instruction set oneDNN dispatches its float32 convolutions to (ONEDNN_MAX_CPU_ISA caps
  // it). Values of dnnl_cpu_isa_t in oneDNN 2.x: bit masks, larger = more extensions.
  using GetIsa = int();
  if (auto* get_isa = find_symbol<GetIsa>("dnnl_get_effective_cpu_isa")) {
    const int isa = get_isa();
    const char* name = isa == 0x1     ? "sse41"
                       : isa == 0x3   ? "avx"
                       : isa == 0x7   ? "avx2"
                       : isa == 0x407 ? "avx2_vnni"
                       : isa >= 0x27  ? "avx512 family"
                                      : "other";
    info += fmt::format("oneDNN effective ISA: {} (0x{:x})\n", name, isa);
  }
  info += fmt::format("torch threads: {} intra-op; oneDNN (mkldnn): {}\n", at::get_num_threads(),
                      at::hasMKLDNN() ? "yes" : "no");
  return info;
}

}  // namespace pacer
