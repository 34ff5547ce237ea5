#!/usr/bin/env bash
# Reproduces the Pipelined Gradient Coding paper's claims (DESIGN.md section 8) on this machine and
# writes OUT/report.md: each claim with the paper's number, pacer's number with its 95 % interval
# over seeds, and a verdict (reproduced / not reproduced / regime-dependent, with the regime).
#
#   scripts/reproduce-pgc.sh [--quick] [--seeds K] [--full-data] [--jobs N] [--out DIR]
#   scripts/reproduce-pgc.sh --report-only [--quick] [--out DIR]   (rewrite report.md from OUT)
#
# Two regimes, each in its own folder under OUT:
#   pacer/    pacer's: minibatch noise, every copy of a partition drawing the same rows at a step
#             (training.sampling = "shared", the default), a fixed 6000-image training subset
#             (--full-data: all 60000);
#   authors/  the PGC authors' code's (DESIGN.md section 8): training.sampling = "fixed", batch 21
#             per partition of a 252-image training set, so every worker uses the same 21 images
#             of its partition at every step (no minibatch noise); every method starts from the
#             same model per seed in both regimes (the model's initial point depends on the seed
#             only).
# Full mode (default; OUT = runs/reproduce-pgc):
#   1. Steps and time to the target (configs/pgc-paper.toml), in both regimes: the CNN on
#      Fashion-MNIST, n = 12, batch 21 per partition, lr 0.01, target training loss 0.5 held 3
#      steps, 2 stragglers per step with Exp(1 s) delays, 1 s per work unit; DGD, IS-SGD (k = 2),
#      GC-FR, GC-CR, IS-GC (CR placement) at s = 2, and PGC-FR and PGC-CR at s = 1, 2, 3; every
#      method the same budget of 2000 steps (DGD needs about 1270), K = 5 seeds. Besides, at
#      s = 2: PGC-FR staggered (method.stagger = true) in pacer's regime, and PGC-FR and PGC-CR
#      with the authors' late workers (method.straggler_policy = "queue") in the authors' regime.
#      Two comparisons run side by side per regime, each with DGD (the same runs: a check of
#      determinism).
#   2. Work and time per step of every method at s = 1, 2, 3 and delay means 1 s and 2 s (pacer's
#      regime: neither depends on the rows drawn), on 200 steps of softmax regression
#      (configs/pgc-paper-softmax.toml) with the same timing and seeds.
#   3. A regime map (pacer sweep, softmax, pacer's regime): stragglers per step k in {1, 2, 4} x
#      delay mean in {0.25, 1, 4} s (per unit of compute: 1 s), DGD, GC-FR, PGC-FR, PGC-CR at
#      s = 2, by time to target, 5 seeds.
# --quick (under 3 minutes on 2 cores; what CI may run): softmax in place of the CNN in part 1
# (target 0.6, budget 600 steps), part 2 at delay 1 s only, a 2 x 2 map with 2 seeds. Its verdicts
# are about softmax, not the paper's network: report.md says so.
# The verdicts: `pacer claims configs/claims/pgc.toml OUT` (the claims file states each claim,
# the comparison it needs and the rule) writes OUT/report.md; the script calls it at the end.
# On a larger machine the same script scales unchanged: --seeds 10 --full-data --jobs 8 (--jobs:
# the sweeps' cells at once; part 1 runs its two comparisons side by side, one after the other
# with --jobs 1).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/reproduce-args.sh
parse_reproduce_args "scripts/$(basename "$0")" 1 "$@"
seeds=${seeds:-5}
if [ "$quick" = 1 ]; then
  out=${out:-runs/reproduce-pgc-quick}
  main_config=configs/pgc-paper-softmax.toml budget=steps=600
  step_delays=1 map_k=1,4 map_delay=0.25,4 map_seeds=2
else
  out=${out:-runs/reproduce-pgc}
  main_config=configs/pgc-paper.toml budget=steps=2000
  step_delays=1,2 map_k=1,2,4 map_delay=0.25,1,4 map_seeds=$seeds
