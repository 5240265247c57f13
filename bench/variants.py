#!/usr/bin/env python3
"""Times attn's attention variants against the dense op of the same shape.

Each variant runs through `attn-run --sdpa SPEC --check none --bench N --json`
right after the dense run of the same shape, in the same session, and the
table reports the time ratio variant / dense: on a shared machine the ratio,
not the absolute time, is what holds. Variants that skip key blocks (sliding
window, per-sequence key lengths) should cost about the fraction of keys
they keep (attn-run's FLOP count is the pairs a variant admits, so the
kept fraction is the ratio of the two FLOP counts); the others (softcap)
cost a little more than dense. Key lengths are drawn uniform in [0, lk] from
the seed (one per batch). The varlen row packs b * lq rows as b sequences
of lq/2, lq/4, lq/8, lq/8 rows each (attn.sdpa_varlen, the seqlens_q spec
keys): the same rows as dense, 0.34 of its pairs, no padding computed.

    python3 bench/variants.py [--attn-run PATH] [--lq 32768] [--threads 2]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# (name, extra spec keys).
VARIANTS = [
    ("window 512:0", ",window=512:0"),
    ("softcap 30", ",softcap=30"),
    ("key_lengths", ",key_lengths=1"),
    ("alibi [hq]", ",alibi=h"),
    ("varlen lq/2,lq/4,lq/8,lq/8", None),
]


def varlen_spec(a):
    lengths = [a.lq // 2, a.lq // 4, a.lq // 8, a.lq - a.lq // 2 - a.lq // 4
               - a.lq // 8] * a.b
    return (f"hq={a.hq},d={a.d},seqlens_q=" + "/".join(map(str, lengths)))


def run(attn_run, spec, threads, runs, seed):
    cmd = [attn_run, "--sdpa", spec, "--check", "none", "--bench", str(runs),
           "--threads", str(threads), "--seed", str(seed), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[0] if out.stdout.startswith("{")
                      else out.stdout[out.stdout.index("{"):])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--attn-run", default=os.environ.get(
        "ATTN_RUN", str(REPO / "build" / "bin" / "attn-run")))
    p.add_argument("--lq", type=int, default=32768)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--hq", type=int, default=8)
    p.add_argument("--b", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--runs", type=int, default=3,
                   help="timed runs of each variant (median)")
    p.add_argument("--dense-runs", type=int, default=1,
                   help="timed runs of the dense op (median)")
    a = p.parse_args(argv)
    base = f"b={a.b},hq={a.hq},lq={a.lq},d={a.d}"
    dense = run(a.attn_run, base, a.threads, a.dense_runs, a.seed)
    print(f"shape {base}, {a.threads} threads; dense "
          f"{dense['fused_ms']:.1f} ms ({dense['fused_gflops']:.1f} GFLOP/s)")
    print()
    print("| variant | ms | GFLOP/s | time / dense | kept pairs / dense |")
    print("| --- | --- | --- | --- | --- |")
    for name, extra in VARIANTS:
        spec = varlen_spec(a) if extra is None else base + extra
        r = run(a.attn_run, spec, a.threads, a.runs, a.seed)
        print(f"| {name} | {r['fused_ms']:.1f} | {r['fused_gflops']:.1f} | "
              f"{r['fused_ms'] / dense['fused_ms']:.4f} | "
              f"{r['flops'] / dense['flops']:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
