#!/usr/bin/env python3
"""Backward-pass rows: attn.sdpa_grad (attn-run --grad, the fused CPU
lowering) against PyTorch's CPU SDPA backward, one thread, at docs/performance.md's
prefill shape b=1, hq=8, lq=lk=L, d in {64, 128}, causal none and
bottom_right, f32.

GFLOP/s use FLOPs = 2.5 x the forward's (FlashAttention's convention; the
forward's count is docs/op.md's, with only the causally visible pairs), the
same count for both. attn's figure is also given as a share of one core's
f32 FMA peak measured by the same attn-run (--peak). PyTorch times
out.backward(d_out) alone (the forward and its graph are built once, outside
the timing, as attn-run times the backward alone).

    python3 bench/backward.py [--lengths 4096] [--runs 3] [--out DIR]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def forward_flops(lq, lk, d, hq, causal):
    if causal == "none":
        pairs = lq * lk
    else:  # bottom_right: key j visible to row i iff j <= i + lk - lq
        pairs = sum(max(0, min(lk, i + lk - lq + 1)) for i in range(lq))
    return 2 * hq * (d + d) * pairs


def run_attn(args, lq, d, causal):
    spec = f"b=1,hq=8,lq={lq},lk={lq},d={d}"
    if causal != "none":
        spec += f",causal={causal}"
    cmd = [args.attn_run, "--sdpa", spec, "--grad", "--threads", "1",
           "--bench", str(args.runs), "--peak", "--check", args.check,
           "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        return {"error": proc.stderr.strip().splitlines()[-1:]}
    res = json.loads(proc.stdout)
    return {"ms": res["fused_ms"], "gflops": res["fused_gflops"],
            "peak": res.get("peak_gflops"), "pass": res["pass"]}


def run_torch(args, lq, d, causal):
    try:
        import torch
    except Exception as e:  # pragma: no cover - depends on the machine
        return {"error": f"no torch ({e})"}
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 8, lq, d, generator=g).requires_grad_()
               for _ in range(3))
    d_out = torch.randn(1, 8, lq, d, generator=g)
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=causal != "none")  # lq == lk: both alignments agree
    out.backward(d_out, retain_graph=True)  # warm-up
    ms = []
    for _ in range(args.runs):
        for t in (q, k, v):
            t.grad = None
        t0 = time.perf_counter()
        out.backward(d_out, retain_graph=True)
        ms.append(1e3 * (time.perf_counter() - t0))
    return {"ms": statistics.median(ms), "version": torch.__version__}


def main(argv):
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attn-run", default=os.environ.get(
        "ATTN_RUN", str(REPO / "build" / "bin" / "attn-run")))
    p.add_argument("--lengths", default="4096")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--check", default="none",
                   help="attn-run --check (the f64 reference of a 4096 "
                        "backward takes minutes: none by default)")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    args = p.parse_args(argv)

    rows = []
    for lq in map(int, args.lengths.split(",")):
        for d in (64, 128):
            for causal in ("none", "bottom_right"):
                flops = 2.5 * forward_flops(lq, lq, d, 8, causal)
                a = run_attn(args, lq, d, causal)
                t = {} if args.no_torch else run_torch(args, lq, d, causal)
                rows.append((lq, d, causal, flops, a, t))
                print(f"bench-backward: L={lq} d={d} causal={causal}: "
                      f"attn {a} torch {t}", file=sys.stderr)

    lines = ["| L | d | causal | attn ms | attn GFLOP/s | % of 1-core peak "
             "| PyTorch ms | PyTorch GFLOP/s | attn / PyTorch |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for lq, d, causal, flops, a, t in rows:
        if "error" in a:
            lines.append(f"| {lq} | {d} | {causal} | error: {a['error']} |"
                         " | | | | |")
            continue
        pct = f"{100 * a['gflops'] / a['peak']:.1f}%" if a.get("peak") else "–"
        tms = t.get("ms")
        tg = f"{flops / (tms * 1e6):.1f}" if tms else "–"
        ratio = f"{tms / a['ms']:.2f}x" if tms else "–"
        lines.append(f"| {lq} | {d} | {causal} | {a['ms']:.1f} | "
                     f"{a['gflops']:.1f} | {pct} | "
                     f"{f'{tms:.1f}' if tms else '–'} | {tg} | {ratio} |")
    peaks = [a["peak"] for *_, a, _ in rows if a.get("peak")]
    meta = ("One thread; backward only; FLOPs = 2.5 x the forward's "
            "(FlashAttention's convention). Each row's % uses the one-core "
            "f32 FMA peak measured by its own attn-run"
            + (f" ({min(peaks):.1f} to {max(peaks):.1f} GFLOP/s in this run)."
               if peaks else "."))
    table = "\n".join(lines) + "\n\n" + meta + "\n"
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "backward.md").write_text(table)
    return 0 if all(a.get("pass", False) for *_, a, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
