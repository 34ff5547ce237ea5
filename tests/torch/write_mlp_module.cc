// Writes the TorchScript twin of the built-in torch MLP (script_modules.h) for the shell tests:
//   pacer_write_mlp_module PATH FEATURES HIDDEN CLASSES SEED float32|float64
// Its parameters are the built-in model's initial point for run seed SEED (Rng(SEED, "init")).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "pacer/core/rng.h"
#include "script_modules.h"

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s PATH FEATURES HIDDEN CLASSES SEED float32|float64\n", argv[0]);
    return 2;
  }
  const pacer::TorchDtype dtype =
      std::string(argv[6]) == "float64" ? pacer::TorchDtype::kFloat64 : pacer::TorchDtype::kFloat32;
  pacer::TorchModelOptions options;
  options.dtype = dtype;
  try {
    auto mlp = pacer::make_torch_mlp_model(std::atoi(argv[2]), std::atoi(argv[3]),
                                           std::atoi(argv[4]), options);
    pacer::Vec x;
    pacer::Rng rng(std::strtoull(argv[5], nullptr, 10), "init");
    mlp->initialize(x, rng);
    pacer::testing::save_mlp_twin(argv[1], *mlp, x, dtype);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
