#!/usr/bin/env bash
# Checks `pacer advise` against reality: real MPI runs of several methods, their job logs replayed
# by the simulator, predicted against measured time per step and time to target.
#
#   scripts/validate-advise.sh [--out DIR] [--steps S] [--seeds K]
#
# For each injection mode (engine.inject = pace: every job padded to a duration drawn from a known
# model, random_stragglers with τ = 0.03 s, q = 0.2, Exp(mean 0.1 s) delays; and inject = none:
# the machine's own speed), on 4 workers (mpirun -np 5, least squares, full-batch gradients):
#   1. every method of METHODS runs for real under mpirun (one `pacer compare --engine mpi`, one
#      seed), writing its jobs.csv;
#   2. pacer advise replays DGD's jobs.csv (the durations of the jobs the workers really ran, and
#      the message latency they show) for the same methods, K bootstrap seeds each;
#   3. a table per mode: per method the predicted time per step [95 % interval over seeds] and
#      time to target, the measured ones, and measured / predicted; and, to separate the
#      simulator's replay from the transfer of one method's timings to another, each method
#      predicted from its own jobs.csv.
# Output: OUT/report.md (default runs/validate-advise) and the same tables on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

out=runs/validate-advise steps=80 seeds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a folder}; shift ;;
    --steps) steps=${2:?--steps needs a number}; shift ;;
    --seeds) seeds=${2:?--seeds needs a number}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "validate-advise.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
methods=(dgd is-sgd:k=1 pgc-fr:s=1 pgc-cr:s=1 gc-cr:s=1)
pacer=build/pacer
scripts/setup.sh build
mkdir -p "$out"
start=$SECONDS

cat >"$out/validate.toml" <<EOF
seed = 1
workers = 4
max_steps = $steps
eval_every = 0
[data]
source = "synthetic"
generator = "least_squares"
samples = 20000
features = 200
[model]
name = "least_squares"
[training]
batch = 0
[optimizer]
lr = 0.05
[target]
loss = 0.2
stop = false
[timing]
model = "random_stragglers"
tau = 0.03
q = 0.2
delay_mean = 0.1
EOF

# compare.csv's column $3 of method $2 ($1 = compare.csv).
csv_column() {
  awk -F, -v m="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
    $1 == m { print $h[c]; exit }' "$1"
}

report="$out/report.md"
{
  echo "# pacer advise against real MPI runs"
  echo
  echo "Command: \`scripts/validate-advise.sh --out $out --steps $steps --seeds $seeds\`"
  echo "(4 workers, mpirun -np 5 --oversubscribe on $(nproc) cores; $steps steps per run; the"
  echo "prediction replays DGD's jobs.csv by bootstrap over $seeds seeds)."
} >"$report.tmp"

for inject in pace none; do
  dir="$out/$inject"
  mkdir -p "$dir"
  list=$(IFS=,; echo "${methods[*]}")
  mpirun --allow-run-as-root --oversubscribe -np 5 "$pacer" -q compare "$out/validate.toml" \
    --engine mpi --set engine.inject=$inject --methods "$list" --seeds 1 --budget steps="$steps" \
    --out "$dir/mpi" >"$dir/mpi.log" 2>&1 || { cat "$dir/mpi.log" >&2; exit 1; }
  measured="$dir/mpi/compare.csv"
  "$pacer" -q advise "$out/validate.toml" --trace "$dir/mpi/dgd/seed1/jobs.csv" --methods "$list" \
    --seeds "$seeds" --budget steps="$steps" --out "$dir/advise" >"$dir/advise.txt" 2>&1 ||
    { cat "$dir/advise.txt" >&2; exit 1; }
  predicted="$dir/advise/measured/compare.csv"
  # The replay's own fidelity: each method predicted from its own jobs.csv.
  for spec in "${methods[@]}"; do
    "$pacer" -q advise "$out/validate.toml" --trace "$dir/mpi/$spec/seed1/jobs.csv" --methods "$spec" \
      --seeds "$seeds" --budget steps="$steps" --out "$dir/own/$spec" >"$dir/own-$spec.txt" 2>&1 ||
      { cat "$dir/own-$spec.txt" >&2; exit 1; }
  done
  {
    echo
    echo "## engine.inject = $inject"
    echo
    grep '^message latency' "$dir/advise.txt" || true
    echo
    echo "| method | predicted s/step [95 %] | measured s/step | measured / predicted | predicted time to target (s) [95 %] | measured (s) | own log: predicted s/step | measured / predicted |"
    echo "|---|---|---|---|---|---|---|---|"
    for spec in "${methods[@]}"; do
      measured_step=$(csv_column "$measured" "$spec" step_time_mean)
      measured_target=""
      [ "$(csv_column "$measured" "$spec" reached)" = 0 ] ||
        measured_target=$(csv_column "$measured" "$spec" time_to_target_mean)
      p_mean=$(csv_column "$predicted" "$spec" step_time_mean)
      p_low=$(csv_column "$predicted" "$spec" step_time_low)
      p_high=$(csv_column "$predicted" "$spec" step_time_high)
      own=$(csv_column "$dir/own/$spec/measured/compare.csv" "$spec" step_time_mean)
      p_target=$(csv_column "$predicted" "$spec" time_to_target_mean)
      p_target_low=$(csv_column "$predicted" "$spec" time_to_target_low)
      p_target_high=$(csv_column "$predicted" "$spec" time_to_target_high)
      awk -v m="$spec" -v pm="$p_mean" -v pl="$p_low" -v ph="$p_high" -v ms="$measured_step" \
        -v own="$own" -v pt="$p_target" -v tl="$p_target_low" -v th="$p_target_high" -v mt="${measured_target:-}" 'BEGIN {
          printf "| %s | %.3g [%.3g, %.3g] | %.3g | %.3f | %s | %s | %.3g | %.3f |\n", m, pm, pl, ph,
            ms, ms / pm, (pt == "" ? "—" : sprintf("%.3g [%.3g, %.3g]", pt, tl, th)),
            (mt == "" ? "not reached" : sprintf("%.3g", mt)), own, ms / own }'
    done
  } >>"$report.tmp"
done
echo >>"$report.tmp"
echo "Wall time: $((SECONDS - start)) s." >>"$report.tmp"
mv "$report.tmp" "$report"
cat "$report"
