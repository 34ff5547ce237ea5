#!/usr/bin/env bash
# Measures the MPI engine's overhead and prints the tables quoted in docs/mpi.md: every
# synchronous method's real time per step against its decisive job's time (inject = pace), and
# messages of the model's size through the engine against a plain MPI ping-pong, in one MPI job.
#
#   scripts/bench-mpi.sh [mpi_overhead options]     e.g. --dim 1000000 --tau 0.25 --steps 12
# Environment: BUILD_DIR (default build), WORKERS (default 4: mpirun -np WORKERS+1), JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
workers=${WORKERS:-4}
[ -f "$build_dir/CMakeCache.txt" ] || scripts/setup.sh "$build_dir"
cmake --build "$build_dir" --target mpi_overhead -j "${JOBS:-2}" >&2
flags=(--oversubscribe)
[ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
exec mpirun "${flags[@]}" -np $((workers + 1)) "$build_dir/bench/mpi_overhead" "$@"
