#!/usr/bin/env bash
# End-to-end checks of the MPI engine against the simulator (DESIGN.md section 5), run by CTest
# (tests/mpi/CMakeLists.txt) as
#   mpi_checks.sh CHECK PACER MPIEXEC WORK_DIR
# Every check runs `pacer` on 4 workers (mpirun -np 5) and exits non-zero with a message saying
# what differed. The timing-based checks use inject = pace with fixed, well-separated worker
# periods, so the order of events on real processes is that of the simulator with margins of
# several milliseconds per job; they tolerate a loaded 2-core machine, not one that stalls a
# process for tens of milliseconds.
set -uo pipefail

check=$1
pacer=$2
mpiexec=$3
work=$4/$check
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

mpirun() {
  "$mpiexec" --allow-run-as-root --oversubscribe "$@"
}

die() {
  echo "FAIL ($check): $*" >&2
  exit 1
}

# A small least-squares problem with full-batch gradients: every gradient is deterministic.
write_problem() {  # $1 = file, $2 = seed, $3 = max_steps, $4 = eval_every (default 0)
  cat >"$1" <<EOF
seed = $2
workers = 4
max_steps = $3
eval_every = ${4:-0}
save_model = true

[data]
source = "synthetic"
generator = "least_squares"
samples = 400
features = 20

[model]
name = "least_squares"

[training]
batch = 0
EOF
}

# Columns of log.csv (1-based, comma-separated) as one string.
columns() {  # $1 = log.csv, $2 = cut field list
  cut -d, -f"$2" "$1"
}

# Exactly one "pacer: error:" line in $1 containing $2.
one_error() {
  local n
  n=$(grep -c "pacer: error:" "$1")
  [ "$n" = 1 ] || { cat "$1" >&2; die "expected exactly one 'pacer: error:' line, got $n"; }
  grep -q -- "$2" "$1" || { cat "$1" >&2; die "the error does not mention '$2'"; }
}

case "$check" in
  dgd_matches_sim)
    # DGD, full-batch gradients: the parameter trajectory does not depend on timing, so the MPI
    # run must equal the simulated one bit for bit (final model, loss and gradient-norm columns).
    write_problem run.toml 3 40 10
    cat >>run.toml <<EOF
[optimizer]
lr = 0.1
[method]
name = "dgd"
[timing]
model = "exponential"
tau = 0.01
EOF
    "$pacer" run run.toml --out sim >sim.txt 2>&1 || { cat sim.txt; die "simulator run failed"; }
    mpirun -np 5 "$pacer" run run.toml --engine mpi --out mpi >mpi.txt 2>&1 ||
      { cat mpi.txt; die "MPI run failed"; }
    cmp -s sim/model.bin mpi/model.bin || die "final models differ"
    # Every column but time: step, work units, loss, gradient norm, ..., evaluations.
    [ "$(columns sim/log.csv 2-)" = "$(columns mpi/log.csv 2-)" ] ||
      die "log.csv columns differ"
    ;;

  gc_fr_matches_sim)
    # GC-FR (s = 1) paced so that each group's first message always comes from the same worker
    # (workers 0 and 2 take 0.06 s per job, 1 and 3 take 0.57 s and are late at step 10 with a
    # 30 ms margin): the decoded gradients, hence the trajectory, equal the simulator's bit for bit.
    write_problem run.toml 7 15 5
    cat >>run.toml <<EOF
[optimizer]
lr = 0.1
[method]
name = "gc-fr"
s = 1
[timing]
model = "fixed"
tau = [0.03, 0.285, 0.03, 0.285]
EOF
    "$pacer" run run.toml --out sim >sim.txt 2>&1 || { cat sim.txt; die "simulator run failed"; }
    mpirun -np 5 "$pacer" run run.toml --engine mpi --set engine.inject=pace \
      --set engine.poll_sleep_us=50 --out mpi >mpi.txt 2>&1 || { cat mpi.txt; die "MPI run failed"; }
    cmp -s sim/model.bin mpi/model.bin || die "final models differ"
    # Every column but time and work units (which count late replies as they arrive).
    [ "$(columns sim/log.csv 2,4-)" = "$(columns mpi/log.csv 2,4-)" ] ||
      die "log.csv columns differ"
    ;;

  async_arrivals_match_sim)
    # Vanilla ASGD with fixed periods 0.15, 0.29, 0.62, 0.63 s (no two completions of different
    # workers within 4.6 ms per elapsed job of each other over the 30 updates): the sequence of
    # (worker, delay) arrivals on MPI equals the simulator's, and with it the whole trajectory.
    write_problem run.toml 5 30
    cat >>run.toml <<EOF
