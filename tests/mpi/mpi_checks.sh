#!/usr/bin/env bash
# End-to-end checks of the MPI engine against the simulator (DESIGN.md section 5), run by CTest
# (tests/mpi/CMakeLists.txt) as
#   mpi_checks.sh CHECK PACER MPIEXEC WORK_DIR [WRITE_MLP_MODULE]
# (WRITE_MLP_MODULE, tests/torch/write_mlp_module.cc, is needed by torchscript_runs only.)
# Every check runs `pacer` on 4 workers (mpirun -np 5; torchscript_runs on 2, -np 3) and exits
# non-zero with a message saying what differed. The timing-based checks use inject = pace with fixed, well-separated worker
# periods, so the order of events on real processes is that of the simulator with margins of
# several milliseconds per job; they tolerate a loaded 2-core machine, not one that stalls a
# process for tens of milliseconds.
set -uo pipefail

check=$1
pacer=$2
mpiexec=$3
work=$4/$check
write_mlp_module=${5:-}
# shellcheck source=problems.sh
source "$(dirname "$0")/problems.sh"
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

# A check of the libtorch models: skipped in a build without libtorch; in a build with it, the
# plugin must load (a plugin that does not is a failure, not a skip).
require_torch_plugin() {
  local version
  version=$("$pacer" version)
  if grep -q 'built without libtorch' <<<"$version"; then
    echo "SKIP ($check): this pacer was built without libtorch"
    exit 0
  fi
  grep -q '^libtorch [0-9]' <<<"$version" ||
    die "the libtorch plugin did not load: $(grep '^libtorch' <<<"$version")"
}

# Columns of log.csv (1-based, comma-separated) as one string.
columns() {  # $1 = log.csv, $2 = cut field list
  cut -d, -f"$2" "$1"
}

# The pid of rank $2 among the children of mpiexec $1 (Open MPI gives each one its rank in its
# environment), waiting up to 60 s for it to be started.
rank_pid() {
  local child tries
  for tries in $(seq 1 1200); do
    for child in $(ps -o pid= --ppid "$1"); do
      # (A child may end between ps and the read: the shell's own redirection error is silenced.)
      if { tr '\0' '\n' <"/proc/$child/environ"; } 2>/dev/null |
        grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
        echo "$child"
        return 0
      fi
    done
    sleep 0.05
  done
  return 1
}

# Waits up to $2 seconds for background job $1 to end and sets rc to its exit status; kills it
# (and fails) if it is still running then.
wait_bounded() {
  local waited=0
  while kill -0 "$1" 2>/dev/null && [ "$waited" -lt "$(($2 * 10))" ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  if kill -0 "$1" 2>/dev/null; then
    # The ranks first: without mpiexec they would be left running.
    kill -KILL $(ps -o pid= --ppid "$1") "$1" 2>/dev/null
    wait "$1"
    die "the job was still running after $2 s"
  fi
  wait "$1"
  rc=$?
}

# Exactly one "pacer: error:" line in $1 containing $2.
one_error() {
  local n
  n=$(grep -c "pacer: error:" "$1")
  [ "$n" = 1 ] || { cat "$1" >&2; die "expected exactly one 'pacer: error:' line, got $n"; }
  grep -q -- "$2" "$1" || { cat "$1" >&2; die "the error does not mention '$2'"; }
}

# Start-up (5 processes loading libtorch on 2 shared cores) takes a time that depends on the load:
# waits until rank 0's debug log ($1, a run with -v) says the run started, at most 60 s; kills job
# $2 and fails otherwise.
wait_run_started() {
  for _ in $(seq 1 600); do
    grep -q "the run starts" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  kill -KILL "$2"
  cat "$1" >&2
  die "the run did not start within 60 s"
}

# Starts, in the background, a 100000-step DGD run of 4 workers on the MPI engine whose 0.05 s
# jobs are paced in wall time (engine.inject = pace), with rank 0's debug log (-v) in out.txt; $1,
# if given, is a line put first in run.toml. Sets job to mpiexec's pid. mpiexec itself runs in
# the background, not through the mpirun function: a background subshell would ignore SIGINT.
start_paced_dgd() {
  write_problem run.toml 1 100000
  [ $# -gt 0 ] && sed -i "1i $1" run.toml
  cat >>run.toml <<TOML
[method]
name = "dgd"
[timing]
model = "fixed"
tau = 0.05
TOML
  "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" -v run run.toml --engine mpi \
    --set engine.inject=pace --out mpi >out.txt 2>&1 &
  job=$!
}

# summary.json $1 without blanks and newlines, for matching keys and arrays.
flat() {
  tr -d ' \n' <"$1"
}

# Fails unless summary.json $1 (flattened) contains every string after it.
summary_has() {
  local summary=$1 text want
  shift
  text=$(flat "$summary") || die "no $summary"
  for want in "$@"; do
    case "$text" in
      *"$want"*) ;;
      *) cat out.txt >&2; die "$summary does not contain $want" ;;
    esac
  done
}

