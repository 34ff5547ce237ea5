// A paper's claims as data, judged on pacer's own results (`pacer claims CLAIMS OUT`).
//
// A claims file (TOML; configs/claims/pgc.toml and rescaled.toml are the two papers') states each
// claim in the paper's words and how a reproduction judges it: the comparisons it needs (folders
// that `pacer compare` or `pacer sweep` wrote under OUT/<regime>/), the metric, what is compared
// (each method against a baseline, or against itself in another comparison, or its own value),
// and the rule, with its margin stated. evaluate_claims reads those folders' runs.csv (typed:
// comparison.h, read_seed_runs) and summary.json files, decides every case, every check and every
// claim by the rules below, and claims_report writes report.md from the result. Nothing is
// computed outside C++: the reproduction scripts only run the comparisons.
//
// The file:
//   title, setup          the report's title and its set-up section (Markdown, the paper against
//                         what pacer runs); quick_note: a sentence report.md adds in --quick mode.
//   [[regime]]            name (a folder under OUT), title (how it samples, in words).
//   [[claim]]             id, words (the paper's claim, as DESIGN.md section 8 reads it), paper
//                         (the paper's number or statement), regimes (the regimes it is judged
//                         in; default every one), and one or more
//   [[claim.check]]       name (unique within the claim), and:
//       in                comparison folders (relative to OUT/<regime>): listed folders form one
//                         comparison (methods merged by spec: a method in two of them must have
//                         the same seeds and runs, and the comparisons the same target and
//                         budget), or, with separately = true, each its own (the folder labels
//                         its cases); a folder that holds sweep.csv (alone in `in`) stands for
//                         each of its cells (the cell's axis values label its cases).
//       informative       true: the check is reported but not part of the claim's verdict (what
//                         an option of pacer's changes); a claim of such checks only is
//                         "measured (no claim of the paper)".
//       methods           the method specs judged, one case each (per cell of a sweep);
//       compare           "ratio" (default) or "difference", paired per seed: the method over
//                         (minus) `against`, or over (minus) the same method in `against_in`
//                         (folders standing for as many comparisons as `in`, a sweep's cells
//                         matched by their axis values); one of the two is required, and a
//                         method is never held against itself in the same folder. "value": the
//                         method's own estimate over seeds.
//       metric            steps_to_target, time_to_target, work_to_target, step_time,
//                         units_per_job, units_per_worker_step, final_loss, tilde_loss,
//                         grad_norm_sq, test_accuracy (SeedRun's), or "summary:KEY" (the number
//                         that KEY, which must occur once, holds in each seed's summary.json);
//       transform         optional, with compare = "value": "distance" maps each seed's value v to
//                         sqrt(max(0, v − minimum) / curvature) (minimum required, curvature 1 by
//                         default), the distance to the minimiser of a quadratic F = minimum +
//                         curvature·‖x − x*‖²;
//       rule, bound(s)    the verdict of one case from its 95 % interval [low, high]:
//                           within, bounds = [a, b]   holds if a ≤ low and high ≤ b; fails if
//                                                     high < a or low > b (the equivalence margin
//                                                     of "≈", "the same");
//                           above, bound = x          holds if low > x; fails if high < x;
//                           below, bound = x          holds if high < x; fails if low > x (also
//                                                     non-inferiority: "competitive" = a ratio
//                                                     below 1 + margin);
//                           reaches, bounds = [x, y]  "up to" a number x: holds if the effect is
//                                                     significant (high < y, e.g. 1 for a ratio)
//                                                     and the interval reaches x (low ≤ x: x is
//                                                     not excluded); fails if low > x (the effect
//                                                     is smaller than x);
//                           equals, bound = [v, ...]  compare = "value" only: per method (in order)
//                                                     the expected value; holds if every seed is
//                                                     within `tolerance` of it, else fails;
//                           leads, groups = [...]     inline tables {label, candidates, rivals}
//                                                     (no method in both): pacer's verdict rule
//                                                     (verdict.h) on the group's methods; holds
//                                                     if a candidate is best, or the tie at the
//                                                     top holds candidates only; fails if a rival
//                                                     is best or the tie holds rivals only;
//                         otherwise a case is undecided, and always with fewer than two values or
//                         a diverged seed. Censored seeds (that missed the target) make an
//                         estimate a bound: the method's own censored values (a ratio's
//                         numerator, a difference's minuend, a value) make it a lower bound on the
//                         truth, so only outcomes that a larger truth keeps are drawn (holds for
//                         above; fails for below and reaches, and within's upper end); `against`'s
//                         make it an upper bound, symmetrically; both: no outcome.
//       quantifier        how the cases make the check: "every" (default: holds if every case
//                         holds; a failing case fails it, but if the check holds in another
//                         setting, a sweep cell or a folder judged separately, it is
//                         "regime-dependent"; else undecided), "some" (holds if one case holds,
//                         fails if all fail, else undecided), "most" (holds if at least half
//                         hold, fails if more than half fail, else undecided). "some" over k
//                         cases takes the best of k: the file says so where it is used.
//   A claim is "not reproduced" if a (non-informative) check fails, else "regime-dependent" if one
//   is, else "undecided" if one is, else "reproduced".
//   [[table]]             a section that states no claim: title, in (a sweep folder: an error
//                         otherwise), regime: each cell's axis values and its comparison's
//                         verdict (verdict.h).
//
// An error in the file names the file, the entry (by its id and name once read) and the key, and
// says what was expected; ids, check names and regime names must be unique. A missing folder, run
// or number names it.
#pragma once

