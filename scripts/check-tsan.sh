#!/usr/bin/env bash
# The ThreadSanitizer pass of the pre-merge check (scripts/check-sanitizers.sh runs it after the
# ASan/UBSan pass; it also runs alone): builds the simulator, the experiment layer and their
# tests with -fsanitize=thread in its own build folder (no MPI: Open MPI's progress threads are
# not instrumented and report races inside the library; no libtorch) and runs the suites that
# start threads: the compute-ahead pool and the evaluation threads (engine, experiment: threads,
# target watch), the cluster protocol on the in-process transport (cluster: workers on threads)
# and the local engine (local), and the CLI runs with engine.threads > 1
# (determinism, resume). Any data race or other TSan report fails the check.
#
#   scripts/check-tsan.sh [BUILD_DIR] [CTEST_ARGS...]     (default: build-tsan)
# Environment: JOBS sets build and test parallelism (2).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-tsan}
[ $# -gt 0 ] && shift
jobs=${JOBS:-2}

sanitize="-fsanitize=thread -fno-omit-frame-pointer -Wno-maybe-uninitialized -Wno-tsan"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="$sanitize" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DPACER_WITH_MPI=OFF \
  -DPACER_WITH_TORCH=OFF -DPACER_BUILD_BENCH=OFF -DPACER_BUILD_TESTS=ON >&2

logs=$(cd "$build_dir" && pwd)/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
# Exported before building too: gtest_discover_tests runs the test programs at build time.
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:log_path=$logs/tsan"
cmake --build "$build_dir" -j "$jobs" --target pacer pacer_engine_tests pacer_cluster_tests \
  pacer_local_tests pacer_experiment_tests pacer_cli_tests >&2
cd "$build_dir"
status=0
# The suites with threads: every engine and experiment test, and the CLI's determinism and resume
# runs (their runs use engine.threads > 1 where the machine has more than one processor).
ctest --output-on-failure -j "$jobs" -L '^(engine|cluster|local|experiment)$' "$@" || status=1
ctest --output-on-failure -j "$jobs" -L '^cli$' -R 'Resume|Thread|Determin' "$@" || status=1
reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
  for f in $reports; do
    echo "==== $f" >&2
    cat "$f" >&2
  done
  echo "check-tsan: $(echo "$reports" | wc -l) ThreadSanitizer report(s), above" >&2
  status=1
fi
[ $status = 0 ] && echo "check-tsan: clean (no test failed, no ThreadSanitizer report)" >&2
exit $status
