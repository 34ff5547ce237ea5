// report.md of `pacer compare`: the question asked, the table, each method against the best with
// an interval, the tuned values and the figures, as Markdown that any viewer renders with the
// figures beside it.
#pragma once

#include <string>
#include <vector>

#include "pacer/experiment/comparison.h"
#include "pacer/experiment/plot.h"

namespace pacer {

// The text of report.md. `table` is the comparison's Markdown table (with its legend). Pure:
// same inputs ⇒ the same text.
std::string comparison_report(const Comparison& c, const std::string& table,
                              const std::vector<Figure>& figures);

// One method against the best by the comparison's criterion, paired over seeds (every method runs
// on the same seeds): the ratio of the means and the mean per-seed difference with its 95 %
// Student-t interval, or, where seeds missed the target, what the lower bounds allow one to say.
std::string versus_best(const Comparison& c, const MethodResult& m, const MethodResult& best);

}  // namespace pacer
