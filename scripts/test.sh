#!/usr/bin/env bash
# The README's second command: set up, build everything (tests and benchmarks included), and run
# every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
cd build
# One test more than the processors: many tests spend their time waiting (paced jobs, child
# processes, timeouts), and the timing-sensitive ones (MPI, local engine) run alone (RUN_SERIAL).
ctest --output-on-failure -j "${JOBS:-$(($(nproc) + 1))}" "$@"
