#!/bin/bash
# The OpenMP schedule A/B of journal/round-11.md: the query
# blocks' loops with --omp-schedule=static (A) against the default guided (B),
# 2 threads, wall clock, bench/ab-paired.py on four shapes; first as the
# machine is, then with a busy loop on core 1 (another job on a shared
# machine). ATTN_COMPILE: the compiler (default build/bin/attn-compile).
set -euo pipefail
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=2
cc=${ATTN_COMPILE:-build/bin/attn-compile}
run() {
  for s in b=32,hq=12,lq=128,lk=128,d=64 hq=8,lq=2048,lk=2048,d=64 hq=8,lq=2048,lk=2048,d=64,causal=bottom_right hq=32,hkv=8,lq=1,lk=32768,d=128; do
    n=$1; case $s in *2048*) n=$2;; esac
    python3 bench/ab-paired.py "$s" "$n" "$cc" "$cc" --wall --a-args=--omp-schedule=static -- --openmp
  done
}
echo "== as the machine is, $(date -u +%H:%M)"; run 100 30
if [ "$(nproc)" -lt 2 ]; then
  echo "== one CPU: no busy-loop run"
  exit 0
fi
busy=
trap '[ -n "$busy" ] && kill "$busy" 2>/dev/null || true' EXIT
taskset -c 1 sh -c 'while :; do :; done' &
busy=$!
echo "== busy loop on core 1 $(date -u +%H:%M)"; run 60 20
echo "== done $(date -u +%H:%M)"
