#!/usr/bin/env bash
# The README's second command: set up, build everything (tests and benchmarks included), and run
# every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
cd build
ctest --output-on-failure -j "${JOBS:-2}" "$@"
