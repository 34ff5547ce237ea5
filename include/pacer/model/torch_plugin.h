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
// Where it is looked for: the file named by the environment variable PACER_TORCH_PLUGIN (only
// there, when it is set); otherwise libpacer_torch.so beside the program or library holding this
// loader (pacer, or the Python extension), then the build's own copy (the path compiled in). A
// build without libtorch has no plugin: the deep models are then reported as not built.
//
// Loading it in a running process needs room in glibc's static TLS block for libtorch's
// dependencies (libgomp, libGL); a process that has used it up (many other extensions loaded)
// gets an error naming model.name, and GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 (or
// more) makes room.
#pragma once

#include <string>

#include "pacer/core/config.h"
#include "pacer/core/rng.h"
#include "pacer/data/dataset.h"
#include "pacer/model/factory.h"
#include "pacer/model/model.h"

namespace pacer {

// Loads the plugin (once per process, thread-safe; later calls return the first answer) and
// registers its models with the factory, each under a name not registered yet (a program linked
// with the models themselves keeps its own makers). Returns true when they are registered; false,
// with the reason in `why`, when this build has no plugin or it could not be loaded.
bool load_torch_models(std::string* why);

// `pacer version`'s lines about libtorch: the plugin's torch_build_info(), or one line saying why
// there are no deep models. Loads the plugin.
std::string torch_models_info();

// The entry points the plugin exports (C linkage, so that dlsym finds them by these names).
// The plugin runs its own copy of pacer's code on the host's objects, so both must come from the
// same sources and compiler: the host refuses a plugin whose fingerprint (torch_plugin_
// fingerprint(), computed on both sides) differs from its own.
using TorchPluginFingerprintFunction = const char*();
using TorchPluginRegisterFunction = void(void (*add)(const std::string& name, ModelMaker maker));
using TorchPluginInfoFunction = std::string();
inline constexpr const char* kTorchPluginFingerprintSymbol = "pacer_torch_plugin_fingerprint";
inline constexpr const char* kTorchPluginRegisterSymbol = "pacer_torch_plugin_register";
inline constexpr const char* kTorchPluginInfoSymbol = "pacer_torch_plugin_info";

// pacer's version, the compiler's, and the sizes of the types that cross the boundary. The build
// itself keeps a plugin from going stale: every program that may load it depends on it.
inline std::string torch_plugin_fingerprint() {
  return std::string("pacer ") + PACER_VERSION + "; " + __VERSION__ + "; sizes " +
         std::to_string(sizeof(Config)) + " " + std::to_string(sizeof(Dataset)) + " " +
         std::to_string(sizeof(Batch)) + " " + std::to_string(sizeof(Rng)) + " " +
         std::to_string(sizeof(Model)) + " " + std::to_string(sizeof(ModelMaker)) + " " +
         std::to_string(sizeof(std::string));
}

}  // namespace pacer
