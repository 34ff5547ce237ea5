// The gradient hot path performs no heap allocation once workspaces and scratch exist
// (model.h, objective.h). Counted by interposing malloc, which operator new and Eigen's
// aligned_malloc both reach.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "model_test_util.h"
#include "pacer/model/eigen_models.h"
#include "pacer/model/objective.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define PACER_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PACER_SANITIZED 1
#endif

#if !defined(PACER_SANITIZED) && defined(__GLIBC__)
#define PACER_COUNT_MALLOC 1
namespace {
std::atomic<long> g_mallocs{0};
}  // namespace
extern "C" void* __libc_malloc(size_t size);
extern "C" void* malloc(size_t size) {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
#endif

namespace pacer {
namespace {

using testing::random_dataset;
using testing::random_params;

// Heap allocations made by f().
template <typename F>
long allocations_during(F&& f) {
#ifdef PACER_COUNT_MALLOC
  const long before = g_mallocs.load();
  f();
  return g_mallocs.load() - before;
#else
  f();
  return 0;
#endif
}

class NoAllocation : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef PACER_COUNT_MALLOC
    GTEST_SKIP() << "malloc cannot be counted in this build";
#endif
  }
};

std::vector<double>* g_sink = nullptr;

TEST_F(NoAllocation, CounterSeesAllocations) {
  EXPECT_GT(allocations_during([] { g_sink = new std::vector<double>(1000); }), 0);
  delete g_sink;
  // Eigen's own product allocates its packing buffers for operands of this size, which is why the
  // models use preallocated ones.
  const RowMatrix a = RowMatrix::Random(128, 784), b = RowMatrix::Random(128, 784);
  RowMatrix c(128, 128);
  EXPECT_GT(allocations_during([&] { c.noalias() = a * b.transpose(); }), 0);
}

TEST_F(NoAllocation, LossAndGradientOfEveryModel) {
  // Fashion-MNIST-sized rows: large enough that Eigen's own operator* would allocate its packing
  // buffers on the heap.
  const int d = 784, rows = 128;
  const Dataset regression = random_dataset(rows, d, 0, 1);
  const Dataset binary = random_dataset(rows, d, 2, 2);
  const Dataset classes = random_dataset(rows, d, 10, 3);
  struct Case {
    std::unique_ptr<Model> model;
    const Dataset* data;
  };
  Case cases[] = {{make_least_squares_model(d, 0.1), &regression},
                  {make_logistic_model(d, 0.1), &binary},
                  {make_softmax_model(d, 10, 0.1), &classes},
                  {make_mlp_model(d, 128, 10, 0.1), &classes}};
  for (Case& c : cases) {
    auto ws = c.model->make_workspace(256);
    const Vec x = random_params(*c.model, 0.05, 4);
    Vec grad(c.model->num_params());
    const Batch full = Batch::of(*c.data);
    const Batch part{c.data->features.data(), c.data->labels.data(), 50, d};
    c.model->loss_and_gradient(x, full, grad, *ws);  // warm-up: one-time library set-up
    const long count = allocations_during([&] {
      c.model->loss_and_gradient(x, full, grad, *ws);
      c.model->loss_and_gradient(x, part, grad, *ws);
      c.model->loss(x, full, *ws);
    });
    EXPECT_EQ(count, 0) << c.model->name();
  }
}

TEST_F(NoAllocation, ObjectivePartitionGradients) {
  const Dataset train = random_dataset(600, 784, 10, 5);
  Partition partition(3);
  for (int i = 0; i < train.rows(); ++i) partition[i % 3].push_back(i);
  partition[2].resize(150);  // unequal sizes
  auto model = std::shared_ptr<const Model>(make_mlp_model(784, 64, 10, 0.0));
  Objective objective(model, train, partition, 32);
  auto scratch = objective.make_scratch();
  Rng rng(6, "minibatch");
  Vec x = random_params(*model, 0.05, 7);
  Vec grad(objective.dim());
  objective.partition_gradient(0, x, grad, rng, *scratch);  // warm-up
  const long count = allocations_during([&] {
    for (int p = 0; p < 3; ++p) {
      objective.partition_gradient(p, x, grad, rng, *scratch);
      objective.partition_gradient_fresh(p, x, grad, rng, *scratch);
      objective.partition_gradient_first(p, x, grad, *scratch);
    }
    objective.full_partition_gradient(1, x, grad, *scratch);
    objective.full_gradient(x, grad, *scratch);
  });
  EXPECT_EQ(count, 0);
}

}  // namespace
}  // namespace pacer
