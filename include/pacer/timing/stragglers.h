// Which workers of a trace straggle, by how much and how persistently: the analysis behind
// `pacer stragglers` and the persistence section of `pacer fit` (DESIGN.md section 9).
//
// Definitions, on a trace (timing/trace.h) whose rows of each worker are in step order:
//   M            the median of all rows' durations per unit, pooled over workers.
//   slow row     a row whose duration per unit exceeds kSlowFactor·M (1.5 × M, fit.h).
//   slow spell   a maximal run of consecutive slow rows of one worker.
//   decided      the worker a step waited for last. For a bare trace: among the rows of a step (two
//                or more), the worker with the largest job time (seconds = duration × units), as
//                DGD waits for every worker; a caller with a run's log (jobs.csv, log.csv) knows it
//                and replaces the counts.
//   chronic      slow on at least half of its rows, or its slow rows come in spells: with k slow
//                rows among m, under no persistence every order of them is equally likely and the
//                number R of slow spells has P(R = r) = C(k−1, r−1)·C(m−k+1, r) / C(m, k); the
//                worker is chronic when P(R <= observed) < kChronicLevel / n (one-sided, Bonferroni
//                over the n workers, so a trace without persistence names a chronic worker with
//                probability below kChronicLevel).
//   one-off      some slow rows, not chronic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pacer/timing/trace.h"

namespace pacer {

// The level of the spell test (see chronic above), for all workers together.
inline constexpr double kChronicLevel = 0.01;

enum class StragglerKind { kNone, kOneOff, kChronic };
const char* straggler_kind_name(StragglerKind kind);  // "-", "one-off", "chronic"

struct WorkerStragglers {
  int worker = 0;
  size_t rows = 0;
  // Job times in seconds: smallest, median, 95th percentile (nearest rank: the ⌈0.95·m⌉-th
  // smallest), largest, mean.
  double min = 0, median = 0, p95 = 0, max = 0, mean = 0;
  double relative_median = 0;  // the worker's median duration per unit / M
  double slow_share = 0;       // slow rows / rows
  double slowdown = 0;         // median duration per unit of its slow rows / M (0: none)
  int64_t slow_spells = 0;
  double mean_spell = 0;      // mean length of its slow spells in rows (0: none)
  int64_t longest_spell = 0;  // rows of its longest slow spell
  // Lag-1 autocorrelation of its slow-row indicator; NaN when the indicator is constant.
  double autocorrelation = 0;
  double spell_p_value = 1;  // P(R <= observed spells) under no persistence (1: not applicable)
  int64_t decided = 0;       // steps it decided
  StragglerKind kind = StragglerKind::kNone;
};

struct StragglerAnalysis {
  std::string source;
  double median = 0;  // M
  std::vector<WorkerStragglers> workers;
  // Co-occurrence over the steps that hold rows of two or more workers: how many, the fraction
  // with two or more slow rows, and that fraction if the workers straggled independently with
  // their own slow shares.
  int64_t shared_steps = 0;
  double co_occurrence = 0, co_occurrence_independent = 0;
  // How "decided" was counted, and over how many steps.
  std::string decided_rule;
  int64_t decided_steps = 0;
  BlockLength block;  // the automatic block length of a block replay of this trace

  // The k workers with the largest mean job time, slowest first (ties: lower index first).
  std::vector<int> slowest(size_t k) const;
  // The chronic workers, by index.
  std::vector<int> chronic() const;
};

// Analyses `trace` (every worker at least one row). Pure.
StragglerAnalysis analyze_stragglers(const DurationTrace& trace);

// Replaces the decided counts (one per worker) and says how they were counted.
void set_decided(StragglerAnalysis& analysis, const std::vector<int64_t>& decided,
                 std::string rule);

}  // namespace pacer
