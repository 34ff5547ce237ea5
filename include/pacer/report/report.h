// report.md of `pacer compare`: the question asked, the verdict (verdict.h) and its rule, the
// table, each method against the leader with an interval, the tuned values and the figures, as
// Markdown that any viewer renders with the figures beside it.
#pragma once

#include <string>
#include <vector>

#include "pacer/report/comparison.h"
#include "pacer/report/plot.h"
#include "pacer/report/verdict.h"

namespace pacer {

// The text of report.md. `table` is the comparison's Markdown table (with its legend). Pure:
// same inputs ⇒ the same text.
std::string comparison_report(const Comparison& c, const Verdict& verdict, const std::string& table,
                              const std::vector<Figure>& figures);

// Method m against the verdict's leader (verdict.h), in a sentence: its criterion value over
// seeds and its paired ratio to the leader with the interval, marked where it includes a tie.
std::string versus_leader(const Comparison& c, const Verdict& v, size_t m);

// Every method against the comparison's baseline (c.baseline, which must name one of its methods),
// paired over seeds: for each metric, the per-seed ratios m_k / b_k and differences m_k − b_k,
// their means and 95 % Student-t intervals over the pairs. Metrics: steps_to_target and
// time_to_target (with a target; a seed that missed it contributes its end value, a lower bound,
// and the pair is counted in `censored`), step_time, final_loss, tilde_loss (where both runs
// have it). A pair whose baseline value is 0 gives no ratio. CSV with the header
//   method,metric,pairs,censored,ratio_mean,ratio_low,ratio_high,difference_mean,difference_low,
//   difference_high
// one row per method (the baseline included) and metric, numbers at full precision, blank where
// absent (an interval needs two pairs). Pure: same comparison ⇒ same text.
std::string against_baseline_csv(const Comparison& c);

}  // namespace pacer
