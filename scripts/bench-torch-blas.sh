#!/usr/bin/env bash
# One work unit of the libtorch models (bench/torch_bench) with reference BLAS and with OpenBLAS,
# side by side in one run, and the time ratio of each benchmark.
#
# Debian's libtorch links libblas.so.3, which the alternatives system points at OpenBLAS when
# libopenblas0-pthread is installed and at the reference BLAS (libblas3) otherwise. Both libraries
# live in their own folders, so the same binary is run twice with LD_LIBRARY_PATH naming one folder
# first; each run's benchmark label reports the library that actually provided sgemm_.
#
# The two libraries run in alternation (reference, openblas, reference, ...) for ROUNDS rounds so
# that load from other processes on a shared machine hits both alike; the table shows the median
# over rounds of the main thread's CPU time per work unit (and of the wall time), and the ratio of
# the CPU times.
#
# Usage: scripts/bench-torch-blas.sh [BUILD_DIR]   (default: build)
# Environment: ROUNDS (default 3), MIN_TIME (seconds per benchmark and round, default 1),
# PACER_TORCH_THREADS (default 1), BENCH_FILTER (a --benchmark_filter regex, default all).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
bench="$build_dir/bench/torch_bench"
libdir=/usr/lib/x86_64-linux-gnu
reference="$libdir/blas:$libdir/lapack"
openblas="$libdir/openblas-pthread"

if [[ ! -x "$bench" ]]; then
  echo "bench-torch-blas: $bench not found; build it with: cmake --build $build_dir --target torch_bench" >&2
  exit 1
fi
if ! dpkg-query -W -f='${Status}' libblas3 2>/dev/null | grep -q "install ok installed"; then
  if [[ $(id -u) -eq 0 ]]; then
    apt-get install -y libblas3 >&2
  else
    echo "bench-torch-blas: the reference BLAS (package libblas3) is not installed; run: sudo apt-get install -y libblas3" >&2
    exit 1
  fi
fi
for dir in "$libdir/blas" "$openblas"; do
  if [[ ! -e "$dir/libblas.so.3" ]]; then
    echo "bench-torch-blas: $dir/libblas.so.3 not found (packages libblas3, libopenblas0-pthread)" >&2
    exit 1
  fi
done

export PACER_TORCH_THREADS=${PACER_TORCH_THREADS:-1}
export OPENBLAS_NUM_THREADS=$PACER_TORCH_THREADS
export OMP_NUM_THREADS=$PACER_TORCH_THREADS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {  # run NAME LD_LIBRARY_PATH ROUND
  LD_LIBRARY_PATH="$2" "$bench" --benchmark_min_time="${MIN_TIME:-1}" \
    --benchmark_filter="${BENCH_FILTER:-.}" --benchmark_format=csv \
    >"$tmp/$1.$3.csv" 2>"$tmp/$1.$3.err" || {
    cat "$tmp/$1.$3.err" >&2
    exit 1
  }
  if [[ $3 -eq 1 ]]; then
    echo "== $1 (LD_LIBRARY_PATH=$2)" >&2
    grep -E '^(torch|blas|openblas)' "$tmp/$1.$3.err" >&2 || true
  fi
}
rounds=${ROUNDS:-3}
for ((r = 1; r <= rounds; r++)); do
  run reference "$reference" "$r"
  run openblas "$openblas" "$r"
done

# CSV: a header line naming the columns (name, real_time, cpu_time, time_unit, label, ...).
awk -F, '
  function median(a, m,    i, j, x) {  # of a[1..m]; sorts a
    for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  FNR == 1 {
    lib = FILENAME ~ /reference/ ? 1 : 2
    for (c = 1; c <= NF; c++) col[$c] = c
    next
  }
  $1 ~ /^"?BM_/ {
    name = $1; gsub(/"/, "", name); sub(/\/real_time$/, "", name)
    if (!(name in seen)) { seen[name] = 1; order[++n] = name }
    k = ++count[lib, name]
    cpu[lib, name, k] = $col["cpu_time"]; wall[lib, name, k] = $col["real_time"]
    unit[name] = $col["time_unit"]
    label = $col["label"]; gsub(/"/, "", label); if (label != "") blas[lib] = label
  }
  END {
    printf "%-20s %13s %13s %13s %13s %10s\n", "work unit (21 rows)", "ref cpu", "openblas cpu", "ref wall", "openblas wall", "cpu ratio"
    for (i = 1; i <= n; i++) {
      k = order[i]
      for (l = 1; l <= 2; l++) {
        m = count[l, k]
        for (j = 1; j <= m; j++) { a[j] = cpu[l, k, j] } ; cm[l] = median(a, m)
        for (j = 1; j <= m; j++) { a[j] = wall[l, k, j] } ; wm[l] = median(a, m)
      }
      printf "%-20s %10.2f %-2s %10.2f %-2s %10.2f %-2s %10.2f %-2s %10.2f\n", k, cm[1], unit[k], cm[2], unit[k], wm[1], unit[k], wm[2], unit[k], cm[1] / cm[2]
    }
    printf "\nmedians over %d rounds; cpu ratio = reference / openblas\nsgemm_ from:\n  reference run: %s\n  openblas run:  %s\n", count[1, order[1]], blas[1], blas[2]
  }' "$tmp"/reference.*.csv "$tmp"/openblas.*.csv
