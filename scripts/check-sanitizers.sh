#!/usr/bin/env bash
# The pre-merge sanitizer check: builds everything except libtorch (PACER_WITH_TORCH=OFF, no
# benchmarks) with AddressSanitizer + UndefinedBehaviorSanitizer in its own build folder and runs
# every test through CTest, the MPI ones included. Any ASan error, any undefined behaviour
# (-fno-sanitize-recover) and any leak in pacer's code fails the test it happens in.
#
#   scripts/check-sanitizers.sh [BUILD_DIR] [CTEST_ARGS...]     (default: build-asan)
# Environment: JOBS sets build and test parallelism (2).
#
# It installs nothing: it needs what scripts/setup.sh installs (run that, or scripts/test.sh,
# once first). Open MPI leaks by design at MPI_Init (hwloc topology, PMIx, component tables);
# those leaks, and only those, are suppressed by scripts/lsan-openmpi.supp, so leak detection
# stays on for pacer's own code.
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
# -O1 -g without -DNDEBUG: fast enough for the simulations, readable stacks, asserts on.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="$sanitize" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DPACER_WITH_TORCH=OFF -DPACER_BUILD_BENCH=OFF -DPACER_BUILD_TESTS=ON >&2

# Exported before building too: gtest_discover_tests runs the test programs at build time.
export ASAN_OPTIONS="detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan-openmpi.supp:print_suppressions=0"

cmake --build "$build_dir" -j "$jobs" >&2
cd "$build_dir"
ctest --output-on-failure -j "$jobs" "$@"
