#!/usr/bin/env python3
"""Benchmarks attn's fused CPU lowering against its naive lowering, PyTorch
and ggml.

Runs the CPU shapes of docs/performance.md through `attn-run --sdpa SPEC --json`,
PyTorch's `torch.nn.functional.scaled_dot_product_attention` on the CPU and
ggml's `ggml_flash_attn_ext` (bench/ggml_peer.py; f32 Q, f16 or f32 K/V),
single-threaded and with all threads, and writes

  OUT/results.csv   one row per case x implementation x threads
  OUT/table.md      the Markdown table that is also printed to stdout
  OUT/plot.png      GFLOP/s against sequence length, one panel per (d, causal)
  OUT/raw/*.json    attn-run's JSON of every run, as printed

Every attn-run process measures one core's f32 FMA peak (--peak) right before
it times the kernel; "% peak" is GFLOP/s over (threads x that peak). On a
shared machine these ratios, not the absolute times, are what to quote.

See bench/README.md for the columns and caveats.
"""

import argparse
import csv
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import ggml_peer  # noqa: E402

# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


@dataclass
class Case:
    suite: str  # prefill | bf16 | decode | memory
    lq: int
    lk: int
    d: int
    hq: int = 8
    hkv: int = 8
    b: int = 1
    dtype: str = "f32"
    causal: str = "none"  # none | bottom_right
    runs_mult: int = 1  # decode kernels take ~ms: time more of them

    @property
    def spec(self) -> str:
        return (f"b={self.b},hq={self.hq},hkv={self.hkv},lq={self.lq},"
                f"lk={self.lk},d={self.d},dtype={self.dtype},"
                f"causal={self.causal}")

    @property
    def label(self) -> str:
        if self.lq == self.lk:
            s = f"L={self.lq} d={self.d}"
        else:
            s = f"lq={self.lq} lk={self.lk} d={self.d}"
        if self.hq != 8 or self.hkv != self.hq:
            s += f" hq={self.hq}/hkv={self.hkv}"
        return s

    def visible_pairs(self) -> int:
        if self.causal == "bottom_right":
            # key j is visible to query i when j <= i + (lk - lq)
            off = self.lk - self.lq
            return sum(max(0, min(self.lk, i + off + 1)) for i in range(self.lq))
        return self.lq * self.lk

    def flops(self) -> int:
        # docs/attn-run.md: 2 * B * Hq * (D + Dv) * P
        return 2 * self.b * self.hq * (2 * self.d) * self.visible_pairs()

    def kv_bytes(self) -> int:
        esize = 4 if self.dtype == "f32" else 2
        return esize * 2 * self.b * self.hkv * self.lk * self.d

    def io_bytes(self) -> int:
        esize = 4 if self.dtype == "f32" else 2
        q = self.b * self.hq * self.lq * self.d
        kv = 2 * self.b * self.hkv * self.lk * self.d
        o = self.b * self.hq * self.lq * self.d
        return esize * (q + kv + o)


def build_cases(args) -> list:
    cases = []
    suites = set(args.suites.split(","))
    if args.quick:
        lengths, dims = [512, 1024], [64]
        bf16 = [(64, 512, "none")]
        decode_lk = [4096]
    else:
        lengths = [int(x) for x in args.lengths.split(",")]
        dims = [64, 128]
        bf16 = [(d, L, c) for d in (64, 128) for L in (1024, 4096)
                for c in ("none", "bottom_right")]
        decode_lk = [4096, 32768]
    if "prefill" in suites:
        for d in dims:
            for causal in ("none", "bottom_right"):
                for L in lengths:
                    cases.append(Case("prefill", L, L, d, causal=causal))
    if "bf16" in suites:
        for d, L, causal in bf16:
            cases.append(Case("bf16", L, L, d, dtype="bf16", causal=causal))
    if "decode" in suites:
        for lk in decode_lk:
            cases.append(Case("decode", 1, lk, 128, hq=32, hkv=8,
                              runs_mult=args.decode_runs_mult))
        # bf16 K/V read as bf16, at the longest length only
        cases.append(Case("decode", 1, decode_lk[-1], 128, hq=32, hkv=8,
                          dtype="bf16", runs_mult=args.decode_runs_mult))
    if args.only:
        cases = [c for c in cases if re.search(args.only, c.spec)]
    return cases


def memory_case(args):
    if "memory" not in set(args.suites.split(",")):
        return None
    L = args.memory_lq or (4096 if args.quick else 32768)
    return Case("memory", L, L, 64)


