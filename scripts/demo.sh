#!/usr/bin/env bash
# Sets up and builds attn (scripts/setup.sh), then runs the main job: lowers
# an example attn.sdpa with attn-opt's naive CPU pipeline and executes it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/setup.sh"
LLVM_BIN="$(llvm-config-22 --bindir)"
LLVM_LIB="$(llvm-config-22 --libdir)"
EXAMPLE="$ROOT/test/Integration/CPU/lesson-mask.mlir"
echo "== attn-opt --attn-lower-naive-cpu $EXAMPLE | mlir-runner"
"$BUILD/bin/attn-opt" "$EXAMPLE" --attn-lower-naive-cpu |
  "$LLVM_BIN/mlir-runner" -e main -entry-point-result=void \
    -shared-libs="$LLVM_LIB/libmlir_runner_utils.so,$LLVM_LIB/libmlir_c_runner_utils.so"
