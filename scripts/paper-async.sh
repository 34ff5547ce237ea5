#!/usr/bin/env bash
# Reproduces the Rescaled ASGD paper's heterogeneous set-up on the simulator (DESIGN.md section 8):
# 10 workers, one Fashion-MNIST class each, a 2-layer ReLU network (hidden 128), harmonic fixed
# compute times and exponential times with the same means, every method stopped at the same
# simulated time (4000 s). Each method gets a small stepsize sweep, since their stepsize scales
# differ (Rescaled ASGD's γ_i lie between γ/60 and γ/4 here).
#   scripts/paper-async.sh [OUT_DIR]        (default runs/paper-async; about 10 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/paper-async}
scripts/setup.sh build
sweep=""
for lr in 0.03 0.1 0.3 1.0; do sweep+="rescaled-asgd:optimizer.lr=$lr,"; done
for lr in 0.003 0.01 0.03 0.1; do sweep+="asgd:optimizer.lr=$lr,"; done
sweep+="malenia:optimizer.lr=0.2,ringleader:optimizer.lr=0.05"
common=(--set eval_every=5000 --set target.stop=false)
build/pacer compare configs/rescaled-asgd-paper.toml --methods "$sweep" "${common[@]}" \
  --out "$out/fixed" > "$out.fixed.log" 2>&1 &
fixed=$!
build/pacer compare configs/rescaled-asgd-paper-exponential.toml "${common[@]}" \
  --methods "rescaled-asgd:optimizer.lr=0.3,asgd:optimizer.lr=0.01,malenia:optimizer.lr=0.2,ringleader:optimizer.lr=0.05" \
  --out "$out/exponential" > "$out.exponential.log" 2>&1
wait $fixed
echo "== harmonic fixed times"; cat "$out/fixed/compare.md"
echo "== exponential times (same means)"; cat "$out/exponential/compare.md"
