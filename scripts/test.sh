#!/usr/bin/env bash
# Sets up and builds attn (scripts/setup.sh), then runs the whole test suite:
# the lit tests (FileCheck, verifier diagnostics, end-to-end runs) and the
# GoogleTest unit tests, all through CTest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/setup.sh"
cd "$BUILD"
ctest --output-on-failure -j "$(nproc)"
