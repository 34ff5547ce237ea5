// TorchScript modules as models (make_torchscript_model, model.name = "torchscript"): the twin of
// the built-in torch MLP computes bit for bit what the built-in network computes, in the model
// and in whole runs of three methods; squared error on regression data; resume after a kill; and
// the errors for bad files and modules. Modules are written from C++ (script_modules.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_test_util.h"
#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/factory.h"
#include "pacer/model/torch_models.h"
#include "script_modules.h"
#include "test_util.h"

namespace pacer {
namespace {

using testing::random_dataset;
using testing::random_params;
using testing::ScriptParam;
using testing::TempDir;

// The machine is shared: keep torch (and OpenBLAS) to one thread in every test.
const bool kOneThread = (set_torch_threads(1), true);

TorchModelOptions options_of(TorchDtype dtype, int micro_batch = 256, double l2 = 0) {
  TorchModelOptions options;
  options.dtype = dtype;
  options.micro_batch = micro_batch;
  options.l2 = l2;
  return options;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The built-in MLP d → h → K, its initial point for seed 10, and its twin module saved at `path`.
struct MlpPair {
  std::unique_ptr<TorchModel> builtin;
  std::unique_ptr<TorchModel> script;
  Vec x0;
};

MlpPair mlp_pair(const std::string& path, int d, int h, int k, const TorchModelOptions& options) {
  MlpPair pair;
  pair.builtin = make_torch_mlp_model(d, h, k, options);
  Rng rng(10, "init");
  pair.builtin->initialize(pair.x0, rng);
  testing::save_mlp_twin(path, *pair.builtin, pair.x0, options.dtype);
  pair.script = make_torchscript_model(path, {d}, k, options);
  return pair;
}

// Same ops on the same values in the same dtype: loss, gradient and evaluation are equal, not
// close (micro-batches of 4 over 9 rows, an L2 term and both dtypes included).
TEST(TorchScriptModel, MlpTwinComputesBitForBitWhatTheBuiltinMlpComputes) {
  TempDir dir;
  const Dataset data = random_dataset(9, 7, 4, 31);
  for (TorchDtype dtype : {TorchDtype::kFloat64, TorchDtype::kFloat32}) {
    for (double l2 : {0.0, 0.25}) {
      SCOPED_TRACE(::testing::Message()
                   << "float" << (dtype == TorchDtype::kFloat64 ? 64 : 32) << ", l2 " << l2);
      const MlpPair pair = mlp_pair(dir.file("mlp.pt"), 7, 5, 4, options_of(dtype, 4, l2));
      const TorchModel& script = *pair.script;
      EXPECT_EQ(script.name(), "torchscript");
      EXPECT_EQ(script.dtype(), dtype);
      ASSERT_EQ(script.num_params(), pair.builtin->num_params());
      for (size_t i = 0; i < script.parameter_layout().size(); ++i) {
        EXPECT_EQ(script.parameter_layout()[i].name, pair.builtin->parameter_layout()[i].name);
        EXPECT_EQ(script.parameter_layout()[i].shape, pair.builtin->parameter_layout()[i].shape);
      }
      EXPECT_EQ(script.parameter_precision(), pair.builtin->parameter_precision());
      // The module's saved parameters are the initial point, whatever the Rng.
      Vec init;
      Rng other(99, "init");
      script.initialize(init, other);
      const Vec x0_as_saved =
          dtype == TorchDtype::kFloat64 ? pair.x0 : Vec(pair.x0.cast<float>().cast<double>());
      EXPECT_EQ(init, x0_as_saved);

      auto ws_builtin = pair.builtin->make_workspace(9);
      auto ws_script = script.make_workspace(9);
      for (uint64_t seed : {1, 2}) {
        const Vec x = random_params(script, 0.8, seed);
        Vec g_builtin(x.size()), g_script(x.size());
        EXPECT_EQ(script.loss_and_gradient(x, Batch::of(data), g_script, *ws_script),
                  pair.builtin->loss_and_gradient(x, Batch::of(data), g_builtin, *ws_builtin));
        EXPECT_EQ(g_script, g_builtin);
        EXPECT_EQ(script.loss(x, Batch::of(data), *ws_script),
                  pair.builtin->loss(x, Batch::of(data), *ws_builtin));
        const Evaluation e_script = script.evaluate(x, data, *ws_script);
        const Evaluation e_builtin = pair.builtin->evaluate(x, data, *ws_builtin);
        EXPECT_EQ(e_script.loss, e_builtin.loss);
        EXPECT_EQ(e_script.accuracy, e_builtin.accuracy);
      }
    }
  }
}

// Each workspace holds its own copy of the module: loading x into one leaves another's parameters
// as they were (workers on threads never share a parameter tensor).
TEST(TorchScriptModel, WorkspacesDoNotShareParameters) {
  TempDir dir;
  const MlpPair pair = mlp_pair(dir.file("mlp.pt"), 3, 4, 2, options_of(TorchDtype::kFloat64));
  auto ws1 = pair.script->make_workspace(2);
  auto ws2 = pair.script->make_workspace(2);
  const Vec x1 = random_params(*pair.script, 1.0, 1);
  const Vec x2 = random_params(*pair.script, 1.0, 2);
  pair.script->load_parameters(x1, *ws1);
  pair.script->load_parameters(x2, *ws2);
  Vec back1, back2;
  pair.script->store_parameters(*ws1, back1);
  pair.script->store_parameters(*ws2, back2);
  EXPECT_EQ(back1, x1);
  EXPECT_EQ(back2, x2);
}

// Regression data: loss ½(prediction − y)² averaged over rows, as the least-squares model. With
// inputs, targets and weights multiples of 1/4 of magnitude at most 2 and 4 rows, every product and
// partial sum (at most 3 features) is a multiple of 1/16 below 2^6 and every value the losses and
// gradients form is a dyadic rational with few bits, so both models compute them exactly and must
// agree exactly.
TEST(TorchScriptModel, RegressionDataTrainsWithHalfSquaredError) {
  TempDir dir;
  Dataset data;
  data.name = "dyadic";
  data.num_classes = 0;
  data.features.resize(4, 3);
  data.labels.resize(4);
  const double features[4][3] = {{0.25, -1, 2}, {1.5, 0.5, -0.75}, {-2, 1.25, 0}, {0.5, 0.5, 1}};
  const double targets[4] = {1, -0.5, 2, 0.25};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) data.features(i, j) = features[i][j];
    data.labels[i] = targets[i];
  }
  const std::string path = dir.file("linear.pt");
  testing::save_script_module(path, {{"w", {3}, {0.5, -0.25, 1}, TorchDtype::kFloat64}},
                              "def forward(self, x):\n    return torch.mv(x, self.w)\n");
  auto script = make_torchscript_model(path, {3}, 0, options_of(TorchDtype::kFloat64));
  auto least_squares = make_least_squares_model(3, 0);
  auto ws_script = script->make_workspace(4);
  auto ws_ls = least_squares->make_workspace(4);
  for (const Vec& x : {Vec(Vec::Constant(3, 0.5)), Vec((Vec(3) << 1.25, -0.5, 0.75).finished())}) {
    Vec g_script(3), g_ls(3);
    EXPECT_EQ(script->loss_and_gradient(x, Batch::of(data), g_script, *ws_script),
              least_squares->loss_and_gradient(x, Batch::of(data), g_ls, *ws_ls));
    EXPECT_EQ(g_script, g_ls);
    const Evaluation e = script->evaluate(x, data, *ws_script);
    EXPECT_EQ(e.loss, least_squares->evaluate(x, data, *ws_ls).loss);
    EXPECT_TRUE(std::isnan(e.accuracy));
  }
}

// ------------------------------------------------------------------------------------------------
// The config maker and its errors.

// A module whose forward needs 4-D input (it sums over the image's height and width).
const char* const kChannelSum = R"(
def forward(self, x):
    return torch.linear(x.sum(dim=[2, 3]), self.weight, self.bias)
)";

