#!/usr/bin/env bash
# Sets up and builds attn (scripts/setup.sh), then runs the whole test suite:
# the lit tests (FileCheck, verifier diagnostics, end-to-end runs) and the
# GoogleTest unit tests, all through CTest.
# Usage: bash scripts/test.sh   ($ATTN_BUILD_DIR: the build folder, default build/)
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/setup.sh"
cd "$BUILD"
rm -f python/pytest-summary.txt
ctest --output-on-failure -j "$(nproc)"
# CTest shows a passing test's output only in its log: pytest's summary here.
if [ -f python/pytest-summary.txt ]; then
  echo "python-pytest (in the CTest run above): $(cat python/pytest-summary.txt)"
fi
