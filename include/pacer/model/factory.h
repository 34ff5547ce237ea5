// Building a Model from the [model] table of a run configuration.
//
// Keys (under "model."): name (required) = "least_squares" | "logistic" | "softmax" | "mlp" (and,
// when pacer is built with libtorch, the deep models of model/torch), hidden (mlp only, default
// 128, > 0), l2 (default 0, >= 0). A built-in model reads only its own keys, so a stray one (hidden
// for softmax) is left for Config::reject_unread_keys to report.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pacer/core/config.h"
#include "pacer/data/dataset.h"
#include "pacer/model/model.h"

namespace pacer {

// Builds the model named by model.name for data of this shape. An unknown name (the message lists
// the valid ones), or a model that does not fit the data (softmax on a regression set, logistic on
// more than 2 classes, least_squares on classes), is an Error naming the key; a class label outside
// 0..num_classes-1 is an Error naming the data set.
std::shared_ptr<const Model> make_model(const Config& config, const Dataset& train);

// Models from optional libraries (libtorch) register themselves here before make_model is called.
// Registering a name again replaces its maker. Thread-safe.
using ModelMaker = std::function<std::shared_ptr<const Model>(const Config&, const Dataset&)>;
void register_model(const std::string& name, ModelMaker maker);
// Registers `maker` under `name` unless a maker is registered under it already. Thread-safe.
void register_model_if_absent(const std::string& name, ModelMaker maker);

}  // namespace pacer
