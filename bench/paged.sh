#!/usr/bin/env bash
# Decode over a paged KV cache (attn.sdpa_paged, issue 56) against attn's
# own contiguous decode on the same lengths: hq=32 hkv=8 d=128, page size
# 16, pages scattered over the cache by attn-run's seeded permutation, f32
# and bf16 caches, one and two threads. Each row is one attn-run process
# that measures its own read bandwidth (--peak): "fused at N% of that
# roofline" is the time to read the caches' K and V once at that bandwidth
# over the call's time. PAGED_EXTRA adds attn-run flags to the paged runs
# (e.g. --decode-page-touch=8192 or --huge-pages). PyTorch's gather + SDPA
# on the same shapes: bench/paged_torch.py.
#
# Usage: bash bench/paged.sh [ATTN_RUN]   (default build/bin/attn-run)
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
R="${1:-$ROOT/build/bin/attn-run}"
grep -m1 "model name" /proc/cpuinfo
uptime
SHAPES=${PAGED_SHAPES:-"1:4096 1:32768 4:8192 16:2048"}
for dt in f32 bf16; do
  for t in 1 2; do
    for bl in $SHAPES; do
      b=${bl%%:*} l=${bl##*:}
      lens=$(printf "$l/%.0s" $(seq "$b")); lens=${lens%/}
      for form in paged contiguous; do
        if [ $form = paged ]; then
          spec="hq=32,hkv=8,lq=1,d=128,dtype=$dt,page_size=16,kv_lens=$lens"
          extra=${PAGED_EXTRA:-}
        else
          spec="b=$b,hq=32,hkv=8,lq=1,lk=$l,d=128,dtype=$dt"
          extra=
        fi
        echo "### $form $dt b=$b l=$l threads=$t $extra"
        # shellcheck disable=SC2086
        "$R" --sdpa "$spec" --threads "$t" --bench 10 --check none --peak \
          $extra 2>&1 | grep -E "^  (fused|memory)|error"
      done
    done
  done
done
