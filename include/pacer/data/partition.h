// Splitting a training set into P partitions D_0..D_{P-1} (DESIGN.md section 2).
//
// Every partitioner returns P lists of row indices, each sorted increasing, that are pairwise
// disjoint; every row is in at most one list. Equal-size schemes (contiguous, iid) drop the
// remainder rows (at most P-1) so that every partition has exactly floor(rows/P) rows, as the
// synchronous schemes assume; by_class and dirichlet use every row. Impossible requests (fewer
// rows than partitions, a regression set for a class-based scheme) are Errors.
#pragma once

#include <string>
#include <vector>

#include "pacer/core/rng.h"
#include "pacer/data/dataset.h"

namespace pacer {

using Partition = std::vector<std::vector<int>>;

// Rows 0..m-1 to partition 0, the next m to partition 1, ... (m = rows / P).
Partition partition_contiguous(int rows, int parts);
// A random permutation, then contiguous blocks of m = rows / P.
Partition partition_iid(int rows, int parts, Rng& rng);
// Partition p gets every row of class p. Requires parts == data.num_classes (an Error saying so
// otherwise); partitions then differ in size.
Partition partition_by_class(const Dataset& data, int parts);
// For each class, proportions over partitions drawn from Dirichlet(alpha, ..., alpha); the
// class's rows (shuffled) are split accordingly. Small alpha: very skewed; large: near iid.
// Every partition is guaranteed at least one row (an Error if rows < parts).
Partition partition_dirichlet(const Dataset& data, int parts, double alpha, Rng& rng);

// Dispatches by name: "contiguous", "iid", "by_class", "dirichlet".
Partition make_partition(const std::string& scheme, const Dataset& data, int parts, double alpha,
                         Rng& rng);

}  // namespace pacer