#include <string>
#include <vector>

#include "pacer/report/statistics.h"

namespace pacer {

enum class Outcome { kHolds, kFails, kUndecided, kRegimeDependent };

// "holds", "fails", "undecided", "regime-dependent".
std::string outcome_name(Outcome o);

struct ClaimCase {
  std::string label;    // "timing.delay_mean = 1 · pgc-fr:s=2"
  std::string setting;  // its comparison's label: a sweep cell or a folder judged separately
  Estimate estimate;    // the ratio, difference or value over seeds
  // "" (exact), "lower bound", "upper bound" or "unknown (both censored)".
  std::string bound;
  std::string detail;  // what else decides the case ("2 seeds diverged", the leader, ...)
  Outcome outcome = Outcome::kUndecided;
};

struct CheckResult {
  std::string name;
  // The rule in words ("the paired ratio's 95 % interval within [0.8, 1.25] in every case").
  std::string rule;
  std::vector<ClaimCase> cases;
  Outcome outcome = Outcome::kUndecided;
  bool informative = false;  // reported, not part of the claim's verdict
};

struct ClaimResult {
  std::string id, words, paper;
  std::string regime;  // the regime's name
  std::vector<CheckResult> checks;
  // "reproduced", "not reproduced", "regime-dependent", "undecided", or, when every check is
  // informative, "measured (no claim of the paper)".
  std::string verdict;
};

struct ClaimsTable {
  std::string title, regime;
  std::vector<std::string> axes;               // the sweep's axis keys
  std::vector<std::vector<std::string>> rows;  // per cell: its axis values, then the verdict
};

struct RegimeInfo {
  std::string name, title;
};

struct ClaimsResult {
  std::string title, setup, quick_note;
  std::vector<RegimeInfo> regimes;
  std::vector<ClaimResult> claims;  // every claim in every regime it is judged in, file order
  std::vector<ClaimsTable> tables;
  int seeds = 0;  // the most seeds of any method read
  // "regime/folder" of every comparison and sweep read (each has its own report.md).
  std::vector<std::string> sources;
};

// Reads the claims file at `path` and judges it on the folders under `out_dir`. An Error names
// the file and entry, or the folder, when either is not what the file comment describes.
ClaimsResult evaluate_claims(const std::string& path, const std::string& out_dir);

// How the runs were made, for the report's first lines.
struct ClaimsRunInfo {
  std::string mode;          // "full" or "quick"
  std::string command;       // the command line that made the runs
  double wall_seconds = -1;  // the runs' wall time (-1: not recorded)
  int cores = 0;
};

// report.md: the title, how the runs were made, the regimes, the set-up, the verdicts (claims by
// regimes), the rules, one section per claim with every case, and the tables. Pure.
std::string claims_report(const ClaimsResult& result, const ClaimsRunInfo& info);

// The verdicts' table (Markdown): a row per claim, a column per regime, each check's outcome.
std::string claims_verdicts_markdown(const ClaimsResult& result);

// The verdicts as CSV, one row per claim, regime, check and case:
//   claim,regime,verdict,check,check_outcome,case,mean,low,high,bound,case_outcome
std::string claims_csv(const ClaimsResult& result);

}  // namespace pacer