fi
pacer_data=(--set data.max_train=6000)
[ "$full_data" = 1 ] && pacer_data=()
authors_data=(--set training.sampling=fixed --set data.max_train=252)
pacer=build/pacer
# The method specs of part 1, in two groups of about equal cost (both start with the baseline),
# and each regime's extra specs (the effect of an option of PGC-FR's or the late workers' policy).
group_a=dgd,gc-fr:s=2,gc-cr:s=2,pgc-fr:s=1,pgc-cr:s=1
group_b=dgd,is-sgd:k=2,is-gc-cr:s=2,pgc-fr:s=2,pgc-cr:s=2,pgc-fr:s=3,pgc-cr:s=3
pacer_extra=pgc-fr:s=2:stagger=true
authors_extra=pgc-fr:s=2:straggler_policy=queue,pgc-cr:s=2:straggler_policy=queue
step_methods=dgd
for s in 1 2 3; do
  step_methods+=,is-sgd:k=$s,gc-fr:s=$s,gc-cr:s=$s,is-gc-cr:s=$s,pgc-fr:s=$s,pgc-cr:s=$s
done
map_methods=dgd,gc-fr:s=2,pgc-fr:s=2,pgc-cr:s=2

# Comparison NAME of part 1 (pacer compare ARGS... --out OUT/NAME), its output in OUT/NAME.log.
# Called with "&": the background subshell becomes pacer (exec), so the EXIT trap reaches it.
compare() {
  local name=$1; shift
  exec "$pacer" -q compare "$main_config" "$@" --out "$out/$name" >"$out/$name.log" 2>&1
}
# Waits for background process $1, step $2; prints the end of its log if it failed.
check() { wait "$1" || { echo "reproduce-pgc: $2 failed:" >&2; tail -5 "$out/$2.log" >&2; exit 1; }; }
# Sweep NAME (pacer sweep ARGS... --out OUT/NAME), its output in OUT/NAME.log.
sweep() {
  local name=$1; shift
  "$pacer" -q sweep configs/pgc-paper-softmax.toml "$@" "${pacer_data[@]}" --jobs "$jobs" \
    --out "$out/$name" >"$out/$name.log" 2>&1 || { tail -5 "$out/$name.log" >&2; exit 1; }
}

# Part 1 in regime $1 (the folder), with the extra specs $2 and the data options after them.
part1() {
  local regime=$1 extra=$2; shift 2
  echo "reproduce-pgc: part 1, $regime regime (steps and time to target, $seeds seeds) in $out/$regime/target-{a,b}" >&2
  mkdir -p "$out/$regime"
  local common=(--budget "$budget" --seeds "$seeds" --baseline dgd "$@")
  compare "$regime/target-a" --methods "$group_a" "${common[@]}" &
  local a=$!
  [ "$jobs" -ge 2 ] || check $a "$regime/target-a"
  compare "$regime/target-b" --methods "$group_b,$extra" "${common[@]}" &
  check $! "$regime/target-b"
  [ "$jobs" -lt 2 ] || check $a "$regime/target-a"
}

run_all() {
  trap 'jobs -p | xargs -r kill 2>/dev/null' EXIT  # a failure or Ctrl-C stops every step
  scripts/setup.sh build
  mkdir -p "$out"
  local start=$SECONDS
  part1 pacer "$pacer_extra" "${pacer_data[@]}"
  part1 authors "$authors_extra" "${authors_data[@]}"
  echo "reproduce-pgc: part 2 (work and time per step) in $out/pacer/step-time" >&2
  sweep pacer/step-time --methods "$step_methods" --grid timing.delay_mean=$step_delays \
    --seeds "$seeds" --budget steps=200 --baseline dgd --set target.stop=false
  echo "reproduce-pgc: part 3 (regime map) in $out/pacer/map" >&2
  sweep pacer/map --methods "$map_methods" --grid timing.k=$map_k \
    --grid timing.delay_mean=$map_delay --seeds "$map_seeds" --baseline dgd
  echo "$((SECONDS - start))" >"$out/wall_seconds"
}

[ "$report_only" = 1 ] || run_all
mode=full
[ "$quick" = 1 ] && mode=quick
"$pacer" claims configs/claims/pgc.toml "$out" --mode "$mode" --command "$command_line"
