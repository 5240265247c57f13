#!/usr/bin/env bash
# Sets up and builds attn (scripts/setup.sh), then runs the main job: one
# attention of a few thousand tokens through the fused and the naive CPU
# lowering, checked against each other and an f64 reference, and timed.
# Usage: bash scripts/demo.sh   ($ATTN_DEMO_SPEC: another --sdpa spec)
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/setup.sh"
SPEC="${ATTN_DEMO_SPEC:-b=1,hq=8,hkv=2,lq=2048,lk=2048,d=64,causal=bottom_right,lse=1}"
echo "== attn-run --sdpa $SPEC --bench 3 --peak"
"$BUILD/bin/attn-run" --sdpa "$SPEC" --bench 3 --peak