[optimizer]
lr = 0.05
[method]
name = "asgd"
[timing]
model = "fixed"
tau = [0.15, 0.29, 0.62, 0.63]
EOF
    "$pacer" run run.toml --out sim >sim.txt 2>&1 || { cat sim.txt; die "simulator run failed"; }
    mpirun -np 5 "$pacer" run run.toml --engine mpi --set engine.inject=pace \
      --set engine.poll_sleep_us=50 --out mpi >mpi.txt 2>&1 || { cat mpi.txt; die "MPI run failed"; }
    # step, staleness (= delay), worker
    if [ "$(columns sim/log.csv 2,7,9)" != "$(columns mpi/log.csv 2,7,9)" ]; then
      diff <(columns sim/log.csv 2,7,9) <(columns mpi/log.csv 2,7,9) | head -20 >&2
      die "the (worker, delay) arrival sequences differ"
    fi
    cmp -s sim/model.bin mpi/model.bin || die "final models differ"
    ;;

  rank_mismatch)
    # 4 workers need 5 ranks: with 4, every rank exits non-zero and rank 0 says so once.
    write_problem run.toml 1 5
    mpirun -np 4 "$pacer" run run.toml --engine mpi --out mpi >out.txt 2>&1 &&
      die "a job of the wrong size succeeded"
    one_error out.txt "needs workers + 1 = 5 MPI processes"
    ;;

  worker_setup_error)
    # The data file exists only in rank 0's working directory (as when a cluster's other hosts
    # lack it): the worker ranks fail to build the run, rank 0 reports it once, all exit non-zero.
    mkdir -p master workers
    for i in $(seq 1 40); do echo "$((i % 7)).5,$((i % 5)).25,$i.5"; done >master/train.csv
    for d in master workers; do
      cat >"$d/run.toml" <<EOF
workers = 4
max_steps = 5
[data]
source = "csv"
train = "train.csv"
[model]
name = "least_squares"
EOF
    done
    mpirun -np 1 --wdir "$work/master" "$pacer" run run.toml --engine mpi --out "$work/out" : \
      -np 4 --wdir "$work/workers" "$pacer" run run.toml --engine mpi --out "$work/out" \
      >out.txt 2>&1 && die "a run whose workers cannot read the data succeeded"
    one_error out.txt "could not set up the run: train.csv"
    ;;

  cancel_refused)
    write_problem run.toml 1 5
    cat >>run.toml <<EOF
[method]
name = "is-sgd"
straggler_policy = "cancel"
EOF
    mpirun -np 5 "$pacer" run run.toml --engine mpi --out mpi >out.txt 2>&1 &&
      die "straggler_policy = cancel ran on MPI"
    one_error out.txt "straggler_policy"
    ;;

  interrupt)
    # SIGINT to mpirun: rank 0 writes log.csv and summary.json with status "interrupted".
    write_problem run.toml 1 100000
    cat >>run.toml <<EOF
[method]
name = "dgd"
[timing]
model = "fixed"
tau = 0.05
EOF
    # mpiexec itself in the background (not through the mpirun function: a background subshell
    # would ignore SIGINT).
    "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" run run.toml --engine mpi \
      --set engine.inject=pace --out mpi >out.txt 2>&1 &
    job=$!
    sleep 4  # start-up plus a few steps of 0.05 s
    kill -INT "$job"
    wait "$job" && die "an interrupted job exited 0"
    grep -q '"status": "interrupted"' mpi/summary.json 2>/dev/null ||
      { cat out.txt >&2; die "no summary.json with status interrupted"; }
    [ "$(grep -c . mpi/log.csv)" -gt 2 ] || die "log.csv holds no steps"
    ;;

  *)
    die "unknown check"
    ;;
esac
echo "ok ($check)"