# Starts run.toml on the MPI engine under mpiexec --enable-recovery ($@: more mpiexec options),
# each rank under a shell that writes pacer's exit status to status.RANK, and kills worker rank 3
# (worker 2) with kill -9 one second after the run started. Sets job (mpiexec's pid) and killed
# (the time of the kill).
run_and_kill_rank3() {
  local wrapper pid
  # shellcheck disable=SC2016  # expanded by the rank's shell
  "$mpiexec" --allow-run-as-root --oversubscribe --enable-recovery "$@" -np 5 \
    bash -c '"$@"; echo $? >"status.$OMPI_COMM_WORLD_RANK"' rank "$pacer" -v run run.toml \
    --engine mpi --out mpi >out.txt 2>&1 &
  job=$!
  wrapper=$(rank_pid "$job" 3) || die "no rank 3 among the children of mpiexec"
  wait_run_started out.txt "$job"
  pid=$(pgrep -P "$wrapper" -x pacer) || die "no pacer process for rank 3"
  sleep 1  # steps with all four workers first
  kill -KILL "$pid" || die "rank 3 had ended before the kill: the run is too short"
  killed=$(date +%s.%N)
}

# kill -9 of worker rank 3 (worker 2) in the middle of a paced run under mpirun --enable-recovery
# ($4...: more mpiexec options): rank 0 declares worker 2 lost once engine.worker_timeout_s = 2
# has passed, the run goes on with the survivors to its max_steps ($3) and the job ends within
# worker_timeout_s + 10 s of the kill, every surviving pacer process with exit status 0, and
# summary.json names the lost worker. Under --enable-recovery mpirun exits 0 whatever its ranks
# return (docs/mpi.md), so each rank runs under a shell that writes pacer's exit status to
# status.RANK. $1 is the [method] table's body, $2 the fixed τ: the run lasts about 5 s of paced
# jobs (more on a loaded machine) and the kill comes 1 s after it started, so the loss falls
# inside the run (checked).
lost_worker() {
  local method=$1 tau=$2 steps=$3 elapsed r
  shift 3
  write_problem run.toml 1 "$steps"
  cat >>run.toml <<TOML
[method]
$method
[timing]
model = "fixed"
tau = $tau
[engine]
inject = "pace"
worker_timeout_s = 2
TOML
  run_and_kill_rank3 "$@"
  wait_bounded "$job" 40
  elapsed=$(awk -v a="$killed" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  echo "kill -9 of rank 3 to the end of mpiexec: $elapsed s (bound: 12 s)"
  [ "$rc" = 0 ] || { cat out.txt >&2; die "mpiexec's exit status $rc, expected 0"; }
  for r in 0 1 2 4; do
    [ "$(cat "status.$r" 2>/dev/null)" = 0 ] ||
      { cat out.txt >&2; die "rank $r: exit status '$(cat "status.$r" 2>/dev/null)', expected 0"; }
  done
  awk -v e="$elapsed" 'BEGIN { exit !(e <= 12) }' ||
    { cat out.txt >&2; die "the job ended $elapsed s after the kill, over worker_timeout_s + 10 s"; }
  ! grep -q "pacer: error:" out.txt || { cat out.txt >&2; die "an error was reported"; }
  grep -q "worker 2 (rank 3) has not answered its job .* declared lost" out.txt ||
    { cat out.txt >&2; die "worker 2 was not declared lost during the run"; }
  [ "$(grep -c . mpi/log.csv)" = $((steps + 1)) ] || die "log.csv does not hold $steps steps"
  summary_has mpi/summary.json '"status":"max_steps"' \
    '"lost_per_worker":[false,false,true,false]' '"losses_per_worker":[0,0,1,0]' \
    '"launched_with_recovery":true'
  # The experiment layer's list of losses, {step, time, worker}.
  flat mpi/summary.json | grep -qE '"lost_workers":\[\{[^]{}]*"worker":2\}\]' ||
    die "summary.json's lost_workers does not name worker 2 alone"
}

# The time of the first target in summary.json $1 (empty when not reached).
target_time() {
  flat "$1" | grep -oE '"targets":\[\{[^]]*' | grep -oE '"time":[-0-9.eE+]+' | head -1 | cut -d: -f2
}

# The same failure on MPI and on the simulator, both detecting it by engine.worker_timeout_s = 2
# (#28): DGD with method.on_lost = "drop" on 4 workers, paced 0.2 s jobs; rank 3 (worker 2) is
# killed with kill -9 about 1 s into the run, and the step it was in waits the 2 s deadline. The
# simulator is given the same kill at the time MPI assigned the unanswered job (MPI's declared
# loss time minus the deadline) and the same deadline: its time to the target must be within
# 10 % of MPI's. The simulator without the deadline (the loss seen at once) is printed beside it.
lost_worker_deadline_matches_sim() {
  write_problem run.toml 1 80
  cat >>run.toml <<TOML
[method]
name = "dgd"
on_lost = "drop"
[timing]
model = "fixed"
tau = 0.2
[target]
loss = 0.02
[engine]
inject = "pace"
worker_timeout_s = 2
TOML
  local mpi_time lost_at sim_time instant_time
  run_and_kill_rank3
  wait_bounded "$job" 60
  [ "$rc" = 0 ] || { cat out.txt >&2; die "mpiexec's exit status $rc, expected 0"; }
  mpi_time=$(target_time mpi/summary.json)
  [ -n "$mpi_time" ] || { cat out.txt >&2; die "the MPI run did not reach the target"; }
  lost_at=$(flat mpi/summary.json | grep -oE '"lost_workers":\[\{[^]]*' | grep -oE '"time":[-0-9.eE+]+' |
    head -1 | cut -d: -f2)
  [ -n "$lost_at" ] || { cat out.txt >&2; die "no lost worker in the MPI run's summary.json"; }
  local kill_at
  kill_at=$(awk -v t="$lost_at" 'BEGIN { printf "%.6f", t - 2 }')
  local sim=(--unset engine.inject --set 'faults.kill_workers=[2]' --set "faults.kill_at=[$kill_at]")
  "$pacer" -q run run.toml "${sim[@]}" --out sim >sim.txt 2>&1 || { cat sim.txt >&2; die "the simulated run failed"; }
  "$pacer" -q run run.toml "${sim[@]}" --unset engine.worker_timeout_s --out instant >instant.txt 2>&1 ||
    { cat instant.txt >&2; die "the simulated run without the deadline failed"; }
  sim_time=$(target_time sim/summary.json)
  instant_time=$(target_time instant/summary.json)
  echo "time to target: MPI $mpi_time s (worker 2 declared lost at $lost_at s); simulator with the" \
    "deadline $sim_time s; without it (the loss seen at once) $instant_time s"
  awk -v m="$mpi_time" -v s="$sim_time" 'BEGIN { exit !(s != "" && s > 0.9 * m && s < 1.1 * m) }' ||
    die "the simulator's time to target $sim_time s is not within 10 % of MPI's $mpi_time s"
}

# DGD on 4 workers for $2 steps of paced 0.05 s jobs, training.batch = $1 (0 = full-batch
# gradients), a checkpoint every 10 steps: writes checkpointed.toml and runs it uninterrupted into
# whole/.
checkpointed_dgd() {
  write_problem checkpointed.toml 3 "$2"
  sed -i "s/^batch = 0\$/batch = $1/" checkpointed.toml
  cat >>checkpointed.toml <<TOML
[optimizer]
lr = 0.1
[method]
name = "dgd"
[timing]
model = "fixed"
tau = 0.05
[engine]
inject = "pace"
[checkpoint]
every_steps = 10
TOML
  mpirun -np 5 "$pacer" run checkpointed.toml --engine mpi --out whole >whole.txt 2>&1 ||
    { cat whole.txt; die "the uninterrupted run failed"; }
}

# The pids of pacer processes, zombies aside, whose working folder is this check's.
pacers_here() {
  local p
  for p in $(ps -eo pid=,stat=,comm= | awk '$3 == "pacer" && $2 !~ /^Z/ { print $1 }'); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$work" ] && echo "$p"
  done
  return 0
}

# Fails if a pacer process still runs in this check's folder (a rank of a job that was ended) 10 s
# after the job ended. mpiexec may exit while the ranks it SIGKILLed are still tearing down (the
# kernel is releasing their memory), so a rank seen once is not yet a rank left behind.
none_left_running() {
  local left
  for _ in $(seq 1 100); do
    left=$(pacers_here)
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  ps -o pid,stat,args -p "$(echo $left | tr ' ' ,)" >&2
  die "a pacer process of the ended job is still running 10 s after it ended"
}

# `mpirun ... pacer run --resume mpi` on a fresh job: it ends normally, with the uninterrupted
# run's final model byte for byte, log.csv's steps 1..$1 without a gap and its columns but the
# clock equal to the uninterrupted run's; summary.json says it was resumed, and how long the
# drains and the checkpoints' writes took.
resume_matches_whole() {
  "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" run --resume mpi \
    >resume.txt 2>&1 &
  wait_bounded $! 60
  [ "$rc" = 0 ] || { cat resume.txt >&2; die "the resumed job's exit status $rc, expected 0"; }
  cmp -s whole/model.bin mpi/model.bin || die "the resumed run's final model differs"
  [ "$(columns mpi/log.csv 2 | tail -n +2)" = "$(seq 1 "$1")" ] ||
    die "log.csv's steps do not run from 1 to $1 without a gap"
  # Not the decisive worker and its wait (9, 10): which rank answers last is a race on MPI.
  [ "$(columns whole/log.csv 2-8,11-)" = "$(columns mpi/log.csv 2-8,11-)" ] ||
    { diff <(columns whole/log.csv 2-8,11-) <(columns mpi/log.csv 2-8,11-) | head >&2
      die "log.csv differs"; }
  summary_has mpi/summary.json '"status":"max_steps"'
  flat mpi/summary.json | grep -qE '"resumed_at":[0-9]' || die "summary.json has no resumed_at"
  flat mpi/summary.json | grep -oE '"checkpoint_(max_drain|write)_time":[^,]*' | tr '\n' ' '
  echo
}

# DGD killed mid-run, the whole job (rank 0 SIGKILLs itself right after its third checkpoint was
# renamed into place, core/crash_point.h; mpirun then ends the other ranks), resumed on a fresh
# job ($1 = training.batch): DGD combines in worker-index order and every worker's minibatch
# stream travels in the checkpoint, so the resumed run ends where the uninterrupted one does.
resume_after_kill() {
  checkpointed_dgd "$1" 60
  "$mpiexec" --allow-run-as-root --oversubscribe -np 5 -x PACER_TEST_CRASH_AT=checkpoint.renamed:3 \
    "$pacer" run checkpointed.toml --engine mpi --out mpi >killed.txt 2>&1 &
  wait_bounded $! 60
  [ "$rc" != 0 ] || { cat killed.txt >&2; die "the job whose rank 0 was killed exited 0"; }
  none_left_running
  [ -f mpi/checkpoint.bin ] || die "no checkpoint.bin after the kill"
  grep -q '"status": "running"' mpi/summary.json || die "summary.json does not say running"
  resume_matches_whole 60
}

# Starts, in the background, run.toml under the recipe of docs/mpi.md for surviving a dead worker
# on any number of hosts (here one): every rank as `pacer mpi-rank`, mpirun with
# orte_allowed_exit_without_sync and without --enable-recovery; rank 0's debug log in out.txt.
# Sets job (mpiexec's pid) once the run has started.
start_under_mpi_rank() {
  "$mpiexec" --allow-run-as-root --oversubscribe --mca orte_allowed_exit_without_sync 1 -np 5 \
    "$pacer" mpi-rank -v run run.toml --engine mpi --out mpi >out.txt 2>&1 &
  job=$!
  wait_run_started out.txt "$job"
}

# The pid of rank $1's pacer process under `pacer mpi-rank` (the supervisor's child).
supervised_pacer() {
  local supervisor
  supervisor=$(rank_pid "$job" "$1") || die "no rank $1 among the children of mpiexec"
  pgrep -P "$supervisor" -x pacer || die "no pacer process under rank $1's mpi-rank"
}

case "$check" in
  mpi_rank_worker_killed)
    # kill -9 of worker 2's pacer under mpi-rank: its rank ends with 0, the run goes on to its
    # end without it, mpiexec exits 0, and no warning says the launch cannot survive it.
    write_paced_run $'name = "pgc-cr"\ns = 1' 100
    start_under_mpi_rank
    victim=$(supervised_pacer 3)
    sleep 1
    kill -KILL "$victim" || die "rank 3 had ended before the kill: the run is too short"
    wait_bounded "$job" 40
    [ "$rc" = 0 ] || { cat out.txt >&2; die "mpiexec's exit status $rc, expected 0"; }
    summary_has mpi/summary.json '"status":"max_steps"' '"lost_per_worker":[false,false,true,false]' \
      '"launched_with_recovery":true'
    [ "$(grep -c . mpi/log.csv)" = 101 ] || die "log.csv does not hold 100 steps"
    grep -q "mpi-rank: the pacer process of rank 3 was killed by signal 9" out.txt ||
      { cat out.txt >&2; die "mpi-rank did not report the kill"; }
    ! grep -q "pacer: warning: MPI engine: this" out.txt ||
      { cat out.txt >&2; die "the launch was warned that it does not survive a dead worker"; }
    ;;

  mpi_rank_rank0_killed)
    # kill -9 of rank 0's pacer under mpi-rank: its rank ends with 137 and mpiexec ends the job.
    write_paced_run $'name = "pgc-cr"\ns = 1' 100000
    start_under_mpi_rank
    victim=$(supervised_pacer 0)
    sleep 1
    kill -KILL "$victim"
    wait_bounded "$job" 30
    [ "$rc" = 137 ] || { cat out.txt >&2; die "mpiexec's exit status $rc, expected 137"; }
    none_left_running
    ;;

  mpi_rank_interrupt)
    # SIGINT to mpiexec under mpi-rank: mpirun's SIGTERM reaches rank 0's pacer, which writes its
    # outputs as interrupted and says how to continue, launched the same way.
    write_paced_run $'name = "pgc-cr"\ns = 1' 100000
    start_under_mpi_rank
    sleep 1
    kill -INT "$job"
    wait_bounded "$job" 30
    grep -q '"status": "interrupted"' mpi/summary.json ||
      { cat out.txt >&2; die "summary.json does not say interrupted"; }
    grep -q "continue it with: mpirun --mca orte_allowed_exit_without_sync 1 -np <workers + 1> .* mpi-rank run --resume mpi" out.txt ||
      { cat out.txt >&2; die "the continuation does not launch under mpi-rank"; }
    none_left_running
    ;;

  resume_dgd)
    resume_after_kill 0
    ;;

  resume_dgd_minibatch)
    resume_after_kill 16
    ;;

  resume_after_interrupt)
    # SIGINT to mpirun after the first checkpoint: the run ends "interrupted" (an MPI run cannot
    # be checkpointed with jobs out, so none is written then) and the resumed run continues from
    # the last periodic checkpoint to the uninterrupted run's final model.
    checkpointed_dgd 0 100
    "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" run checkpointed.toml \
      --engine mpi --out mpi >interrupted.txt 2>&1 &
    job=$!
    for _ in $(seq 1 600); do
      [ -f mpi/checkpoint.bin ] && break
      sleep 0.1
    done
    [ -f mpi/checkpoint.bin ] || { kill -KILL "$job"; die "no checkpoint within 60 s"; }
    sleep 0.5
    kill -INT "$job"
    wait_bounded "$job" 30
    grep -q '"status": "interrupted"' mpi/summary.json ||
      { cat interrupted.txt >&2; die "summary.json does not say interrupted"; }
    none_left_running
    resume_matches_whole 100
    ;;

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
    # Every column but time and the decisive worker and its wait (real timings decide who is
    # last): step, work units, loss, gradient norm, ..., evaluations.
    [ "$(columns sim/log.csv 2-8,11-)" = "$(columns mpi/log.csv 2-8,11-)" ] ||
      die "log.csv columns differ"
    # Each run says which clock its times are on, and its figure's time axis says the same.
    summary_has sim/summary.json '"clock":"simulated"'
    summary_has mpi/summary.json '"clock":"wall"'
    grep -q "'simulated time (s)'" sim/loss.gp || die "sim/loss.gp: no simulated time axis"
    grep -q "'wall-clock time (s)'" mpi/loss.gp || die "mpi/loss.gp: no wall-clock time axis"
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
    # Every column but time, work units (which count late replies as they arrive), and the
    # decisive worker and its wait (workers 0 and 2 answer within microseconds of each other).
    [ "$(columns sim/log.csv 2,4-8,11-)" = "$(columns mpi/log.csv 2,4-8,11-)" ] ||
      die "log.csv columns differ"
    ;;

  queue_matches_sim)
    # straggler_policy = "queue" runs on MPI too (the queue is the master's, sync_master.h).
    # IS-SGD(k = 1): workers 0-2 paced at 0.03 s per job, worker 3 at 0.13 s, so worker 3 is late
    # at every step (its step-k job ends at 0.13 (k + 1) s at the earliest, step k closes at about
    # 0.03 (k + 1) s) and is sent every step: jobs.csv lists its tags 0, 1, 2, ... in order, and,
    # since its messages are never in by a close, the trajectory equals the simulator's.
    write_problem run.toml 2 15
    cat >>run.toml <<EOF
