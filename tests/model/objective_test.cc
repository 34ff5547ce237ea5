#include "pacer/model/objective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "model_test_util.h"
#include "pacer/core/error.h"
#include "pacer/model/eigen_models.h"

namespace pacer {
namespace {

using testing::random_dataset;
using testing::random_params;

// Three partitions of unequal sizes (as by_class gives), rows not in order.
Partition unequal_partition() {
  return {{0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33},
          {1, 4, 7, 10, 13, 16, 19},
          {2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38, 22, 25}};
}

struct Fixture {
  Dataset train = random_dataset(40, 6, 3, 31);
  std::shared_ptr<const Model> model = make_mlp_model(6, 5, 3, 0.01);
  Vec x = random_params(*model, 0.5, 32);
};

// The model's loss and gradient over the given rows of train.
double model_gradient(const Fixture& f, const std::vector<int>& rows, Vec& grad) {
  const Dataset part = f.train.subset(rows);
  auto ws = f.model->make_workspace(part.rows());
  grad.resize(f.model->num_params());
  return f.model->loss_and_gradient(f.x, Batch::of(part), grad, *ws);
}

TEST(Objective, CopiesEachPartitionContiguously) {
  Fixture f;
  const Partition partition = unequal_partition();
  Objective objective(f.model, f.train, partition, 0);
  ASSERT_EQ(objective.num_partitions(), 3);
  for (int p = 0; p < 3; ++p) {
    const Dataset& part = objective.partition(p);
    ASSERT_EQ(part.rows(), static_cast<int>(partition[p].size()));
    for (int i = 0; i < part.rows(); ++i) {
      EXPECT_EQ(part.features.row(i), f.train.features.row(partition[p][i]));
      EXPECT_EQ(part.labels[i], f.train.labels[partition[p][i]]);
    }
  }
  EXPECT_EQ(objective.dim(), f.model->num_params());
}

// The pool overloads (one partition per task, results combined in partition order) return
// exactly what the one-thread functions return, for any number of threads and slots.
TEST(Objective, ThreadedEvaluationIsBitIdenticalToTheSerialOne) {
  Fixture f;
  Objective objective(f.model, f.train, unequal_partition(), 0);
  auto scratch = objective.make_scratch();
  Vec serial_grad;
  const double serial_loss = objective.full_gradient(f.x, serial_grad, *scratch);
  const std::vector<double> serial_losses = objective.partition_losses(f.x, *scratch);
  for (int threads : {1, 2, 7}) {
    for (int width : {1, 2, 5}) {
      ComputePool pool(threads);
      Objective::Slots slots;
      for (int k = 0; k < width; ++k) slots.push_back(objective.make_scratch());
      Vec grad;
      EXPECT_EQ(objective.full_gradient(f.x, grad, pool, slots), serial_loss)
          << threads << " threads, " << width << " slots";
      EXPECT_EQ(grad, serial_grad) << threads << " threads, " << width << " slots";
      EXPECT_EQ(objective.partition_losses(f.x, pool, slots), serial_losses)
          << threads << " threads, " << width << " slots";
    }
  }
}

TEST(Objective, WholePartitionGradientEqualsTheModelGradient) {
  Fixture f;
  const Partition partition = unequal_partition();
  // batch 0, and a batch at least as large as every partition, both mean the whole partition.
  for (int batch : {0, 15, 100}) {
    Objective objective(f.model, f.train, partition, batch);
    auto scratch = objective.make_scratch();
    Rng rng(1, "minibatch");
    for (int p = 0; p < 3; ++p) {
      Vec expected, got, full;
      const double expected_loss = model_gradient(f, partition[p], expected);
      const double loss = objective.partition_gradient(p, f.x, got, rng, *scratch);
      EXPECT_NEAR(loss, expected_loss, 1e-14 * std::abs(expected_loss));
      EXPECT_LT((got - expected).norm(), 1e-13 * expected.norm()) << "batch " << batch;
      EXPECT_NEAR(objective.full_partition_gradient(p, f.x, full, *scratch), expected_loss,
                  1e-14 * std::abs(expected_loss));
      EXPECT_LT((full - expected).norm(), 1e-13 * expected.norm());
    }
  }
}

TEST(Objective, MinibatchIsTheModelGradientOnDistinctRowsOfThePartition) {
  Fixture f;
  const Partition partition = unequal_partition();
  const int batch = 5;
  Objective objective(f.model, f.train, partition, batch);
  auto scratch = objective.make_scratch();
  Rng rng(7, "minibatch");
  for (int draw = 0; draw < 20; ++draw) {
    const int p = draw % 3;
    Vec grad;
    const double loss = objective.partition_gradient(p, f.x, grad, rng, *scratch);
    // The first `batch` entries of the permutation are the minibatch: distinct rows of partition p.
    ASSERT_EQ(scratch->order.size(), partition[p].size());
    const std::vector<int> local(scratch->order.begin(), scratch->order.begin() + batch);
    EXPECT_EQ(std::set<int>(local.begin(), local.end()).size(), static_cast<size_t>(batch));
    std::vector<int> rows;
    for (int i : local) {
      ASSERT_GE(i, 0);
      ASSERT_LT(i, static_cast<int>(partition[p].size()));
      rows.push_back(partition[p][i]);
    }
    Vec expected;
    const double expected_loss = model_gradient(f, rows, expected);
    EXPECT_NEAR(loss, expected_loss, 1e-14 * std::abs(expected_loss));
    EXPECT_LT((grad - expected).norm(), 1e-13 * expected.norm());
  }
}

TEST(Objective, MinibatchDrawIsDeterministicForASeed) {
  Fixture f;
  Objective objective(f.model, f.train, unequal_partition(), 4);
  auto s1 = objective.make_scratch(), s2 = objective.make_scratch(), s3 = objective.make_scratch();
  Rng a(5, "minibatch", 2), b(5, "minibatch", 2), c(6, "minibatch", 2);
  bool any_difference = false;
  for (int draw = 0; draw < 10; ++draw) {
    Vec ga, gb, gc;
    objective.partition_gradient(0, f.x, ga, a, *s1);
    objective.partition_gradient(0, f.x, gb, b, *s2);
    objective.partition_gradient(0, f.x, gc, c, *s3);
    EXPECT_EQ(ga, gb);
    EXPECT_EQ(s1->order, s2->order);
    any_difference = any_difference || s1->order != s3->order;
  }
  EXPECT_TRUE(any_difference);
}

TEST(Objective, MinibatchRowsAreDrawnUniformly) {
  Fixture f;
  const std::vector<int> all_rows = [] {
    std::vector<int> rows(20);
    for (int i = 0; i < 20; ++i) rows[i] = i;
    return rows;
  }();
  Objective objective(f.model, f.train, Partition{all_rows}, 5);
  auto scratch = objective.make_scratch();
  Rng rng(8, "minibatch");
  std::vector<int> count(20, 0);
  const int draws = 4000;
  Vec grad;
  for (int draw = 0; draw < draws; ++draw) {
    objective.partition_gradient(0, f.x, grad, rng, *scratch);
    for (int i = 0; i < 5; ++i) ++count[scratch->order[i]];
  }
  // Each row is in a minibatch with probability 1/4: 1000 expected, standard deviation ≈ 27.
  for (int i = 0; i < 20; ++i) EXPECT_NEAR(count[i], 1000, 150) << "row " << i;
}

TEST(Objective, FullGradientIsTheMeanOfPartitionGradients) {
  Fixture f;
  const Partition partition = unequal_partition();
  Objective objective(f.model, f.train, partition, 3);
  auto scratch = objective.make_scratch();
  Vec mean = Vec::Zero(f.model->num_params());
  double mean_loss = 0;
  for (int p = 0; p < 3; ++p) {
    Vec g;
    mean_loss += model_gradient(f, partition[p], g) / 3;
    mean += g / 3;
  }
  Vec full;
  const double loss = objective.full_gradient(f.x, full, *scratch);
  EXPECT_NEAR(loss, mean_loss, 1e-14 * std::abs(mean_loss));
  EXPECT_LT((full - mean).norm(), 1e-13 * mean.norm());

  const std::vector<double> losses = objective.partition_losses(f.x, *scratch);
  ASSERT_EQ(losses.size(), 3u);
  EXPECT_NEAR((losses[0] + losses[1] + losses[2]) / 3, mean_loss, 1e-14 * std::abs(mean_loss));
}

TEST(Objective, EmptyPartitionIsAnErrorNamingTheDataSet) {
  Fixture f;
  f.train.name = "mnist-train";
  try {
    Objective objective(f.model, f.train, Partition{{0, 1}, {}}, 0);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mnist-train"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("partition 1"), std::string::npos) << e.what();
  }
}

// partition_gradient_fresh: the rows depend on the stream's state alone. Two scratches with
// different histories (one has drawn from other partitions and streams before) draw the same rows
// from equal streams, and each draw is the model's gradient on `batch` distinct rows of D_p.
TEST(Objective, FreshDrawDependsOnlyOnTheStream) {
  Fixture f;
  const Partition partition = unequal_partition();
  const int batch = 5;
  Objective objective(f.model, f.train, partition, batch);
  auto clean = objective.make_scratch(), used = objective.make_scratch();
  Rng noise(9, "other");
  Vec ignored;
  for (int draw = 0; draw < 7; ++draw) {
    objective.partition_gradient_fresh(draw % 3, f.x, ignored, noise, *used);
    objective.partition_gradient(draw % 3, f.x, ignored, noise, *used);
  }
  for (int p = 0; p < 3; ++p) {
    for (uint64_t key = 0; key < 4; ++key) {
      Rng a(5, "rows", key), b(5, "rows", key);
      Vec ga, gb;
      const double la = objective.partition_gradient_fresh(p, f.x, ga, a, *clean);
      const double lb = objective.partition_gradient_fresh(p, f.x, gb, b, *used);
      EXPECT_EQ(ga, gb) << "p=" << p << " key=" << key;
      EXPECT_EQ(la, lb);
      // The rows it used: replay the draw (a partial Fisher-Yates shuffle of the identity).
      Rng replay(5, "rows", key);
      std::vector<int> order(partition[p].size());
      std::iota(order.begin(), order.end(), 0);
      std::vector<int> rows;
      for (int i = 0; i < batch; ++i) {
        const int j = i + static_cast<int>(replay.uniform_int(order.size() - i));
        std::swap(order[i], order[j]);
        rows.push_back(partition[p][order[i]]);
      }
      EXPECT_EQ(std::set<int>(rows.begin(), rows.end()).size(), static_cast<size_t>(batch));
      Vec expected;
      const double expected_loss = model_gradient(f, rows, expected);
      EXPECT_NEAR(la, expected_loss, 1e-14 * std::abs(expected_loss));
      EXPECT_LT((ga - expected).norm(), 1e-13 * expected.norm());
    }
  }
  // The scratch's identity permutation is restored after every draw.
  for (size_t i = 0; i < used->identity.size(); ++i)
    ASSERT_EQ(used->identity[i], static_cast<int>(i));
}

TEST(Objective, FreshRowsAreDrawnUniformly) {
  Fixture f;
  std::vector<int> all_rows(20);
  std::iota(all_rows.begin(), all_rows.end(), 0);
  Objective objective(f.model, f.train, Partition{all_rows}, 5);
  auto scratch = objective.make_scratch();
  const Dataset& part = objective.partition(0);
  std::vector<int> count(20, 0);
  const int draws = 4000;
  Vec grad;
  for (int draw = 0; draw < draws; ++draw) {
    Rng rng(8, "rows", static_cast<uint64_t>(draw));  // a fresh stream per draw, as keyed draws
    objective.partition_gradient_fresh(0, f.x, grad, rng, *scratch);
    // The minibatch is in scratch.gathered: find each of its rows in the partition (the fixture's
    // rows are distinct).
    for (int i = 0; i < 5; ++i) {
      for (int r = 0; r < 20; ++r) {
        if (scratch->gathered.features.row(i) == part.features.row(r)) ++count[r];
      }
    }
  }
  // Each row is in a minibatch with probability 1/4: 1000 expected, standard deviation ≈ 27.
  for (int i = 0; i < 20; ++i) EXPECT_NEAR(count[i], 1000, 150) << "row " << i;
}

TEST(Objective, FirstRowsAreTheFirstBatchRowsOfThePartition) {
  Fixture f;
  const Partition partition = unequal_partition();
  for (int batch : {1, 4, 7}) {
    Objective objective(f.model, f.train, partition, batch);
    auto scratch = objective.make_scratch();
    for (int p = 0; p < 3; ++p) {
      const std::vector<int> rows(partition[p].begin(), partition[p].begin() + batch);
      Vec expected, got;
      const double expected_loss = model_gradient(f, rows, expected);
      const double loss = objective.partition_gradient_first(p, f.x, got, *scratch);
      EXPECT_NEAR(loss, expected_loss, 1e-14 * std::abs(expected_loss));
      EXPECT_LT((got - expected).norm(), 1e-13 * expected.norm()) << "batch " << batch;
    }
  }
  // A batch of at least the partition's size is the whole partition, as for the other draws.
  Objective whole(f.model, f.train, partition, 100);
  auto scratch = whole.make_scratch();
  Vec expected, got;
  const double expected_loss = model_gradient(f, partition[1], expected);
  EXPECT_NEAR(whole.partition_gradient_first(1, f.x, got, *scratch), expected_loss,
              1e-14 * std::abs(expected_loss));
  EXPECT_LT((got - expected).norm(), 1e-13 * expected.norm());
}

}  // namespace
}  // namespace pacer