std::vector<ScriptParam> linear_params(int in, int out, TorchDtype dtype = TorchDtype::kFloat64) {
  return {{"weight", {out, in}, std::vector<double>(out * in, 0.125), dtype},
          {"bias", {out}, std::vector<double>(out, 0.0), dtype}};
}

const char* const kLinear =
    "def forward(self, x):\n    return torch.linear(x, self.weight, self.bias)\n";

class TorchScriptFactory : public ::testing::Test {
 protected:
  void SetUp() override { register_torch_models(); }

  std::string toml(const std::string& file, const std::string& extra = "") const {
    return "[model]\nname = \"torchscript\"\nfile = \"" + file + "\"\n" + extra;
  }
  std::string error_of(const std::string& text, const Dataset& train) const {
    try {
      make_model(Config::parse(text, "run.toml"), train);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos)
          << "not one line: " << e.what();
      return e.what();
    }
    ADD_FAILURE() << "expected an Error for " << text;
    return "";
  }

  TempDir dir_;
  Dataset data_ = random_dataset(6, 18, 3, 41);  // 18 = 2 × 3 × 3
};

TEST_F(TorchScriptFactory, ImageShapeKeysShapeTheInput) {
  const std::string path = dir_.file("sum.pt");
  testing::save_script_module(path, linear_params(2, 3), kChannelSum);
  const std::string keys = "channels = 2\nheight = 3\nwidth = 3\nmicro_batch = 4\nthreads = 1\n";
  const Config config = Config::parse(toml(path, keys), "run.toml");
  auto model = make_model(config, data_);
  EXPECT_EQ(model->num_params(), 9);
  EXPECT_TRUE(config.unread_keys().empty());
  auto ws = model->make_workspace(6);
  Vec grad(9);
  EXPECT_TRUE(std::isfinite(model->loss_and_gradient(Vec::Zero(9), Batch::of(data_), grad, *ws)));
  // Without the keys forward gets rows × 18 and fails: the wrong input shape.
  const std::string e = error_of(toml(path), data_);
  EXPECT_TRUE(contains(e, path) && contains(e, "forward failed on a batch of shape [2, 18]") &&
              contains(e, "model.channels"))
      << e;
}