[optimizer]
lr = 0.05
[method]
name = "is-sgd"
k = 1
straggler_policy = "queue"
[timing]
model = "fixed"
tau = [0.03, 0.03, 0.03, 0.13]
EOF
    "$pacer" run run.toml --out sim >sim.txt 2>&1 || { cat sim.txt; die "simulator run failed"; }
    mpirun -np 5 "$pacer" run run.toml --engine mpi --set engine.inject=pace \
      --set engine.poll_sleep_us=50 --out mpi >mpi.txt 2>&1 || { cat mpi.txt; die "MPI run failed"; }
    cmp -s sim/model.bin mpi/model.bin || die "final models differ"
    summary_has mpi/summary.json '"straggler_policy":"queue"'
    awk -F, 'NR > 1 && $1 == 3 { if ($2 != n) bad = bad " tag " $2 " where " n " was due"; n++ }
      END { if (n < 2) bad = bad " only " n " jobs of worker 3"; if (bad) { print bad; exit 1 } }' \
      mpi/jobs.csv || { cat mpi/jobs.csv; die "worker 3 did not compute every step in order"; }
    ;;

  async_arrivals_match_sim)
    # Vanilla ASGD with fixed periods 0.70, 0.79, 1.13, 1.27 s: over the 20 updates no two
    # completions of different workers lie within 90 ms of each other, and within 70 ms even if
    # every job on MPI takes 5 ms longer than modelled (the pace is measured from the moment a
    # worker receives its job, so such lateness accumulates per job). The sequence of (worker,
    # delay) arrivals on MPI must equal the simulator's, and with it the whole trajectory. What
    # keeps this verdict independent of OS scheduling: margins many times the lateness measured
    # on a loaded 2-core machine (the check prints it as "drift"; README, Testing), and the MPI
    # tests run alone (RUN_SERIAL). The periods came from a search for the largest margin.
    write_problem run.toml 5 20
    cat >>run.toml <<EOF
