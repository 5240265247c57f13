#!/usr/bin/env bash
# Builds attn's libFuzzer targets (fuzz/) with Debian's clang-22, in the
# sanitizer build (scripts/sanitize.sh --build), and runs each for a bounded
# time:
#   attn-fuzz-passes   .mlir text: parse, verify, each attn pass and CPU
#                      pipeline (the backward's and varlen's too, and
#                      block sizes and splits in and out of their bounds),
#                      verify (seeded with test/**/*.mlir)
#   attn-fuzz-parsers  --sdpa specs and .npy files (seeded with the specs in
#                      test/ and a few NumPy-written .npy files)
# Usage: scripts/fuzz.sh [SECONDS per target, default 120]
# The corpora grow in $BUILD/fuzz-corpus/ across runs; crashes land in
# $BUILD/fuzz-artifacts/. Exit status 1 if a target found a crash.
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The sanitizer build (scripts/sanitize.sh) holds the fuzz targets: clang-22,
# the project's code with -fsanitize=fuzzer-no-link,address,undefined.
BUILD="${ATTN_ASAN_BUILD_DIR:-$ROOT/build-asan}"
SECS="${1:-120}"

ATTN_ASAN_BUILD_DIR="$BUILD" bash "$ROOT/scripts/sanitize.sh" --build

SEEDS="$BUILD/fuzz-seeds"
CORPUS="$BUILD/fuzz-corpus"
ARTIFACTS="$BUILD/fuzz-artifacts"
rm -rf "$SEEDS"
mkdir -p "$SEEDS/passes" "$SEEDS/parsers" "$CORPUS/passes" "$CORPUS/parsers" \
  "$ARTIFACTS"
# Every test .mlir, split at `// -----` into one seed per module.
python3 - "$ROOT/test" "$SEEDS/passes" <<'PY'
import pathlib, re, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for f in sorted(root.rglob("*.mlir")):
    for part in re.split(r"^// -----\s*$", f.read_text(), flags=re.M):
        (out / f"seed{n}.mlir").write_text(part)
        n += 1
PY
# Inputs that once crashed a target (fuzz/regressions/<target>-*).
for f in "$ROOT"/fuzz/regressions/passes-*; do cp "$f" "$SEEDS/passes/"; done
for f in "$ROOT"/fuzz/regressions/parsers-*; do
  [ -e "$f" ] && cp "$f" "$SEEDS/parsers/"
done
# Every --sdpa spec in the tests, and .npy files of each dtype and rank.
grep -rhoE -- '--sdpa [^ ]+' "$ROOT/test" | sed 's/^--sdpa //' | sort -u |
  awk -v d="$SEEDS/parsers" '{ f = d "/spec" NR; printf "%s", $0 > f; close(f) }'
python3 - "$SEEDS/parsers" <<'PY'
import sys, numpy as np
out = sys.argv[1]
for i, a in enumerate([np.zeros((2, 3), np.float32), np.ones((1, 2, 3, 4), np.float16),
                       np.array(1.5), np.zeros((3, 0, 2), np.float64),
                       np.zeros((2, 2), np.bool_), np.arange(6, dtype=np.float32).reshape(2, 3).T]):
    np.save(f"{out}/npy{i}.npy", a)
PY

# MLIR keeps uniqued storage until its context dies: leaks are not bugs here
# (-detect_leaks=0 below). allow_user_poisoning=0 as in scripts/sanitize.sh:
# LLVM's BumpPtrAllocator, inlined into the ASan-built fuzzers, poisons free
# slab space that libMLIR.so's uninstrumented copy of the same allocator
# (the attribute uniquer) later hands out without unpoisoning, so MLIR's own
# attribute construction reports a false use-after-poison, depending on which
# inputs ran before (first seen on test/Codegen/GPU/invalid.mlir's
# @d128 after 23 inputs; the same input alone does not report).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allow_user_poisoning=0"
status=0
run() {
  local name=$1 corpus=$2 seeds=$3
  shift 3
  echo "fuzz: $name for ${SECS}s"
  "$BUILD/bin/$name" -max_total_time="$SECS" -timeout=60 -rss_limit_mb=4096 \
    -artifact_prefix="$ARTIFACTS/$name-" -print_final_stats=1 "$@" \
    "$corpus" "$seeds" >"$BUILD/$name.log" 2>&1 || status=1
  grep -E '^#[0-9]+\s+DONE|^stat::number_of_executed_units|^stat::peak_rss_mb' \
    "$BUILD/$name.log" || true
  echo "fuzz: $name corpus $(ls "$corpus" | wc -l) files"
  if grep -qE 'ERROR: (AddressSanitizer|libFuzzer)|runtime error|deadly signal' \
    "$BUILD/$name.log"; then
    echo "fuzz: $name FOUND A CRASH (see $BUILD/$name.log, $ARTIFACTS)"
    status=1
  fi
}
# MLIR keeps uniqued storage until its context dies: leaks are not bugs here.
run attn-fuzz-passes "$CORPUS/passes" "$SEEDS/passes" -detect_leaks=0 -max_len=16384
run attn-fuzz-parsers "$CORPUS/parsers" "$SEEDS/parsers" -max_len=4096
exit $status
