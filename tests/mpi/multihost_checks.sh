#!/usr/bin/env bash
# pacer across hosts (#28, docs/mpi.md "Across hosts"), run by CTest (tests/mpi/CMakeLists.txt) as
#   multihost_checks.sh CHECK PACER MPIEXEC WORK_DIR
# Two hosts are emulated on this machine by two network namespaces joined by a veth pair, each
# with its own address; Open MPI reaches the second through a launch agent that runs its daemon
# (orted) under `ip netns exec`, and every message crosses the pair over TCP (btl tcp,self). The
# job is 4 workers: rank 0 and workers 0-1 on the first host, workers 2-3 (ranks 3, 4) on the
# second, launched with the recipe docs/mpi.md gives for several hosts:
#   mpirun --mca orte_allowed_exit_without_sync 1 ... pacer mpi-rank run ...
# Needs root (namespaces); exits 77, which CTest reports as skipped, with a message saying why
# where the namespaces cannot be made. Everything it made is removed on exit.
set -uo pipefail

check=$1
pacer=$2
mpiexec=$3
work=$4/multihost_$check
# shellcheck source=problems.sh
source "$(dirname "$0")/problems.sh"
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

die() {
  echo "FAIL (multihost.$check): $*" >&2
  exit 1
}
skip() {
  echo "SKIPPED (multihost.$check): $*"
  exit 77
}

subnet=10.213.0.0/24
declare -A address=([h1]=10.213.0.1 [h2]=10.213.0.2)
declare -A netns=([h1]=pacer-mh$$-h1 [h2]=pacer-mh$$-h2)

teardown() {
  local host pids
  for host in h1 h2; do
    pids=$(ip netns pids "${netns[$host]}" 2>/dev/null)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    ip netns del "${netns[$host]}" 2>/dev/null
  done
  return 0
}

# The two hosts, or a skip saying why they cannot be made.
make_hosts() {
  [ "$(id -u)" = 0 ] || skip "network namespaces need root"
  command -v ip >/dev/null || skip "no ip command (iproute2)"
  local err
  err=$(ip netns add "${netns[h1]}" 2>&1) || skip "cannot create a network namespace: $err"
  trap teardown EXIT
  ip netns add "${netns[h2]}" || die "ip netns add ${netns[h2]}"
  local a=pmh$$a b=pmh$$b
  ip link add "$a" type veth peer name "$b" || skip "cannot create a veth pair"
  ip link set "$a" netns "${netns[h1]}" && ip link set "$b" netns "${netns[h2]}" &&
    ip -n "${netns[h1]}" addr add "${address[h1]}/24" dev "$a" &&
    ip -n "${netns[h2]}" addr add "${address[h2]}/24" dev "$b" &&
    ip -n "${netns[h1]}" link set lo up && ip -n "${netns[h2]}" link set lo up &&
    ip -n "${netns[h1]}" link set "$a" up && ip -n "${netns[h2]}" link set "$b" up ||
    die "could not configure the veth pair"
  printf '%s slots=3\n%s slots=2\n' "${address[h1]}" "${address[h2]}" >hosts
  # Open MPI's launch agent (plm_rsh_agent, in place of ssh): `agent [options] HOST COMMAND...`
  # runs COMMAND in HOST's namespace.
  cat >agent.sh <<EOF
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
case \$1 in
  ${address[h1]}) ns=${netns[h1]} ;;
  ${address[h2]}) ns=${netns[h2]} ;;
  *) echo "agent.sh: unknown host \$1" >&2; exit 1 ;;
esac
shift
exec ip netns exec \$ns /bin/sh -c "\$*"
EOF
  chmod +x agent.sh
}

# Starts run.toml on the MPI engine across the two hosts in the background, rank 0's debug log
# (-v) in out.txt; sets job to mpiexec's pid.
start_job() {
  ip netns exec "${netns[h1]}" "$mpiexec" --allow-run-as-root --oversubscribe --hostfile hosts \
    -np 5 --mca plm_rsh_agent "$work/agent.sh" --mca btl tcp,self \
    --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet" \
    --mca orte_allowed_exit_without_sync 1 \
    "$pacer" mpi-rank -v run run.toml --engine mpi --out mpi >out.txt 2>&1 &
  job=$!
}

# Waits up to 60 s for rank 0's log to say the run started; fails otherwise.
wait_run_started() {
  for _ in $(seq 1 600); do
    grep -q "the run starts" out.txt 2>/dev/null && return 0
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
  done
  cat out.txt >&2
  die "the run did not start within 60 s"
}

