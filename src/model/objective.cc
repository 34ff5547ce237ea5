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
  scratch->gradient.resize(dim());
  return scratch;
}

double Objective::partition_gradient(int p, const Vec& x, Vec& grad, Rng& rng,
                                     Scratch& scratch) const {
  PACER_CHECK(p >= 0 && p < num_partitions());
  const Dataset& part = parts_[p];
  const int rows = part.rows();
  if (batch_ == 0 || batch_ >= rows) return full_partition_gradient(p, x, grad, scratch);

  std::vector<int>& order = scratch.order;
  if (static_cast<int>(order.size()) != rows) {
    order.resize(rows);  // within the capacity reserved by make_scratch
    std::iota(order.begin(), order.end(), 0);
  }
  Dataset& gathered = scratch.gathered;
  PACER_CHECK(gathered.rows() >= batch_);
  const int cols = part.cols();
  for (int i = 0; i < batch_; ++i) {
    const int j = i + static_cast<int>(rng.uniform_int(static_cast<uint64_t>(rows - i)));
    std::swap(order[i], order[j]);
    const int row = order[i];
    std::copy_n(part.features.data() + static_cast<int64_t>(row) * cols, cols,
                gathered.features.data() + static_cast<int64_t>(i) * cols);
    gathered.labels[i] = part.labels[row];
  }
  grad.resize(dim());
  const Batch batch{gathered.features.data(), gathered.labels.data(), batch_, cols};
  return model_->loss_and_gradient(x, batch, grad, *scratch.workspace);
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

}  // namespace pacer