[optimizer]
lr = 0.05
[method]
name = "asgd"
[timing]
model = "fixed"
tau = [0.70, 0.79, 1.13, 1.27]
EOF
    "$pacer" run run.toml --out sim >sim.txt 2>&1 || { cat sim.txt; die "simulator run failed"; }
    mpirun -np 5 "$pacer" run run.toml --engine mpi --set engine.inject=pace \
      --set engine.poll_sleep_us=50 --out mpi >mpi.txt 2>&1 || { cat mpi.txt; die "MPI run failed"; }
    # How far each arrival's MPI clock lies from the simulated one (column 1 is the clock).
    drift=$(paste -d, <(columns sim/log.csv 1) <(columns mpi/log.csv 1) | awk -F, '
      NR > 1 { d = $2 - $1; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.4f", m }')
    echo "drift: largest |MPI clock - simulated clock| at an arrival: $drift s (margin 0.09 s)"
    # step, staleness (= delay), worker
    if [ "$(columns sim/log.csv 2,7,9)" != "$(columns mpi/log.csv 2,7,9)" ]; then
      diff <(columns sim/log.csv 2,7,9) <(columns mpi/log.csv 2,7,9) | head -20 >&2
      die "the (worker, delay) arrival sequences differ (drift $drift s)"
    fi
    cmp -s sim/model.bin mpi/model.bin || die "final models differ"
    ;;

  eval_excluded)
    # The master's evaluations do not advance the run's clock (time to target means the same on
    # both engines). DGD with paced 0.1 s jobs for 15 steps, once without evaluation and once
    # evaluating F on 100 000 rows of 300 features after every step: the clocks after the last
    # step must agree within a small part of the time spent evaluating, which must be large enough
    # to matter (0.68 s in all on the 2-core development machine, with one thread evaluating,
    # engine.threads = 1: twice the 0.3 s required).
    cat >run.toml <<EOF
seed = 2
workers = 4
max_steps = 15
eval_every = 0
[data]
source = "synthetic"
generator = "least_squares"
samples = 100000
features = 300
[model]
name = "least_squares"
[training]
batch = 64
[optimizer]
lr = 0.01
[method]
name = "dgd"
[timing]
model = "fixed"
tau = 0.1
EOF
    for every in 0 1; do
      mpirun -np 5 "$pacer" run run.toml --engine mpi --set engine.inject=pace \
        --set engine.threads=1 --set eval_every=$every --out "every$every" >"every$every.txt" 2>&1 ||
        { cat "every$every.txt"; die "MPI run (eval_every = $every) failed"; }
    done
    eval_time=$(sed -n 's/.*"evaluation_time": \([0-9.e+-]*\).*/\1/p' every1/summary.json)
    [ -n "$eval_time" ] || die "summary.json has no evaluation_time"
    # The clock at the last step (column 1 of log.csv's last row).
    t0=$(tail -n 1 every0/log.csv | cut -d, -f1)
    t1=$(tail -n 1 every1/log.csv | cut -d, -f1)
    echo "clock after 15 steps: $t0 s without evaluation, $t1 s with $eval_time s of evaluation"
    awk -v a="$t0" -v b="$t1" -v e="$eval_time" 'BEGIN {
      if (e < 0.3) { print "evaluation took only " e " s: the check would mean nothing"; exit 1 }
      d = b - a; if (d < 0) d = -d
      if (d > 0.25 * e) { print "the clocks differ by " d " s, over a quarter of the " e " s of evaluation"; exit 1 }
    }' || die "evaluation time leaked into the run's clock"
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
    # The worker ranks name the folder they resolved the relative path against.
    one_error out.txt "could not set up the run: run.toml: data.train: \"train.csv\" not found (resolved against $work/workers)"
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
    start_paced_dgd
    wait_run_started out.txt "$job"
    sleep 1  # a few steps of 0.05 s
    kill -INT "$job"
    wait "$job" && die "an interrupted job exited 0"
    grep -q '"status": "interrupted"' mpi/summary.json 2>/dev/null ||
      { cat out.txt >&2; die "no summary.json with status interrupted"; }
    [ "$(grep -c . mpi/log.csv)" -gt 2 ] || die "log.csv holds no steps"
    ;;

  startup_stopped_rank)
    # Rank 2 stops itself (SIGSTOP) before it starts MPI, so the other ranks wait inside MPI_Init:
    # the job ends after engine.startup_timeout_s with one error (not a hang), and every rank ends.
    write_problem run.toml 1 5
    args=(run run.toml --engine mpi --set engine.startup_timeout_s=3 --out mpi)
    "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$pacer" "${args[@]}" : \
      -np 1 bash -c 'kill -STOP $$; exec "$@"' stopped "$pacer" "${args[@]}" : \
      -np 2 "$pacer" "${args[@]}" >out.txt 2>&1 &
    job=$!
    wait_bounded "$job" 40
    [ "$rc" != 0 ] || die "a job with a stopped rank exited 0"
    one_error out.txt "did not return within 3 s on rank 0 (engine.startup_timeout_s)"
    ;;

  stop_worker_at_launch)
    # SIGSTOP to rank 3 0.3 s after launch (inside or around MPI_Init, or in the handshake after
    # it): one error naming the timeout that ended the job, within the start-up bounds.
    write_problem run.toml 1 5
    cat >>run.toml <<EOF
