// Gradient cost of the Eigen models on Fashion-MNIST-shaped random data (784 features, 10
// classes; the MLP has 128 hidden units), per batch of 128 rows and per full partition of 5000
// rows. items_per_second is rows per second.
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>

#include "pacer/core/rng.h"
#include "pacer/data/dataset.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/objective.h"

namespace pacer {
namespace {

constexpr int kFeatures = 784;
constexpr int kClasses = 10;
constexpr int kHidden = 128;

Dataset random_data(int rows, int classes) {
  Rng rng(1, "bench-data");
  Dataset data;
  data.features.resize(rows, kFeatures);
  data.labels.resize(rows);
  data.num_classes = classes;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < kFeatures; ++j) data.features(i, j) = rng.uniform();
    data.labels[i] = classes > 0 ? static_cast<double>(rng.uniform_int(classes)) : rng.normal();
  }
  return data;
}

struct Subject {
  std::shared_ptr<const Model> model;
  int classes;  // of the data it fits
};

Subject subject(const std::string& name) {
  if (name == "least_squares") return {make_least_squares_model(kFeatures, 1e-4), 0};
  if (name == "logistic") return {make_logistic_model(kFeatures, 1e-4), 2};
  if (name == "softmax") return {make_softmax_model(kFeatures, kClasses, 1e-4), kClasses};
  return {make_mlp_model(kFeatures, kHidden, kClasses, 1e-4), kClasses};
}

Vec initial_params(const Model& model) {
  Vec x;
  Rng rng(2, "bench-init");
  model.initialize(x, rng);
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] += 0.01 * rng.normal();
  return x;
}

// Model::loss_and_gradient on one batch of state.range(0) rows.
void BM_Gradient(benchmark::State& state, const std::string& name) {
  const int rows = static_cast<int>(state.range(0));
  const Subject s = subject(name);
  const Dataset data = random_data(rows, s.classes);
  auto ws = s.model->make_workspace(rows);
  const Vec x = initial_params(*s.model);
  Vec grad(s.model->num_params());
  for (auto _ : state) {
    benchmark::DoNotOptimize(s.model->loss_and_gradient(x, Batch::of(data), grad, *ws));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * rows);
}

// Objective::partition_gradient with a minibatch of state.range(0) rows drawn from a partition of
// 5000 rows: the model gradient plus the draw and the gather.
void BM_MinibatchGradient(benchmark::State& state, const std::string& name) {
  const int batch = static_cast<int>(state.range(0));
  const Subject s = subject(name);
  const Dataset data = random_data(5000, s.classes);
  Partition partition(1);
  for (int i = 0; i < data.rows(); ++i) partition[0].push_back(i);
  const Objective objective(s.model, data, partition, batch);
  auto scratch = objective.make_scratch();
  Rng rng(3, "bench-minibatch");
  const Vec x = initial_params(*s.model);
  Vec grad(objective.dim());
  for (auto _ : state) {
    benchmark::DoNotOptimize(objective.partition_gradient(0, x, grad, rng, *scratch));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

#define PACER_MODEL_BENCH(model)                                                   \
  BENCHMARK_CAPTURE(BM_Gradient, model, std::string(#model))->Arg(128)->Arg(5000); \
  BENCHMARK_CAPTURE(BM_MinibatchGradient, model, std::string(#model))->Arg(128)

PACER_MODEL_BENCH(least_squares);
PACER_MODEL_BENCH(logistic);
PACER_MODEL_BENCH(softmax);
PACER_MODEL_BENCH(mlp);

}  // namespace
}  // namespace pacer
