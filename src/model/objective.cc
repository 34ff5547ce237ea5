#include "pacer/model/objective.h"

#include <algorithm>
#include <exception>
#include <numeric>
#include <utility>

#include "pacer/core/error.h"

namespace pacer {

Objective::Objective(std::shared_ptr<const Model> model, const Dataset& train,
                     const Partition& partition, int batch)
    : model_(std::move(model)), batch_(batch), max_rows_(0) {
  PACER_CHECK(model_ != nullptr);
  PACER_CHECK(batch >= 0);
  PACER_CHECK(!partition.empty());
  parts_.reserve(partition.size());
  for (size_t p = 0; p < partition.size(); ++p) {
    if (partition[p].empty()) {
      fail(
          "data set '{}': partition {} of {} has no rows (fewer workers, or a larger "
          "partition.alpha for dirichlet)",
          train.name, p, partition.size());
    }
    parts_.push_back(train.subset(partition[p]));
    max_rows_ = std::max(max_rows_, parts_.back().rows());
  }
}

std::unique_ptr<Objective::Scratch> Objective::make_scratch() const {
  auto scratch = std::make_unique<Scratch>();
  scratch->workspace = model_->make_workspace(max_rows_);
  const int gathered_rows = batch_ > 0 ? std::min(batch_, max_rows_) : 0;
  const Dataset& first = parts_.front();
  scratch->gathered.features.resize(gathered_rows, first.cols());
  scratch->gathered.labels.resize(gathered_rows);
  scratch->gathered.num_classes = first.num_classes;
  scratch->gathered.name = first.name;
  scratch->order.reserve(max_rows_);
  if (gathered_rows > 0) {
    scratch->identity.resize(max_rows_);
    std::iota(scratch->identity.begin(), scratch->identity.end(), 0);
    scratch->swaps.reserve(gathered_rows);
  }
  scratch->gradient.resize(dim());
  return scratch;
}

bool Objective::samples(int p) const {
  PACER_CHECK(p >= 0 && p < num_partitions());
  return batch_ > 0 && batch_ < parts_[p].rows();
}

void Objective::gather(int p, int row, int i, Scratch& scratch) const {
  const Dataset& part = parts_[p];
  const int cols = part.cols();
  std::copy_n(part.features.data() + static_cast<int64_t>(row) * cols, cols,
              scratch.gathered.features.data() + static_cast<int64_t>(i) * cols);
  scratch.gathered.labels[i] = part.labels[row];
}

double Objective::gathered_gradient(const Vec& x, Vec& grad, Scratch& scratch) const {
  grad.resize(dim());
  const Dataset& gathered = scratch.gathered;
  const Batch batch{gathered.features.data(), gathered.labels.data(), batch_, gathered.cols()};
  return model_->loss_and_gradient(x, batch, grad, *scratch.workspace);
}

double Objective::partition_gradient(int p, const Vec& x, Vec& grad, Rng& rng,
                                     Scratch& scratch) const {
  if (!samples(p)) return full_partition_gradient(p, x, grad, scratch);
  const int rows = parts_[p].rows();
  std::vector<int>& order = scratch.order;
  if (static_cast<int>(order.size()) != rows) {
    order.resize(rows);  // within the capacity reserved by make_scratch
    std::iota(order.begin(), order.end(), 0);
  }
  PACER_CHECK(scratch.gathered.rows() >= batch_);
  for (int i = 0; i < batch_; ++i) {
    const int j = i + static_cast<int>(rng.uniform_int(static_cast<uint64_t>(rows - i)));
    std::swap(order[i], order[j]);
    gather(p, order[i], i, scratch);
  }
  return gathered_gradient(x, grad, scratch);
}

double Objective::partition_gradient_fresh(int p, const Vec& x, Vec& grad, Rng& rng,
                                           Scratch& scratch) const {
  if (!samples(p)) return full_partition_gradient(p, x, grad, scratch);
  // A partial Fisher-Yates shuffle of the identity, undone afterwards: O(batch), and the rows
  // depend only on rng.
  const int rows = parts_[p].rows();
  std::vector<int>& order = scratch.identity;
  std::vector<int>& swaps = scratch.swaps;
  PACER_CHECK(static_cast<int>(order.size()) >= rows && scratch.gathered.rows() >= batch_);
  swaps.clear();
  for (int i = 0; i < batch_; ++i) {
    const int j = i + static_cast<int>(rng.uniform_int(static_cast<uint64_t>(rows - i)));
    std::swap(order[i], order[j]);
    swaps.push_back(j);
    gather(p, order[i], i, scratch);
  }
  for (int i = batch_ - 1; i >= 0; --i) std::swap(order[i], order[swaps[i]]);
  return gathered_gradient(x, grad, scratch);
}

double Objective::partition_gradient_first(int p, const Vec& x, Vec& grad, Scratch& scratch) const {
  if (!samples(p)) return full_partition_gradient(p, x, grad, scratch);
  const Dataset& part = parts_[p];
  grad.resize(dim());
  const Batch first{part.features.data(), part.labels.data(), batch_, part.cols()};
  return model_->loss_and_gradient(x, first, grad, *scratch.workspace);
}

double Objective::full_partition_gradient(int p, const Vec& x, Vec& grad, Scratch& scratch) const {
  PACER_CHECK(p >= 0 && p < num_partitions());
  grad.resize(dim());
  return model_->loss_and_gradient(x, Batch::of(parts_[p]), grad, *scratch.workspace);
}

double Objective::full_gradient(const Vec& x, Vec& grad, Scratch& scratch) const {
  grad.setZero(dim());
  double loss = 0;
  for (int p = 0; p < num_partitions(); ++p) {
    loss += full_partition_gradient(p, x, scratch.gradient, scratch);
    grad += scratch.gradient;
  }
  const double inv_parts = 1.0 / num_partitions();
  grad *= inv_parts;
  return loss * inv_parts;
}

template <typename Compute, typename Combine>
void Objective::for_each_task(int count, ComputePool& pool, const Slots& slots, Compute&& compute,
                              Combine&& combine) const {
  PACER_CHECK(!slots.empty());
  const int parts = count;
  const int width = static_cast<int>(slots.size());
  std::vector<ComputePool::Ticket> tickets(width);
  std::vector<std::exception_ptr> failures(width);  // a task keeps its exception for the waiter
  auto submit = [&](int p) {
    Scratch& slot = *slots[p % width];
    std::exception_ptr& failure = failures[p % width];
    tickets[p % width] = pool.submit(p, [&compute, &slot, &failure, p] {
      try {
        compute(p, slot);
      } catch (...) {
        failure = std::current_exception();
      }
    });
  };
  for (int p = 0; p < std::min(width, parts); ++p) submit(p);
  for (int p = 0; p < parts; ++p) {
    pool.wait(tickets[p % width]);
    if (failures[p % width]) {
      for (const ComputePool::Ticket& t : tickets) {
        if (t) pool.wait(t);  // no task may outlive the scratches it writes
      }
      std::rethrow_exception(failures[p % width]);
    }
    combine(p, *slots[p % width]);
    if (p + width < parts) submit(p + width);  // the slot is free again
  }
}

double Objective::full_gradient(const Vec& x, Vec& grad, ComputePool& pool,
                                const Slots& slots) const {
  std::vector<double> losses(slots.size());
  grad.setZero(dim());
  double loss = 0;
  const size_t width = slots.size();
  for_each_task(
      num_partitions(), pool, slots,
      [&](int p, Scratch& s) { losses[p % width] = full_partition_gradient(p, x, s.gradient, s); },
      [&](int p, Scratch& s) {
        loss += losses[p % width];
        grad += s.gradient;
      });
  const double inv_parts = 1.0 / num_partitions();
  grad *= inv_parts;
  return loss * inv_parts;
}

std::vector<double> Objective::partition_losses(const Vec& x, ComputePool& pool,
                                                const Slots& slots) const {
  std::vector<Batch> batches;
  for (const Dataset& part : parts_) batches.push_back(Batch::of(part));
  return batch_losses(x, batches, pool, slots);
}

std::vector<double> Objective::batch_losses(const Vec& x, const std::vector<Batch>& batches,
                                            ComputePool& pool, const Slots& slots) const {
  std::vector<double> losses(batches.size());
  for_each_task(
      static_cast<int>(batches.size()), pool, slots,
      [&](int k, Scratch& s) { losses[k] = model_->loss(x, batches[k], *s.workspace); },
      [](int, Scratch&) {});
  return losses;
}

std::vector<double> Objective::batch_losses(const Vec& x, const std::vector<Batch>& batches,
                                            Scratch& scratch) const {
  std::vector<double> losses(batches.size());
  for (size_t k = 0; k < batches.size(); ++k) {
    losses[k] = model_->loss(x, batches[k], *scratch.workspace);
  }
  return losses;
}

std::vector<double> Objective::partition_losses(const Vec& x, Scratch& scratch) const {
  std::vector<double> losses(parts_.size());
  for (int p = 0; p < num_partitions(); ++p) {
    losses[p] = model_->loss(x, Batch::of(parts_[p]), *scratch.workspace);
  }
  return losses;
}

std::vector<double> Objective::batch_gradients(const Vec& x, const std::vector<Batch>& batches,
                                               const GradientUse& use, ComputePool& pool,
                                               const Slots& slots) const {
  std::vector<double> losses(batches.size());
  for_each_task(
      static_cast<int>(batches.size()), pool, slots,
      [&](int k, Scratch& s) {
        s.gradient.resize(dim());
        losses[k] = model_->loss_and_gradient(x, batches[k], s.gradient, *s.workspace);
      },
      [&](int k, Scratch& s) { use(k, s.gradient); });
  return losses;
}

std::vector<double> Objective::batch_gradients(const Vec& x, const std::vector<Batch>& batches,
                                               const GradientUse& use, Scratch& scratch) const {
  std::vector<double> losses(batches.size());
  for (size_t k = 0; k < batches.size(); ++k) {
    scratch.gradient.resize(dim());
    losses[k] = model_->loss_and_gradient(x, batches[k], scratch.gradient, *scratch.workspace);
    use(static_cast<int>(k), scratch.gradient);
  }
  return losses;
}

}  // namespace pacer