[engine]
startup_timeout_s = 3
timeout_s = 6
drain_timeout_s = 3
EOF
    "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" run run.toml --engine mpi \
      --out mpi >out.txt 2>&1 &
    job=$!
    sleep 0.3
    pid=$(rank_pid "$job" 3) || die "no rank 3 among the children of mpiexec"
    kill -STOP "$pid"
    wait_bounded "$job" 40
    kill -KILL "$pid" 2>/dev/null
    [ "$rc" != 0 ] || die "a job with a stopped rank exited 0"
    # Rank 0 reports first; on a heavily loaded machine a worker rank's own start-up watchdog may
    # also fire before mpiexec ends it, so only the first error line is checked.
    first=$(grep -m1 "pacer: error:" out.txt)
    case "$first" in
      *engine.startup_timeout_s* | *engine.timeout_s*) ;;
      *) cat out.txt >&2; die "the first error does not name engine.startup_timeout_s: $first" ;;
    esac
    ;;

  worker_sigterm)
    # SIGTERM to worker rank 3 alone: that worker stops, and rank 0 ends the run with an error
    # naming it (status "error" in summary.json, exit status 1). memory_limit_gb travels to the
    # worker ranks with the configuration and is read there too.
    start_paced_dgd 'memory_limit_gb = 8'
    pid=$(rank_pid "$job" 3) || die "no rank 3 among the children of mpiexec"
    wait_run_started out.txt "$job"
    sleep 1  # a few steps of 0.05 s
    kill -TERM "$pid"
    wait_bounded "$job" 30
    [ "$rc" = 1 ] || { cat out.txt >&2; die "exit status $rc, expected 1"; }
    one_error out.txt "rank 3 (worker 2): received SIGTERM"
    grep -q '"status": "error"' mpi/summary.json 2>/dev/null ||
      { cat out.txt >&2; die "no summary.json with status error"; }
    ;;

  lost_worker_pgc_cr)
    # PGC-CR (s = 1) closes each step with the fastest n - s = 3 messages, so it goes on after one
    # worker dies. Shared-memory transport (Open MPI's default on one machine).
    lost_worker 'name = "pgc-cr"
