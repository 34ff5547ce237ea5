#!/usr/bin/env bash
# The README's first command: set up, build, and run pacer's main job on the embedded data
# (Fashion-MNIST from Debian's dataset-fashion-mnist), printing the comparison table, the regime
# it ran in, and one line from a second regime (rare, short stragglers) in which GC's s + 1 units
# per job cost more than the stragglers it tolerates while PGC keeps DGD's cost per step.
# Arguments are passed to both comparisons (pacer compare options other than --out, which is
# runs/main and runs/main-rare; the second regime's timing.q and timing.delay_mean are its own).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
build/pacer compare configs/fashion-mnist.toml \
  --methods "${PACER_METHODS:-dgd,is-sgd:k=2,gc-fr,gc-cr,is-gc-fr,is-gc-cr,pgc-fr,pgc-cr,pgc-cr:decoder=exact}" \
  --seeds "${PACER_SEEDS:-3}" --out runs/main "$@"
rare=(--set timing.q=0.05 --set timing.delay_mean=0.3)
build/pacer -q compare configs/fashion-mnist.toml --methods dgd,gc-fr,gc-cr,pgc-fr,pgc-cr \
  --seeds "${PACER_SEEDS:-3}" --out runs/main-rare "$@" "${rare[@]}" >/dev/null

# "<method>;<time/step>;<time to target>;<censored seeds>" per method of a compare.csv (blank
# fields stay fields).
per_method() {
  awk -F, -v OFS=';' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { print $col["method"], $col["step_time_mean"], $col["time_to_target_mean"], \
        $col["time_to_target_censored"] }' "$1"
}
# One line: time per step of each method (× DGD's) and time to target, from a compare.csv.
regime_line() {
  per_method "$1" | awk -F';' '
    $1 == "dgd" { dgd = $2 }
    { name[NR] = $1; step[NR] = $2
      ttt[NR] = $3 == "" ? "-" : ($4 > 0 ? ">= " : "") sprintf("%.0f s", $3) }
    END {
      for (i = 1; i <= NR; i++) {
        if (name[i] !~ /^(dgd|gc-fr|gc-cr|pgc-fr|pgc-cr)$/) continue
        line = line sprintf("%s%s %.3f s/step", sep, name[i], step[i])
        if (name[i] != "dgd" && dgd > 0) line = line sprintf(" (%.2fx DGD)", step[i] / dgd)
        line = line ", target in " ttt[i]
        sep = "; "
      }
      print line
    }'
}
echo
echo "Regime of the table: frequent, slow stragglers (each job: 0.1 s per work unit, and with"
echo "probability q = 0.25 an extra Exp(mean 1 s)): waiting for stragglers dominates, so GC's"
echo "tolerance pays for its 3 units per job."
echo "  $(regime_line runs/main/compare.csv)"
echo "Second regime, rare short stragglers (q = 0.05, Exp(mean 0.3 s)): compute dominates, GC's"
echo "3 units per job cost more per step than DGD's waiting, while PGC (one unit per job) stays cheaper:"
echo "  $(regime_line runs/main-rare/compare.csv)"
echo "  (runs/main-rare/report.md; a whole map of such regimes: pacer sweep, README)"
