#include "pacer/model/factory.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/torch_plugin.h"

namespace pacer {
namespace {

constexpr int kMaxHidden = 1 << 20;

// "10 classes", "2 classes", "regression".
std::string describe_targets(const Dataset& data) {
  return data.num_classes == 0 ? std::string("regression")
                               : fmt::format("{} classes", data.num_classes);
}

// Throws an Error (naming model.name) unless `requirement_met`; `needs` says what the model needs.
void require_fit(const Config& config, const Dataset& train, bool requirement_met,
                 const std::string& model, const std::string& needs) {
  if (requirement_met) return;
  config.fail_key("model.name", fmt::format("a model that fits data set '{}' ({}): {} needs {}",
                                            train.name, describe_targets(train), model, needs));
}

// Every label of a classification set is a class index in 0..num_classes-1.
void check_class_labels(const Dataset& train) {
  for (int i = 0; i < train.rows(); ++i) {
    const double y = train.labels[i];
    if (!(y >= 0 && y < train.num_classes && y == std::floor(y))) {
      fail("data set '{}': row {} has label {}, expected a class index in 0..{}", train.name, i, y,
           train.num_classes - 1);
    }
  }
}

double read_l2(const Config& config) {
  const double l2 = config.get_double("model.l2", 0.0);
  if (!(l2 >= 0 && std::isfinite(l2))) config.fail_key("model.l2", "a finite number >= 0");
  return l2;
}

// Checks that the data set has features and, for a classifier, `classes_ok` classes and valid
// labels.
void check_data(const Config& config, const Dataset& train, const std::string& model,
                bool classifier, bool classes_ok, const std::string& needs) {
  require_fit(config, train, classes_ok, model, needs);
  require_fit(config, train, train.cols() > 0, model, "at least one feature column");
  if (classifier) check_class_labels(train);
}

std::shared_ptr<const Model> make_least_squares(const Config& config, const Dataset& train) {
  const double l2 = read_l2(config);
  check_data(config, train, "least_squares", false, train.num_classes == 0,
             "a regression data set (num_classes = 0)");
  return make_least_squares_model(train.cols(), l2);
}

std::shared_ptr<const Model> make_logistic(const Config& config, const Dataset& train) {
  const double l2 = read_l2(config);
  check_data(config, train, "logistic", true, train.num_classes == 2,
             "binary labels 0/1 (num_classes = 2); use softmax for more classes");
  return make_logistic_model(train.cols(), l2);
}

std::shared_ptr<const Model> make_softmax(const Config& config, const Dataset& train) {
  const double l2 = read_l2(config);
  check_data(config, train, "softmax", true, train.num_classes >= 2,
             "a classification data set (num_classes >= 2)");
  return make_softmax_model(train.cols(), train.num_classes, l2);
}

std::shared_ptr<const Model> make_mlp(const Config& config, const Dataset& train) {
  const int64_t hidden = config.get_int("model.hidden", 128);
  if (hidden <= 0 || hidden > kMaxHidden) {
    config.fail_key("model.hidden", fmt::format("a positive integer up to {}", kMaxHidden));
  }
  const double l2 = read_l2(config);
  check_data(config, train, "mlp", true, train.num_classes >= 2,
             "a classification data set (num_classes >= 2)");
  return make_mlp_model(train.cols(), static_cast<int>(hidden), train.num_classes, l2);
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, ModelMaker> makers;
};

Registry& registry() {
  static Registry instance{{},
                           {{"least_squares", make_least_squares},
                            {"logistic", make_logistic},
                            {"softmax", make_softmax},
                            {"mlp", make_mlp}}};
  return instance;
}

bool registered(const std::string& name) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.makers.count(name) > 0;
}

}  // namespace

std::shared_ptr<const Model> make_model(const Config& config, const Dataset& train) {
  const std::string name = config.get_string("model.name", "");
  // The deep models come from the libtorch plugin, loaded the first time a name is not registered
  // (a deep model's, or an unknown or missing one: the list of choices below is then complete).
  std::string no_torch;
  if (!config.has("model.name") || !registered(name)) load_torch_models(&no_torch);
  ModelMaker maker;
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    std::vector<std::string> names;
    for (const auto& entry : reg.makers) names.push_back(entry.first);
    std::string choices = fmt::format("one of {}", fmt::join(names, ", "));
    if (!no_torch.empty()) {
      choices += fmt::format(" (the deep models need libtorch: {})", no_torch);
    }
    if (!config.has("model.name"))
      config.fail_key("model.name", choices + " (the key is required)");
    const auto it = reg.makers.find(name);
    if (it == reg.makers.end()) config.fail_key("model.name", choices);
    maker = it->second;
  }
  return maker(config, train);
}

void register_model(const std::string& name, ModelMaker maker) {
  PACER_CHECK(!name.empty() && maker != nullptr);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.makers[name] = std::move(maker);
}

void register_model_if_absent(const std::string& name, ModelMaker maker) {
  PACER_CHECK(!name.empty() && maker != nullptr);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.makers.emplace(name, std::move(maker));
}

}  // namespace pacer
