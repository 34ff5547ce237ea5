#!/usr/bin/env bash
# A one-node Slurm for the MPI suite's Slurm checks (slurm_checks.sh), sourced by them:
#   source slurm_setup.sh; slurm_up DIR
# starts munged (if it is not running), and slurmctld and slurmd in the foreground of background
# jobs with a configuration of their own in DIR (SLURM_CONF points at it: the system's
# /etc/slurm is neither read nor changed), one partition over this machine, and waits until the
# node is idle. slurm_down stops what slurm_up started (munged too if it started it). Functions return 77 with a message (the
# caller skips) where Slurm cannot be started: not root, or Debian's slurmctld, slurmd,
# slurm-client or munge not installed (scripts/test.sh installs them).

slurm_started=()
slurm_munged_started=0

slurm_skip_reason() {
  [ "$(id -u)" = 0 ] || { echo "a one-node Slurm needs root"; return 0; }
  local tool
  for tool in slurmctld slurmd srun sinfo salloc munged munge; do
    command -v "$tool" >/dev/null ||
      { echo "no $tool (Debian's slurmctld, slurmd, slurm-client and munge)"; return 0; }
  done
  return 1
}

slurm_up() {
  local dir=$1 reason
  if reason=$(slurm_skip_reason); then
    echo "SKIPPED: $reason"
    return 77
  fi
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  local cpus
  cpus=$(nproc)
  cat >"$dir/slurm.conf" <<EOF
ClusterName=pacer-test
SlurmctldHost=$(hostname -s)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
KillWait=5
NodeName=$(hostname -s) CPUs=$cpus State=UNKNOWN
PartitionName=pacer Nodes=$(hostname -s) Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  # A controller left by an earlier check that was killed would answer on the same ports.
  pkill -f "slurmctld -D -i -f .*/slurm.conf" 2>/dev/null
  pkill -f "slurmd -D -f .*/slurm.conf" 2>/dev/null
  sleep 0.5
  # munged: used if one answers (munge -n), else started here (and stopped by slurm_down).
  if ! munge -n </dev/null >/dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
    if id munge >/dev/null 2>&1; then
      su -s /bin/sh munge -c munged 2>"$dir/log/munged.txt" || munged --force 2>>"$dir/log/munged.txt"
    else
      munged --force 2>"$dir/log/munged.txt"
    fi
    slurm_munged_started=1
    local _
    for _ in $(seq 1 100); do  # munged forks into the background before its socket exists
      munge -n </dev/null >/dev/null 2>&1 && break
      sleep 0.1
    done
    munge -n </dev/null >/dev/null 2>&1 ||
      { cat "$dir/log/munged.txt"; echo "SKIPPED: munged did not start"; return 77; }
  fi
  slurmctld -D -i -f "$dir/slurm.conf" >"$dir/log/slurmctld.txt" 2>&1 &
  slurm_started+=($!)
  slurmd -D -f "$dir/slurm.conf" >"$dir/log/slurmd.txt" 2>&1 &
  slurm_started+=($!)
  local deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    timeout 5 sinfo -h -o %t 2>/dev/null | grep -qx idle && return 0
    sleep 0.2
  done
  tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" 2>/dev/null
  echo "FAIL: the one-node Slurm did not become idle within 60 s"
  return 1
}

slurm_down() {
  local pid
  # The jobs first (their slurmstepd outlives slurmd), then the daemons.
  [ ${#slurm_started[@]} -gt 0 ] && timeout 10 scancel --full --quiet --user=root 2>/dev/null
  for pid in "${slurm_started[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${slurm_started[@]}"; do wait "$pid" 2>/dev/null; done
  slurm_started=()
  if [ "$slurm_munged_started" = 1 ]; then
    [ -s /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null
    for _ in $(seq 1 50); do pgrep -x munged >/dev/null || break; sleep 0.1; done
  fi
  slurm_munged_started=0
  return 0
}