s = 1' 0.1 50
    ;;

  lost_worker_pgc_cr_tcp)
    # The same over TCP, where MPI_Finalize may wait for the dead peer (runtime.h, finalize()).
    lost_worker 'name = "pgc-cr"
s = 1' 0.1 50 --mca btl tcp,self
    ;;

  lost_worker_asgd)
    # ASGD updates on every arrival: it goes on with the three survivors.
    lost_worker 'name = "asgd"' 0.2 100
    ;;

  lost_worker_asgd_tcp)
    lost_worker 'name = "asgd"' 0.2 100 --mca btl tcp,self
    ;;

  lost_worker_deadline_matches_sim)
    lost_worker_deadline_matches_sim
    ;;

  lost_worker_back)
    # SIGSTOP to worker rank 3 for 2.5 s with engine.worker_timeout_s = 1, without
    # --enable-recovery (no process dies): worker 2 is declared lost, its late reply brings it
    # back, and the run ends normally (exit 0, MPI_Finalize on every rank). Rank 0 warns at the
    # start that a dead worker would end the whole job without --enable-recovery.
    write_problem run.toml 1 120
    cat >>run.toml <<TOML
[method]
name = "asgd"
[timing]
model = "fixed"
tau = 0.2
[engine]
inject = "pace"
worker_timeout_s = 1
TOML
    "$mpiexec" --allow-run-as-root --oversubscribe -np 5 "$pacer" -v run run.toml --engine mpi \
      --out mpi >out.txt 2>&1 &
    job=$!
    pid=$(rank_pid "$job" 3) || die "no rank 3 among the children of mpiexec"
    wait_run_started out.txt "$job"
    sleep 1
    kill -STOP "$pid" || die "rank 3 had ended before SIGSTOP: the run is too short"
    sleep 2.5
    kill -CONT "$pid"
    wait_bounded "$job" 40
    [ "$rc" = 0 ] || { cat out.txt >&2; die "exit status $rc, expected 0"; }
    grep -q "pacer: warning: .*launched by mpirun neither as .*nor with .mpirun --enable-recovery" out.txt ||
      { cat out.txt >&2; die "no warning about --enable-recovery"; }
    grep -q "worker 2 (rank 3) has not answered its job .* declared lost" out.txt ||
      { cat out.txt >&2; die "worker 2 was not declared lost"; }
    grep -q "worker 2 (rank 3) answered its job .* it is back" out.txt ||
      { cat out.txt >&2; die "worker 2 was not re-admitted during the run"; }
    summary_has mpi/summary.json '"status":"max_steps"' \
      '"lost_per_worker":[false,false,false,false]' '"losses_per_worker":[0,0,1,0]' \
      '"rejoins_per_worker":[0,0,1,0]' '"launched_with_recovery":false'
    # Back, worker 2 took jobs again: more arrivals than the ones before SIGSTOP and the late one.
    arrivals=$(cut -d, -f9 mpi/log.csv | grep -cx 2)
    [ "$arrivals" -ge 8 ] || die "worker 2 delivered $arrivals gradients, expected at least 8"
    ;;

  float32_matches_sim)
    # A float32 torch model (no L2 term) reads x only rounded to float, and DGD's full-batch
    # gradients are floats: the model goes to the workers and the gradients come back in float32
    # (half the bytes), and the MPI run must still equal the simulated one bit for bit.
    require_torch_plugin
    cat >run.toml <<EOF
