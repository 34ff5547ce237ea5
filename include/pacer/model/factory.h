// Building a Model from the [model] table of a run configuration.
//
// Keys (under "model."): name = "least_squares" | "logistic" | "softmax" | "mlp" (and, when pacer
// is built with libtorch, the deep models of model/torch), hidden (mlp, default 128),
// l2 (default 0).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pacer/core/config.h"
#include "pacer/data/dataset.h"
#include "pacer/model/model.h"

namespace pacer {

// Builds the model named by model.name for data of this shape. An unknown name, or a model that
// does not fit the data (softmax on a regression set, ...), is an Error naming the key.
std::shared_ptr<const Model> make_model(const Config& config, const Dataset& train);

// Models from optional libraries (libtorch) register themselves here before make_model is called.
using ModelMaker = std::function<std::shared_ptr<const Model>(const Config&, const Dataset&)>;
void register_model(const std::string& name, ModelMaker maker);

}  // namespace pacer
