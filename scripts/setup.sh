#!/usr/bin/env bash
# Installs what attn needs (Debian 12 packages) and builds it into build/.
# Safe to run again: it installs only what is missing and rebuilds only what
# changed (Ninja + ccache).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libomp-22-dev
  cmake ninja-build ccache g++ libgtest-dev python3
)
# The fuzz targets (scripts/fuzz.sh, -DATTN_BUILD_FUZZERS=ON) need clang and
# its libFuzzer runtime; the normal build does not.
if [ "${ATTN_WITH_FUZZERS:-0}" = 1 ]; then
  APT_PACKAGES+=(clang-22 libclang-rt-22-dev)
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# ATTN_PACKAGES_ONLY=1: install and stop (scripts/fuzz.sh builds elsewhere).
if [ "${ATTN_PACKAGES_ONLY:-0}" = 1 ]; then
  exit 0
fi

# The GPU check's harness (scripts/gpu_check.py) and its CPU dry run in the
# test suite need NumPy in the python3 on PATH.
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "setup: pip installing numpy into $("$PY" -c 'import sys; print(sys.prefix)')"
  "$PY" -m pip install --quiet numpy
fi

LLVM_PREFIX="$(llvm-config-22 --prefix)"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
# Two cores: two compile jobs, and the link jobs are small (libMLIR.so).
cmake --build "$BUILD" -j "$(nproc)"
