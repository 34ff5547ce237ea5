// The typed contents of a claims file (pacer/study/claims.h states the format), and its reader.
// Private to the study layer: claims.cc evaluates what this reads.
#pragma once

#include <string>
#include <vector>

#include "pacer/report/comparison.h"
#include "pacer/study/claims.h"

namespace pacer::claims {

// One seed's value of a metric, and whether it is a lower bound (the seed missed the target: its
// end value stands in).
struct SeedValue {
  double value = kNotAvailable;
  bool censored = false;
};

// A metric of a seed run that a check may name (the one list the reader and the evaluator share).
struct SeedMetric {
  const char* name;
  SeedValue (*of)(const SeedRun&);
};
// The metric called `name`, or null.
const SeedMetric* find_seed_metric(const std::string& name);
// The names of every metric, for errors.
std::string seed_metric_names();

enum class Compare { kRatio, kDifference, kValue };
enum class Rule { kWithin, kAbove, kBelow, kReaches, kEquals, kLeads };
enum class Quantifier { kEvery, kSome, kMost };

struct Group {
  std::string label;
  std::vector<std::string> candidates, rivals;
};

struct CheckSpec {
  std::string name;
  std::vector<std::string> in, against_in;  // against_in empty: the same as `in`
  bool separately = false;   // each folder of `in` (and `against_in`) is its own comparison
  bool informative = false;  // reported, but not part of the claim's verdict
  std::vector<std::string> methods;
  Compare compare = Compare::kRatio;
  std::string against;                      // "" = the method itself (in against_in)
  std::string metric;                       // a SeedMetric's name or "summary:KEY"
  const SeedMetric* seed_metric = nullptr;  // null for "summary:KEY"
  bool distance = false;                    // transform = "distance"
  double minimum = 0, curvature = 1;        // of the distance transform
  Rule rule = Rule::kWithin;
  // within, reaches: 2 ([a, b]; reaches: [x, significance]); above, below: 1; equals: one per
  // method.
  std::vector<double> bounds;
  double tolerance = 0;  // equals
  Quantifier quantifier = Quantifier::kEvery;
  std::vector<Group> groups;  // leads
};

struct ClaimSpec {
  std::string id, words, paper;
  std::vector<std::string> regimes;  // resolved: never empty
  std::vector<CheckSpec> checks;
};

struct TableSpec {
  std::string title, in, regime;
};

struct ClaimsFile {
  std::string path;
  std::string title, setup, quick_note;
  std::vector<RegimeInfo> regimes;
  std::vector<ClaimSpec> claims;
  std::vector<TableSpec> tables;
};

// Reads and checks the file: an Error names the file, the entry ("claim 3, check 2") and the key.
ClaimsFile read_claims_file(const std::string& path);

// The rule of a check in words, for the report ("ratio's 95 % interval within [0.8, 1.25] in
// every case").
std::string describe_rule(const CheckSpec& check);

}  // namespace pacer::claims
