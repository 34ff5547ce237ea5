#include "pacer/model/torch_plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

namespace pacer {
namespace {

constexpr const char* kPluginFile = "libpacer_torch.so";

// Where the plugin may be, in the order tried (torch_plugin.h).
std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  if (const char* named = std::getenv("PACER_TORCH_PLUGIN"); named != nullptr && *named != '\0') {
    paths.emplace_back(named);
    return paths;  // an explicit choice: nothing else is tried
  }
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) paths.push_back((self.parent_path() / kPluginFile).string());
#ifdef PACER_TORCH_PLUGIN_PATH
  paths.emplace_back(PACER_TORCH_PLUGIN_PATH);
#endif
  return paths;
}

struct Plugin {
  bool loaded = false;
  std::string why;  // when not loaded
  TorchPluginInfoFunction* info = nullptr;
};

template <typename Function>
Function* find(void* handle, const char* name) {
  return reinterpret_cast<Function*>(dlsym(handle, name));
}

// Opens the first candidate that exists and checks its entry points.
Plugin open_plugin() {
  Plugin plugin;
#ifndef PACER_TORCH_PLUGIN_PATH
  if (std::getenv("PACER_TORCH_PLUGIN") == nullptr) {
    plugin.why = "this pacer was built without libtorch";
    return plugin;
  }
#endif
  std::vector<std::string> tried;
  for (const std::string& path : candidate_paths()) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
      tried.push_back(path);
      continue;
    }
    // RTLD_LOCAL: the plugin's copies of pacer's layers stay its own.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      plugin.why = fmt::format("the plugin {} could not be loaded: {}", path, dlerror());
      return plugin;
    }
    auto* abi = find<TorchPluginAbiFunction>(handle, kTorchPluginAbiSymbol);
    auto* add = find<TorchPluginRegisterFunction>(handle, kTorchPluginRegisterSymbol);
    plugin.info = find<TorchPluginInfoFunction>(handle, kTorchPluginInfoSymbol);
    if (abi == nullptr || add == nullptr || plugin.info == nullptr) {
      plugin.why = fmt::format("{} is not a pacer libtorch plugin (entry points missing)", path);
      return plugin;
    }
    if (abi() != kTorchPluginAbi) {
      plugin.why =
          fmt::format("{} is a plugin of another pacer version (interface {}, expected {})", path,
                      abi(), kTorchPluginAbi);
      return plugin;
    }
    add(&register_model);
    plugin.loaded = true;
    return plugin;  // never closed: its models may live until the process exits
  }
  plugin.why =
      fmt::format("the libtorch plugin was not found (looked for {})", fmt::join(tried, ", "));
  return plugin;
}

const Plugin& plugin() {
  static const Plugin instance = open_plugin();
  return instance;
}

}  // namespace

bool is_torch_model_name(const std::string& name) {
  return name == "torch_mlp" || name == "torch_cnn" || name == "resnet18" || name == "torchscript";
}

bool load_torch_models(std::string* why) {
  const Plugin& p = plugin();
  if (!p.loaded && why != nullptr) *why = p.why;
  return p.loaded;
}

std::string torch_models_info() {
  const Plugin& p = plugin();
  if (!p.loaded) return fmt::format("libtorch models: not available ({})\n", p.why);
  return p.info();
}

}  // namespace pacer
