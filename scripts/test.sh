#!/usr/bin/env bash
# The README's second command: set up, build everything (tests and benchmarks included), and run
# every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build

# Used only by the MPI suite's checks under a one-node Slurm and across emulated hosts, which need
# root and skip with a message without them: installed when running as root and Debian's
# registry is reachable, never fatal.
test_packages=(slurmd slurmctld slurm-client munge iproute2)
missing=()
for p in "${test_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Only as root: the checks need root, and skip otherwise.
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  echo "test: installing ${missing[*]} (for the Slurm and multi-host checks)" >&2
  { apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}"; } >&2 ||
    echo "test: could not install ${missing[*]}: those checks will be skipped" >&2
fi

cd build
# One test more than the processors: many tests spend their time waiting (paced jobs, child
# processes, timeouts), and the timing-sensitive ones (MPI, local engine) run alone (RUN_SERIAL).
ctest --output-on-failure -j "${JOBS:-$(($(nproc) + 1))}" "$@"
