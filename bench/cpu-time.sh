#!/usr/bin/env bash
# CPU time per fused run of one attn-run --sdpa case, for a machine that other
# jobs share (wall time and the in-process peak are then unreliable): the
# user CPU time of `--bench N+1` minus that of `--bench 1` (same compile, one
# run more than N), divided by N; the best of REPS tries. FLOPS is the case's
# FLOP count (docs/op.md#flops), to print GFLOP/s of CPU time.
#
#   bash bench/cpu-time.sh ATTN_RUN SPEC FLOPS [N=10] [REPS=3]
# e.g. bash bench/cpu-time.sh build/bin/attn-run hq=8,lq=1000,lk=3001,d=80 7680960000
set -eu
R=$1 S=$2 F=$3 N=${4:-10} K=${5:-3}
t() {
  /usr/bin/time -f "%U" "$R" --sdpa "$S" --threads 1 --bench "$1" --check none \
    2>&1 >/dev/null | tail -1
}
best=""
for _ in $(seq "$K"); do
  a=$(t 1)
  b=$(t $((N + 1)))
  best=$(python3 -c "b=($b-$a)/$N; print(b if '$best'=='' else min(b, float('$best' or b)))")
done
python3 -c "print('%s: %.4f s CPU per run, %.1f GFLOP/s of CPU time' % ('$S', $best, $F/$best/1e9))"
