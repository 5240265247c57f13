#!/usr/bin/env bash
# The quick figures quoted in docs/performance.md (first run:
# journal/rounds-01-02.md, "Kernel paths", "User masks"): each row one attn-run process that
# measures its own f32 FMA peak, bf16 dot-product peak (where the CPU has
# avx512_bf16) and, with --bench, its read bandwidth; quote ratios, not
# times. bf16 against f32 decode is timed call by call in one process
# (bench/ab.py, numpy; attn-compile beside ATTN_RUN). About 5 minutes.
#
# Usage: bash bench/figures.sh [ATTN_RUN]   (default build/bin/attn-run)
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
R="${1:-$ROOT/build/bin/attn-run}"
grep -m1 "model name" /proc/cpuinfo
echo "flags: $(grep -m1 -o -w 'avx2\|avx512f\|avx512_bf16\|amx_tile\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"
uptime
run() {
  echo "### attn-run $* --check none --peak"
  "$R" "$@" --check none --peak 2>&1 | grep -E "fused|peak|roofline|pages"
}
for d in 64 128; do
  for dt in f32 bf16; do
    run --sdpa hq=8,lq=4096,d=$d,dtype=$dt --threads 1 --bench 5
  done
done
# Causal: issue 15 asks for 85% of the peak at L >= 2048 and 70% at L = 512.
for L in 4096 2048 512; do
  run --sdpa hq=8,lq=$L,d=64,causal=bottom_right --threads 1 --bench 5
done
# A sliding window of 256 keys (no target; its blocks on both edges of the
# band skip the pairs they hide).
run --sdpa hq=8,lq=4096,d=64,window=256:0 --threads 1 --bench 5
for dt in f32 bf16; do
  for t in 1 2; do
    run --sdpa hq=32,hkv=8,lq=1,lk=32768,d=128,dtype=$dt --threads $t --bench 20
  done
done
# The same decode with Q, K, V and the output on 2 MiB transparent huge
# pages (--huge-pages: as NumPy allocates its arrays; attn-run's own tensors
# are on 4 KiB pages, as a C caller's malloc gives them), one thread.
for dt in f32 bf16; do
  run --sdpa hq=32,hkv=8,lq=1,lk=32768,d=128,dtype=$dt --threads 1 --bench 20 --huge-pages
done
# bf16 against f32 decode (issue 15 asks for 1.8x) in one process, call by
# call: bench/ab.py alternates the two libraries, each call after a
# 256 MiB read (as attn-run's read probe), inputs on 4 KiB pages (as
# attn-run's), in 4 copies called in turn (where K and V lie moves a decode's
# time: journal/round-30.md); B/A is the bf16 call's time over
# the f32 call's. Two threads: wall time (--threads 2 compiles with --openmp).
AC="$(dirname "$R")/attn-compile"
S=hq=32,hkv=8,lq=1,lk=32768,d=128
for t in 1 2; do
  echo "### ab f32 (A) against bf16 (B) decode, $t thread(s)"
  python3 "$ROOT/bench/ab.py" $S --pairs 24 --a "$AC" --b "$AC" --threads $t \
    --b-spec=$S,dtype=bf16 --copies=4 --pages=small --cold=256
done
# Decode with one query row per K/V head (hq = hkv, f32 d=128): its kernel
# leaves K and V to the hardware prefetchers (decode-prefetch=auto; the same
# bytes as the rows above), and against every prefetch (all) call by call.
run --sdpa hq=32,lq=1,lk=8192,d=128 --threads 1 --bench 20
echo "### ab --decode-prefetch=all (A) against auto (B), hq=hkv=32 decode, 1 thread"
python3 "$ROOT/bench/ab.py" hq=32,lq=1,lk=8192,d=128 --pairs 24 --a "$AC" --b "$AC" \
  --a-args=--decode-prefetch=all --copies=4 --pages=small --cold=256
for t in 1 2; do
  run --sdpa hq=8,hkv=1,lq=1,lk=32768,d=128 --threads $t --bench 30
done
run --sdpa hq=8,hkv=1,lq=1,lk=32768,d=128 --threads 2 --bench 30 --kv-splits 1
# User masks: b=1 hq=8 Lq=1000 Lk=3001 d=80 unmasked, then i1 and float masks
# in each broadcast pattern (key padding, one [Lq, Lk] for all heads, full).
M=hq=8,lq=1000,lk=3001,d=80
run --sdpa $M --threads 1 --bench 5
for kind in bool float; do
  for shape in 1x1x1x3001 1x1x1000x3001 1x8x1000x3001; do
    run --sdpa $M,mask=$kind,mask_shape=$shape --threads 1 --bench 5
  done
done
# Short sequences (BERT-base shapes) and f16 beside bf16 and f32, 2 threads.
run --sdpa b=32,hq=12,lq=128,d=64 --threads 2 --bench 20
for dt in f16 bf16 f32; do
  run --sdpa hq=8,lq=4096,d=64,dtype=$dt --threads 2 --bench 5
done