# --------------------------------------------------------------------------
# attn-run
# --------------------------------------------------------------------------


def run_attn(args, case: Case, threads: int, runs: int, check: str,
             peak: bool, tag: str, time_v: bool = False) -> dict:
    """One attn-run process; returns its JSON (plus rc, wall, rss_kib)."""
    cmd = [args.attn_run, "--sdpa", case.spec, "--threads", str(threads),
           "--bench", str(runs), "--check", check, "--json",
           "--seed", str(args.seed)]
    if peak:
        cmd.append("--peak")
    time_file = None
    if time_v:
        time_file = args.out / "raw" / f"{tag}.time.txt"
        cmd = ["/usr/bin/time", "-v", "-o", str(time_file)] + cmd
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout} s", "rc": None}
    wall = time.perf_counter() - t0
    raw = args.out / "raw"
    (raw / f"{tag}.json").write_text(p.stdout)
    (raw / f"{tag}.stderr.txt").write_text(p.stderr)
    res = {}
    line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    try:
        res = json.loads(line)
    except json.JSONDecodeError:
        msg = p.stderr.strip().splitlines()
        res = {"error": (msg[-1] if msg else f"no JSON (rc {p.returncode})")}
    res["rc"] = p.returncode
    res["wall_s"] = wall
    if time_file is not None and time_file.exists():
        for ln in time_file.read_text().splitlines():
            if "Maximum resident set size" in ln:
                res["rss_kib"] = int(ln.split(":")[-1].strip())
                res["rss_line"] = ln.strip()
    return res


def checks_summary(res: dict) -> str:
    if "error" in res:
        return "error"
    checks = res.get("checks", [])
    if not checks:
        return "none"
    # The naive lowering's own checks ("f64 (naive)", "no-NaN naive") are
    # part of the same verdict; name each oracle once.
    names = []
    for c in checks:
        if c["oracle"] in ("f64 (naive)", "no-NaN naive"):
            continue
        name = c["oracle"].replace(" ", "")
        if name not in names:
            names.append(name)
    oracles = "+".join(names)
    return ("PASS " if res.get("pass") else "FAIL ") + oracles


# --------------------------------------------------------------------------
# PyTorch
# --------------------------------------------------------------------------

_torch = None


def load_torch():
    global _torch
    if _torch is None:
        try:
            import torch  # noqa: F401
            _torch = torch
        except Exception as e:  # pragma: no cover - depends on the machine
            print(f"bench: PyTorch unavailable ({e}); its columns stay empty",
                  file=sys.stderr)
            _torch = False
    return _torch or None


def torch_inputs(torch, case: Case, seed: int):
    dt = {"f32": torch.float32, "bf16": torch.bfloat16}[case.dtype]
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(case.b, case.hq, case.lq, case.d, generator=g).to(dt)
    k = torch.randn(case.b, case.hkv, case.lk, case.d, generator=g).to(dt)
    v = torch.randn(case.b, case.hkv, case.lk, case.d, generator=g).to(dt)
    return q, k, v


def torch_call(torch, case: Case, q, k, v):
    """The SDPA call for `case`, and the backend PyTorch picks for it."""
    F = torch.nn.functional
    kw = {}
    mask = None
    if case.causal == "bottom_right":
        if case.lq == case.lk:
            kw["is_causal"] = True  # top-left == bottom-right when lq == lk
        else:
            i = torch.arange(case.lq).unsqueeze(1)
            j = torch.arange(case.lk).unsqueeze(0)
            mask = j <= i + (case.lk - case.lq)
            if bool(mask.all()):
                mask = None  # e.g. decode (lq=1): every key is visible
            else:
                kw["attn_mask"] = mask
    if case.hkv != case.hq:
        kw["enable_gqa"] = True
    backend = "?"
    try:
        from torch.nn.attention import SDPBackend
        names = {int(getattr(SDPBackend, n)): n.lower()
                 for n in dir(SDPBackend) if n.isupper()}
        c = torch._fused_sdp_choice(q, k, v, mask, 0.0,
                                    kw.get("is_causal", False),
                                    enable_gqa=kw.get("enable_gqa", False))
        backend = names.get(int(c), str(c))
    except Exception:
        pass
    return (lambda: F.scaled_dot_product_attention(q, k, v, **kw)), backend