# The pid of rank $2's pacer process (the child of `pacer mpi-rank`) in host $1's namespace.
rank_child() {
  local p env
  for p in $(ip netns pids "${netns[$1]}"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = pacer ] || continue
    env=$({ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null)
    if grep -qx "OMPI_COMM_WORLD_RANK=$2" <<<"$env" && grep -qx "PACER_RANK_SUPERVISED=1" <<<"$env"; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# Seconds since $1 (date +%s.%N), two decimals.
since() {
  awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'
}

# Waits up to $2 s for job $1 (mpiexec) to end and sets rc to its exit status; fails, with what
# is still running in either namespace, if it has not ended by then.
wait_job() {
  for _ in $(seq 1 $(($2 * 10))); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$1" 2>/dev/null; then
    ps -o pid,args -p "$(ip netns pids "${netns[h2]}" | tr '\n' , | sed 's/,$//')" >&2
    cat out.txt >&2
    die "mpiexec was still running $2 s after the kill"
  fi
  wait "$1"
  rc=$?
}

make_hosts
case "$check" in
  runs_across_hosts)
    # PGC-CR (s = 1) across the two hosts: two of its ranks run in the second namespace, it ends
    # normally, and its time per step is the simulator's within 10 % (paced jobs: the simulator
    # predicts the step from the same fixed τ).
    write_paced_run $'name = "pgc-cr"\ns = 1' 60
    start_job
    wait_run_started
    remote=0
    for rank in 3 4; do rank_child h2 "$rank" >/dev/null && remote=$((remote + 1)); done
    wait_job "$job" 60
    [ "$rc" = 0 ] || { cat out.txt >&2; die "mpiexec's exit status $rc, expected 0"; }
    [ "$remote" = 2 ] || die "ranks 3 and 4 were not both running on the second host"
    grep -q '"status": "max_steps"' mpi/summary.json || die "the run did not reach max_steps"
    "$pacer" -q run run.toml --unset engine.inject --out sim >sim.txt 2>&1 ||
      { cat sim.txt >&2; die "the simulated run failed"; }
    mean_step() { awk -F, 'NR > 1 { t = $1 } END { printf "%.4f", t / (NR - 1) }' "$1"; }
    [ "$(head -1 mpi/log.csv | cut -d, -f1)" = time ] || die "log.csv's first column is not time"
    measured=$(mean_step mpi/log.csv)
    predicted=$(mean_step sim/log.csv)
    echo "time per step across two hosts: measured $measured s, simulated $predicted s"
    awk -v m="$measured" -v p="$predicted" 'BEGIN { exit !(m > 0.9 * p && m < 1.1 * p) }' ||
      die "measured $measured s per step is not within 10 % of the simulator's $predicted s"
    ;;

  remote_worker_killed)
    # kill -9 of worker 2 (rank 3) on the second host: the job goes on without it and returns
    # within worker_timeout_s + 30 s of the kill, exit status 0, with its outputs complete.
    write_paced_run $'name = "pgc-cr"\ns = 1' 100
    start_job
    wait_run_started
    victim=$(rank_child h2 3) || die "no pacer process of rank 3 on the second host"
    sleep 1
    kill -KILL "$victim" || die "rank 3 had ended before the kill: the run is too short"
    killed=$(date +%s.%N)
    wait_job "$job" 32
    echo "kill -9 of rank 3 on the second host to the end of mpiexec: $(since "$killed") s" \
      "(bound: worker_timeout_s + 30 = 32 s)"
    [ "$rc" = 0 ] || { cat out.txt >&2; die "mpiexec's exit status $rc, expected 0"; }
    for _ in $(seq 1 50); do  # the daemon may end a moment after mpiexec
      [ -z "$(ip netns pids "${netns[h2]}")" ] && break
      sleep 0.1
    done
    [ -z "$(ip netns pids "${netns[h2]}")" ] || die "processes left on the second host 5 s after mpiexec"
    grep -q '"status": "max_steps"' mpi/summary.json || die "the run did not reach max_steps"
    [ "$(grep -c . mpi/log.csv)" = 101 ] || die "log.csv does not hold 100 steps"
    tr -d ' \n' <mpi/summary.json | grep -qE '"lost_workers":\[\{[^]{}]*"worker":2\}\]' ||
      die "summary.json's lost_workers does not name worker 2 alone"
    [ -s mpi/config.toml ] || die "no config.toml"
    grep -q "rank 3 was killed by signal 9" out.txt || die "mpi-rank did not report the kill"
    ;;

  rank0_killed)
    # kill -9 of rank 0 (on the first host): rank 0's mpi-rank ends with 137, mpirun ends the
    # job, and every process on the second host is gone within worker_timeout_s + 30 s.
    write_paced_run $'name = "pgc-cr"\ns = 1' 100000
    start_job
    wait_run_started
    victim=$(rank_child h1 0) || die "no pacer process of rank 0"
    sleep 1
    kill -KILL "$victim"
    killed=$(date +%s.%N)
    for _ in $(seq 1 320); do
      [ -z "$(ip netns pids "${netns[h2]}")" ] && break
      sleep 0.1
    done
    [ -z "$(ip netns pids "${netns[h2]}")" ] ||
      die "processes still running on the second host 32 s after rank 0 died"
    echo "kill -9 of rank 0 to the second host's last process: $(since "$killed") s (bound: 32 s)"
    wait_job "$job" 32
    [ "$rc" = 137 ] || die "mpiexec exited $rc, expected 137 (rank 0's mpi-rank: 128 + SIGKILL)"
    grep -q '"status": "running"' mpi/summary.json || die "summary.json does not say running"
    ;;

  *)
    die "unknown check"
    ;;
esac
echo "PASS (multihost.$check)"
