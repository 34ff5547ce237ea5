#!/usr/bin/env bash
# The Rescaled ASGD paper's heterogeneous set-up on the simulator (DESIGN.md section 8): 10
# workers, one Fashion-MNIST class each, a 2-layer ReLU network (hidden 128), harmonic fixed
# compute times and exponential times with the same means. Every method gets the same budget
# (4000 simulated seconds) and the same tuning: optimizer.lr from one grid, chosen per method by
# final F on tuning seeds disjoint from the reported ones; F and F̃ are evaluated every 1000
# simulated seconds and at the end.
#   scripts/paper-async.sh [OUT_DIR [PACER_ARGS...]]   (default runs/paper-async; e.g.
#       scripts/paper-async.sh runs/quick --set data.max_train=12000   for a 5x cheaper look)
# Environment: SEEDS (reported seeds, default 2), TUNE_SEEDS (default 1), GRID (default
# 0.01,0.03,0.1,0.3,1). The two timing models run side by side, one core each: 56 runs, 39 min on
# this 2-core machine with the defaults; SEEDS=4, 72 runs, about 50 min (README).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/paper-async}
[ $# -gt 0 ] && shift
scripts/setup.sh build
mkdir -p "$out"
common=(--methods rescaled-asgd,asgd,malenia,ringleader --budget time=4000
  --tune "optimizer.lr=${GRID:-0.01,0.03,0.1,0.3,1}" --tune-seeds "${TUNE_SEEDS:-1}"
  --seeds "${SEEDS:-2}" --set eval_every=0 --set eval_every_s=1000 --set target.stop=false "$@")
build/pacer compare configs/rescaled-asgd-paper.toml "${common[@]}" --out "$out/fixed" \
  >"$out/fixed.log" 2>&1 &
fixed=$!
build/pacer compare configs/rescaled-asgd-paper-exponential.toml "${common[@]}" \
  --out "$out/exponential" >"$out/exponential.log" 2>&1
wait $fixed
echo "== harmonic fixed times"; cat "$out/fixed/compare.md"
echo "== exponential times (same means)"; cat "$out/exponential/compare.md"
echo "reports: $out/fixed/report.md, $out/exponential/report.md"