def run_torch(args, case: Case, threads: int, runs: int) -> dict:
    torch = load_torch()
    if torch is None or args.no_torch:
        return {}
    torch.set_num_threads(threads)
    try:
        with torch.inference_mode():
            q, k, v = torch_inputs(torch, case, args.seed)
            f, backend = torch_call(torch, case, q, k, v)
            f()  # warm-up
            ms = []
            for _ in range(runs):
                t0 = time.perf_counter()
                f()
                ms.append(1e3 * (time.perf_counter() - t0))
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    med = statistics.median(ms)
    return {"ms": med, "gflops": case.flops() / (med * 1e6),
            "backend": backend, "runs": runs}


def torch_one(argv) -> None:
    """Hidden mode for the memory case: one PyTorch run in its own process
    (under /usr/bin/time -v), printing JSON with ru_maxrss around the call."""
    p = argparse.ArgumentParser()
    p.add_argument("--lq", type=int)
    p.add_argument("--d", type=int)
    p.add_argument("--threads", type=int)
    p.add_argument("--runs", type=int)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(a.threads)
    case = Case("memory", a.lq, a.lq, a.d)
    with torch.inference_mode():
        q, k, v = torch_inputs(torch, case, a.seed)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        f, backend = torch_call(torch, case, q, k, v)
        f()
        ms = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            f()
            ms.append(1e3 * (time.perf_counter() - t0))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    med = statistics.median(ms)
    print(json.dumps({"ms": med, "gflops": case.flops() / (med * 1e6),
                      "backend": backend, "rss_before_call_kib": before,
                      "rss_after_call_kib": after}))


def run_torch_memory(args, case: Case, threads: int) -> dict:
    if args.no_torch or load_torch() is None:
        return {}
    time_file = args.out / "raw" / "memory-torch.time.txt"
    cmd = ["/usr/bin/time", "-v", "-o", str(time_file), sys.executable,
           str(Path(__file__).resolve()), "--_torch-one", "--lq",
           str(case.lq), "--d", str(case.d), "--threads", str(threads),
           "--runs", "1", "--seed", str(args.seed)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout} s"}
    res = {}
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        msg = p.stderr.strip().splitlines()
        res = {"error": msg[-1] if msg else f"rc {p.returncode}"}
    if time_file.exists():
        for ln in time_file.read_text().splitlines():
            if "Maximum resident set size" in ln:
                res["rss_kib"] = int(ln.split(":")[-1].strip())
                res["rss_line"] = ln.strip()
    return res


# --------------------------------------------------------------------------
# ggml (bench/ggml_peer.py)
# --------------------------------------------------------------------------


def ggml_kv_types(args, case: Case) -> list:
    """ggml's K/V types for `case`: f16 (its fast path) always; f32 only
    for f32 cases (for a bf16 case it would read twice attn's bytes)."""
    if args.no_ggml or ggml_peer.load() is None:
        return []
    return [kv for kv in args.ggml_kv if kv == "f16" or case.dtype == "f32"]


def ggml_kv_bytes(case: Case, kv: str) -> int:
    return case.kv_bytes() * (2 if kv == "f16" else 4) // (
        4 if case.dtype == "f32" else 2)


def run_ggml(args, case: Case, threads: int, runs: int, kv: str) -> dict:
    return ggml_peer.bench(threads, case.b, case.hq, case.hkv, case.lq,
                           case.lk, case.d, case.causal, kv, runs, args.seed,
                           case.flops(), case.dtype)


