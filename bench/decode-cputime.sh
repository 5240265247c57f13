#!/usr/bin/env bash
# The hq=32 hkv=8 lq=1 lk=32768 d=128 decode by CPU time (bench/decode_cputime.c):
# compiles it with attn-compile --openmp and runs it in one process with a read-
# bandwidth probe.
#   bash bench/decode-cputime.sh f32|bf16 THREADS [ITERS=15]
# ATTN_HUGEPAGES=1: K, V and the probe on 2 MiB pages; =paired: the call on
# 4 KiB and on 2 MiB pages alternated, their median time ratio (no probe).
# ATTN_KV_GAPS=G1,G2,...: K and V on 2 MiB pages with V G bytes after K's
# end, the gaps alternated call by call, each one's median (no probe).
# ATTN_COMPILE (default build/bin/attn-compile), CC (default clang-22, or cc).
set -eu
dt=$1 threads=$2 iters=${3:-15}
elt=4; [ "$dt" = bf16 ] && elt=2
AC=${ATTN_COMPILE:-build/bin/attn-compile}
CC=${CC:-$(command -v clang-22 || echo cc)}
libdir=$(llvm-config-22 --libdir)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$AC" --sdpa "hq=32,hkv=8,lq=1,lk=32768,d=128,dtype=$dt" --openmp -o "$out/libdecode.so"
"$CC" -O2 -fopenmp "$(dirname "$0")/decode_cputime.c" -o "$out/decode_cputime" \
  -ldl -L"$libdir" -Wl,-rpath,"$libdir"
OMP_WAIT_POLICY=passive "$out/decode_cputime" "$out/libdecode.so" "$elt" "$threads" "$iters"
