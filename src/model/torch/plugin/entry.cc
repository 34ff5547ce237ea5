// The entry points of libpacer_torch.so (model/torch_plugin.h): the deep models of
// torch_models.h, registered with the host's model factory.
#include "pacer/model/torch_models.h"
#include "pacer/model/torch_plugin.h"

extern "C" {

__attribute__((visibility("default"))) const char* pacer_torch_plugin_fingerprint() {
  static const std::string fingerprint = pacer::torch_plugin_fingerprint();
  return fingerprint.c_str();
}

__attribute__((visibility("default"))) void pacer_torch_plugin_register(
    void (*add)(const std::string& name, pacer::ModelMaker maker)) {
  pacer::for_each_torch_model(add);
}

__attribute__((visibility("default"))) std::string pacer_torch_plugin_info() {
  return pacer::torch_build_info();
}
}
