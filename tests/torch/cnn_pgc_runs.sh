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

# engine.threads (engine/sim/sim_engine.h): the same files, bit for bit, with one thread and with
# two threads computing every job ahead and the evaluations' partitions side by side.
for threads in 1 2; do
  "$pacer" -q run "$work/cnn.toml" --set engine.threads=$threads --set engine.compute_ahead=always \
    --set eval_every=1 --out "$work/threads$threads"
done
for file in log.csv evals.csv jobs.csv summary.json; do
  cmp "$work/threads1/$file" "$work/threads2/$file" ||
    { echo "engine.threads = 1 and 2 wrote different $file" >&2; exit 1; }
done
echo "ok engine.threads 1 and 2: identical files"
if [ -n "$mpiexec" ]; then
  "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" run "$work/cnn.toml" \
    --engine mpi --out "$work/mpi"
  check "$work/mpi/summary.json"
fi
