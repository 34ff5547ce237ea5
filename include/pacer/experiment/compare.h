// `pacer compare`: several methods on the same data, model, timing model and seeds, one table.
//
// A method spec is a registry name optionally followed by per-method keys:
//   "pgc-cr", "is-sgd:k=2", "pgc-cr:decoder=exact"  (each key=value sets method.<key>),
//   "asgd:optimizer.lr=0.01"                          (a dotted key is set as written, so each
//                                                       method can have its own stepsize).
// Every run of a comparison shares the data set and, per seed, the partitions; each gets its own
// folder <out_dir>/<spec>/seed<k>/ with the usual outputs. Keys that no method of the comparison
// reads are rejected before anything runs.
#pragma once

#include <string>
#include <vector>

#include "pacer/core/config.h"

namespace pacer {

struct CompareOptions {
  std::vector<std::string> methods;  // specs, as above
  int seeds = 1;                     // seeds seed, seed+1, ..., seed+seeds-1
  std::string out_dir;               // "" = write nothing
};

struct CompareResult {
  std::string markdown;  // the table as printed
  std::string csv;
};

CompareResult run_comparison(const Config& config, const CompareOptions& options);

// Splits "a,b:k=1,c" into specs; an empty spec is an Error.
std::vector<std::string> split_method_list(const std::string& list);

}  // namespace pacer
