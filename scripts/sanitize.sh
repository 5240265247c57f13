#!/usr/bin/env bash
# Builds attn's own code with clang-22 and -fsanitize=address,undefined
# (-fno-sanitize-recover=undefined; Debian's libMLIR.so and libLLVM.so and
# the JIT-compiled kernels are not instrumented) into its own build dir and
# runs the test suite there. Any sanitizer report fails the test it happens
# in. The same build holds the libFuzzer targets (-DATTN_BUILD_FUZZERS=ON:
# the code also carries libFuzzer's coverage counters), which scripts/fuzz.sh
# runs from it: CI compiles the instrumented code once, not once per script.
# Usage: bash scripts/sanitize.sh [--quick | --build]
#   scripts/sanitize.sh          the whole suite (unit tests and lit): ~20 min
#                                on 2 cores, 12 of them the Integration grids
#   scripts/sanitize.sh --quick  the GoogleTest unit tests and every lit test
#                                outside test/Integration/ (CI, ~5 min): the
#                                passes' lit tests, attn-run's and
#                                attn-compile's hostile inputs. The grids (the
#                                same passes on more shapes) and pytest (its
#                                170 s there are mostly Python and the
#                                uninstrumented libraries it loads) run
#                                unsanitized in scripts/test.sh
#   scripts/sanitize.sh --build  configure and build only (scripts/fuzz.sh)
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_ASAN_BUILD_DIR:-$ROOT/build-asan}"
MODE="${1:-}"
case "$MODE" in
"" | --quick | --build) ;;
*)
  echo "usage: scripts/sanitize.sh [--quick | --build]" >&2
  exit 2
  ;;
esac

ATTN_WITH_FUZZERS=1 ATTN_PACKAGES_ONLY=1 bash "$ROOT/scripts/setup.sh"
# ccache keys relative to the checkout, as in setup.sh: a fresh clone (CI)
# reuses what an earlier build compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
export CCACHE_NOHASHDIR=1
LLVM_PREFIX="$(llvm-config-22 --prefix)"
# A build dir configured before it held the fuzz targets (gcc, no fuzzers)
# is configured afresh: CMake keeps a build dir's compiler.
if [ -f "$BUILD/CMakeCache.txt" ] &&
  ! grep -q '^ATTN_BUILD_FUZZERS:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  echo "sanitize: $BUILD predates the clang-22 build with the fuzz targets; configuring it afresh"
  rm -rf "$BUILD/CMakeCache.txt" "$BUILD/CMakeFiles" "$BUILD/build.ninja"
fi
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release -DATTN_SANITIZE=ON -DATTN_BUILD_FUZZERS=ON \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake --build "$BUILD" -j "$(nproc)"
[ "$MODE" = --build ] && exit 0

# halt_on_error/abort: a report fails the test. allocator_may_return_null:
# attn-run's own out-of-memory handling (new handler, size checks) is what
# the hostile-size tests check, not ASan's allocation-size limit. Leaks are
# not checked: MLIR's contexts keep uniqued storage by design.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator (an inline template of
# llvm/Support/Allocator.h) poisons its free slab space when compiled with
# ASan. attn's instrumented copy and libMLIR.so's uninstrumented copy share
# the same allocators (MLIR's attribute and type uniquers), so memory that
# libMLIR.so hands out from a slab attn's copy poisoned stays poisoned: false
# use-after-poison reports in MLIR's own code. Manual poisoning is off.
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:abort_on_error=1:handle_segv=1:allow_user_poisoning=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1"
cd "$BUILD"
if [ "$MODE" = --quick ]; then
  # The Python package is installed and tested from the normal build
  # (scripts/test.sh); here only the instrumented C++.
  ctest --output-on-failure -j "$(nproc)" -E '^(lit|python-pytest|python-package)$'
  "$LLVM_PREFIX/bin/lit" -sv -j "$(nproc)" --filter-out '^ATTN :: Integration/' \
    "$BUILD/test"
else
  ctest --output-on-failure -j "$(nproc)"
fi
