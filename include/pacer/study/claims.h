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
//   [[claim.check]]       name, and:
//       in                comparison folders (relative to OUT/<regime>): listed folders form one
//                         comparison (methods merged by spec: a method in two of them must have
//                         the same runs), or, with separately = true, each its own (the folder
//                         labels its cases); a folder that holds sweep.csv stands for each of
//                         its cells, judged separately (the cell's axis values label its cases).
//       informative       true: the check is reported but not part of the claim's verdict (what
//                         an option of pacer's changes); a claim of such checks only is
//                         "measured (no claim of the paper)".
//       methods           the method specs judged, one case each (per cell of a sweep);
//       compare           "ratio" or "difference" (paired per seed, method over/minus `against`
//                         in `against_in`) or "value" (the method's own estimate over seeds);
//       against           the other method of the pair (default: the method itself, in
//                         `against_in`, which defaults to `in`);
//       metric            a SeedRun quantity (steps_to_target, time_to_target, work_to_target,
//                         step_time, units_per_job, final_loss, tilde_loss, grad_norm_sq,
//                         test_accuracy) or "summary:KEY" (a number in each seed's summary.json,
//                         found under any nesting);
//       transform         optional, with compare = "value": "distance" maps each seed's value v to
//                         sqrt(max(0, v − minimum) / curvature), the distance to the minimiser of
//                         a quadratic F = minimum + curvature·‖x − x*‖²;
//       rule, bound(s)    the verdict of one case from its 95 % interval [low, high]:
//                           within [a, b]   holds if a ≤ low and high ≤ b; fails if high < a or
//                                           low > b (the equivalence margin of "≈", "the same");
//                           above x         holds if low > x; fails if high < x;
//                           below x         holds if high < x; fails if low > x (also
//                                           non-inferiority: "competitive" = ratio below 1 + m);
//                           reaches x       holds if low ≤ x ("up to" a number: the interval
//                                           reaches it); fails if low > x;
//                           equals [v...]   per method (in order) the expected value; holds if
//                                           every seed is within `tolerance` of it, else fails;
//                           leads           over `groups` (inline tables: label, candidates,
//                                           rivals): the verdict rule of verdict.h on the group's
//                                           methods; holds if a candidate is best, or the tie
//                                           at the top holds candidates only; fails if a rival
//                                           is best or the tie at the top holds rivals only;
//                         otherwise a case is undecided (and always with fewer than two pairs, or
//                         a diverged seed). Censored seeds (that missed the target) make a value
//                         a bound: a ratio whose numerator only is censored is a lower bound on
//                         the true one, so only the outcomes that a larger true value keeps are
//                         allowed (holds for above; fails for below, reaches and within's upper
//                         end), and symmetrically for the denominator; both: undecided.
//       quantifier        how the cases make the check: "every" (default: holds if every case
//                         holds, fails if every case fails, regime-dependent if some hold and
//                         some fail, else undecided), "some" (holds if one holds, fails if all
//                         fail), "most" (holds if at least half hold, fails if more than half
//                         fail).
//   A claim is "not reproduced" if a (non-informative) check fails, else "regime-dependent" if one
//   is, else "undecided" if one is, else "reproduced".
//   [[table]]             a section that states no claim: title, in (a sweep folder), regime: each
//                         cell's axis values and its comparison's verdict (verdict.h).
//
// An error in the file names the file, the entry and the key, and says what was expected; a
// missing folder, run or number names it.
#pragma once

#include <string>
#include <vector>

#include "pacer/report/statistics.h"

namespace pacer {

enum class Outcome { kHolds, kFails, kUndecided, kRegimeDependent };

// "holds", "fails", "undecided", "regime-dependent".
std::string outcome_name(Outcome o);

struct ClaimCase {
  std::string label;   // "delay_mean=1 · pgc-fr:s=2"
  Estimate estimate;   // the ratio, difference or value over seeds
  std::string bound;   // "", "lower bound" or "upper bound" (censored seeds) or "unknown"
  std::string detail;  // what else decides the case ("2 seeds diverged", the leader, ...)
  Outcome outcome = Outcome::kUndecided;
};

struct CheckResult {
  std::string name;
  std::string
      rule;  // the rule in words: "the ratio's 95 % interval within [0.8, 1.25], every case"
  std::vector<ClaimCase> cases;
  Outcome outcome = Outcome::kUndecided;
  bool informative = false;  // reported, not part of the claim's verdict
};

struct ClaimResult {
  std::string id, words, paper;
  std::string regime;  // the regime's name
  std::vector<CheckResult> checks;
  // "reproduced", "not reproduced", "regime-dependent" or "undecided".
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
  int seeds = 0;  // the seeds of the first comparison read
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
