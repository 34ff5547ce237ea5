#include "pacer/model/factory.h"

#include <gtest/gtest.h>

#include <string>

#include "model_test_util.h"
#include "pacer/core/config.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

using testing::random_dataset;

Config config_of(const std::string& toml) { return Config::parse(toml, "run.toml"); }

// The message of the Error make_model throws (fails the test when none is thrown).
std::string error_of(const Config& config, const Dataset& train) {
  try {
    make_model(config, train);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an Error";
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MakeModel, BuildsEachModelForTheDataShape) {
  const Dataset regression = random_dataset(10, 7, 0, 1);
  const Dataset binary = random_dataset(10, 7, 2, 2);
  const Dataset classes = random_dataset(10, 7, 4, 3);
  auto ls = make_model(config_of("model.name = \"least_squares\""), regression);
  EXPECT_EQ(ls->name(), "least_squares");
  EXPECT_EQ(ls->num_params(), 7);
  auto lg = make_model(config_of("model.name = \"logistic\""), binary);
  EXPECT_EQ(lg->name(), "logistic");
  EXPECT_EQ(lg->num_params(), 8);
  auto sm = make_model(config_of("model.name = \"softmax\""), classes);
  EXPECT_EQ(sm->name(), "softmax");
  EXPECT_EQ(sm->num_params(), 4 * 8);
  auto mlp = make_model(config_of("model.name = \"mlp\""), classes);
  EXPECT_EQ(mlp->name(), "mlp");
  EXPECT_EQ(mlp->num_params(), 128 * 8 + 4 * 129);  // default hidden 128
  auto small = make_model(config_of("[model]\nname = \"mlp\"\nhidden = 3"), classes);
  EXPECT_EQ(small->num_params(), 3 * 8 + 4 * 4);
}

TEST(MakeModel, ReadsL2) {
  const Dataset data = random_dataset(4, 2, 0, 4);
  const Batch batch = Batch::of(data);
  auto plain = make_model(config_of("model.name = \"least_squares\""), data);
  auto regularised = make_model(config_of("[model]\nname = \"least_squares\"\nl2 = 0.5"), data);
  auto ws = plain->make_workspace(4);
  Vec x(2);
  x << 1, 2;
  // The L2 term adds 0.25 · ‖x‖² = 1.25.
  EXPECT_NEAR(regularised->loss(x, batch, *ws) - plain->loss(x, batch, *ws), 1.25, 1e-12);
}

TEST(MakeModel, ReadsOnlyTheKeysOfTheChosenModel) {
  const Dataset data = random_dataset(4, 2, 3, 5);
  const Config config = config_of("[model]\nname = \"softmax\"\nhidden = 64");
  make_model(config, data);
  EXPECT_EQ(config.unread_keys(), std::vector<std::string>{"model.hidden"});
}

TEST(MakeModel, UnknownOrMissingNameListsTheValidNames) {
  const Dataset data = random_dataset(4, 2, 3, 6);
  const std::string unknown = error_of(config_of("model.name = \"resnet\""), data);
  EXPECT_TRUE(contains(unknown, "run.toml")) << unknown;
  EXPECT_TRUE(contains(unknown, "model.name")) << unknown;
  EXPECT_TRUE(contains(unknown, "resnet")) << unknown;
  // The built-in names, and the deep models' from the libtorch plugin (torch_plugin.h), or why
  // there are none.
#ifdef PACER_HAVE_TORCH_PLUGIN
  EXPECT_TRUE(contains(
      unknown,
      "least_squares, logistic, mlp, resnet18, softmax, torch_cnn, torch_mlp, torchscript"))
      << unknown;
#else
  EXPECT_TRUE(contains(unknown, "least_squares, logistic, mlp, softmax (the deep models"))
      << unknown;
  EXPECT_TRUE(contains(unknown, "built without libtorch")) << unknown;
#endif
  const std::string missing = error_of(config_of("seed = 1"), data);
  EXPECT_TRUE(contains(missing, "model.name")) << missing;
  EXPECT_TRUE(contains(missing, "required")) << missing;
}

TEST(MakeModel, BadHiddenOrL2NamesTheKey) {
  const Dataset data = random_dataset(4, 2, 3, 7);
  for (const char* hidden : {"0", "-3", "\"wide\""}) {
    const std::string e =
        error_of(config_of(std::string("[model]\nname = \"mlp\"\nhidden = ") + hidden), data);
    EXPECT_TRUE(contains(e, "model.hidden")) << e;
  }
  for (const char* l2 : {"-0.1", "inf", "nan", "\"big\""}) {
    const std::string e =
        error_of(config_of(std::string("[model]\nname = \"softmax\"\nl2 = ") + l2), data);
    EXPECT_TRUE(contains(e, "model.l2")) << e;
  }
}

TEST(MakeModel, ModelThatDoesNotFitTheDataSaysWhy) {
  const Dataset regression = random_dataset(4, 2, 0, 8);
  const Dataset classes = random_dataset(4, 2, 10, 9);
  const Dataset binary = random_dataset(4, 2, 2, 10);

  std::string e = error_of(config_of("model.name = \"softmax\""), regression);
  EXPECT_TRUE(contains(e, "model.name") && contains(e, "num_classes >= 2")) << e;
  e = error_of(config_of("model.name = \"mlp\""), regression);
  EXPECT_TRUE(contains(e, "model.name") && contains(e, "num_classes >= 2")) << e;
  e = error_of(config_of("model.name = \"logistic\""), classes);
  EXPECT_TRUE(contains(e, "model.name") && contains(e, "num_classes = 2")) << e;
  EXPECT_TRUE(contains(e, "10 classes")) << e;
  e = error_of(config_of("model.name = \"least_squares\""), binary);
  EXPECT_TRUE(contains(e, "model.name") && contains(e, "regression")) << e;
}

TEST(MakeModel, LabelOutsideTheClassesNamesTheDataSet) {
  Dataset data = random_dataset(4, 2, 3, 11);
  data.name = "train.csv";
  data.labels[2] = 3;
  const std::string e = error_of(config_of("model.name = \"softmax\""), data);
  EXPECT_TRUE(contains(e, "train.csv") && contains(e, "row 2")) << e;
}

TEST(MakeModel, RegisteredMakersAreChosenByName) {
  register_model("test_registered", [](const Config& config, const Dataset& train) {
    config.get_int("model.width", 0);
    return std::shared_ptr<const Model>(
        make_model(config_of("[model]\nname = \"softmax\""), train));
  });
  const Dataset data = random_dataset(4, 2, 3, 12);
  const Config config = config_of("[model]\nname = \"test_registered\"\nwidth = 2");
  EXPECT_EQ(make_model(config, data)->name(), "softmax");
  EXPECT_TRUE(config.unread_keys().empty());
  const std::string e = error_of(config_of("model.name = \"nope\""), data);
  EXPECT_TRUE(contains(e, "test_registered")) << e;
}

}  // namespace
}  // namespace pacer
