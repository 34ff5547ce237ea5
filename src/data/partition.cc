#include "pacer/data/partition.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pacer/core/error.h"

namespace pacer {
namespace {

void check_sizes(const char* scheme, int rows, int parts) {
  if (parts < 1)
    fail("partition '{}': number of partitions must be positive, got {}", scheme, parts);
  if (rows < parts) {
    fail("partition '{}': cannot split {} rows into {} non-empty partitions", scheme, rows, parts);
  }
}

// Consecutive blocks of floor(size/parts) entries of `order`, each sorted (a partition is a set;
// sorted rows make gathering it cache-friendly).
Partition blocks(const std::vector<int>& order, int parts) {
  const size_t m = order.size() / parts;
  Partition out(parts);
  for (int p = 0; p < parts; ++p) {
    out[p].assign(order.begin() + p * m, order.begin() + (p + 1) * m);
    std::sort(out[p].begin(), out[p].end());
  }
  return out;
}

std::vector<int> identity(int rows) {
  std::vector<int> order(rows);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

// Rows of each class, in row order. Fails on labels outside 0..num_classes-1.
std::vector<std::vector<int>> rows_by_class(const Dataset& data, const char* scheme) {
  if (data.num_classes < 1) {
    fail("partition '{}': needs class labels, but {} is a regression data set", scheme, data.name);
  }
  std::vector<std::vector<int>> rows(data.num_classes);
  for (int r = 0; r < data.rows(); ++r) {
    const double label = data.labels[r];
    if (!(label >= 0 && label < data.num_classes) || label != std::floor(label)) {
      fail("partition '{}': row {} of {} has label {}, expected a class 0..{}", scheme, r,
           data.name, label, data.num_classes - 1);
    }
    rows[static_cast<int>(label)].push_back(r);
  }
  return rows;
}

}  // namespace

Partition partition_contiguous(int rows, int parts) {
  check_sizes("contiguous", rows, parts);
  return blocks(identity(rows), parts);
}

Partition partition_iid(int rows, int parts, Rng& rng) {
  check_sizes("iid", rows, parts);
  std::vector<int> order = identity(rows);
  rng.shuffle(order);
  return blocks(order, parts);
}

Partition partition_by_class(const Dataset& data, int parts) {
  if (parts != data.num_classes) {
    fail(
        "partition.scheme = \"by_class\" gives worker i the rows of class i, so it needs workers = "
        "{} (the number of classes of {}), got {}",
        data.num_classes, data.name, parts);
  }
  Partition out = rows_by_class(data, "by_class");
  for (int c = 0; c < parts; ++c) {
    if (out[c].empty()) fail("partition 'by_class': class {} has no rows in {}", c, data.name);
  }
  return out;
}

Partition partition_dirichlet(const Dataset& data, int parts, double alpha, Rng& rng) {
  check_sizes("dirichlet", data.rows(), parts);
  if (!(alpha > 0) || !std::isfinite(alpha)) {
    fail("partition 'dirichlet': alpha must be a finite number > 0, got {}", alpha);
  }
  const std::vector<std::vector<int>> classes = rows_by_class(data, "dirichlet");
  Partition out(parts);
  std::vector<double> share(parts);
  for (std::vector<int> rows : classes) {
    rng.shuffle(rows);
    double total = 0;
    for (double& s : share) total += (s = rng.gamma(alpha));
    if (total == 0) {
      // Every Gamma(alpha) draw underflowed (alpha far below 1): the limit is one partition.
      share.assign(parts, 0.0);
      share[rng.uniform_int(parts)] = total = 1.0;
    }
    // Cumulative rounding: the counts add up to the class size exactly.
    double cumulative = 0;
    size_t begin = 0;
    for (int p = 0; p < parts; ++p) {
      cumulative += share[p];
      const auto rounded =
          static_cast<size_t>(std::llround(cumulative / total * static_cast<double>(rows.size())));
      const size_t end = p == parts - 1 ? rows.size() : std::clamp(rounded, begin, rows.size());
      out[p].insert(out[p].end(), rows.begin() + begin, rows.begin() + end);
      begin = end;
    }
  }
  // Guarantee every partition a row: move one from the currently largest partition.
  for (int p = 0; p < parts; ++p) {
    if (!out[p].empty()) continue;
    auto largest = std::max_element(
        out.begin(), out.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
    out[p].push_back(largest->back());
    largest->pop_back();
  }
  for (std::vector<int>& rows : out) std::sort(rows.begin(), rows.end());
  return out;
}

Partition make_partition(const std::string& scheme, const Dataset& data, int parts, double alpha,
                         Rng& rng) {
  if (scheme == "contiguous") return partition_contiguous(data.rows(), parts);
  if (scheme == "iid") return partition_iid(data.rows(), parts, rng);
  if (scheme == "by_class") return partition_by_class(data, parts);
  if (scheme == "dirichlet") return partition_dirichlet(data, parts, alpha, rng);
  fail("partition: unknown scheme '{}'; expected contiguous, iid, by_class or dirichlet", scheme);
}

}  // namespace pacer