def ggml_markdown(rows) -> list:
    attn = {(r["spec"], r["threads"]): r for r in rows
            if r["impl"] == "attn" and r["suite"] != "memory"}
    gr = [r for r in rows if r["impl"].startswith("ggml")]
    if not gr:
        return []
    out = ["", "## ggml flash_attn_ext\n",
           "ggml_flash_attn_ext on ggml's CPU backend (ggml-python), on the "
           "same shapes, threads (a persistent ggml thread pool) and timing "
           "(median after one warm-up) as attn. Q is f32; **K/V f16 is "
           "ggml's fast path** (its tiled prefill kernel and decode split-KV "
           "path read f16 K/V; f16 K/V reads half the bytes of f32), f32 K/V "
           "is the like-for-like f32 row. Every run is checked against an "
           "f64 reference of the values ggml got, under the bound SPEC holds "
           "attn's row of that precision to (f32 case, f32 K/V: the f32 "
           "bounds; f32 case, f16 K/V: rel_l2 <= 2e-3; bf16 case: <= "
           "1.6e-2); one that fails shows its time but no GFLOP/s. % peak "
           "is against attn-run's f32 FMA peak of the same row.\n",
           "| suite | shape | dtype | causal | T | ggml K/V | ggml ms | "
           "ggml GFLOP/s | ggml % peak | attn % peak | attn speedup vs ggml "
           "| rel_l2 vs f64 (rows/head) [bound] |",
           "|" + "|".join(["---"] * 12) + "|"]
    for r in gr:
        lab = Case(r["suite"], r["lq"], r["lk"], r["d"], r["hq"], r["hkv"],
                   r["b"], r["dtype"], r["causal"]).label
        a = attn.get((r["spec"], r["threads"]), {})
        ratio = r["ms"] / a["ms"] if r.get("ms") and a.get("ms") and \
            r.get("gflops") else None
        chk = r.get("note") or (
            f"{r['rel_l2']:.1e} ({r['check_rows']}) [{r['bound']:.1e}] "
            f"{'PASS' if r.get('ok') else 'FAIL'}")
        out.append(
            f"| {r['suite']} | {lab} | {r['dtype']} | {r['causal']} | "
            f"{r['threads']} | {r.get('ggml_kv')} | "
            f"{fmt(r.get('ms'), '.2f')} | "
            f"{fmt(r.get('gflops'))} | {fmt(r.get('pct_peak'))} | "
            f"{fmt(a.get('pct_peak'))} | {fmt(ratio, '.2f')} | {chk} |")
    return out


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

CSV_FIELDS = [
    "suite", "spec", "b", "hq", "hkv", "lq", "lk", "d", "dtype", "causal",
    "impl", "threads", "runs", "ms", "gflops", "pct_peak", "peak_1core_gflops",
    "read_gbs", "pct_kv_roofline", "flops", "checks", "torch_backend",
    "peak_rss_mib", "io_mib", "ggml_kv", "rel_l2", "note",
]


def fmt(x, spec=".1f", empty="–"):
    if x is None or x == "" or (isinstance(x, float) and math.isnan(x)):
        return empty
    return format(x, spec)


def row(case: Case, impl: str, threads: int, **kw) -> dict:
    r = {"suite": case.suite, "spec": case.spec, "b": case.b, "hq": case.hq,
         "hkv": case.hkv, "lq": case.lq, "lk": case.lk, "d": case.d,
         "dtype": case.dtype, "causal": case.causal, "impl": impl,
         "threads": threads, "flops": case.flops(),
         "io_mib": round(case.io_bytes() / 2**20, 1)}
    r.update({k: v for k, v in kw.items() if v is not None})
    return r


def pct(gflops, peak, threads):
    if gflops is None or not peak:
        return None
    return 100.0 * gflops / (peak * threads)


