// The one rule by which pacer calls a method best (DESIGN.md section 9): compare's report, sweep's
// winner of a cell and advise's recommendation all come from decide().
//
// The criterion is the comparison's: with a target, the time to the first target (a seed that
// missed it contributes its end time, a lower bound); without one, the final F at the common
// budget (a diverged seed has none).
//   1. Contenders: the methods that reached the target on every seed (without a target: that
//      ended every seed with a final F and did not diverge). None: the verdict is "no method
//      reached the target" (or "no method finished every seed"), with the budget that would be
//      needed where the runs say it.
//   2. The leader: the contender with the smallest geometric mean of the criterion over seeds.
//   3. Against every other method, paired over seeds: the geometric mean of the per-seed ratios
//      (other / leader) and its 95 % Student-t interval on the log scale (statistics.h). A
//      method that diverged on a seed the leader did not is behind it there by any measure, and
//      is not a tie. Censored values are lower bounds on the other method's times, so a ratio
//      interval computed from them can only understate the leader's advantage: when it excludes
//      1 the leader is ahead; when it does not, the tie stands.
//   4. The leader is "best" only when every other method's interval lies above 1. Otherwise the
//      verdict is "undecided between" the leader and the methods whose interval includes 1 (a
//      single seed gives no interval: undecided), and says what would decide it: for a tie
//      between methods that reached the target on every seed, the seeds at which the observed
//      spread would exclude 1 (statistics.h: seeds_to_exclude_tie); for a method with censored
//      seeds, a larger budget.
// Criteria are the same for every method.
#pragma once

#include <string>
#include <vector>

#include "pacer/report/comparison.h"

namespace pacer {

struct Verdict {
  enum class Outcome {
    kBest,        // `leader` is best
    kUndecided,   // `leader` leads, `tied` cannot be told from it
    kNoneReached  // no contender (see the file comment)
  };
  Outcome outcome = Outcome::kNoneReached;
  std::string criterion;  // "time to target" or "final F"
  int leader = -1;        // index into the comparison's methods; -1 with kNoneReached
  std::vector<int> tied;  // kUndecided: the methods that tie with the leader, best first
  // Per method: the paired ratio (method / leader) over seeds; empty for the leader and where no
  // pair has both values.
  std::vector<Estimate> versus_leader;
  // Per method: whether it is a tie with the leader (kUndecided lists them in `tied`).
  std::vector<bool> is_tie;
  // Per method: the seeds that would exclude the tie at the observed spread (0: none needed; -1:
  // no number of seeds would, or it has censored seeds: a budget would).
  std::vector<int> seeds_needed;
  // What would decide it, in a sentence ("" when decided).
  std::string what_would_decide;
  // kUndecided: whether every method of the tie (the leader and `tied`) is ahead of every other
  // method by the same rule (paired interval above 1): the tie is then at the top, and any of
  // its methods beats the rest.
  bool tie_ahead_of_rest = false;

  bool decided() const { return outcome == Outcome::kBest; }
};

Verdict decide(const Comparison& c);

// The verdict in one line for the terminal and reports:
//   "best: pgc-fr (time to target; 5/5 seeds reached it; the runner-up pgc-cr takes 1.35×
//    [1.28, 1.42] its time, paired over 5 seeds)"
//   "undecided between dgd and pgc-cr (time to target): pgc-cr/dgd = 1.01× [0.97, 1.05] ...; about
//    40 seeds would decide it at this spread"
//   "no method reached the target on every seed within 1500 steps; ..."
std::string describe_verdict(const Comparison& c, const Verdict& v);

// A method's ratio to the leader as a table cell: "1.35× [1.28, 1.42]", with " (tie)" where the
// interval includes 1; "—" for the leader and where there is no ratio.
std::string format_versus_leader(const Verdict& v, size_t method);

// The seeds' values of the criterion for method m: time to target (a seed that missed it: its end
// time), or final F (NaN where it diverged or has none).
std::vector<double> criterion_values(const Comparison& c, const MethodResult& m);

}  // namespace pacer