TEST_F(TorchScriptFactory, ModelDtypeIsNotAKeyOfTorchScript) {
  const std::string path = dir_.file("linear.pt");
  testing::save_script_module(path, linear_params(18, 3, TorchDtype::kFloat32), kLinear);
  const Config config = Config::parse(toml(path, "dtype = \"float64\"\n"), "run.toml");
  auto model = make_model(config, data_);
  EXPECT_EQ(dynamic_cast<const TorchModel&>(*model).dtype(), TorchDtype::kFloat32);
  EXPECT_EQ(model->parameter_precision(), Precision::kFloat32);
  EXPECT_EQ(config.unread_keys(), std::vector<std::string>{"model.dtype"});
}

TEST_F(TorchScriptFactory, MissingOrUnreadableFiles) {
  std::string e = error_of("model.name = \"torchscript\"", data_);
  EXPECT_TRUE(contains(e, "model.file")) << e;
  e = error_of(toml("no-such-dir/net.pt"), data_);
  EXPECT_TRUE(contains(e, "model.file") && contains(e, "does not exist") &&
              contains(e, "working directory"))
      << e;
  const std::string garbage = dir_.file("garbage.pt");
  testing::write_text(garbage, "this is not a zip archive\n");
  e = error_of(toml(garbage), data_);
  EXPECT_TRUE(contains(e, garbage) && contains(e, "not a TorchScript module") &&
              contains(e, "torch.jit.save"))
      << e;
}

TEST_F(TorchScriptFactory, ModulesThatCannotBeTrained) {
  const std::string none = dir_.file("none.pt");
  testing::save_script_module(none, {}, "def forward(self, x):\n    return x\n");
  std::string e = error_of(toml(none), data_);
  EXPECT_TRUE(contains(e, none) && contains(e, "no parameters")) << e;

  const std::string no_forward = dir_.file("no-forward.pt");
  testing::save_script_module(no_forward, linear_params(18, 3), "");
  e = error_of(toml(no_forward), data_);
  EXPECT_TRUE(contains(e, no_forward) && contains(e, "no forward method")) << e;

  const std::string mixed = dir_.file("mixed.pt");
  testing::save_script_module(mixed,
                              {{"weight", {3, 18}, std::vector<double>(54, 0.1)},
                               {"bias", {3}, {0, 0, 0}, TorchDtype::kFloat32}},
                              kLinear);
  e = error_of(toml(mixed), data_);
  EXPECT_TRUE(contains(e, mixed) && contains(e, "mixed dtypes") &&
              contains(e, "weight is float64") && contains(e, "bias is float32"))
      << e;
}

