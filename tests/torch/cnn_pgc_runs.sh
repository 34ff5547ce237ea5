#!/usr/bin/env bash
# A few PGC-CR steps with the small libtorch CNN, on the simulator and (when an mpiexec is given)
# on the MPI engine, on a synthetic 28x28 image set the test writes itself.
#   cnn_pgc_runs.sh PACER WORKDIR [MPIEXEC]
set -euo pipefail
pacer=$1 work=$2 mpiexec=${3:-}
rm -rf "$work" && mkdir -p "$work"
cat > "$work/cnn.toml" <<'TOML'
workers = 4
max_steps = 3
eval_every = 0
[data]
source = "synthetic"
generator = "blobs"
samples = 160
features = 784
classes = 10
test_samples = 40
[model]
name = "torch_cnn"
hidden = 32
[training]
batch = 8
[optimizer]
lr = 0.05
[method]
name = "pgc-cr"
s = 1
[timing]
model = "random_stragglers"
tau = 0.01
q = 0.25
delay_mean = 0.05
TOML

check() {  # check SUMMARY: a finished 3-step PGC-CR run of the CNN with a test evaluation
  local summary=$1
  for want in '"status": "max_steps"' '"steps": 3,' '"model": "torch_cnn"' '"method": "pgc-cr"' \
      '"test_accuracy": '; do
    grep -qF "$want" "$summary" || { echo "$summary lacks $want" >&2; exit 1; }
  done
  echo "ok $summary"
}

"$pacer" run "$work/cnn.toml" --out "$work/sim"
check "$work/sim/summary.json"
if [ -n "$mpiexec" ]; then
  "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" run "$work/cnn.toml" \
    --engine mpi --out "$work/mpi"
  check "$work/mpi/summary.json"
fi