def markdown(rows, meta) -> str:
    out = []
    out.append("# attn CPU benchmark\n")
    for k, v in meta.items():
        out.append(f"- {k}: {v}")
    out.append("")
    out.append("GFLOP/s use docs/op.md's count (2·B·Hq·(D+Dv)·visible pairs) for "
               "every implementation; % peak = GFLOP/s / (threads × one "
               "core's f32 FMA peak measured by attn-run in the same "
               "process). attn speedup vs torch = torch ms / attn ms "
               "(> 1: attn faster).\n")
    by = {}
    order = []
    for r in rows:
        if r["suite"] == "memory":
            continue
        key = (r["spec"], r["threads"])
        if key not in by:
            by[key] = {"_": r}
            order.append(key)
        by[key][r["impl"]] = r
    hdr = ("| suite | shape | dtype | causal | T | attn ms | attn GFLOP/s | "
           "attn % peak | naive GFLOP/s | torch ms | torch GFLOP/s | "
           "torch % peak | attn speedup vs torch | checks |")
    if order:
        out.append(hdr)
    if order:
        out.append("|" + "|".join(["---"] * (hdr.count("|") - 1)) + "|")
    for key in order:
        g = by[key]
        b = g["_"]
        a, n, t = g.get("attn", {}), g.get("naive", {}), g.get("torch", {})
        lab = Case(b["suite"], b["lq"], b["lk"], b["d"], b["hq"], b["hkv"],
                   b["b"], b["dtype"], b["causal"]).label
        ratio = None
        if a.get("ms") and t.get("ms"):
            ratio = t["ms"] / a["ms"]
        chk = a.get("checks", "")
        if n.get("checks") and n.get("checks") != "none":
            chk = (chk + "; " if chk and chk != "none" else "") + n["checks"]
        out.append(
            f"| {b['suite']} | {lab} | {b['dtype']} | {b['causal']} | "
            f"{b['threads']} | {fmt(a.get('ms'), '.2f')} | "
            f"{fmt(a.get('gflops'))} | {fmt(a.get('pct_peak'))} | "
            f"{fmt(n.get('gflops'), '.2f')} | {fmt(t.get('ms'), '.2f')} | "
            f"{fmt(t.get('gflops'))} | {fmt(t.get('pct_peak'))} | "
            f"{fmt(ratio, '.2f')} | {chk or a.get('note', '')} |")
    out += ggml_markdown(rows)
    dec = [r for r in rows if r["suite"] == "decode" and r.get("read_gbs")
           and (r["impl"] in ("attn", "torch") or r.get("gflops"))]
    if dec:
        out.append("")
        out.append("## Decode against the memory roofline\n")
        out.append("Reading K and V once at the read bandwidth that attn-run "
                   "measured in the same process (--peak) bounds a decode "
                   "step from below; % roofline = that time / the measured "
                   "time. ggml rows: their own K/V bytes (f16 K/V: half).\n")
        out.append("| impl | shape | T | ms | K+V MiB | read GB/s | "
                   "K/V-once ms | % roofline |")
        out.append("|---|---|---|---|---|---|---|---|")
        for r in dec:
            kv = Case(r["suite"], r["lq"], r["lk"], r["d"], r["hq"],
                      r["hkv"], r["b"], r["dtype"], r["causal"])
            kvb = ggml_kv_bytes(kv, r["ggml_kv"]) if r.get("ggml_kv") \
                else kv.kv_bytes()
            once = kvb / (r["read_gbs"] * 1e6)
            out.append(
                f"| {r['impl']} | {kv.label} | {r['threads']} | "
                f"{fmt(r.get('ms'), '.2f')} | {kvb / 2**20:.0f} | "
                f"{r['read_gbs']:.1f} | {once:.2f} | "
                f"{fmt(r.get('pct_kv_roofline'))} |")
    mem = [r for r in rows if r["suite"] == "memory"]
    if mem:
        out.append("")
        out.append("## Memory (one long sequence; O(L) working set)\n")
        out.append("| impl | shape | T | ms | GFLOP/s | % peak | peak RSS MiB "
                   "| inputs+output MiB | note |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for r in mem:
            lab = f"L={r['lq']} d={r['d']} hq={r['hq']} {r['dtype']}"
            out.append(
                f"| {r['impl']} | {lab} | {r['threads']} | "
                f"{fmt(r.get('ms'), '.0f')} | {fmt(r.get('gflops'))} | "
                f"{fmt(r.get('pct_peak'))} | {fmt(r.get('peak_rss_mib'))} | "
                f"{fmt(r.get('io_mib'))} | {r.get('note', '')} |")
    return "\n".join(out) + "\n"


def plot(rows, peak, threads_list, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pre = [r for r in rows if r["suite"] in ("prefill", "bf16")
           and r.get("gflops")]
    panels = sorted({(r["d"], r["causal"]) for r in pre},
                    key=lambda p: (p[0], p[1] != "none"))
    if not panels:
        path.unlink(missing_ok=True)  # no stale plot from an earlier run
        return
    ds = sorted({p[0] for p in panels})
    cs = sorted({p[1] for p in panels}, key=lambda c: c != "none")
    fig, axes = plt.subplots(len(ds), len(cs), figsize=(6.2 * len(cs),
                             4.4 * len(ds)), squeeze=False, sharey=True)
    colors = {"attn": "tab:blue", "naive": "tab:gray", "torch": "tab:orange",
              "ggml-f16kv": "tab:green"}
    names = {"attn": "attn fused", "naive": "attn naive",
             "torch": "PyTorch SDPA", "ggml-f16kv": "ggml (f16 K/V)"}
    tmax = max(threads_list)
    styles = {1: "-", tmax: "--"}
    handles = {}
    for (i, d) in enumerate(ds):
        for (j, c) in enumerate(cs):
            ax = axes[i][j]
            for dtype, marker in (("f32", "o"), ("bf16", "s")):
                for impl in ("attn", "naive", "torch", "ggml-f16kv"):
                    for T in threads_list:
                        pts = sorted((r["lq"], r["gflops"]) for r in pre
                                     if r["d"] == d and r["causal"] == c
                                     and r["impl"] == impl
                                     and r["threads"] == T
                                     and r["dtype"] == dtype)
                        if not pts:
                            continue
                        lab = f"{names[impl]} {dtype}, {T} thr"
                        h, = ax.plot([p[0] for p in pts], [p[1] for p in pts],
                                     linestyle=styles.get(T, ":"),
                                     marker=marker, color=colors[impl],
                                     mfc="none" if dtype == "bf16" else None,
                                     alpha=0.6 if dtype == "bf16" else 1.0,
                                     label=lab)
                        handles.setdefault(lab, h)
            if peak:
                h = ax.axhline(peak, color="black", lw=1)
                handles.setdefault(f"f32 FMA peak, 1 core ({peak:.0f})", h)
                if tmax > 1:
                    h = ax.axhline(peak * tmax, color="black", lw=1, ls="--")
                    handles.setdefault(
                        f"f32 FMA peak x {tmax} ({peak * tmax:.0f})", h)
            ax.set_xscale("log", base=2)
            xs = sorted({r["lq"] for r in pre})
            ax.set_xticks(xs, [str(x) for x in xs])
            ax.minorticks_off()
            ax.set_yscale("log")
            ax.set_title(f"d={d}, causal={c}, b=1 hq=8")
            ax.set_xlabel("sequence length L (lq = lk)")
            if j == 0:
                ax.set_ylabel("GFLOP/s (SPEC FLOP count)")
            ax.grid(True, which="both", alpha=0.3)
    fig.legend(list(handles.values()), list(handles.keys()),
               loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("attn fused vs naive lowering vs PyTorch SDPA vs ggml "
                 "flash_attn_ext (CPU); "
                 "median of runs; peak measured in the same attn-run "
                 "processes", fontsize=10)
    nrow_leg = math.ceil(len(handles) / 4)
    fig.tight_layout(rect=(0, 0.03 + 0.03 * nrow_leg, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Benchmark attn (fused, naive) against PyTorch SDPA on "
                    "the CPU shapes of docs/performance.md.")
    p.add_argument("--attn-run", default=os.environ.get(
        "ATTN_RUN", str(REPO / "build" / "bin" / "attn-run")),
        help="attn-run binary (default: $ATTN_RUN or build/bin/attn-run)")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "out",
                   help="output folder (default bench/out)")
    p.add_argument("--quick", action="store_true",
                   help="a small subset for smoke testing (< 2 min)")
    ncpu = len(os.sched_getaffinity(0))
    p.add_argument("--threads", default=None,
                   help=f"comma-separated thread counts (default 1,{ncpu})")
    p.add_argument("--runs", type=int, default=None,
                   help="timed runs after one warm-up; the median is "
                        "reported (default 5, --quick 3)")
    p.add_argument("--naive-runs", type=int, default=1,
                   help="timed runs of the naive lowering (default 1)")
    p.add_argument("--naive-max-lq", type=int, default=2048,
                   help="time the naive lowering only up to this lq "
                        "(and lq*lk up to its square); default 2048")
    p.add_argument("--decode-runs-mult", type=int, default=10,
                   help="decode cases time runs x this (default 10)")
    p.add_argument("--lengths", default="512,1024,2048,4096,8192",
                   help="prefill sequence lengths")
    p.add_argument("--suites", default="prefill,bf16,decode,memory",
                   help="any of prefill,bf16,decode,memory")
    p.add_argument("--memory-lq", type=int, default=None,
                   help="L of the memory case (default 32768, --quick 4096)")
    p.add_argument("--no-torch", action="store_true",
                   help="skip PyTorch")
    p.add_argument("--only", default=None, metavar="REGEX",
                   help="keep only the cases whose attn-run spec matches "
                        "(re.search), e.g. 'lq=4096,.*d=64,dtype=f32'")
    p.add_argument("--no-ggml", action="store_true",
                   help="skip ggml's flash_attn_ext")
    p.add_argument("--ggml-kv", default="f16,f32",
                   help="ggml K/V types: f16 (ggml's fast path; every "
                        "case), f32 (f32 cases only); default f16,f32")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=int, default=1800,
                   help="seconds allowed to one attn-run or torch process")
    a = p.parse_args(argv)
    if a.threads is None:
        a.threads = [1] if ncpu == 1 else [1, ncpu]
    else:
        a.threads = [int(x) for x in a.threads.split(",")]
    if a.runs is None:
        a.runs = 3 if a.quick else 5
    a.ggml_kv = [x for x in a.ggml_kv.split(",") if x]
    if any(x not in ("f16", "f32") for x in a.ggml_kv):
        p.error("--ggml-kv: f16 and/or f32")
    return a


def main(argv) -> int:
    if argv and argv[0] == "--_torch-one":
        torch_one(argv[1:])
        return 0
    args = parse_args(argv)
    if not os.access(args.attn_run, os.X_OK):
        print(f"bench: attn-run not found at {args.attn_run} (set ATTN_RUN "
              f"or --attn-run)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "raw").mkdir(exist_ok=True)
    cases = build_cases(args)
    mcase = memory_case(args)
    rows = []
    peaks = []
    failed = False
    t_start = time.perf_counter()
    n_jobs = len(cases) * len(args.threads) + (1 if mcase else 0)
    job = 0

    def log(msg):
        el = time.perf_counter() - t_start
        print(f"[{el:6.0f}s] {msg}", file=sys.stderr, flush=True)

    for case in cases:
        for T in args.threads:
            job += 1
            runs = args.runs * case.runs_mult
            tag = f"{case.suite}-{case.dtype}-d{case.d}-lq{case.lq}-lk{case.lk}"\
                  f"-{case.causal}-t{T}"
            # Fused: --peak in the same process; the f64 oracle checks it
            # where it is affordable (attn-run skips it above
            # --ref-limit-gflop).
            a = run_attn(args, case, T, runs, "f64", True, tag + "-attn")
            peak = a.get("peak_gflops")
            if peak:
                peaks.append(peak)
            if "error" in a or a.get("rc") not in (0, 1):
                failed = True
            if a.get("rc") == 1:
                failed = True
            a_g = a.get("fused_gflops")
            bw = a.get("read_gbs")
            rows.append(row(case, "attn", T, runs=runs, ms=a.get("fused_ms"),
                            gflops=a_g, pct_peak=pct(a_g, peak, T),
                            peak_1core_gflops=peak, read_gbs=bw,
                            pct_kv_roofline=a.get("fused_pct_kv_roofline"),
                            checks=checks_summary(a), note=a.get("error")))
            # Naive: its own process, fewer runs (it is ~50x slower).
            n_g = None
            if (case.lq <= args.naive_max_lq
                    and case.lq * case.lk <= args.naive_max_lq ** 2):
                n = run_attn(args, case, T, args.naive_runs, "naive", False,
                             tag + "-naive")
                if "error" in n or n.get("rc") != 0:
                    failed = True
                n_g = n.get("naive_gflops")
                rows.append(row(case, "naive", T, runs=args.naive_runs,
                                ms=n.get("naive_ms"), gflops=n_g,
                                pct_peak=pct(n_g, peak, T),
                                peak_1core_gflops=peak,
                                checks=checks_summary(n),
                                note=n.get("error") or n.get("naive_skipped")))
            t = run_torch(args, case, T, runs)
            if t:
                roof = None
                if bw and t.get("ms") and case.suite == "decode":
                    # the same K/V-read-once roofline attn-run reports
                    roof = 100 * case.kv_bytes() / (bw * 1e6) / t["ms"]
                rows.append(row(case, "torch", T, runs=runs, ms=t.get("ms"),
                                gflops=t.get("gflops"),
                                pct_peak=pct(t.get("gflops"), peak, T),
                                peak_1core_gflops=peak, read_gbs=bw,
                                pct_kv_roofline=roof,
                                torch_backend=t.get("backend"),
                                note=t.get("error")))
            gl = []
            for kv in ggml_kv_types(args, case):
                # A peer's failed check is reported (FAIL, no GFLOP/s) but,
                # like a PyTorch error, is not attn's failure: no exit 1.
                g = run_ggml(args, case, T, runs, kv)
                roof = None
                if bw and g.get("gflops") and case.suite == "decode":
                    roof = 100 * ggml_kv_bytes(case, kv) / (bw * 1e6) / \
                        g["ms"]
                rows.append(row(case, f"ggml-{kv}kv", T, runs=runs,
                                ms=g.get("ms"), gflops=g.get("gflops"),
                                pct_peak=pct(g.get("gflops"), peak, T),
                                peak_1core_gflops=peak, read_gbs=bw,
                                pct_kv_roofline=roof, ggml_kv=kv,
                                rel_l2=g.get("rel_l2"),
                                check_rows=g.get("check_rows"),
                                bound=g.get("bound"),
                                ok=g.get("ok"),
                                checks=g.get("error") and "error" or (
                                    ("PASS" if g.get("ok") else "FAIL")
                                    + " f64"),
                                note=g.get("error")))
                gl.append(f"ggml {kv} K/V " + (
                    f"{fmt(g.get('gflops'))}" if g.get("gflops") else
                    g.get("error", f"FAIL rel_l2 {g.get('rel_l2')}")))
            log(f"{job}/{n_jobs} {case.spec} T={T}: attn {fmt(a_g)} GFLOP/s "
                f"({fmt(pct(a_g, peak, T))}% peak, {checks_summary(a)})"
                + (f", naive {fmt(n_g, '.2f')}" if n_g else "")
                + (f", torch {fmt(t.get('gflops'))} [{t.get('backend')}]"
                   if t.get("gflops") else "")
                + "".join(", " + x for x in gl))

    if mcase:
        job += 1
        T = max(args.threads)
        # One timed run: the point is the peak RSS, recorded by
        # /usr/bin/time -v around the whole attn-run process. No --peak
        # there: its bandwidth probe reads a 1 GiB buffer, which would
        # count in the RSS; a peak-only attn-run process measures it first.
        peak = None
        try:
            p = subprocess.run([args.attn_run, "--peak", "--json"],
                               capture_output=True, text=True, timeout=300)
            peak = json.loads(p.stdout.strip().splitlines()[-1])[
                "peak_gflops"]
            peaks.append(peak)
        except Exception:
            pass
        a = run_attn(args, mcase, T, 1, "none", False, "memory-attn",
                     time_v=True)
        if "error" in a or a.get("rc") != 0:
            failed = True
        a_g = a.get("fused_gflops")
        rss = a.get("rss_kib")
        rows.append(row(mcase, "attn", T, runs=1, ms=a.get("fused_ms"),
                        gflops=a_g, pct_peak=pct(a_g, peak, T),
                        peak_1core_gflops=peak, checks=checks_summary(a),
                        peak_rss_mib=round(rss / 1024, 1) if rss else None,
                        note=a.get("error") or "whole attn-run process "
                        "(JIT, MLIR context, an unused naive output "
                        "buffer); % peak against a separate --peak process"))
        log(f"{job}/{n_jobs} memory {mcase.spec} T={T}: attn {fmt(a_g)} "
            f"GFLOP/s, {a.get('rss_line', 'no RSS')}; inputs+output "
            f"{mcase.io_bytes() / 2**20:.0f} MiB")
        t = run_torch_memory(args, mcase, T)
        if t:
            rss = t.get("rss_kib")
            note = t.get("error")
            if not note and t.get("rss_before_call_kib"):
                note = (f"{t['backend']}; ru_maxrss before the call "
                        f"{t['rss_before_call_kib'] / 1024:.0f} MiB "
                        "(import torch + inputs)")
            rows.append(row(mcase, "torch", T, runs=1, ms=t.get("ms"),
                            gflops=t.get("gflops"),
                            pct_peak=pct(t.get("gflops"), peak, T),
                            peak_1core_gflops=peak,
                            torch_backend=t.get("backend"),
                            peak_rss_mib=round(rss / 1024, 1) if rss
                            else None, note=note))
            log(f"memory torch: {fmt(t.get('gflops'))} GFLOP/s, "
                f"{t.get('rss_line', t.get('error', ''))}")

    # Outputs.
    with open(args.out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                        for k, v in r.items()})
    peak_med = statistics.median(peaks) if peaks else None
    torch = None if args.no_torch else load_torch()
    meta = {
        "attn-run": args.attn_run,
        "threads": ",".join(map(str, args.threads)) +
        f" (machine: {os.cpu_count()} CPUs)",
        "runs": f"median of {args.runs} after one warm-up (decode "
                f"x{args.decode_runs_mult}; naive {args.naive_runs})",
        "one core's f32 FMA peak": (
            f"median {peak_med:.1f} GFLOP/s over {len(peaks)} attn-run "
            f"processes (min {min(peaks):.1f}, max {max(peaks):.1f})"
            if peaks else "not measured"),
        "PyTorch": (f"{torch.__version__}, SDPA on CPU, "
                    f"{torch.backends.cpu.get_cpu_capability()}"
                    if torch else "not run"),
        "ggml": ("not run (--no-ggml)" if args.no_ggml
                 else ggml_peer.describe()),
        "wall time": f"{time.perf_counter() - t_start:.0f} s",
    }
    md = markdown(rows, meta)
    (args.out / "table.md").write_text(md)
    try:
        plot(rows, peak_med, args.threads, args.out / "plot.png")
    except Exception as e:
        print(f"bench: no plot ({type(e).__name__}: {e})", file=sys.stderr)
    print(md)
    print(f"bench: wrote {args.out}/results.csv, table.md, plot.png",
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
