#!/usr/bin/env bash
# Installs what pacer needs on Debian 12 (only what is missing), then configures and builds it.
# Idempotent: when everything is installed and built, it only re-checks and returns in seconds.
#
#   scripts/setup.sh [BUILD_DIR]      (default: build)
# Environment: PACER_NO_TORCH=1 skips libtorch (deep models); JOBS sets build parallelism (2);
# CI=true (set by CI services) builds with -Werror (PACER_WERROR=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
jobs=${JOBS:-2}

packages=(cmake g++ make pkg-config libeigen3-dev libfmt-dev libopenmpi-dev openmpi-bin
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev zlib1g-dev libgtest-dev libbenchmark-dev
  gnuplot-nox dataset-fashion-mnist libboost-math-dev
  python3-dev pybind11-dev python3-pandas python3-pytest)  # the Python package (docs/python.md)
if [ "${PACER_NO_TORCH:-0}" != 1 ]; then
  # Debian's libtorch uses reference BLAS unless OpenBLAS is installed (7x slower).
  packages+=(libtorch-dev libopenblas0-pthread)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

torch_flag=ON
[ "${PACER_NO_TORCH:-0}" = 1 ] && torch_flag=OFF
cached_flag=$(grep -s '^PACER_WITH_TORCH:' "$build_dir/CMakeCache.txt" | cut -d= -f2 || true)
# Warnings are errors in CI (CI=true) only, so a user's newer compiler never breaks the build.
werror_flag=OFF
[ "${CI:-}" = true ] && werror_flag=ON
cached_werror=$(grep -s '^PACER_WERROR:' "$build_dir/CMakeCache.txt" | cut -d= -f2 || true)
if [ ! -f "$build_dir/CMakeCache.txt" ] || [ "$cached_flag" != "$torch_flag" ] ||
  [ "$cached_werror" != "$werror_flag" ]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DPACER_WITH_TORCH=$torch_flag \
    -DPACER_WERROR=$werror_flag >&2
fi
cmake --build "$build_dir" -j "$jobs" >&2