seed = 5
workers = 4
max_steps = 20
eval_every = 10
save_model = true
[data]
source = "synthetic"
generator = "blobs"
samples = 400
features = 20
classes = 3
[model]
name = "torch_mlp"
hidden = 16
dtype = "float32"
[training]
batch = 0
[optimizer]
lr = 0.1
[method]
name = "dgd"
[timing]
model = "exponential"
tau = 0.01
EOF
    "$pacer" run run.toml --out sim >sim.txt 2>&1 || { cat sim.txt; die "simulator run failed"; }
    mpirun -np 5 -x OMP_NUM_THREADS=1 "$pacer" run run.toml --engine mpi --out mpi >mpi.txt 2>&1 ||
      { cat mpi.txt; die "MPI run failed"; }
    cmp -s sim/model.bin mpi/model.bin || die "final models differ"
    [ "$(columns sim/log.csv 2-8,11-)" = "$(columns mpi/log.csv 2-8,11-)" ] ||
      die "log.csv columns differ"
    # Every job but each worker's first (sent before it said that it reads float32), every reply.
    counts=$(grep -o '"float32_[a-z]*": *[0-9]*' mpi/summary.json | tr -d ' ' | tr '\n' ' ')
    [ "$counts" = '"float32_jobs":76 "float32_replies":80 ' ] ||
      die "expected 76 jobs and 80 replies in float32, summary.json says: $counts"
    ;;

  torchscript_runs)
    # model.name = "torchscript": a float32 TorchScript MLP trained by PGC-CR on 2 workers (3
    # ranks) for 6 steps; the run completes, every loss it logs is finite, and the module, which
    # reads its parameters in float32, is sent to the workers in float32 (all jobs but each
    # worker's first; PGC-CR's coded replies are sums, not exact floats, so they come back in
    # double).
    require_torch_plugin
    [ -x "$write_mlp_module" ] || die "no module writer given (5th argument)"
    "$write_mlp_module" net.pt 20 16 3 5 float32 || die "cannot write the TorchScript module"
    cat >run.toml <<EOF
seed = 5
workers = 2
max_steps = 6
eval_every = 3
[data]
source = "synthetic"
generator = "blobs"
samples = 200
features = 20
classes = 3
[model]
name = "torchscript"
file = "net.pt"
[training]
batch = 8
[optimizer]
lr = 0.1
[method]
name = "pgc-cr"
s = 1
[timing]
model = "exponential"
tau = 0.01
EOF
    mpirun -np 3 -x OMP_NUM_THREADS=1 "$pacer" run run.toml --engine mpi --out mpi >mpi.txt 2>&1 ||
      { cat mpi.txt; die "MPI run failed"; }
    summary_has mpi/summary.json '"status":"max_steps"' '"steps":6,' '"model":"torchscript"'
    # The loss column of log.csv: 6 rows, each a finite number.
    bad=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "loss") c = i; next }
      { n++; if ($c !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) bad = bad " " $c }
      END { if (n != 6 || !c) print "rows " n ", column " c; else if (bad) print bad }' mpi/log.csv)
    [ -z "$bad" ] || die "log.csv's loss column is not 6 finite numbers: $bad"
    grep -q '"float32_jobs": *[1-9]' mpi/summary.json || die "no job went out in float32"
    ;;

  jobs_and_attribution)
    # DGD paced at 0.02 s per job on workers 0-2 and 0.15 s on worker 3: jobs.csv holds every job
    # with its times on rank 0's clock in order, worker 3 decides every step, and the run's
    # jobs.csv feeds pacer advise; pacer profile on the ranks writes a trace of their jobs.
    write_problem run.toml 3 10
    cat >>run.toml <<EOF
