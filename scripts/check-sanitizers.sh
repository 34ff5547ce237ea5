#!/usr/bin/env bash
# The pre-merge sanitizer check: builds everything except libtorch (PACER_WITH_TORCH=OFF, no
# benchmarks) with AddressSanitizer + UndefinedBehaviorSanitizer in its own build folder and runs
# every test through CTest, the MPI ones included. Any ASan error, any undefined behaviour
# (-fno-sanitize-recover) and any leak in pacer's code fails the test it happens in.
#
#   scripts/check-sanitizers.sh [BUILD_DIR] [CTEST_ARGS...]     (default: build-asan)
# Then the ThreadSanitizer pass, scripts/check-tsan.sh, in TSAN_BUILD_DIR (default build-tsan).
# Environment: JOBS sets build and test parallelism (2).
#
# It installs nothing: it needs what scripts/setup.sh installs (run that, or scripts/test.sh,
# once first). Open MPI leaks by design at MPI_Init (hwloc topology, PMIx, component tables);
# those leaks, and only those, are suppressed by scripts/lsan-openmpi.supp, so leak detection
# stays on for pacer's own code. Open MPI is built without frame pointers, so the MPI tests run
# with ASan's slower exact unwinder (fast_unwind_on_malloc=0): only full allocation stacks reach
# the libmpi frames that the suppressions name.
#
# A test that expects `pacer` to fail must not hide a report in the output it swallows: every
# ASan/LSan report goes to a file under BUILD_DIR/sanitizer-logs, and any file there fails the
# check. UBSan (a separate runtime beside ASan) ignores log_path, so its reports stay on stderr,
# its exit status is 86 (not pacer's 1 or 2), and a "runtime error:" anywhere in CTest's log of
# all tests' output (Testing/Temporary/LastTest.log) fails the check too.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build_dir=${1:-build-asan}
[ $# -gt 0 ] && shift
jobs=${JOBS:-2}

if ! command -v cmake >/dev/null || ! command -v mpiexec >/dev/null; then
  echo "check-sanitizers: cmake or mpiexec missing; run scripts/setup.sh first" >&2
  exit 1
fi

sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# GCC's -Wmaybe-uninitialized misfires under -fsanitize=address (in std::regex, std::function);
# the normal build keeps the warning.
sanitize+=" -Wno-maybe-uninitialized"
# -O1 -g without -DNDEBUG: fast enough for the simulations, readable stacks, asserts on.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="$sanitize" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DPACER_WITH_TORCH=OFF -DPACER_BUILD_BENCH=OFF -DPACER_BUILD_TESTS=ON >&2

logs=$(cd "$build_dir" && pwd)/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
# Exported before building too: gtest_discover_tests runs the test programs at build time.
asan="detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=1:log_path=$logs/asan"
export ASAN_OPTIONS=$asan
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan-openmpi.supp:print_suppressions=0"

cmake --build "$build_dir" -j "$jobs" >&2
cd "$build_dir"
status=0
ubsan_in_log() {
  if grep -n -B3 -A12 'runtime error:' Testing/Temporary/LastTest.log >&2; then
    echo "check-sanitizers: undefined behaviour reported (above)" >&2
    status=1
  fi
}
ctest --output-on-failure -j "$jobs" -LE mpi "$@" || status=1
ubsan_in_log
ASAN_OPTIONS="$asan:fast_unwind_on_malloc=0" ctest --output-on-failure -j "$jobs" -L mpi "$@" ||
  status=1
ubsan_in_log

reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
  for f in $reports; do
    echo "==== $f" >&2
    cat "$f" >&2
  done
  echo "check-sanitizers: $(echo "$reports" | wc -l) sanitizer report(s), above" >&2
  status=1
fi
# The ThreadSanitizer pass: its own build folder (TSan and ASan cannot share one process).
(cd "$root" && scripts/check-tsan.sh "${TSAN_BUILD_DIR:-build-tsan}") || status=1
[ $status = 0 ] && echo "check-sanitizers: clean (no test failed, no sanitizer report)" >&2
exit $status