TEST_F(TorchScriptFactory, ForwardOutputsOfTheWrongShapeOrType) {
  const std::string four = dir_.file("four-classes.pt");
  testing::save_script_module(four, linear_params(18, 4), kLinear);
  std::string e = error_of(toml(four), data_);
  EXPECT_TRUE(contains(e, four) && contains(e, "returned shape [2, 4]") &&
              contains(e, "expected [2, 3]"))
      << e;

  const std::string tuple = dir_.file("tuple.pt");
  testing::save_script_module(tuple, linear_params(18, 3),
                              "def forward(self, x):\n    y = torch.linear(x, self.weight, "
                              "self.bias)\n    return (y, y)\n");
  e = error_of(toml(tuple), data_);
  EXPECT_TRUE(contains(e, tuple) && contains(e, "returned a Tuple")) << e;

  // On regression data forward must return one prediction per row.
  const Dataset regression = random_dataset(6, 18, 0, 42);
  const std::string three = dir_.file("three.pt");
  testing::save_script_module(three, linear_params(18, 3), kLinear);
  e = error_of(toml(three), regression);
  EXPECT_TRUE(contains(e, three) && contains(e, "expected [2] or [2, 1]")) << e;
}

// ------------------------------------------------------------------------------------------------
// Whole runs through the pacer binary.

std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

// A small three-class problem for the runs; `model` and `method` are [model] and [method] tables.
std::string run_config(const std::string& model, const std::string& method) {
  return "seed = 3\nworkers = 4\nmax_steps = 24\neval_every = 8\nsave_model = true\n"
         "[data]\nsource = \"synthetic\"\ngenerator = \"blobs\"\nsamples = 240\nfeatures = 6\n"
         "classes = 3\ntest_samples = 60\n"
         "[training]\nbatch = 8\n[optimizer]\nlr = 0.1\n"
         "[timing]\nmodel = \"exponential\"\ntau = 0.01\n" +
         model + method;
}

class TorchScriptRun : public ::testing::TestWithParam<const char*> {};

