#!/usr/bin/env bash
# Prefill by CPU time through an AOT library (bench/aot_cputime.c): builds
# `attn-compile --sdpa SPEC` (one thread, no OpenMP) and reports the best of 5
# rounds of ITERS calls, ms per call and GFLOP/s (FLOPs as docs/op.md counts
# them; SPEC without masks, lse or window). For A/B runs of two compilers:
#   ATTN_COMPILE=old/attn-compile bash bench/aot-cputime.sh SPEC ITERS
# e.g. bash bench/aot-cputime.sh b=32,hq=12,lq=128,d=64 10
# CC (default clang-22, or cc). Extra arguments go to attn-compile.
set -eu
spec=$1 iters=$2
shift 2
AC=${ATTN_COMPILE:-build/bin/attn-compile}
CC=${CC:-$(command -v clang-22 || echo cc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
read -r qElems kvElems elt gflop < <(python3 - "$spec" <<'PY'
import sys
f = dict(kv.split("=") for kv in sys.argv[1].split(","))
# The driver passes Q, K, V and the output only: no mask, lse, key lengths,
# dynamic sizes or other operands.
other = set(f) - {"b", "hq", "hkv", "lq", "lk", "d", "dv", "dtype", "causal",
                  "scale", "softcap"}
if other:
    sys.exit("aot-cputime: not supported here: " + ", ".join(sorted(other)))
b, hq = int(f.get("b", 1)), int(f["hq"])
hkv = int(f.get("hkv", hq))
lq = int(f["lq"]); lk = int(f.get("lk", lq))
d = int(f["d"]); dv = int(f.get("dv", d))
if dv != d:
    sys.exit("aot-cputime: dv != d is not supported here")
elt = {"f32": 4, "bf16": 2, "f16": 2}[f.get("dtype", "f32")]
causal = f.get("causal", "none")
if causal == "none":
    pairs = lq * lk
else:
    shift = lk - lq if causal == "bottom_right" else 0
    pairs = sum(max(0, min(lk, i + shift + 1)) for i in range(lq))
print(b * hq * lq * d, b * hkv * lk * d, elt, 2 * b * hq * (d + dv) * pairs / 1e9)
PY
)
"$AC" --sdpa "$spec" "$@" -o "$out/libsdpa.so"
"$CC" -O2 "$(dirname "$0")/aot_cputime.c" -o "$out/aot_cputime" -ldl
"$out/aot_cputime" "$out/libsdpa.so" "$iters" "$qElems" "$kvElems" "$elt" "$gflop"
