// The deep models (model/torch, torch_models.h) live in a plugin, libpacer_torch.so, that pacer
// loads the first time a run names one of them. Debian's libtorch brings some 290 shared libraries
// with it (OpenCV, Qt, FFmpeg, ...), whose loading and static initialisation cost about half a
// second per process; as a plugin they cost it only to the processes that train a deep model, not
// to every `pacer` command, MPI rank and test program.
//
// The plugin is self-contained: it carries its own copy of the layers it uses (core, data, model)
// and exports only the entry points below; the host adds the plugin's model makers to its own
// factory (factory.h). Objects cross the boundary as the types both copies define identically
// (Config, Dataset, Model), built by the same build with the same compiler.
//
// Where it is looked for, first found first: the file named by the environment variable
// PACER_TORCH_PLUGIN; libpacer_torch.so beside the running executable; the build's own copy (the
// path compiled in). A build without libtorch has no plugin: the deep models are then reported as
// not built.
#pragma once

#include <string>

#include "pacer/model/factory.h"

namespace pacer {

// True for the model names the plugin provides ("torch_mlp", "torch_cnn", "resnet18",
// "torchscript").
bool is_torch_model_name(const std::string& name);

// Loads the plugin (once per process; later calls return the first answer) and registers its
// models with the factory. Returns true when they are registered; false, with the reason in
// `why`, when this build has no plugin or it could not be loaded.
bool load_torch_models(std::string* why);

// `pacer version`'s lines about libtorch: the plugin's torch_build_info(), or one line saying why
// there are no deep models. Loads the plugin.
std::string torch_models_info();

// The entry points the plugin exports (C linkage, so that dlsym finds them by these names).
// kTorchPluginAbi changes whenever their signatures or the types they pass change; a plugin of
// another version is refused.
inline constexpr int kTorchPluginAbi = 1;
using TorchPluginAbiFunction = int();
using TorchPluginRegisterFunction = void(void (*add)(const std::string& name, ModelMaker maker));
using TorchPluginInfoFunction = std::string();
inline constexpr const char* kTorchPluginAbiSymbol = "pacer_torch_plugin_abi";
inline constexpr const char* kTorchPluginRegisterSymbol = "pacer_torch_plugin_register";
inline constexpr const char* kTorchPluginInfoSymbol = "pacer_torch_plugin_info";

}  // namespace pacer