// The built-in float64 MLP and its twin module holding the built-in's initial point for the run's
// seed (Rng(seed, "init"), as pacer run draws it): the same log.csv, evals.csv and final model,
// byte for byte, under a synchronous, a coded and an asynchronous method.
TEST_P(TorchScriptRun, SameFilesAsTheBuiltinMlp) {
  TempDir dir;
  const int features = 6, hidden = 8, classes = 3;
  auto builtin = make_torch_mlp_model(features, hidden, classes, options_of(TorchDtype::kFloat64));
  Vec x0;
  Rng init(3, "init");
  builtin->initialize(x0, init);
  const std::string module = dir.file("mlp.pt");
  testing::save_mlp_twin(module, *builtin, x0, TorchDtype::kFloat64);

  const std::string method = std::string("[method]\n") + GetParam();
  const std::string builtin_toml = dir.file("builtin.toml");
  const std::string script_toml = dir.file("script.toml");
  testing::write_text(
      builtin_toml,
      run_config("[model]\nname = \"torch_mlp\"\nhidden = 8\ndtype = \"float64\"\n", method));
  testing::write_text(
      script_toml,
      run_config("[model]\nname = \"torchscript\"\nfile = \"" + module + "\"\n", method));
  testing::CommandResult r = testing::run_pacer("-q run " + shell_quoted(builtin_toml) + " --out " +
                                                shell_quoted(dir.file("builtin")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_pacer("-q run " + shell_quoted(script_toml) + " --out " +
                         shell_quoted(dir.file("script")));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  const auto rows = testing::read_csv_rows(dir.file("script/log.csv"));
  ASSERT_GE(rows.size(), 24u);  // one row per update: every step of a synchronous method
  EXPECT_NE(rows.front()[3], rows.back()[3]) << "the loss did not change: nothing was trained";
  for (const char* file : {"log.csv", "evals.csv", "model.bin"}) {
    EXPECT_EQ(testing::read_text(dir.file(std::string("script/") + file)),
              testing::read_text(dir.file(std::string("builtin/") + file)))
        << file;
  }
  EXPECT_TRUE(
      contains(testing::read_text(dir.file("script/summary.json")), "\"model\": \"torchscript\""));
}

INSTANTIATE_TEST_SUITE_P(Methods, TorchScriptRun,
                         ::testing::Values("name = \"dgd\"\n", "name = \"pgc-cr\"\ns = 1\n",
                                           "name = \"rescaled-asgd\"\n"));

// pacer loads libtorch only for a run that names a deep model (model/torch_plugin.h): the
// dynamic loader's own report (LD_DEBUG=files) lists libtorch for a torch_mlp run and not for a
// softmax run of the same data; a plugin that is not where PACER_TORCH_PLUGIN says is one error
// naming the key and the path, and `pacer version` says why there are no deep models; a plugin
// with another fingerprint is refused.
TEST(TorchPlugin, OnlyARunOfADeepModelLoadsLibtorch) {
  TempDir dir;
  const std::string method = "[method]\nname = \"dgd\"\n";
  const std::string deep = dir.file("deep.toml"), plain = dir.file("plain.toml");
  testing::write_text(deep, run_config("[model]\nname = \"torch_mlp\"\nhidden = 8\n", method));
  testing::write_text(plain, run_config("[model]\nname = \"softmax\"\n", method));
  auto loads_libtorch = [&](const std::string& config, const std::string& out) {
    const testing::CommandResult r = testing::run_command(
        "LD_DEBUG=files " + std::string(PACER_BINARY) + " -q run " + shell_quoted(config) +
        " --out " + shell_quoted(dir.file(out)) + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output.substr(r.output.size() > 2000 ? r.output.size() - 2000
                                                                        : 0);
    return r.output.find("libtorch_cpu.so") != std::string::npos;
  };
  EXPECT_TRUE(loads_libtorch(deep, "deep"));
  EXPECT_FALSE(loads_libtorch(plain, "plain"));

  const std::string missing = dir.file("nowhere/libpacer_torch.so");
  testing::CommandResult r = testing::run_command(
      "PACER_TORCH_PLUGIN=" + shell_quoted(missing) + " " + std::string(PACER_BINARY) + " -q run " +
      shell_quoted(deep) + " --out " + shell_quoted(dir.file("refused")) + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  for (const std::string& part : {std::string("model.name"), std::string("libtorch"), missing}) {
    EXPECT_NE(r.output.find(part), std::string::npos) << part << " in " << r.output;
  }
  r = testing::run_command("PACER_TORCH_PLUGIN=" + shell_quoted(missing) + " " +
                           std::string(PACER_BINARY) + " version 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("libtorch models: not available"), std::string::npos) << r.output;

  // A plugin built by another pacer or compiler (another fingerprint) is refused, naming it.
  r = testing::run_command("PACER_TORCH_PLUGIN=" + shell_quoted(PACER_FOREIGN_PLUGIN) + " " +
                           std::string(PACER_BINARY) + " -q run " + shell_quoted(deep) + " --out " +
                           shell_quoted(dir.file("foreign")) + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("built by another pacer or compiler"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(PACER_FOREIGN_PLUGIN), std::string::npos) << r.output;
}

// A float32 module, checkpointed every 4 steps and killed right after its second checkpoint:
// pacer run --resume finishes it with the log of the uninterrupted run.
TEST(TorchScriptResume, KilledRunResumesToTheUninterruptedLog) {
  TempDir dir;
  auto builtin = make_torch_mlp_model(6, 8, 3, options_of(TorchDtype::kFloat32));
  Vec x0;
  Rng init(3, "init");
  builtin->initialize(x0, init);
  const std::string module = dir.file("mlp32.pt");
  testing::save_mlp_twin(module, *builtin, x0, TorchDtype::kFloat32);
  const std::string config = dir.file("run.toml");
  testing::write_text(config,
                      run_config("[model]\nname = \"torchscript\"\nfile = \"" + module + "\"\n",
                                 "[method]\nname = \"pgc-cr\"\ns = 1\n") +
                          "[checkpoint]\nevery_steps = 4\n");
  testing::CommandResult r = testing::run_pacer("-q run " + shell_quoted(config) + " --out " +
                                                shell_quoted(dir.file("whole")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string out = dir.file("killed");
  r = testing::run_command("PACER_TEST_CRASH_AT=checkpoint.renamed:2 " + std::string(PACER_BINARY) +
                           " -q run " + shell_quoted(config) + " --out " + shell_quoted(out));
  ASSERT_NE(r.exit_code, 0) << "the crash point was not reached: " << r.output;
  r = testing::run_pacer("-q run --resume " + shell_quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(testing::read_text(out + "/log.csv"), testing::read_text(dir.file("whole/log.csv")));
  EXPECT_EQ(testing::read_text(out + "/model.bin"),
            testing::read_text(dir.file("whole/model.bin")));
}

}  // namespace
}  // namespace pacer
