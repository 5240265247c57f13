#!/usr/bin/env bash
# The GPU device check (docs/gpu-check.md): builds attn (scripts/setup.sh),
# compiles the check and speed grid of scripts/gpu_check.py with attn-compile
# into a bundle of self-contained libraries, and prints the one command that
# runs it on a machine with an NVIDIA GPU (numpy and torch there).
#
# Usage: bash scripts/gpu-check.sh [--chip sm_90] [--out .gpu-bundle]
#   bash scripts/gpu-check.sh --dry-run     # the same grid for the CPU, run here
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
PY="${PYTHON:-python3}"
CHIP=sm_90
OUT="$ROOT/.gpu-bundle"
DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --chip) CHIP="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    *) echo "gpu-check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
bash "$ROOT/scripts/setup.sh"
rm -rf "$OUT"
if [ "$DRY" = 1 ]; then
  "$PY" "$ROOT/scripts/gpu_check.py" build --attn-compile "$BUILD/bin/attn-compile" \
    --target cpu --no-speed --out "$OUT"
  exec "$PY" "$OUT/gpu_check.py" run --bundle "$OUT" --out "$OUT/results" --no-speed
fi
"$PY" "$ROOT/scripts/gpu_check.py" build --attn-compile "$BUILD/bin/attn-compile" \
  --target cuda --chip "$CHIP" --tune --out "$OUT"
echo "gpu-check: on the GPU machine, from the directory holding $(basename "$OUT"):"
echo "  python3 $(basename "$OUT")/gpu_check.py run --bundle $(basename "$OUT") --out $(basename "$OUT")/results"