[optimizer]
lr = 0.05
[method]
name = "dgd"
[timing]
model = "fixed"
tau = [0.02, 0.02, 0.02, 0.15]
EOF
    mpirun -np 5 "$pacer" run run.toml --engine mpi --set engine.inject=pace --out mpi \
      >mpi.txt 2>&1 || { cat mpi.txt; die "MPI run failed"; }
    summary_has mpi/summary.json '"decisive_steps_per_worker":[0,0,0,10]' \
      '"jobs_csv":{"complete":true,"jobs":40,"limit":20000,"rows":40}'
    head -1 mpi/jobs.csv |
      grep -qx 'worker,tag,assigned,started,finished,delivered,units,compute_time,bytes,fate,sent,injected_time' ||
      die "jobs.csv has no header"
    # Every job used, its times in order, worker 3's compute at least its 0.15 s pace, most of it
    # injected sleep (the real compute of 400 x 20 least squares takes well under 0.05 s); no job
    # held (no checkpoint), so each was sent when assigned.
    awk -F, 'NR > 1 { n++
      if ($10 != "used") bad = bad " fate " $10
      # assigned is read just after the send, so started may precede it by microseconds.
      if (!($3 <= $4 + 0.001 && $4 <= $5 && $5 <= $6)) bad = bad " times out of order at row " NR
      if ($1 == 3 && $8 < 0.15) bad = bad " worker 3 computed " $8 " s"
      if ($1 == 3 && $12 < 0.1) bad = bad " worker 3 slept " $12 " s"
      if (!($12 >= 0 && $12 <= $8)) bad = bad " injected " $12 " of " $8 " s at row " NR
      if ($11 != $3) bad = bad " sent " $11 " but assigned " $3 " at row " NR }
      END { if (n != 40) bad = bad " " n " rows"; if (bad) { print bad; exit 1 } }' mpi/jobs.csv ||
      die "jobs.csv rows are wrong"
    "$pacer" -q advise run.toml --trace mpi/jobs.csv --methods dgd,is-sgd:k=1 --seeds 2 --budget time=1 \
      --out advise >advise.txt 2>&1 || { cat advise.txt; die "pacer advise on the MPI jobs.csv failed"; }
    grep -q '^recommended: is-sgd:k=1' advise.txt ||
      { cat advise.txt; die "advise did not recommend ignoring the slow worker"; }
    mpirun -np 5 "$pacer" profile run.toml --engine mpi --set engine.inject=pace --jobs 5 \
      --out profile >profile.txt 2>&1 || { cat profile.txt; die "pacer profile on MPI failed"; }
    [ "$(tail -n +2 profile/trace.csv | cut -d, -f1 | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')" = \
      "0:5 1:5 2:5 3:5 " ] || { cat profile/trace.csv; die "the profile's trace is not 5 jobs per worker"; }
    ;;

  timeline_held)
    # ASGD paced at 0.02 s per job on workers 0-2 and 0.2 s on worker 3, a checkpoint every 25
    # updates: each drain waits for worker 3's job while the fast workers' next jobs are held.
    # jobs.csv says when a held job was sent (after it was assigned; its transfer starts then),
    # and the timeline draws and exports that wait as "held", not as transfer.
    write_problem run.toml 3 100
    cat >>run.toml <<EOF
[optimizer]
lr = 0.01
[method]
name = "asgd"
[timing]
model = "fixed"
tau = [0.02, 0.02, 0.02, 0.2]
[checkpoint]
every_steps = 25
EOF
    mpirun -np 5 "$pacer" run run.toml --engine mpi --set engine.inject=pace --out mpi \
      >mpi.txt 2>&1 || { cat mpi.txt; die "MPI run failed"; }
    # Jobs still out at the end were never delivered: they say nothing of when they were sent.
    awk -F, 'NR > 1 && $11 != "" {
      if ($11 > $3 + 0.005) held++
      if ($11 < $3 - 1e-9) bad = bad " sent " $11 " before assigned " $3 " at row " NR
      if ($4 != "" && $4 < $11 - 0.001) bad = bad " started " $4 " before sent " $11 " at row " NR }
      END { if (held < 1) bad = bad " no job held"; if (bad) { print bad; exit 1 }
            print held " jobs held" }' mpi/jobs.csv ||
      { flat mpi/summary.json | grep -oE '"checkpoints":[0-9]*'; die "jobs.csv: held jobs wrong"; }
    "$pacer" timeline mpi --all --format chrome >timeline.txt 2>&1 ||
      { cat timeline.txt; die "pacer timeline failed"; }
    [ "$(grep -c '"name":"held"' mpi/timeline-all.json)" -ge 1 ] ||
      die "timeline-all.json shows no held phase"
    ;;

  *)
    die "unknown check"
    ;;
esac
echo "ok ($check)"
