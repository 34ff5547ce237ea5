#!/usr/bin/env bash
# Time per step and peak memory of simulated runs with n = 12, 100 and 1000 workers and
# d = 10^5 parameters, one method per family (issue #15, "A thousand workers"); prints one table.
#
#   scripts/bench-scale.sh [N ...]          (default: 12 100 1000)
# Environment: BUILD_DIR (default build), ROWS (rows per worker, default 1), WORK (default 4000:
# each cell measures max(4, WORK / n) steps, about the same work at every n), METHODS (default
# below), JOBS.
#
# Every cell is two runs of `pacer run configs/scale.toml` in their own processes, with 1 and
# 1 + K steps, K = max(4, WORK / n) (asynchronous methods: n and n·(1 + K) updates, so a "step"
# is n updates):
#   wall s/step  the difference of the two runs' wall-clock seconds ÷ K, so that start-up
#                (data generation, the encoding, writing the outputs) cancels
#   sim s/step   simulated seconds per step of the longer run (log.csv's last row: time ÷ step)
#   peak RSS     the longer run's maximum resident set size (GNU time's %M)
#   start s      the shorter run's wall seconds (start-up plus one step)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
rows=${ROWS:-1}
work=${WORK:-4000}
methods=${METHODS:-"dgd gc-cr:s=2 pgc-cr:s=2 pgc-fr:s=3 rescaled-asgd"}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(12 100 1000)

need=()
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
[ -f "$build_dir/CMakeCache.txt" ] || scripts/setup.sh "$build_dir"
cmake --build "$build_dir" --target pacer -j "${JOBS:-2}" >&2
pacer=$build_dir/pacer
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# run NAME N STEPS METHOD [KEY=VALUE ...]: one run; leaves NAME.time (wall seconds, peak kB).
run() {
  local name=$1 n=$2 max_steps=$3 method=$4
  shift 4
  local sets=(--set "workers=$n" --set "data.samples=$((rows * n))" --set "max_steps=$max_steps"
    --set "method.name=$method")
  for kv in "$@"; do sets+=(--set "method.$kv"); done
  if ! /usr/bin/time -f '%e %M' -o "$out/$name.time" "$pacer" -q run configs/scale.toml \
    "${sets[@]}" --out "$out/$name" > "$out/$name.log" 2>&1; then
    echo "bench-scale: $name failed:" >&2
    tail -5 "$out/$name.log" >&2
    return 1
  fi
}

printf '%-16s %6s %12s %12s %10s %9s\n' method n "wall s/step" "sim s/step" "peak RSS" "start s"
for n in "${sizes[@]}"; do
  steps=$((work / n > 4 ? work / n : 4))
  for spec in $methods; do
    method=${spec%%:*}
    params=()
    [ "$spec" = "$method" ] || IFS=, read -r -a params <<< "${spec#*:}"
    unit=1
    case $method in *asgd | rennala | malenia | ringleader | ringmaster) unit=$n ;; esac
    run short "$n" "$unit" "$method" "${params[@]}"
    run long "$n" $((unit * (1 + steps))) "$method" "${params[@]}"
    read -r short_wall _ < "$out/short.time"
    read -r long_wall long_kb < "$out/long.time"
    sim=$(awk -F, -v u="$unit" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
      { t = $h["time"]; s = $h["step"] } END { print t / (s / u) }' "$out/long/log.csv")
    awk -v m="$spec" -v n="$n" -v s="$short_wall" -v l="$long_wall" -v k="$steps" -v sim="$sim" \
      -v kb="$long_kb" 'BEGIN { printf "%-16s %6d %12.3f %12.3f %7.2f GB %9.2f\n",
        m, n, (l - s) / k, sim, kb * 1024 / 1e9, s }'
    rm -rf "$out/short" "$out/long"
  done
done
echo "rows per worker $rows, d = 100000, max(4, $work / n) steps measured; $(nproc) cores," \
  "$(awk '/MemTotal/ { printf "%.1f GB", $2 * 1024 / 1e9 }' /proc/meminfo)," \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
