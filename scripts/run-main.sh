#!/usr/bin/env bash
# The README's first command: set up, build, and run pacer's main job on the embedded data
# (Fashion-MNIST from Debian's dataset-fashion-mnist), printing the comparison table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
exec build/pacer compare configs/fashion-mnist.toml \
  --methods "${PACER_METHODS:-dgd,is-sgd:k=2,gc-fr,gc-cr,is-gc-fr,is-gc-cr,pgc-fr,pgc-cr,pgc-cr:decoder=exact}" \
  --seeds "${PACER_SEEDS:-1}" --out runs/main "$@"
