// A plugin with the entry points of libpacer_torch.so (model/torch_plugin.h) but another
// fingerprint, as one built by another pacer or compiler would have: pacer must refuse it before
// calling anything else in it (TorchPlugin.OnlyARunOfADeepModelLoadsLibtorch).
#include <cstdlib>
#include <string>

#include "pacer/model/factory.h"

extern "C" {

__attribute__((visibility("default"))) const char* pacer_torch_plugin_fingerprint() {
  return "pacer 0.0.0; another compiler; sizes 1 2 3";
}

__attribute__((visibility("default"))) void pacer_torch_plugin_register(
    void (*)(const std::string&, pacer::ModelMaker)) {
  std::abort();  // never called: the fingerprint is refused first
}

__attribute__((visibility("default"))) std::string pacer_torch_plugin_info() { std::abort(); }
}
