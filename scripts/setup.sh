#!/usr/bin/env bash
# Installs what attn needs (Debian 12 packages) and builds it into build/.
# Safe to run again: it installs only what is missing and rebuilds only what
# changed (Ninja + ccache).
# Usage: bash scripts/setup.sh   ($ATTN_BUILD_DIR: the build folder, default
# build/; ATTN_WITH_FUZZERS=1: clang-22 and libFuzzer too)
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
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

# The Python package (python/, docs/python.md), its tests and the GPU check's
# harness (scripts/gpu_check.py, dry-run in the suite) need numpy, ml_dtypes
# (bf16 arrays) and pytest from PyPI in the python3 on PATH, and
# `pip install ./python` its build backend, scikit-build-core (the suite
# installs the package offline: --no-build-isolation, into a venv that sees
# these); ATTN_WITH_FRAMEWORKS=1 adds the frameworks attn plugs into,
# PyTorch (~3 GB with the CUDA wheels PyPI's Linux torch needs), Hugging Face
# transformers and JAX (CPU): their tests skip without them, and CI
# (.ci/run) installs them so they run there.
py_missing=()
for m in numpy ml_dtypes pytest; do
  python3 -c "import $m" 2>/dev/null || py_missing+=("$m")
done
python3 -c "import scikit_build_core" 2>/dev/null ||
  py_missing+=("scikit-build-core==1.1.2")
# attn-import-onnx needs onnx (a 9 MB wheel) and its tests compare with
# onnxruntime (28 MB); ATTN_WITH_ONNX=0 leaves both out (the tests skip).
if [ "${ATTN_WITH_ONNX:-1}" = 1 ]; then
  python3 -c "import onnx" 2>/dev/null || py_missing+=("onnx==1.23.2")
  python3 -c "import onnxruntime" 2>/dev/null || py_missing+=("onnxruntime==1.32.0")
fi
# The SASS checks of the GPU kernels (test/Codegen/GPU/hopper-sass.mlir,
# attn-compile --emit=sass) disassemble cubins with nvdisasm, which the
# CUDA toolkit image lacks: PyPI's CUDA 13 wheels (nvdisasm, cuobjdump);
# ATTN_WITH_SASS=0 leaves them out (those checks then skip).
if [ "${ATTN_WITH_SASS:-1}" = 1 ]; then
  for wheel in nvidia-cuda-nvdisasm==13.5.37 nvidia-cuda-cuobjdump==13.4.92; do
    python3 -c "import importlib.metadata as m; m.files('${wheel%%==*}')" \
      2>/dev/null || py_missing+=("$wheel")
  done
fi
if [ "${ATTN_WITH_FRAMEWORKS:-0}" = 1 ]; then
  python3 -c "import torch" 2>/dev/null || py_missing+=("torch==2.15.0")
  python3 -c "import transformers" 2>/dev/null ||
    py_missing+=("transformers==5.25.0")
  python3 -c "import jax" 2>/dev/null || py_missing+=("jax[cpu]==0.10.2")
fi
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "setup: pip installing ${py_missing[*]}"
  python3 -m pip install --quiet "${py_missing[@]}"
fi
# This checkout's builds before python/pyproject.toml made `import attn` work
# through an attn.pth in site-packages naming its python/: pip install ./python
# does that now (docs/python.md), and the old file would shadow nothing but
# confuse.
pth="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/attn.pth"
if [ -f "$pth" ] && grep -qxF "$ROOT/python" "$pth"; then
  echo "setup: removing $pth (import attn: pip install ./python)"
  rm -f "$pth"
fi

# ATTN_PACKAGES_ONLY=1: install (Debian's packages and PyPI's above) and stop:
# scripts/sanitize.sh and scripts/fuzz.sh build elsewhere, and the sanitizer
# build's CTest run includes python-package, which needs scikit-build-core.
if [ "${ATTN_PACKAGES_ONLY:-0}" = 1 ]; then
  exit 0
fi

# ccache keys on paths relative to the checkout, so a fresh clone elsewhere
# (CI) reuses what an earlier build compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
export CCACHE_NOHASHDIR=1

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
