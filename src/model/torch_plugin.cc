#include "pacer/model/torch_plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace pacer {
namespace {

constexpr const char* kPluginFile = "libpacer_torch.so";

// The folder of the program or shared library this loader was linked into (pacer, a test, the
// Python extension), "" when unknown.
std::string own_folder() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&load_torch_models), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::error_code error;
  const std::filesystem::path self = std::filesystem::canonical(info.dli_fname, error);
  return error ? "" : self.parent_path().string();
}

// Where the plugin may be, in the order tried (torch_plugin.h).
std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  if (const char* named = std::getenv("PACER_TORCH_PLUGIN"); named != nullptr && *named != '\0') {
    // Absolute, so that dlopen opens this file rather than searching the library path.
    paths.push_back(std::filesystem::absolute(named).string());
    return paths;  // an explicit choice: nothing else is tried
  }
  if (const std::string folder = own_folder(); !folder.empty()) {
    paths.push_back((std::filesystem::path(folder) / kPluginFile).string());
  }
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

// Opens the first candidate that exists and checks its entry points and fingerprint.
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
      plugin.why = fmt::format("the libtorch plugin could not be loaded: {}", dlerror());
      return plugin;
    }
    auto* fingerprint = find<TorchPluginFingerprintFunction>(handle, kTorchPluginFingerprintSymbol);
    auto* add = find<TorchPluginRegisterFunction>(handle, kTorchPluginRegisterSymbol);
    plugin.info = find<TorchPluginInfoFunction>(handle, kTorchPluginInfoSymbol);
    if (fingerprint == nullptr || add == nullptr || plugin.info == nullptr) {
      plugin.why = fmt::format("{} is not a pacer libtorch plugin (entry points missing)", path);
      return plugin;
    }
    if (const std::string theirs = fingerprint(), ours = torch_plugin_fingerprint();
        theirs != ours) {
      plugin.why = fmt::format("{} was built by another pacer or compiler ({}; this pacer: {})",
                               path, theirs, ours);
      return plugin;
    }
    add(&register_model_if_absent);  // a program linked with the models keeps its own makers
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
