#!/usr/bin/env bash
# pacer under a one-node Slurm (#28, docs/mpi.md "Slurm"), run by CTest (tests/mpi/CMakeLists.txt)
# as
#   slurm_checks.sh CHECK PACER MPIEXEC WORK_DIR
# Each check starts its own Slurm (slurm_setup.sh: slurmctld, slurmd and, if needed, munged, with
# a configuration in the check's folder) and stops it at the end. Exits 77 (skipped, with a
# message) where Slurm cannot be started: not root, or Debian's slurmctld, slurmd, slurm-client
# and munge not installed (scripts/test.sh installs them where it can).
# The recipe docs/mpi.md gives, mpirun inside the allocation:
#   salloc -n 5 -O mpirun --mca orte_allowed_exit_without_sync 1 pacer mpi-rank run ...
set -uo pipefail

check=$1
pacer=$2
mpiexec=$3
work=$4/slurm_$check
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
work=$(pwd -P)  # as /proc/PID/cwd shows it

die() {
  echo "FAIL (slurm.$check): $*" >&2
  exit 1
}

# shellcheck source=slurm_setup.sh
source "$here/slurm_setup.sh"
# shellcheck source=problems.sh
source "$here/problems.sh"
job=""
# On any exit: the job launched here and every process it left, then Slurm.
cleanup() {
  [ -n "$job" ] && kill -KILL "$job" 2>/dev/null
  local p
  for p in $(pgrep -x pacer) $(pgrep -x mpirun) $(pgrep -x orted); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$work" ] && kill -KILL "$p" 2>/dev/null
  done
  slurm_down
}
trap cleanup EXIT
slurm_up "$work/slurm"
case $? in
  0) ;;
  77) exit 77 ;;
  *) die "could not start a one-node Slurm" ;;
esac

# run.toml: DGD (method.on_lost = "drop": it goes on without a lost worker) on write_paced_run's
# problem, whose full-batch gradients make every step deterministic (DGD combines them in worker
# order); $1 steps.
write_run() {
  write_paced_run $'name = "dgd"\non_lost = "drop"' "$1"
}

# The recipe, in the background, rank 0's debug log (-v) in $1.txt, the run in $1/; sets job.
start_recipe() {
  salloc -n 5 -O "$mpiexec" --allow-run-as-root --mca orte_allowed_exit_without_sync 1 \
    "$pacer" mpi-rank -v run run.toml --engine mpi --out "$1" >"$1.txt" 2>&1 &
  job=$!
}

# Waits up to $2 s for background job $1 and sets rc; fails if it is still running then.
wait_job() {
  for _ in $(seq 1 $(($2 * 10))); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$1" 2>/dev/null && { cat ./*.txt >&2; die "the job was still running after $2 s"; }
  wait "$1"
  rc=$?
}

case "$check" in
  recipe_matches_mpirun)
    # The same 30 DGD steps under plain mpirun, under the recipe, and under srun's direct launch
    # (srun -n 5 -O --mpi=pmix, which runs but cannot survive a dead worker): the same final model,
    # byte for byte; and under srun the warning names srun and the recipe.
    write_run 30
    "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" run run.toml --engine mpi \
      --out plain >plain.txt 2>&1 || { cat plain.txt >&2; die "plain mpirun failed"; }
    start_recipe recipe
    wait_job "$job" 90
    [ "$rc" = 0 ] || { cat recipe.txt >&2; die "the recipe's exit status $rc, expected 0"; }
    srun -n 5 -O --mpi=pmix "$pacer" run run.toml --engine mpi --out direct >direct.txt 2>&1 ||
      { cat direct.txt >&2; die "srun --mpi=pmix failed"; }
    for run in recipe direct; do
      grep -q '"status": "max_steps"' "$run/summary.json" || die "$run did not reach max_steps"
      cmp -s plain/model.bin "$run/model.bin" || die "$run's final model differs from mpirun's"
    done
    grep -q "pacer: warning: .*launched by srun.*salloc -n <workers + 1> mpirun" direct.txt ||
      { cat direct.txt >&2; die "no warning naming srun and the recipe"; }
    ! grep -q "pacer: warning: MPI engine: this job was launched" recipe.txt ||
      { cat recipe.txt >&2; die "the recipe was warned that it does not survive a dead worker"; }
    echo "the same final model under mpirun, salloc + mpirun + pacer mpi-rank, and srun"
    ;;

  worker_killed)
    # kill -9 of worker 2 (rank 3) under the recipe: the run goes on without it to its end.
    write_run 100
    start_recipe recipe
    for _ in $(seq 1 600); do
      grep -q "the run starts" recipe.txt 2>/dev/null && break
      sleep 0.1
    done
    grep -q "the run starts" recipe.txt || { cat recipe.txt >&2; die "the run did not start"; }
    victim=""
    for p in $(pgrep -x pacer); do
      env=$({ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null)
      grep -qx "OMPI_COMM_WORLD_RANK=3" <<<"$env" && grep -qx "PACER_RANK_SUPERVISED=1" <<<"$env" &&
        [ "$(readlink "/proc/$p/cwd")" = "$work" ] && victim=$p
    done
    [ -n "$victim" ] || die "no pacer process of rank 3"
    sleep 1
    kill -KILL "$victim" || die "rank 3 had ended before the kill: the run is too short"
    killed=$(date +%s.%N)
    wait_job "$job" 32
    echo "kill -9 of rank 3 to the end of salloc: $(awk -v a="$killed" -v b="$(date +%s.%N)" \
      'BEGIN { printf "%.2f", b - a }') s"
    [ "$rc" = 0 ] || { cat recipe.txt >&2; die "salloc's exit status $rc, expected 0"; }
    grep -q '"status": "max_steps"' recipe/summary.json || die "the run did not reach max_steps"
    [ "$(grep -c . recipe/log.csv)" = 101 ] || die "log.csv does not hold 100 steps"
    tr -d ' \n' <recipe/summary.json | grep -qE '"lost_workers":\[\{[^]{}]*"worker":2\}\]' ||
      die "summary.json's lost_workers does not name worker 2 alone"
    ;;

  *)
    die "unknown check"
    ;;
esac
echo "PASS (slurm.$check)"
