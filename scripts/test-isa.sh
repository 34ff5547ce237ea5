#!/usr/bin/env bash
# Runs the test suite once per instruction-set setting of the kernels libtorch uses, so that a
# verdict that depends on which kernels a CPU selects shows up on this machine:
#   (as built)                   the kernels this CPU selects
#   ONEDNN_MAX_CPU_ISA=AVX2      oneDNN (float32 convolutions) capped at AVX2
#   ONEDNN_MAX_CPU_ISA=SSE41     oneDNN capped at SSE4.1
#   OPENBLAS_CORETYPE=Haswell    OpenBLAS (gemm of the fully connected layers, float64 convs)
#   OPENBLAS_CORETYPE=Sandybridge
#   OPENBLAS_CORETYPE=Prescott   OpenBLAS's SSE3 kernels
# Before each run it prints what `pacer version` reports for that setting (OpenBLAS's kernel set
# and oneDNN's effective ISA), so a setting that changes nothing is visible as such.
#
#   scripts/test-isa.sh [BUILD_DIR] [-- CTEST_ARGS...]   (default build; e.g. -- -L torch)
# Builds nothing: run scripts/test.sh first. Exit status: the number of settings that failed.
set -uo pipefail
cd "$(dirname "$0")/.."
build_dir=build
if [[ $# -gt 0 && $1 != -- ]]; then
  build_dir=$1
  shift
fi
[[ ${1:-} == -- ]] && shift
if [[ ! -x $build_dir/pacer ]]; then
  echo "test-isa: $build_dir/pacer not found; run scripts/test.sh first" >&2
  exit 1
fi
settings=("" "ONEDNN_MAX_CPU_ISA=AVX2" "ONEDNN_MAX_CPU_ISA=SSE41" "OPENBLAS_CORETYPE=Haswell"
  "OPENBLAS_CORETYPE=Sandybridge" "OPENBLAS_CORETYPE=Prescott")
failed=0
summary=""
for setting in "${settings[@]}"; do
  label=${setting:-"(as built)"}
  echo "== $label"
  env $setting "$build_dir/pacer" version | grep -E 'openblas|oneDNN' | sed 's/^/   /'
  start=$(date +%s)
  if (cd "$build_dir" && env $setting ctest --output-on-failure -j "${JOBS:-2}" "$@" >"ctest-isa.log" 2>&1); then
    verdict=pass
  else
    verdict=FAIL
    failed=$((failed + 1))
    grep -E 'Failed|\*\*\*' "$build_dir/ctest-isa.log" | head -20
  fi
  line=$(grep -E 'tests passed' "$build_dir/ctest-isa.log" | tail -1)
  summary+=$(printf '%-32s %s  %s (%ss)' "$label" "$verdict" "$line" "$(($(date +%s) - start))")$'\n'
done
echo
echo "$summary"
exit $failed
