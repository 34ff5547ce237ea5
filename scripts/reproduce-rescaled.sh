#!/usr/bin/env bash
# Reproduces the Rescaled ASGD paper's claims (DESIGN.md section 8) on this machine and writes
# OUT/report.md: each claim with the paper's statement, pacer's numbers with 95 % intervals over
# seeds, and a verdict (reproduced / not reproduced / regime-dependent).
#
#   scripts/reproduce-rescaled.sh [--quick] [--seeds K] [--full-data] [--out DIR]
#   scripts/reproduce-rescaled.sh --report-only [--quick] [--out DIR]   (rewrite report.md)
#
# Two regimes, each in its own folder under OUT:
#   pacer/       minibatches of 32 rows from each worker's own stream (training.sampling =
#                "independent", asynchronous methods' only choice), a 12000-image training subset;
#   noise-free/  every gradient on all of its worker's rows (training.batch = 0) of a 320-image
#                training set, about 32 per class: the same rows at every step, as in the PGC
#                authors' regime (the Rescaled authors' code was not available to read), and the
#                deterministic setting in which the paper's fixed points are exact.
# Full mode (default; OUT = runs/reproduce-rescaled):
#   1. The paper's experiment (configs/rescaled-asgd-paper.toml and its -exponential twin), in
#      both regimes: 10 workers, worker i holding the Fashion-MNIST images of class i, a 2-layer
#      ReLU network (hidden 128), cross-entropy; fixed harmonic compute times τ = 1,1,2,2,...,16,16
#      s and exponential times of the same means. Every asynchronous method (ASGD, delay-adaptive
#      ASGD, Ringmaster, Rennala, Malenia, Ringleader, Rescaled ASGD) gets the same 1500 s of
#      simulated time, and its stepsize is tuned on the same grid {0.01, 0.03, 0.1, 0.3, 1} by
#      final F on a tuning seed disjoint from the 5 reported ones. F and F̃ are evaluated every
#      250 simulated seconds on the training set of the regime (--full-data: pacer's regime on all
#      60000 images; the evaluation of F and F̃ on 60000 images would dominate the run time).
#   2. The closed-form problem of configs/quadratic-centers.toml (4 workers, harmonic times, known
#      argmin F and argmin F̃, exact gradients: one regime), fixed and exponential times, the same
#      methods, grid and seeds: the distance of the final iterate to each minimiser follows from F
#      and F̃ exactly there.
# The verdicts: `pacer claims configs/claims/rescaled.toml OUT` (the claims file states each
# claim, the comparison it needs and the rule, margins included) writes OUT/report.md; the script
# calls it at the end.
# --quick (under 3 minutes on 2 cores): only the methods the claims name (Rescaled ASGD, ASGD,
# Malenia, Ringleader), part 1 with 300 s of simulated time, the grid {0.03, 0.3}, 2 seeds and a
# 6000-image subset in pacer's regime; part 2 with the same grid and seeds. Its verdicts are
# indicative only (the t quantile at one degree of freedom is 12.7).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/reproduce-args.sh
parse_reproduce_args "scripts/$(basename "$0")" 0 "$@"
if [ "$quick" = 1 ]; then
  out=${out:-runs/reproduce-rescaled-quick}
  seeds=${seeds:-2} horizon=300 every=100 grid=0.03,0.3 subset=6000
else
  out=${out:-runs/reproduce-rescaled}
  seeds=${seeds:-5} horizon=1500 every=250 grid=0.01,0.03,0.1,0.3,1 subset=12000
fi
pacer_data=(--set data.max_train=$subset)
[ "$full_data" = 1 ] && pacer_data=()
noise_free_data=(--set data.max_train=320 --set training.batch=0)
pacer=build/pacer
methods=rescaled-asgd,asgd,delay-adaptive-asgd,ringmaster,rennala,malenia,ringleader
# --quick runs only the methods the claims name.
[ "$quick" = 1 ] && methods=rescaled-asgd,asgd,malenia,ringleader

# Comparison NAME (pacer compare ARGS... --out OUT/NAME), its output in OUT/NAME.log. Called with
# "&" only: the background subshell becomes pacer (exec), so the EXIT trap's kill reaches it.
compare() {
  local name=$1; shift
  exec "$pacer" -q compare "$@" --out "$out/$name" >"$out/$name.log" 2>&1
}
# Waits for background process $1, comparison $2; prints the end of its log if it failed.
check() {
  wait "$1" || { echo "reproduce-rescaled: $2 failed:" >&2; tail -5 "$out/$2.log" >&2; exit 1; }
}

# Part 1 in regime $1 (the folder), with the data options after it.
part1() {
  local regime=$1; shift
  echo "reproduce-rescaled: part 1, $regime regime (MLP, $seeds seeds, ${horizon} s) in $out/$regime/mlp-{fixed,exponential}" >&2
  mkdir -p "$out/$regime"
  local mlp=(--budget "time=$horizon" --set eval_every=0 --set "eval_every_s=$every" "$@")
  compare "$regime/mlp-fixed" configs/rescaled-asgd-paper.toml "${common[@]}" "${mlp[@]}" &
  local fixed=$!
  compare "$regime/mlp-exponential" configs/rescaled-asgd-paper-exponential.toml "${common[@]}" \
    "${mlp[@]}" &
  local exponential=$!
  check $fixed "$regime/mlp-fixed"
  check $exponential "$regime/mlp-exponential"
}

run_all() {
  # A failure or Ctrl-C stops the comparison running in the background too.
  trap 'jobs -p | xargs -r kill 2>/dev/null' EXIT
  scripts/setup.sh build
  mkdir -p "$out"
  local start=$SECONDS
  common=(--methods "$methods" --baseline rescaled-asgd --seeds "$seeds"
    --tune "optimizer.lr=$grid" --tune-seeds 1)
  part1 pacer "${pacer_data[@]}"
  part1 noise-free "${noise_free_data[@]}"
  echo "reproduce-rescaled: part 2 (quadratic, known minimisers) in $out/pacer/quadratic-{fixed,exponential}" >&2
  local quad=(--budget time=1500 --set eval_every=0)
  compare pacer/quadratic-fixed configs/quadratic-centers.toml "${common[@]}" "${quad[@]}" &
  local fixed=$!
  compare pacer/quadratic-exponential configs/quadratic-centers.toml "${common[@]}" "${quad[@]}" \
    --set timing.model=exponential &
  local exponential=$!
  check $fixed pacer/quadratic-fixed
  check $exponential pacer/quadratic-exponential
  echo "$((SECONDS - start))" >"$out/wall_seconds"
}

[ "$report_only" = 1 ] || run_all
mode=full
[ "$quick" = 1 ] && mode=quick
"$pacer" claims configs/claims/rescaled.toml "$out" --mode "$mode" --command "$command_line"
