#!/usr/bin/env python3
"""The GPU device check: attn's AOT kernels against an f64 reference and torch.

Two steps, on two machines:

  build  (here, where attn is built): compiles every case of the grid below with
         `attn-compile` into one shared library per case (C ABI of
         docs/c-abi.md, JSON description beside it), plus one of the naive
         lowering (`--lowering naive`) per check case, and writes `cases.json`,
         the harness (this file) and nothing else into a bundle directory that
         is small enough to carry to the GPU machine.
  run    (there, with numpy and torch, or here for the CPU dry run): loads each
         library with ctypes, runs it on seeded inputs, checks it against an f64
         reference computed by this file (docs/numerics.md's rules, `sens`
         included), against attn's naive lowering on the same device and
         against torch's scaled_dot_product_attention, times the
         speed cases with CUDA events beside torch SDPA's flash and cuDNN
         backends and the machine's own dense bf16 matmul rate, and writes
         results.csv and table.md.

`--target cpu` builds the same grid for the CPU (the dry run that the test
suite runs, so the script is known to work before a GPU is used). Only numpy
is needed for a CPU run; torch is used where present.

The f64 reference and the library loader are the attn package's
(attn.reference, attn/_loader.py): imported from the python/ folder beside
this file (the bundle carries a copy of the package's Python files) or from
the checkout's python/, else from an installed attn.
"""

import argparse
import csv
import ctypes
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

for _python in (os.path.join(os.path.dirname(os.path.abspath(__file__)), p)
                for p in ("python", os.path.join("..", "python"))):
    if os.path.isfile(os.path.join(_python, "attn", "__init__.py")):
        sys.path.insert(0, _python)
        break
import attn  # noqa: E402
from attn import _loader, reference as attn_reference  # noqa: E402

# ---------------------------------------------------------------------------
# The grid
# ---------------------------------------------------------------------------


# The options of a case on the warp-specialized sm_90a kernel.
WGMMA = {"chip": "sm_90a", "cuda_args": ["--kernels", "wgmma"]}

# The sm_90a kernel's schedules beside the plain -wgmma one (issue 54):
# persistent CTAs (attn-compile --persistent), the intra-warpgroup overlap of
# the softmax with P.V (--softmax-overlap), and both; the suffix of their
# cases after -wgmma, and their extra options.
WGMMA_SCHEDULES = {
    "persistent": ["--persistent"],
    "overlap": ["--softmax-overlap"],
    "persistent-overlap": ["--persistent", "--softmax-overlap"],
}


def wgmma_schedule(case, schedule):
    """`case` (a mma.sync case) on the sm_90a kernel with `schedule`."""
    return dict(case, name=f"{case['name']}-wgmma-{schedule}",
                chip=WGMMA["chip"],
                cuda_args=WGMMA["cuda_args"] + WGMMA_SCHEDULES[schedule])


def check_cases():
    """Cases checked for numerics: every feature of the GPU issue, small."""
    cases = []

    def add(name, spec, sizes=None):
        cases.append({"name": name, "spec": spec, "sizes": sizes or {},
                      "kind": "check"})

    for dt in ("f16", "bf16"):
        for d in (64, 128):
            add(f"{dt}-d{d}", f"b=2,hq=4,lq=256,lk=256,d={d},dtype={dt}")
            add(f"{dt}-d{d}-causal-tl-lse",
                f"b=1,hq=4,lq=200,lk=200,d={d},dtype={dt},causal=top_left,lse=1")
            add(f"{dt}-d{d}-causal-br-tails",
                f"b=1,hq=2,lq=77,lk=300,d={d},dtype={dt},causal=bottom_right")
        add(f"{dt}-gqa", f"b=2,hq=8,hkv=2,lq=128,lk=192,d=64,dtype={dt},lse=1")
        add(f"{dt}-mqa-decode", f"b=3,hq=8,hkv=1,lq=1,lk=1000,d=128,dtype={dt}")
        add(f"{dt}-bool-mask", f"b=2,hq=2,lq=96,lk=130,d=64,dtype={dt},"
            "mask=bool,lse=1")
        add(f"{dt}-bool-mask-bcast", f"b=2,hq=4,lq=64,lk=100,d=64,dtype={dt},"
            "mask=bool,mask_shape=1x4x1x100")
        add(f"{dt}-float-mask-bcast", f"b=2,hq=2,lq=80,lk=64,d=128,dtype={dt},"
            "mask=float,mask_shape=2x1x80x64,causal=top_left")
        add(f"{dt}-empty-rows", f"b=1,hq=2,lq=100,lk=50,d=64,dtype={dt},"
            "causal=bottom_right,lse=1")
        add(f"{dt}-dynamic", f"b=2,hq=4,hkv=2,lq=150,lk=90,d=64,dtype={dt},"
            "lse=1,dynamic=1")
        for d in (32, 80, 96, 256):
            add(f"{dt}-d{d}", f"b=1,hq=2,lq=130,lk=70,d={d},dtype={dt}")
    add("f16-dv32", "b=1,hq=2,lq=64,lk=64,d=128,dv=32,dtype=f16")
    for d in (64, 128):
        add(f"f32-d{d}-causal-lse",
            f"b=1,hq=2,lq=100,lk=120,d={d},causal=bottom_right,lse=1")
    add("f32-masks-gqa", "b=2,hq=4,hkv=2,lq=64,lk=64,d=64,mask=float,"
        "mask_shape=1x1x64x64")
    # The attention variants (docs/op.md): sliding window with both causal
    # alignments, per-sequence key lengths, softcap, ALiBi, all at once.
    add("f16-window-causal-tl", "b=1,hq=2,lq=200,lk=200,d=64,dtype=f16,"
        "causal=top_left,window=50:-1,lse=1")
    add("bf16-window-br", "b=2,hq=2,lq=130,lk=300,d=128,dtype=bf16,"
        "window=70:40")
    add("f16-window-causal-br-tails", "b=1,hq=2,lq=77,lk=300,d=64,dtype=f16,"
        "causal=bottom_right,window=90:0,lse=1")
    add("bf16-key-lengths-causal-br", "b=3,hq=4,hkv=2,lq=60,lk=200,d=64,"
        "dtype=bf16,key_lengths=1,causal=bottom_right,lse=1")
    add("f16-key-lengths-dynamic", "b=3,hq=2,lq=100,lk=150,d=128,dtype=f16,"
        "key_lengths=1,dynamic=1")
    add("f16-softcap", "b=1,hq=4,lq=128,lk=160,d=64,dtype=f16,softcap=3,"
        "scale=0.5")
    add("bf16-softcap-causal-lse", "b=1,hq=2,lq=100,lk=120,d=128,dtype=bf16,"
        "softcap=2,scale=0.3,causal=top_left,lse=1")
    add("f16-alibi-h-causal-br", "b=2,hq=4,lq=100,lk=130,d=64,dtype=f16,"
        "alibi=h,causal=bottom_right")
    add("bf16-alibi-bh-gqa", "b=2,hq=4,hkv=2,lq=64,lk=90,d=128,dtype=bf16,"
        "alibi=bh,lse=1")
    add("f16-all-variants", "b=2,hq=2,lq=70,lk=140,d=64,dtype=f16,"
        "window=40:10,softcap=4,alibi=bh,key_lengths=1,mask=float,"
        "mask_shape=1x1x70x140,scale=0.3,lse=1")
    add("f32-variants", "b=2,hq=2,lq=50,lk=90,d=64,window=30:5,"
        "causal=bottom_right,softcap=3,alibi=h,key_lengths=1,lse=1")
    # Decoding (Lq * Hq / Hkv <= 32): the GPU's split-K decode kernels, the
    # keys cut into splits at run time (few K/V heads: several splits, merged
    # by their lse).
    add("decode-f16-gqa-splits", "b=1,hq=8,hkv=2,lq=1,lk=3000,d=128,"
        "dtype=f16,lse=1")
    add("decode-bf16-gqa-dynamic", "b=2,hq=32,hkv=8,lq=1,lk=2500,d=128,"
        "dtype=bf16,lse=1,dynamic=1")
    add("decode-bf16-causal-br-mask", "b=2,hq=4,hkv=1,lq=3,lk=700,d=64,"
        "dtype=bf16,causal=bottom_right,mask=bool,mask_shape=2x1x3x700,lse=1")
    add("decode-f16-causal-tl", "b=1,hq=4,hkv=2,lq=2,lk=600,d=64,dtype=f16,"
        "causal=top_left,lse=1")
    add("decode-f16-empty-rows", "b=1,hq=4,hkv=2,lq=4,lk=2,d=64,dtype=f16,"
        "causal=bottom_right,lse=1")
    add("decode-bf16-key-lengths", "b=3,hq=8,hkv=2,lq=1,lk=900,d=128,"
        "dtype=bf16,key_lengths=1,lse=1")
    add("decode-f16-variants", "b=2,hq=4,hkv=2,lq=1,lk=1200,d=64,dtype=f16,"
        "window=400:0,softcap=4,alibi=bh,key_lengths=1,mask=float,"
        "mask_shape=1x1x1x1200,scale=0.3,lse=1")
    add("decode-f32-gqa", "b=1,hq=8,hkv=2,lq=1,lk=2000,d=64,lse=1")
    add("decode-bf16-mqa-d256", "b=1,hq=8,hkv=1,lq=1,lk=777,d=256,"
        "dtype=bf16")
    # Shared memory shapes of the split kernel: f32 at D = 256 (8 keys per
    # stage, 16 threads per key), f16 at D = 80 (64 keys, 2 per key).
    add("decode-f32-d256-lse", "b=1,hq=4,hkv=1,lq=1,lk=700,d=256,lse=1")
    add("decode-f16-d80", "b=2,hq=4,hkv=2,lq=1,lk=900,d=80,dtype=f16")
    # The warp-specialized sm_90a kernel (attn-compile --chip sm_90a
    # --kernels wgmma, cuda only: TMA, wgmma, setmaxnreg; issue 54): every
    # prefill case again. Those it does not take (f32; D or Dv outside 64,
    # 128, 256: d32, d80, d96, dv32) run the mma.sync kernel it falls back
    # to, without a diagnostic; decoding steps keep the decode kernels.
    # Their naive oracle is the base case's library (build's naive_from).
    for c in [c for c in cases if not c["name"].startswith("decode-")]:
        cases.append(dict(c, name=c["name"] + "-wgmma", naive_from=c["name"],
                          **WGMMA))
    for name in ("bf16-d128", "f16-d64-causal-tl-lse", "bf16-d128-causal-br-tails",
                 "f16-float-mask-bcast", "bf16-bool-mask"):
        c = next(c for c in cases if c["name"] == name)
        cases.append(dict(c, name=name + "-wgmma-scaled", chip=WGMMA["chip"],
                          cuda_args=WGMMA["cuda_args"] + ["--fold-scale=false"],
                          naive_from=name))
    # Persistent CTAs with several work items each: 144 to 288 tiles of 128
    # rows, more than an H100's or H200's 132 SMs (the harness's small cases
    # give every CTA one item at most), causal ones taken longest first,
    # with GQA, tails, key lengths, dynamic sizes. mma.sync cases too, and
    # the naive oracle of each; on a GPU only.
    add("bf16-d128-causal-br-many-tiles", "b=3,hq=12,lq=700,lk=700,d=128,"
        "dtype=bf16,causal=bottom_right,lse=1")
    add("f16-d64-many-tiles", "b=4,hq=24,hkv=8,lq=300,lk=400,d=64,dtype=f16")
    add("bf16-d128-key-lengths-many-tiles", "b=3,hq=16,hkv=4,lq=400,lk=500,"
        "d=128,dtype=bf16,key_lengths=1,lse=1,dynamic=1")
    add("f16-d256-causal-tl-many-tiles", "b=3,hq=16,lq=300,lk=320,d=256,"
        "dtype=f16,causal=top_left")
    # Each schedule of the sm_90a kernel on those and on the small cases
    # that reach every branch of its tile loop (masks, tails, empty rows,
    # one tile, the variants; f16 and bf16; D = 64, 128, 256).
    for name in ("bf16-d128-causal-br-many-tiles", "f16-d64-many-tiles",
                 "bf16-d128-key-lengths-many-tiles",
                 "f16-d256-causal-tl-many-tiles"):
        c = next(c for c in cases if c["name"] == name)
        # Sized for a GPU: the CPU dry run (whose kernels are the same
        # code as for the small cases) leaves them out.
        c["gpu_only"] = True
        cases.append(dict(c, name=name + "-wgmma", naive_from=name, **WGMMA))
        for schedule in WGMMA_SCHEDULES:
            cases.append(dict(wgmma_schedule(c, schedule), naive_from=name))
    for name in ("bf16-d128", "f16-d64-causal-tl-lse",
                 "bf16-d128-causal-br-tails", "bf16-gqa", "f16-empty-rows",
                 "f16-dynamic", "bf16-d256", "f16-float-mask-bcast",
                 "bf16-key-lengths-causal-br", "f16-all-variants"):
        c = next(c for c in cases if c["name"] == name)
        for schedule in WGMMA_SCHEDULES:
            cases.append(dict(wgmma_schedule(c, schedule), naive_from=name))
    # The tensor-core kernel with more shared memory (attn-compile
    # --shared-memory, cuda only: larger tiles).
    for name in ("bf16-d128", "f16-d128-causal-tl-lse", "bf16-d128-causal-br-tails",
                 "f16-d256", "bf16-gqa"):
        c = next(c for c in cases if c["name"] == name)
        cases.append(dict(c, name=name + "-smem",
                          cuda_args=["--shared-memory", "232448"]))
    # The tensor-core kernel without the score scale folded into exp2's
    # argument (attn-compile --fold-scale=false, cuda only; folding is the
    # default since run 2): plain, causal both ways with lse, tails, empty
    # rows, GQA, masks (the float mask is scaled either way), windows, key
    # lengths, dynamic sizes, D = 80 and 256.
    for name in ("f16-d64", "bf16-d128", "f16-d64-causal-tl-lse",
                 "bf16-d128-causal-br-tails", "bf16-gqa", "f16-bool-mask",
                 "bf16-bool-mask-bcast", "f16-float-mask-bcast",
                 "f16-empty-rows", "bf16-empty-rows", "f16-dynamic",
                 "f16-d80", "bf16-d256", "f16-window-causal-br-tails",
                 "bf16-key-lengths-causal-br"):
        c = next(c for c in cases if c["name"] == name)
        cases.append(dict(c, name=name + "-scaled",
                          cuda_args=["--fold-scale=false"]))
    # The accumulators rescaled only where a row max grew (attn-compile
    # --lazy-rescale, cuda only; exact), with and without the folded scale.
    for name in ("f16-d64", "bf16-d128-causal-br-tails", "f16-d64-causal-tl-lse",
                 "bf16-gqa", "f16-empty-rows", "bf16-bool-mask",
                 "f16-window-causal-br-tails", "f16-d256"):
        c = next(c for c in cases if c["name"] == name)
        cases.append(dict(c, name=name + "-lazy", cuda_args=["--lazy-rescale"]))
        cases.append(dict(c, name=name + "-scaled-lazy",
                          cuda_args=["--fold-scale=false", "--lazy-rescale"]))
    # Every decode case again with the double-buffered split kernel
    # (attn-compile --decode-stages 2, cuda only: the CPU dry run compiles
    # the case without it).
    # And with the one-stage kernel's P.V loop unrolled by 4 keys
    # (attn-compile --decode-unroll 4, cuda only; the default is 2).
    for c in [c for c in cases if c["name"].startswith("decode-")]:
        cases.append(dict(c, name=c["name"] + "-stages2",
                          cuda_args=["--decode-stages", "2"]))
        cases.append(dict(c, name=c["name"] + "-unroll4",
                          cuda_args=["--decode-unroll", "4"]))
    # Decoding steps with --kernels wgmma: the decode kernels' automatic
    # key splits from the device's SM count, read at launch.
    for name in ("decode-f16-gqa-splits", "decode-bf16-gqa-dynamic",
                 "decode-bf16-key-lengths", "decode-bf16-mqa-d256"):
        c = next(c for c in cases if c["name"] == name)
        cases.append(dict(c, name=name + "-wgmma", naive_from=name, **WGMMA))
    return cases


def grad_cases():
    """The backward (attn.sdpa_grad, issue 55): check cases against the
    harness's f64 backward (grad_reference), each again as `-det` with
    `attn-compile --deterministic` (partial dQ per key block summed in
    order: called twice, bit-identical), and speed rows beside torch's
    flash backward."""
    cases = []

    def add(name, spec):
        cases.append({"name": "grad-" + name, "spec": spec, "kind": "grad"})

    for dt in ("f16", "bf16"):
        for d in (64, 128):
            add(f"{dt}-d{d}", f"b=2,hq=2,lq=256,lk=256,d={d},dtype={dt}")
            add(f"{dt}-d{d}-causal-tl",
                f"b=1,hq=2,lq=200,lk=200,d={d},dtype={dt},causal=top_left")
            add(f"{dt}-d{d}-causal-br-tails",
                f"b=1,hq=2,lq=77,lk=300,d={d},dtype={dt},causal=bottom_right")
        add(f"{dt}-gqa-causal", f"b=2,hq=8,hkv=2,lq=128,lk=192,d=64,"
            f"dtype={dt},causal=bottom_right")
        add(f"{dt}-empty-rows", f"b=1,hq=2,lq=100,lk=50,d=64,dtype={dt},"
            "causal=bottom_right")
        add(f"{dt}-dv128", f"b=1,hq=2,lq=96,lk=130,d=64,dv=128,dtype={dt}")
        add(f"{dt}-d96-scale", f"b=1,hq=2,lq=70,lk=90,d=96,dtype={dt},"
            "scale=0.3")
    cases += [dict(c, name=c["name"] + "-det",
                   cuda_args=["--deterministic"]) for c in list(cases)]
    for dt in ("bf16", "f16"):
        for d, hq in ((64, 32), (128, 16)):
            for causal in ("none", "bottom_right"):
                spec = (f"b=1,hq={hq},lq=1024,lk=1024,d={d},dtype={dt},"
                        f"causal={causal},dynamic=1")
                runs = [{"b": 16384 // lq, "lq": lq, "lk": lq}
                        for lq in (1024, 2048, 4096, 8192, 16384)]
                cases.append({"name": f"grad-{dt}-d{d}-{causal}",
                              "spec": spec, "kind": "speed", "grad": True,
                              "runs": runs})
    return cases


def speed_cases():
    """docs/performance.md's GPU shapes: b * lq = 16384, hidden 2048."""
    cases = []
    for dt in ("bf16", "f16"):
        for d, hq in ((64, 32), (128, 16)):
            for causal in ("none", "bottom_right"):
                spec = (f"b=1,hq={hq},lq=1024,lk=1024,d={d},dtype={dt},"
                        f"causal={causal},dynamic=1")
                runs = [{"b": 16384 // lq, "lq": lq, "lk": lq}
                        for lq in (1024, 2048, 4096, 8192, 16384)]
                cases.append({"name": f"{dt}-d{d}-{causal}", "spec": spec,
                              "kind": "speed", "runs": runs})
    # The same shapes on the sm_90a kernel, timed beside the mma.sync rows
    # above (torch's backends are timed there once): wgmma_summary.
    cases += [dict(c, name=c["name"] + "-wgmma", torch=False,
                   runs=[dict(r) for r in c["runs"]], **WGMMA)
              for c in list(cases)]
    # The sm_90a kernel's schedules (persistent, overlap, both) on the bf16
    # shapes, beside the plain -wgmma rows: wgmma_summary's "vs wgmma".
    cases += [dict(c, name=f"{c['name']}-{schedule}",
                   cuda_args=c["cuda_args"] + WGMMA_SCHEDULES[schedule],
                   runs=[dict(r) for r in c["runs"]])
              for c in list(cases) if c["name"].startswith("bf16-")
              and c["name"].endswith("-wgmma") for schedule in WGMMA_SCHEDULES]
    decode = {"name": "bf16-decode", "kind": "speed",
              "spec": "b=1,hq=32,hkv=8,lq=1,lk=32768,d=128,dtype=bf16,"
                      "dynamic=1",
              "runs": [{"b": b, "lq": 1, "lk": 32768} for b in (1, 4, 8)]}
    # With --kernels wgmma: the key splits from the device's SM count read at
    # launch (the table's 132 for sm_90a otherwise).
    cases += [decode, dict(decode, name="bf16-decode-wgmma", torch=False,
                           runs=[dict(r) for r in decode["runs"]], **WGMMA)]
    return cases


def tune_cases():
    """Tile shapes of the tensor-core kernel (attn-compile --block-q,
    --block-kv) at one size each, timed beside the default, so that one run
    on a GPU says which default to keep."""
    cases = []
    for d, hq, causal in ((128, 16, "none"), (128, 16, "bottom_right"),
                          (64, 32, "none")):
        spec = (f"b=4,hq={hq},lq=4096,lk=4096,d={d},dtype=bf16,"
                f"causal={causal}")
        for bq in (64, 128):
            for bkv in (32, 64, 128):
                cases.append({"name": f"tune-bf16-d{d}-{causal}-q{bq}-kv{bkv}",
                              "spec": spec, "kind": "speed",
                              "args": ["--block-q", str(bq),
                                       "--block-kv", str(bkv)],
                              "runs": [{}]})
    # More shared memory than the 48 KiB without opt-in (attn-compile
    # --shared-memory: the D = 128 tiles keep 64 keys, block-q 128 fits).
    for causal in ("none", "bottom_right"):
        spec = f"b=4,hq=16,lq=4096,lk=4096,d=128,dtype=bf16,causal={causal}"
        for bq, bkv in ((64, 64), (128, 64), (64, 128), (128, 128)):
            cases.append({"name": f"tune-bf16-d128-{causal}-q{bq}-kv{bkv}-smem",
                          "spec": spec, "kind": "speed",
                          "args": ["--block-q", str(bq), "--block-kv", str(bkv),
                                   "--shared-memory", "232448"],
                          "runs": [{}]})
    # The score scale not folded into exp2 (attn-compile --fold-scale=false:
    # the default before run 2) and the lazy rescale (--lazy-rescale), alone
    # and together at the default tiles; d=64 with the larger shared-memory
    # tiles (run 2 timed them at d=128 only).
    for d, hq, causal in ((128, 16, "none"), (128, 16, "bottom_right"),
                          (64, 32, "none"), (64, 32, "bottom_right")):
        spec = (f"b=4,hq={hq},lq=4096,lk=4096,d={d},dtype=bf16,"
                f"causal={causal}")
        for label, extra in (("scaled", ["--fold-scale=false"]),
                             ("lazy", ["--lazy-rescale"]),
                             ("scaled-lazy", ["--fold-scale=false",
                                              "--lazy-rescale"])):
            cases.append({"name": f"tune-bf16-d{d}-{causal}-{label}",
                          "spec": spec, "kind": "speed", "args": extra,
                          "runs": [{}]})
        if d == 64:
            for bq, bkv in ((128, 64), (128, 128)):
                cases.append({"name": f"tune-bf16-d64-{causal}-q{bq}-kv{bkv}-smem",
                              "spec": spec, "kind": "speed",
                              "args": ["--block-q", str(bq), "--block-kv",
                                       str(bkv), "--shared-memory", "232448"],
                              "runs": [{}]})
        # The default kernel on the same spec: tune_summary's baseline.
        cases.append({"name": f"tune-bf16-d{d}-{causal}-default",
                      "spec": spec, "kind": "speed", "args": [],
                      "runs": [{}]})
    # Decode: fixed key splits against the run-time choice (speed_cases'
    # bf16-decode: 64 splits at b=1 and b=8 since run 2, 33 and 5 before),
    # and the tensor-core kernel alone (--decode-rows 0).
    spec = "b=1,hq=32,hkv=8,lq=1,lk=32768,d=128,dtype=bf16,dynamic=1"
    runs = [{"b": b, "lq": 1, "lk": 32768} for b in (1, 8)]
    for args in (["--kv-splits", "5"], ["--kv-splits", "16"],
                 ["--kv-splits", "33"], ["--kv-splits", "64"],
                 ["--kv-splits", "128"], ["--kv-splits", "256"],
                 ["--decode-unroll", "1"], ["--decode-unroll", "4"],
                 ["--decode-unroll", "8"],
                 ["--decode-unroll", "4", "--kv-splits", "128"],
                 ["--decode-rows", "0"], ["--decode-stages", "2"],
                 ["--decode-stages", "2", "--kv-splits", "128"],
                 ["--decode-stages", "2", "--kv-splits", "256"]):
        label = "-".join(a.lstrip("-") for a in args)
        cases.append({"name": f"tune-decode-{label}", "spec": spec,
                      "kind": "speed", "args": args,
                      "runs": [dict(r) for r in runs]})
    return cases


# ---------------------------------------------------------------------------
# Specs
# ---------------------------------------------------------------------------


def parse_spec(text):
    """The keys of an `--sdpa` spec with attn-run's defaults filled."""
    kv = dict(item.split("=", 1) for item in text.split(","))
    s = {"b": 1, "dtype": "f32", "causal": "none", "mask": "none", "lse": 0,
         "dynamic": 0}
    s.update(kv)
    for key in ("b", "hq", "lq", "d", "lse", "dynamic"):
        s[key] = int(s[key])
    s["hkv"] = int(kv.get("hkv", s["hq"]))
    s["lk"] = int(kv.get("lk", s["lq"]))
    s["dv"] = int(kv.get("dv", s["d"]))
    s["scale"] = float(kv["scale"]) if "scale" in kv else None
    s["window"] = (tuple(int(x) for x in kv["window"].split(":"))
                   if "window" in kv else None)
    s["softcap"] = float(kv["softcap"]) if "softcap" in kv else None
    s["key_lengths"] = int(kv.get("key_lengths", 0))
    s["alibi"] = kv.get("alibi", "none")
    if s["mask"] != "none":
        shape = kv.get("mask_shape")
        s["mask_shape"] = ([int(x) for x in shape.split("x")] if shape else
                           [s["b"], s["hq"], s["lq"], s["lk"]])
    return s


def grad_module(s):
    """The .mlir text of @sdpa_grad for the spec (dynamic B, Lq, Lk with
    dynamic=1): attn.sdpa_grad on q, k, v, out, lse, d_out."""
    def t(shape, dt):
        return ("tensor<" + "x".join("?" if x is None else str(x)
                                     for x in shape) + f"x{dt}>")
    dyn = s["dynamic"]
    b, lq, lk = (None, None, None) if dyn else (s["b"], s["lq"], s["lk"])
    dt = s["dtype"]
    types = [t([b, s["hq"], lq, s["d"]], dt), t([b, s["hkv"], lk, s["d"]], dt),
             t([b, s["hkv"], lk, s["dv"]], dt), t([b, s["hq"], lq, s["dv"]], dt),
             t([b, s["hq"], lq], "f32"), t([b, s["hq"], lq, s["dv"]], dt)]
    attrs = []
    if s["scale"] is not None:
        attrs.append(f"scale = {s['scale']!r} : f32")
    if s["causal"] != "none":
        attrs.append(f"causal = #attn.causal<{s['causal']}>")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    args = ", ".join(f"%a{i}: {ty}" for i, ty in enumerate(types))
    results = ", ".join(types[:3])
    return (f"func.func @sdpa_grad({args}) -> ({results}) {{\n"
            f"  %dq, %dk, %dv = attn.sdpa_grad %a0, %a1, %a2, %a3, %a4, %a5"
            f"{attr}\n      : {', '.join(types)} -> {results}\n"
            f"  return %dq, %dk, %dv : {results}\n}}\n")


def grad_reference(s, q, k, v, out, lse, d_out):
    """The gradients (dq, dk, dv) in float64 of docs/op.md's attn.sdpa_grad,
    written here independently of attn: P = exp(scale Q.K^T - lse) (0 where
    causality hides the key or the row saw nothing, lse = -inf), dV = P^T.dO,
    dS = P o (dO.V^T - rowsum(dO o O)), dQ = scale dS.K, dK = scale dS^T.Q,
    dK and dV summed over the query heads of a K/V head."""
    b, hq, lq, d = q.shape
    hkv, lk = k.shape[1], k.shape[2]
    g = hq // hkv
    scale = s["scale"] if s["scale"] is not None else 1 / math.sqrt(d)
    kk, vv = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    scores = scale * np.einsum("bhid,bhjd->bhij", q, kk)
    visible = np.ones((lq, lk), dtype=bool)
    if s["causal"] != "none":
        off = 0 if s["causal"] == "top_left" else lk - lq
        visible = np.arange(lk)[None, :] <= np.arange(lq)[:, None] + off
    seen = np.isfinite(lse)[..., None]
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.where(visible & seen,
                     np.exp(scores - np.where(seen, lse[..., None], 0)), 0.0)
    dv = np.einsum("bhij,bhid->bhjd", p, d_out)
    dp = np.einsum("bhid,bhjd->bhij", d_out, vv)
    di = (d_out * out).sum(-1)
    ds = p * (dp - di[..., None])
    dq = scale * np.einsum("bhij,bhjd->bhid", ds, kk)
    dk = scale * np.einsum("bhij,bhid->bhjd", ds, q)
    fold = (lambda x: x.reshape(b, hkv, g, lk, x.shape[-1]).sum(2))
    return dq, fold(dk), fold(dv)


def sized(spec, sizes):
    """The spec with b, lq, lk (and the mask dims that follow them) resized."""
    s = dict(spec)
    for key in ("b", "lq", "lk"):
        if key in sizes:
            s[key] = sizes[key]
    if s["mask"] != "none":
        full = [s["b"], s["hq"], s["lq"], s["lk"]]
        s["mask_shape"] = [1 if m == 1 else f for m, f in
                           zip(spec["mask_shape"], full)]
    return s


def flops(s):
    """docs/op.md: 2 * B * Hq * (D + Dv) * visible pairs."""
    lq, lk = s["lq"], s["lk"]
    if s["causal"] == "none":
        pairs = lq * lk
    else:
        off = 0 if s["causal"] == "top_left" else lk - lq
        pairs = sum(max(0, min(lk, i + off + 1)) for i in range(lq))
    return 2 * s["b"] * s["hq"] * (s["d"] + s["dv"]) * pairs


# ---------------------------------------------------------------------------
# Element types (numpy alone: bf16 as raw uint16 bits)
# ---------------------------------------------------------------------------


def to_bf16_bits(x):
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(x)
    out = rounded.astype(np.uint16)
    out[nan] = 0x7FC0
    return out


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def storage(x, dtype):
    """float64 values -> the array handed to the kernel."""
    if dtype == "f32":
        return x.astype(np.float32)
    if dtype == "f16":
        return x.astype(np.float16)
    if dtype == "bf16":
        return to_bf16_bits(x.astype(np.float32))
    if dtype == "i1":
        return x.astype(np.bool_)
    raise ValueError(dtype)


def values(a, dtype):
    """The array a kernel read or wrote -> float64."""
    if dtype == "bf16":
        return from_bf16_bits(a).astype(np.float64)
    return a.astype(np.float64)


# ---------------------------------------------------------------------------
# The f64 reference and the numerics rules (docs/op.md, docs/numerics.md)
# ---------------------------------------------------------------------------


def has_variants(s):
    """Whether the spec uses a variant torch's SDPA has no argument for."""
    return bool(s["window"] or s["softcap"] or s["key_lengths"] or
                s["alibi"] != "none")


def aux_inputs(s, arrays):
    """(key lengths [B] int64, ALiBi slopes [B, Hq] float64) of the case's
    inputs (after the mask, in that order), or None for each it lacks."""
    index = 4 if s["mask"] != "none" else 3
    lengths = slopes = None
    if s["key_lengths"]:
        lengths = np.clip(arrays[index].astype(np.int64), 0, s["lk"])
        index += 1
    if s["alibi"] != "none":
        slopes = np.broadcast_to(arrays[index].astype(np.float64),
                                 (s["b"], s["hq"]))
    return lengths, slopes


def sdpa_options(s, aux=(None, None)):
    """attn.reference.sdpa's options for the spec; `aux` is aux_inputs'
    (key lengths, ALiBi slopes)."""
    return {"causal": s["causal"], "scale": s["scale"],
            "softcap": s["softcap"], "window": s["window"],
            "key_lengths": aux[0], "alibi_slopes": aux[1]}


def reference(s, q, k, v, mask, aux=(None, None)):
    """out [B,Hq,Lq,Dv] and lse [B,Hq,Lq] in float64 (attn.reference)."""
    return attn_reference.sdpa(q, k, v, mask, **sdpa_options(s, aux))


errors = attn_reference.errors


def sensitivity(s, q, k, v, mask, out, lse, seed, trials=3, aux=(None, None)):
    """out rel, out abs, lse rel, lse abs (attn.reference.sensitivity)."""
    return list(attn_reference.sensitivity(
        q, k, v, mask, seed=seed, trials=trials, ref=(out, lse),
        **sdpa_options(s, aux)))


def judge(dtype, is_out, max_abs, rel_l2, ref_max, comparator_rel, sens,
          naive_rel=None):
    """docs/numerics.md: (pass, rule). comparator_rel: the error of torch's
    own math path in the same precision (FlashAttention's rule), if known;
    naive_rel: the error of attn's naive lowering on the same device (the
    same rule against attn's own oracle), if it ran."""
    if is_out and dtype in ("f16", "bf16"):
        bound = 2e-3 if dtype == "f16" else 1.6e-2
        ok = rel_l2 <= bound
        rule = f"rel_l2 <= {bound:g}"
        if comparator_rel is not None:
            ok = ok and rel_l2 <= 2 * comparator_rel + 1e-6
            rule += f" and <= 2*torch {comparator_rel:.3g} + 1e-6"
        if naive_rel is not None:
            ok = ok and rel_l2 <= 2 * naive_rel + 1e-6
            rule += f" and <= 2*naive {naive_rel:.3g} + 1e-6"
        return ok, rule
    srel, sabs = sens
    bound_rel = 1e-5 + 4 * srel
    bound_abs = 1e-4 * max(1.0, ref_max) + 4 * sabs
    return (rel_l2 <= bound_rel and max_abs <= bound_abs,
            f"rel_l2 <= {bound_rel:.3g}, max_abs <= {bound_abs:.3g}")


# ---------------------------------------------------------------------------
# Loading and calling a compiled library (docs/c-abi.md)
# ---------------------------------------------------------------------------


class Kernel:
    """A library's first function, loaded by attn's loader (attn/_loader.py):
    ``kernel(pointers, sizes, stream)`` with the sizes by name."""

    def __init__(self, lib_path):
        self.entry = _loader.Library(lib_path).entry()
        self.fn_desc = self.entry.desc

    def __call__(self, pointers, sizes, stream=None):
        self.entry(pointers, sizes, stream)


class Device:
    """Where buffers live: numpy on the CPU, torch tensors on CUDA."""

    def __init__(self, name):
        self.name = name
        self.torch = None
        try:
            import torch  # noqa: F401
            self.torch = torch
        except ImportError:
            if name == "cuda":
                raise
        self.stream = None
        if name == "cuda":
            self.stream = ctypes.c_void_p(
                self.torch.cuda.current_stream().cuda_stream)

    def put(self, array):
        if self.name == "cpu":
            return np.ascontiguousarray(array)
        t = self.torch.from_numpy(np.ascontiguousarray(array))
        if array.dtype == np.uint16:  # bf16 bits
            t = t.view(self.torch.bfloat16)
        return t.to("cuda")

    def poisoned(self, shape, dtype):
        """An output buffer filled with NaN, so an unwritten element fails."""
        if self.name == "cuda":
            torch = self.torch
            return torch.full(shape, float("nan"), device="cuda", dtype={
                "f32": torch.float32, "f16": torch.float16,
                "bf16": torch.bfloat16}[dtype])
        return self.put(storage(np.full(shape, np.nan), dtype))

    def random(self, s, seed):
        """Inputs of a speed case, drawn where they will be used."""
        if self.name == "cpu":
            return [self.put(a) for a in make_inputs(s, seed)]
        torch = self.torch
        dt = {"f32": torch.float32, "f16": torch.float16,
              "bf16": torch.bfloat16}[s["dtype"]]
        g = torch.Generator(device="cuda").manual_seed(seed)
        shapes = [[s["b"], s["hq"], s["lq"], s["d"]],
                  [s["b"], s["hkv"], s["lk"], s["d"]],
                  [s["b"], s["hkv"], s["lk"], s["dv"]]]
        return [torch.randn(sh, generator=g, device="cuda", dtype=dt)
                for sh in shapes]

    def as_torch(self, buf):
        """A buffer as a torch tensor (for torch's own SDPA)."""
        if self.name == "cuda":
            return buf
        t = self.torch.from_numpy(np.ascontiguousarray(buf))
        if buf.dtype == np.uint16:  # bf16 bits
            t = t.view(self.torch.bfloat16)
        return t

    def ptr(self, buf):
        if self.name == "cpu":
            return buf.ctypes.data
        return buf.data_ptr()

    def get(self, buf):
        """A numpy array of a buffer: a numpy array as it is, a torch
        tensor (on either device) copied, bf16 as uint16 bits."""
        if isinstance(buf, np.ndarray):
            return buf
        if buf.dtype == self.torch.bfloat16:
            return buf.view(self.torch.int16).cpu().numpy().view(np.uint16)
        return buf.cpu().numpy()

    def sync(self):
        if self.name == "cuda":
            self.torch.cuda.synchronize()


def make_inputs(s, seed):
    rng = np.random.default_rng(seed)
    dt = s["dtype"]
    shapes = [[s["b"], s["hq"], s["lq"], s["d"]],
              [s["b"], s["hkv"], s["lk"], s["d"]],
              [s["b"], s["hkv"], s["lk"], s["dv"]]]
    arrays = [storage(rng.standard_normal(sh), dt) for sh in shapes]
    if s["mask"] == "bool":
        arrays.append(rng.random(s["mask_shape"]) < 0.8)
    elif s["mask"] == "float":
        arrays.append(storage(rng.standard_normal(s["mask_shape"]), dt))
    if s["key_lengths"]:
        # Uniform in [0, lk], with the two ends always present.
        lengths = rng.integers(0, s["lk"] + 1, size=s["b"])
        lengths[0] = s["lk"]
        if s["b"] > 2:
            lengths[1] = 0
        arrays.append(lengths.astype(np.int32))
    if s["alibi"] != "none":
        shape = [s["hq"]] if s["alibi"] == "h" else [s["b"], s["hq"]]
        arrays.append((np.abs(rng.standard_normal(shape)) / 4)
                      .astype(np.float32))
    return arrays


def torch_sdpa(torch, s, tensors, math_only=False):
    """torch's SDPA on the same inputs (bottom-right causality as a mask)."""
    import torch.nn.functional as F
    q, k, v = tensors[:3]
    mask = tensors[3] if len(tensors) > 3 else None
    # Bottom-right causality at Lq = Lk is top-left's: torch's is_causal
    # (its flash and cuDNN kernels take no mask).
    causal = (s["causal"] == "top_left" or (s["causal"] == "bottom_right" and
                                            s["lq"] == s["lk"])) \
        and mask is None
    if s["causal"] != "none" and not causal:
        lq, lk = s["lq"], s["lk"]
        off = 0 if s["causal"] == "top_left" else lk - lq
        i = torch.arange(lq, device=q.device)[:, None]
        j = torch.arange(lk, device=q.device)[None, :]
        cm = j <= i + off
        if mask is None:
            mask = cm
        elif mask.dtype == torch.bool:
            mask = mask & cm
        else:
            mask = mask.masked_fill(~cm, float("-inf"))
    kwargs = {"attn_mask": mask, "is_causal": causal,
              "enable_gqa": s["hq"] != s["hkv"]}
    if s["scale"] is not None:
        kwargs["scale"] = s["scale"]
    if math_only:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel([SDPBackend.MATH]):
            return F.scaled_dot_product_attention(q, k, v, **kwargs)
    return F.scaled_dot_product_attention(q, k, v, **kwargs)


# ---------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------


def build(args):
    os.makedirs(args.out, exist_ok=True)
    manifest = []
    cases = check_cases() + ([] if args.no_speed else speed_cases())
    cases += [c for c in grad_cases()
              if not (args.no_speed and c["kind"] == "speed")]
    if args.tune:
        cases += tune_cases()
    if args.shrink > 1:  # a dry run of the speed path at small sizes
        for c in cases:
            for r in c.get("runs", []):
                r["b"] = max(1, r["b"] // args.shrink)
                r["lq"] = max(1, r["lq"] // args.shrink)
                r["lk"] = max(1, r["lk"] // args.shrink)
    if args.only:
        cases = [c for c in cases if any(o in c["name"] for o in args.only)]
    if args.target != "cuda":
        # A case that differs from another only by cuda-only options would
        # compile the same library for the CPU: the dry run leaves it out,
        # and the cases sized for a GPU's SM count (gpu_only).
        cases = [c for c in cases
                 if not c.get("cuda_args") and not c.get("gpu_only")]
    elif not args.chip.startswith("sm_90"):
        # The sm_90a cases run on Hopper only.
        cases = [c for c in cases if c.get("chip", args.chip) != "sm_90a"]
    naive_libs = {}  # case name -> its naive library
    for c in cases:
        lib = f"lib{c['kind']}-{c['name']}.so"
        if c["kind"] == "grad" or c.get("grad"):
            source = os.path.join(args.out, f"{c['name']}.mlir")
            with open(source, "w") as f:
                f.write(grad_module(parse_spec(c["spec"])))
            cmd = [args.attn_compile, source]
        else:
            cmd = [args.attn_compile, "--sdpa", c["spec"], "--name", "sdpa"]
        cmd += ["--target", args.target, "-o", os.path.join(args.out, lib)]
        if args.target == "cuda":
            cmd += ["--chip", c.get("chip", args.chip)]
        # Options of the fused lowering: not given to the naive one.
        fused_args = c.get("args", []) + (
            c.get("cuda_args", []) if args.target == "cuda" else [])
        t0 = time.time()
        p = subprocess.run(cmd + fused_args, capture_output=True, text=True)
        entry = dict(c, lib=lib, compile_s=round(time.time() - t0, 2))
        if p.returncode != 0:
            entry["compile_error"] = (p.stderr or p.stdout).strip()
            print(f"build: {c['name']}: attn-compile failed: "
                  f"{entry['compile_error']}", file=sys.stderr)
        if (c["kind"] == "check" and not args.no_naive
                and c.get("naive_from") in naive_libs):
            # The same spec's naive library (the naive lowering takes no
            # option of the fused one): built once, which keeps the bundle
            # small enough to carry.
            entry["naive_lib"] = naive_libs[c["naive_from"]]
        elif c["kind"] == "check" and not args.no_naive:
            # attn's own oracle on the same device: the naive lowering.
            naive_lib = f"lib{c['kind']}-{c['name']}-naive.so"
            naive_cmd = cmd[:cmd.index("-o")] + [
                "--lowering", "naive", "-o",
                os.path.join(args.out, naive_lib)] + cmd[cmd.index("-o") + 2:]
            p = subprocess.run(naive_cmd, capture_output=True, text=True)
            entry["naive_lib"] = naive_lib
            entry["compile_s"] = round(time.time() - t0, 2)
            if p.returncode == 0:
                naive_libs[c["name"]] = naive_lib
            else:
                entry["compile_error"] = ("naive: " +
                                          (p.stderr or p.stdout).strip())
                print(f"build: {c['name']}: attn-compile --lowering naive "
                      f"failed: {entry['compile_error']}", file=sys.stderr)
        manifest.append(entry)
    shutil.copy(os.path.abspath(__file__), os.path.join(args.out,
                                                        "gpu_check.py"))
    # The attn Python package's Python files (its reference and loader; run
    # checks each library through attn.Kernel too: package_rows), not
    # attn-compile.
    package = os.path.dirname(os.path.abspath(attn.__file__))
    dst = os.path.join(args.out, "python", "attn")
    os.makedirs(dst, exist_ok=True)
    for n in os.listdir(package):
        if n.endswith(".py"):
            shutil.copy(os.path.join(package, n), dst)
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump({"target": args.target, "chip": args.chip,
                   "cases": manifest}, f, indent=1)
    size = sum(os.path.getsize(os.path.join(args.out, n))
               for n in os.listdir(args.out))
    failed = sum("compile_error" in c for c in manifest)
    print(f"build: {len(manifest)} cases ({failed} failed to compile) into "
          f"{args.out}, {size / 2**20:.1f} MiB")
    return 1 if failed else 0


# ---------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------


def package_rows(dev, c, s, ins, got_raw, package_kernel):
    """The same library called through the attn package (attn.Kernel: its
    argument checks, dynamic sizes read off the tensors, result allocation
    and, on CUDA, torch's current stream): its results must be bit for bit
    the harness's own call's."""
    args = [dev.as_torch(t) for t in ins] if dev.torch is not None else ins
    if dev.torch is None and s["dtype"] == "bf16":
        return []  # numpy has no bf16 the package takes
    res = package_kernel(*args)
    if not isinstance(res, tuple):
        res = (res,)
    dev.sync()
    rows = []
    for name, r, g in zip(("out", "lse"), res, got_raw):
        a = dev.get(r)
        same = a.shape == g.shape and a.tobytes() == g.tobytes()
        rows.append({"case": c["name"], "result": name + " (attn.Kernel)",
                     "max_abs": None, "rel_l2": None, "sens_rel": None,
                     "torch_rel_l2": None, "naive_rel_l2": None, "nan": None,
                     "rule": "bit-identical to the harness's call",
                     "pass": same})
    return rows


def run_check(dev, kernel, c, seed, naive=None, package_kernel=None):
    """The rows of one check case; `naive`: the case's naive-lowering
    library (attn's own oracle on the same device), if built;
    `package_kernel`: the same library loaded by the attn package."""
    s = sized(parse_spec(c["spec"]), c.get("sizes", {}))
    arrays = make_inputs(s, seed)
    dt = s["dtype"]
    ins = [dev.put(a) for a in arrays]

    def call(k):
        outs = [dev.poisoned([s["b"], s["hq"], s["lq"], s["dv"]], dt)]
        if s["lse"]:
            outs.append(dev.poisoned([s["b"], s["hq"], s["lq"]], "f32"))
        k([dev.ptr(t) for t in ins + outs],
          {"b": s["b"], "lq": s["lq"], "lk": s["lk"]}, dev.stream)
        dev.sync()
        raw.append([dev.get(t) for t in outs])
        return [values(a, d) for a, d in zip(raw[-1], [dt, "f32"])]

    raw = []
    got = call(kernel)
    got_naive = call(naive) if naive is not None else None
    q, k, v = (values(a, dt) for a in arrays[:3])
    mask = None
    if s["mask"] == "bool":
        mask = arrays[3]
    elif s["mask"] == "float":
        mask = values(arrays[3], dt)
    aux = aux_inputs(s, arrays)
    ref_out, ref_lse = reference(s, q, k, v, mask, aux=aux)
    sens = sensitivity(s, q, k, v, mask, ref_out, ref_lse, seed, aux=aux)
    torch_rel = None
    # torch's SDPA has no softcap, ALiBi, window or key lengths: variant
    # cases are held to the f64 reference and attn's naive lowering.
    if dev.torch is not None and dt in ("f16", "bf16") and not has_variants(s):
        try:
            t_out = torch_sdpa(dev.torch, s, [dev.as_torch(t) for t in ins],
                               math_only=True).contiguous()
            torch_rel = errors(values(dev.get(t_out), dt), ref_out)[1]
        except Exception as e:  # torch may refuse a configuration
            print(f"  {c['name']}: torch math SDPA failed: {e}",
                  file=sys.stderr)
    rows = []
    for i, (name, r, sn) in enumerate((("out", ref_out, sens[0:2]),
                                       ("lse", ref_lse, sens[2:4]))):
        if i == 1 and not s["lse"]:
            continue
        finite = r[np.isfinite(r)]
        ref_max = float(np.abs(finite).max()) if finite.size else 0.0
        naive_rel = None
        if got_naive is not None:
            # The oracle itself, under the same rules (torch's only).
            n_abs, naive_rel = errors(got_naive[i], r)
            ok, rule = judge(dt, name == "out", n_abs, naive_rel, ref_max,
                             torch_rel if name == "out" else None, sn)
            nan = bool(np.isnan(got_naive[i]).any())
            rows.append({"case": c["name"], "result": name + " (naive)",
                         "max_abs": n_abs, "rel_l2": naive_rel,
                         "sens_rel": sn[0],
                         "torch_rel_l2": torch_rel if name == "out" else None,
                         "naive_rel_l2": None, "nan": nan, "rule": rule,
                         "pass": ok and not nan})
        g = got[i]
        max_abs, rel = errors(g, r)
        detail = where_wrong(g, r)
        ok, rule = judge(dt, name == "out", max_abs, rel, ref_max,
                         torch_rel if name == "out" else None, sn,
                         naive_rel if name == "out" else None)
        nan = bool(np.isnan(g).any())
        ok = ok and not nan
        rows.append({"case": c["name"], "result": name, "max_abs": max_abs,
                     "rel_l2": rel, "sens_rel": sn[0],
                     "torch_rel_l2": torch_rel if name == "out" else None,
                     "naive_rel_l2": naive_rel, "nan": nan, "rule": rule,
                     "pass": ok, "detail": detail})
    if package_kernel is not None:
        rows += package_rows(dev, c, s, ins, raw[0], package_kernel)
    return rows


def run_grad(dev, kernel, c, seed):
    """The rows of one backward case: dq, dk, dv against grad_reference
    (out and lse from the f64 forward, rounded as a forward returns them);
    a deterministic case (`--deterministic`) is called twice and must give
    the same bits."""
    s = parse_spec(c["spec"])
    dt = s["dtype"]
    arrays = make_inputs(s, seed)
    q, k, v = (values(a, dt) for a in arrays[:3])
    ref_out, ref_lse = reference(s, q, k, v, None)
    out_st = storage(ref_out, dt)
    lse_st = ref_lse.astype(np.float32)
    rng = np.random.default_rng(seed + 1)
    do_st = storage(rng.standard_normal(ref_out.shape), dt)
    ins = [dev.put(a) for a in arrays[:3] + [out_st, lse_st, do_st]]
    shapes = [[s["b"], s["hq"], s["lq"], s["d"]],
              [s["b"], s["hkv"], s["lk"], s["d"]],
              [s["b"], s["hkv"], s["lk"], s["dv"]]]

    def call():
        outs = [dev.poisoned(sh, dt) for sh in shapes]
        kernel([dev.ptr(t) for t in ins + outs], None, dev.stream)
        dev.sync()
        return [dev.get(t) for t in outs]

    raw = call()
    refs = grad_reference(s, q, k, v, values(out_st, dt),
                          lse_st.astype(np.float64), values(do_st, dt))
    bound = {"f16": 1e-2, "bf16": 5e-2, "f32": 1e-4}[dt]
    rows = []
    for name, g, r in zip(("dq", "dk", "dv"), raw, refs):
        got = values(g, dt)
        max_abs, rel = errors(got, r)
        nan = bool(np.isnan(got).any())
        rows.append({"case": c["name"], "result": name, "max_abs": max_abs,
                     "rel_l2": rel, "sens_rel": None, "torch_rel_l2": None,
                     "naive_rel_l2": None, "nan": nan,
                     "rule": f"rel_l2 <= {bound:g} (f64 backward)",
                     "pass": rel <= bound and not nan,
                     "detail": where_wrong(got, r)})
    if "--deterministic" in c.get("cuda_args", []):
        again = call()
        same = all(a.tobytes() == b.tobytes() for a, b in zip(raw, again))
        rows.append({"case": c["name"], "result": "dq, dk, dv (repeat)",
                     "max_abs": None, "rel_l2": None, "sens_rel": None,
                     "torch_rel_l2": None, "naive_rel_l2": None, "nan": None,
                     "rule": "bit-identical to the first call",
                     "pass": same})
    return rows


def run_grad_speed(dev, kernel, c, iters, peak):
    """Backward timings: attn's library on (q, k, v, out, lse, d_out) and,
    on CUDA, torch's flash backward (autograd.grad of its flash SDPA) on the
    same sizes; FLOPs 2.5x the forward's."""
    rows = []
    base = parse_spec(c["spec"])
    for sizes in c["runs"]:
        s = sized(base, sizes)
        q, k, v = dev.random(s, 1)
        o_shape = [s["b"], s["hq"], s["lq"], s["dv"]]
        ins = [q, k, v, dev.random(dict(s, hkv=s["hq"], lk=s["lq"]), 2)[2],
               None, dev.random(dict(s, hkv=s["hq"], lk=s["lq"]), 3)[2]]
        ins[4] = dev.put(np.zeros(o_shape[:3], np.float32))
        outs = [dev.poisoned(list(t.shape), s["dtype"]) for t in (q, k, v)]
        ptrs = [dev.ptr(t) for t in ins + outs]
        dims = {"b": s["b"], "lq": s["lq"], "lk": s["lk"]}
        names = kernel.entry.dims
        ordered = [dims[n] for n in grad_dim_names(names)]
        ms = time_call(dev, lambda: kernel(ptrs, ordered, dev.stream), iters)
        fl = 2.5 * flops(s)
        row = {"case": c["name"], "b": s["b"], "lq": s["lq"], "lk": s["lk"],
               "attn_ms": ms, "attn_tflops": fl / (ms * 1e-3) / 1e12}
        if peak:
            row["attn_pct_peak"] = 100 * row["attn_tflops"] / peak
        if dev.name == "cuda":
            from torch.nn.attention import SDPBackend, sdpa_kernel
            torch = dev.torch
            try:
                qt, kt, vt = (t.detach().requires_grad_() for t in (q, k, v))
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                    o = torch_sdpa(torch, s, [qt, kt, vt])
                grad_out = ins[5]
                tms = time_call(dev, lambda: torch.autograd.grad(
                    o, (qt, kt, vt), grad_out, retain_graph=True), iters)
                row["flash_ms"] = tms
                row["flash_tflops"] = fl / (tms * 1e-3) / 1e12
            except Exception as e:
                row["flash_ms"] = None
                print(f"  {c['name']}: torch flash backward failed: {e}",
                      file=sys.stderr)
        rows.append(row)
    return rows


def grad_dim_names(names):
    """The library's dynamic sizes (its JSON "dims": argN_dJ, resultN_dJ)
    as b, lq, lk: dim 0 is B, dim 2 Lk for key and value (arguments and
    results 1 and 2), Lq for the others."""
    out = []
    for n in names:
        m = re.fullmatch(r"(arg|result)(\d+)_d(\d+)", n)
        index, dim = int(m.group(2)), int(m.group(3))
        out.append("b" if dim == 0 else "lk" if index in (1, 2) else "lq")
    return out


def where_wrong(got, ref):
    """Where a result differs from the reference (for a failure seen only on
    a remote machine): NaN count, the worst element's index and values, and
    the (batch, head) pairs whose rows hold the largest errors."""
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isnan(got) & ~np.isnan(ref), np.inf,
                        np.abs(np.nan_to_num(got - ref, nan=0.0)))
    diff = np.where(np.isinf(got) & np.isinf(ref) & (got == ref), 0.0, diff)
    if not diff.size:
        return ""
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
    per_bh = diff.reshape(diff.shape[0], diff.shape[1], -1).max(axis=-1)
    bad_bh = int((per_bh > 0.1 * max(float(diff.max()), 1e-30)).sum())
    bad_rows = diff.reshape(diff.shape[0], diff.shape[1], diff.shape[2], -1) \
        .max(axis=-1) if diff.ndim == 4 else diff
    rows_over = np.argwhere(bad_rows > 0.1 * max(float(diff.max()), 1e-30))
    first_rows = sorted(set(int(x[2]) for x in rows_over))[:8]
    return (f"nan={int(np.isnan(got).sum())}/{got.size} "
            f"worst={tuple(int(x) for x in worst)} got={got[worst]:.4g} "
            f"ref={ref[worst]:.4g} bad_bh={bad_bh}/{per_bh.size} "
            f"rows={first_rows}")


def time_call(dev, fn, iters, budget_ms=300.0, batch_ms=2.0):
    """Median milliseconds per call, after a warm-up. On CUDA each sample
    is a batch of calls queued back to back between two events (enough for
    `batch_ms`, at most 50), divided by their number: the kernels' time with
    the host's launch overhead hidden behind the GPU's work, as a model
    step that queues its kernels sees it (a sample of one call also counts
    the GPU idle while the host prepares it). `iters` samples, fewer (at
    least 3) where they would take longer than `budget_ms`."""
    if dev.name == "cuda":
        torch = dev.torch
        fn()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        first = start.elapsed_time(end)
        calls = max(1, min(50, math.ceil(batch_ms / max(first, 1e-3))))
        iters = max(3, min(iters, int(budget_ms / max(first * calls, 1e-3))))
        times = []
        for _ in range(iters):
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / calls)
        return sorted(times)[len(times) // 2]
    fn()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2]


def decode_bytes(s):
    """Bytes a decode step must move at least: K, V, Q and out once."""
    size = {"f32": 4, "f16": 2, "bf16": 2}[s["dtype"]]
    kv = s["b"] * s["hkv"] * s["lk"] * (s["d"] + s["dv"])
    qo = s["b"] * s["hq"] * s["lq"] * (s["d"] + s["dv"])
    return size * (kv + qo)


def copy_bandwidth(dev):
    """The machine's device-to-device copy rate, measured now (GB/s: bytes
    read plus bytes written per second, as the decode rows count them)."""
    if dev.name != "cuda":
        return None
    torch = dev.torch
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = time_call(dev, lambda: dst.copy_(src), 10)
    return 2 * n / (ms * 1e-3) / 1e9


def matmul_peak(dev):
    """The machine's dense bf16 matmul rate, measured now (TFLOP/s)."""
    if dev.name != "cuda":
        return None
    torch = dev.torch
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = time_call(dev, lambda: a @ b, 10)
    return 2 * n ** 3 / (ms * 1e-3) / 1e12


def run_speed(dev, kernel, c, iters, peak, copy_gbs=None):
    rows = []
    base = parse_spec(c["spec"])
    for sizes in c["runs"]:
        s = sized(base, sizes)
        ins = dev.random(s, 1)
        outs = [dev.poisoned([s["b"], s["hq"], s["lq"], s["dv"]],
                             s["dtype"])]
        ptrs = [dev.ptr(t) for t in ins + outs]
        ms = time_call(dev, lambda: kernel(ptrs, s, dev.stream), iters)
        fl = flops(s)
        row = {"case": c["name"], "b": s["b"], "lq": s["lq"], "lk": s["lk"],
               "attn_ms": ms, "attn_tflops": fl / (ms * 1e-3) / 1e12}
        if peak:
            row["attn_pct_peak"] = 100 * row["attn_tflops"] / peak
        if "decode" in c["name"]:
            row["attn_gbs"] = decode_bytes(s) / (ms * 1e-3) / 1e9
            if copy_gbs:
                row["attn_pct_copy"] = 100 * row["attn_gbs"] / copy_gbs
        # Tune cases and the sm_90a rows: attn only.
        if dev.name == "cuda" and "args" not in c and c.get("torch", True):
            from torch.nn.attention import SDPBackend, sdpa_kernel
            for label, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                                   ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                try:
                    def call():
                        with sdpa_kernel([backend]):
                            torch_sdpa(dev.torch, s, ins)
                    tms = time_call(dev, call, iters)
                    row[f"{label}_ms"] = tms
                    row[f"{label}_tflops"] = fl / (tms * 1e-3) / 1e12
                except Exception as e:
                    row[f"{label}_ms"] = None
                    print(f"  {c['name']}: torch {label} failed: {e}",
                          file=sys.stderr)
        rows.append(row)
    return rows


def write_rows(path, rows):
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def fmt(x):
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def run_cases(args, manifest, dev, first, emit, peak, copy_gbs):
    """Runs the manifest's cases from index `first` on, calling
    emit(index, check_rows, speed_rows, errors) after each. Returns False if
    the device is unusable after a failure (a CUDA error sticks to the
    context: the supervisor goes on in a fresh process)."""
    for index, c in enumerate(manifest["cases"]):
        if index < first:
            continue
        if args.only and not any(o in c["name"] for o in args.only):
            continue
        if args.match and not re.search(args.match, c["name"]):
            continue
        if c["kind"] == "speed" and args.no_speed:
            continue
        if "compile_error" in c:
            emit(index, [], [], [f"{c['name']}: did not compile: "
                                 f"{c['compile_error']}"])
            continue
        if args.deadline_at and time.time() > args.deadline_at:
            emit(index, [], [], [f"{c['name']}: not run (--deadline-s "
                                 "reached)"])
            continue
        emit(index, None, None, None)  # begins
        check_rows, speed_rows = [], []
        fault = [f.split(":")[1:] for f in args.inject_fault or []
                 if f.split(":")[0] == c["name"]]
        if fault:  # tests of the supervisor: NAME aborts, NAME:hang hangs
            if fault[0] == ["hang"]:
                time.sleep(3600)
            os.abort()
        try:
            kernel = Kernel(os.path.join(args.bundle, c["lib"]))
            if c["kind"] == "grad":
                check_rows = run_grad(dev, kernel, c, args.seed)
            elif c.get("grad"):
                speed_rows = run_grad_speed(dev, kernel, c, args.iters, peak)
            elif c["kind"] == "check":
                naive = (Kernel(os.path.join(args.bundle, c["naive_lib"]))
                         if c.get("naive_lib") else None)
                package_kernel = attn.Kernel(
                    os.path.abspath(os.path.join(args.bundle, c["lib"])))
                check_rows = run_check(dev, kernel, c, args.seed, naive,
                                       package_kernel)
            else:
                speed_rows = run_speed(dev, kernel, c, args.iters, peak,
                                       copy_gbs)
            emit(index, check_rows, speed_rows, [])
        except Exception as e:
            emit(index, check_rows, speed_rows, [f"{c['name']}: {e}"])
            if dev.name == "cuda":
                try:
                    dev.torch.cuda.synchronize()
                except Exception:
                    return False
    return True


def tune_baseline(case):
    """The speed case a tune case is measured against: the default kernel on
    the same spec (tune-bf16-dD-CAUSAL-default; the d=128 block shapes too),
    or for the decode rows bf16-decode; None for other cases."""
    m = re.match(r"^(tune-bf16-d\d+-(?:none|bottom_right))-", case)
    if m and not case.endswith("-default"):
        return m.group(1) + "-default"
    if case.startswith("tune-decode-"):
        return "bf16-decode"
    return None


def tune_summary(speed_rows):
    """Markdown lines: every tune row against its baseline row (same b and
    sizes), as a speed-up (> 1: faster than the default)."""
    by_key = {(r["case"], r["b"], r["lq"], r["lk"]): r for r in speed_rows}
    lines = []
    for r in speed_rows:
        base_case = tune_baseline(r["case"])
        base = by_key.get((base_case, r["b"], r["lq"], r["lk"]))
        if base is None or not r.get("attn_ms") or not base.get("attn_ms"):
            continue
        lines.append(f"| {r['case']} | {r['b']} | {r['lk']} | "
                     f"{fmt(r['attn_ms'])} | {base_case} | "
                     f"{fmt(base['attn_ms'])} | "
                     f"{base['attn_ms'] / r['attn_ms']:.3f} |")
    if not lines:
        return []
    return ["", "| tune case | b | lk | attn ms | against | its ms | "
            "speed-up |", "| --- | --- | --- | --- | --- | --- | --- |"] + lines


def wgmma_summary(speed_rows):
    """Markdown lines: every sm_90a (-wgmma) speed row against the mma.sync
    row of the same shape and sizes and torch's backends timed there (> 1:
    the sm_90a kernel is faster). issue 54's rule for kernels=auto: every
    check case passes and every speed-up here is above 1."""
    by_key = {(r["case"], r["b"], r["lq"], r["lk"]): r for r in speed_rows}
    lines = []
    for r in speed_rows:
        stem, wgmma, schedule = r["case"].partition("-wgmma")
        if not wgmma or (schedule and schedule[1:] not in WGMMA_SCHEDULES) \
                or not r.get("attn_ms") or "attn_gbs" in r:
            continue
        base = by_key.get((stem, r["b"], r["lq"], r["lk"]))
        if base is None or not base.get("attn_ms"):
            continue
        # The schedules against the plain sm_90a kernel too.
        plain = by_key.get((stem + "-wgmma", r["b"], r["lq"], r["lk"])) \
            if schedule else None

        def ratio(key, against=base):
            return against[key] / r["attn_ms"] if against.get(key) else None
        lines.append(f"| {r['case']} | {r['b']} | {r['lq']} | "
                     f"{fmt(r['attn_ms'])} | {fmt(r['attn_tflops'])} | "
                     f"{fmt(r.get('attn_pct_peak'))} | {fmt(base['attn_ms'])} | "
                     f"{fmt(ratio('attn_ms'))} | "
                     f"{fmt(ratio('attn_ms', plain) if plain else None)} | "
                     f"{fmt(ratio('flash_ms'))} | {fmt(ratio('cudnn_ms'))} |")
    if not lines:
        return []
    return ["", "| sm_90a case | b | lq | wgmma ms | TFLOP/s | % of bf16 matmul "
            "| mma.sync ms | vs mma.sync | vs wgmma | vs torch flash "
            "| vs torch cuDNN |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
            "| --- |"] + lines


def report(out, dev_name, peak, copy_gbs, check_rows, speed_rows,
           errors_seen):
    """Writes checks.csv, speed.csv, table.md; prints the table and the
    closing count; returns the exit status."""
    write_rows(os.path.join(out, "checks.csv"), check_rows)
    if speed_rows:
        write_rows(os.path.join(out, "speed.csv"), speed_rows)
    lines = [f"device: {dev_name}" + (f", dense bf16 matmul {peak:.0f} TFLOP/s "
                                      "(measured in this run)" if peak else "")
             + (f", device copy {copy_gbs:.0f} GB/s (measured in this run)"
                if copy_gbs else ""),
             "", "| case | result | max_abs | rel_l2 | sens_rel | torch rel_l2 "
             "| naive rel_l2 | rule | verdict |", "| --- | --- | --- | --- "
             "| --- | --- | --- | --- | --- |"]
    for r in check_rows:
        lines.append(f"| {r['case']} | {r['result']} | {fmt(r['max_abs'])} | "
                     f"{fmt(r['rel_l2'])} | {fmt(r['sens_rel'])} | "
                     f"{fmt(r['torch_rel_l2'])} | {fmt(r['naive_rel_l2'])} | "
                     f"{r['rule']} | "
                     f"{'PASS' if r['pass'] else 'FAIL'} |")
    failures = [r for r in check_rows if not r["pass"] and r.get("detail")]
    if failures:
        lines += ["", "| failed case | result | where |", "| --- | --- | --- |"]
        lines += [f"| {r['case']} | {r['result']} | {r['detail']} |"
                  for r in failures]
    if speed_rows:
        lines += ["", "| case | b | lq | attn ms | attn TFLOP/s | "
                  "% of bf16 matmul | torch flash | torch cuDNN |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in speed_rows:
            lines.append(f"| {r['case']} | {r['b']} | {r['lq']} | "
                         f"{fmt(r['attn_ms'])} | "
                         f"{fmt(r['attn_tflops'])} | {fmt(r.get('attn_pct_peak'))}"
                         f" | {fmt(r.get('flash_tflops'))} | "
                         f"{fmt(r.get('cudnn_tflops'))} |")
        decode = [r for r in speed_rows if "attn_gbs" in r]
        if decode:
            lines += ["", "| decode case | b | lk | attn ms | attn GB/s | "
                      "% of copy | torch flash ms | torch cuDNN ms |",
                      "| --- | --- | --- | --- | --- | --- | --- | --- |"]
            for r in decode:
                lines.append(f"| {r['case']} | {r['b']} | {r['lk']} | "
                             f"{fmt(r['attn_ms'])} | {fmt(r['attn_gbs'])} | "
                             f"{fmt(r.get('attn_pct_copy'))} | "
                             f"{fmt(r.get('flash_ms'))} | "
                             f"{fmt(r.get('cudnn_ms'))} |")
        lines += wgmma_summary(speed_rows)
        lines += tune_summary(speed_rows)
    for e in errors_seen:
        lines.append(f"\nERROR {e}")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(table)
    print(table)
    passed = sum(r["pass"] for r in check_rows)
    failed = len(check_rows) - passed + len(errors_seen)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def run(args):
    with open(os.path.join(args.bundle, "cases.json")) as f:
        manifest = json.load(f)
    device = args.device or ("cuda" if manifest["target"] == "cuda" else "cpu")
    os.makedirs(args.out, exist_ok=True)
    if args.deadline_s and not args.deadline_at:
        args.deadline_at = time.time() + args.deadline_s
    isolate = args.isolate if args.isolate is not None else device == "cuda"
    if isolate and not args.worker:
        return supervise(args, manifest, device)
    dev = Device(device)
    peak, copy_gbs = args.peak, args.copy_gbs
    if not args.no_speed and peak is None:
        peak = matmul_peak(dev)
        copy_gbs = copy_bandwidth(dev)
    if args.worker and "startup:hang" in (args.inject_fault or []):
        time.sleep(3600)  # tests the supervisor: a worker silent at start-up
    if args.worker:
        # One JSON line per event, flushed, for the supervisor.
        progress = open(args.progress, "a")

        def emit(index, checks, speeds, errs):
            rec = {"i": index, "peak": peak, "copy_gbs": copy_gbs}
            if checks is None:
                rec["begin"] = time.time()
            else:
                rec.update(checks=checks, speeds=speeds, errors=errs)
            progress.write(json.dumps(rec) + "\n")
            progress.flush()
            os.fsync(progress.fileno())
        ok = run_cases(args, manifest, dev, args.start, emit, peak, copy_gbs)
        return 0 if ok else 3
    check_rows, speed_rows, errors_seen = [], [], []

    def collect(index, checks, speeds, errs):
        if checks is not None:
            check_rows.extend(checks)
            speed_rows.extend(speeds)
            errors_seen.extend(errs)
    run_cases(args, manifest, dev, 0, collect, peak, copy_gbs)
    return report(args.out, dev.name, peak, copy_gbs, check_rows, speed_rows,
                  errors_seen)


def supervise(args, manifest, device):
    """Runs the cases in worker processes (`run --worker`): a kernel that
    faults (a sticky CUDA error), crashes the process or hangs past
    --case-timeout-s costs that case only; the next worker goes on from the
    case after it."""
    progress = os.path.join(args.out, "progress.jsonl")
    log_path = os.path.join(args.out, "workers.log")
    for path in (progress, log_path):
        open(path, "w").close()
    cases = manifest["cases"]
    check_rows, speed_rows, errors_seen = [], [], []
    # What the workers reported so far: the peaks, the case running (and
    # since when), the next case to start from, the lines read.
    state = {"peak": None, "copy_gbs": None, "running": None, "began": 0.0,
             "start": 0, "consumed": 0, "last": 0.0}

    def read_progress():
        # Whole lines only: a line the worker is still writing (a write can
        # land in pieces, one page at a time) is read on the next poll.
        with open(progress) as f:
            text = f.read()
        lines = text[:text.rfind("\n") + 1].splitlines()[state["consumed"]:]
        for line in lines:
            state["consumed"] += 1
            state["last"] = time.time()
            rec = json.loads(line)
            for key in ("peak", "copy_gbs"):
                if rec[key] is not None:
                    state[key] = rec[key]
            if "begin" in rec:
                state["running"], state["began"] = rec["i"], time.time()
                continue
            check_rows.extend(rec["checks"])
            speed_rows.extend(rec["speeds"])
            errors_seen.extend(rec["errors"])
            state["running"] = None
            state["start"] = rec["i"] + 1

    while state["start"] < len(cases):
        start, peak, copy_gbs = state["start"], state["peak"], state["copy_gbs"]
        cmd = [sys.executable, os.path.abspath(__file__), "run", "--bundle",
               args.bundle, "--out", args.out, "--device", device, "--worker",
               "--start", str(start), "--progress", progress, "--seed",
               str(args.seed), "--iters", str(args.iters)]
        if args.deadline_at:
            cmd += ["--deadline-at", repr(args.deadline_at)]
        if args.no_speed:
            cmd.append("--no-speed")
        if args.only:
            cmd += ["--only"] + args.only
        if args.match:
            cmd += ["--match", args.match]
        if args.inject_fault:
            cmd += ["--inject-fault"] + args.inject_fault
        if peak is not None:
            cmd += ["--peak", repr(peak)]
            if copy_gbs is not None:
                cmd += ["--copy-gbs", repr(copy_gbs)]
        with open(log_path, "a") as log:
            log.write(f"--- worker from case {start}: {' '.join(cmd)}\n")
            log.flush()
            proc = subprocess.Popen(cmd, stdout=log, stderr=log)
            hung, limit = False, 0.0
            state["last"] = time.time()
            while proc.poll() is None:
                time.sleep(0.2)
                read_progress()
                running = state["running"]
                limit = args.case_timeout_s * (
                    3 if running is not None and
                    cases[running]["kind"] == "speed" else 1)
                # A case past its limit, or a worker silent for 3 limits
                # outside any case (start-up, the peaks, exit).
                if (running is not None and
                        time.time() - state["began"] > limit) or \
                        (running is None and time.time() - state["last"] >
                         3 * args.case_timeout_s):
                    proc.kill()
                    hung = True
            proc.wait()
        read_progress()  # what the worker wrote after the last poll
        running = state["running"]
        if proc.returncode == 0 and running is None:
            break
        if running is not None:
            tail = [x for x in open(log_path).read().splitlines()
                    if not x.startswith("--- worker")][-6:]
            why = (f"hung (killed after {limit:.0f} s)" if hung else
                   f"worker exited with status {proc.returncode}")
            errors_seen.append(f"{cases[running]['name']}: {why}; log: "
                               + " / ".join(tail))
            state["running"], state["start"] = None, running + 1
        elif proc.returncode not in (0, 3):
            why = ("hung outside a case (killed)" if hung else
                   f"exited with status {proc.returncode}")
            if state["start"] == start:  # no case done: do not loop
                errors_seen.append(f"worker from case {start} {why} before "
                                   "its first case")
                break
            errors_seen.append(f"worker from case {start} {why} between "
                               f"cases; going on from case {state['start']}")
    return report(args.out, device, state["peak"], state["copy_gbs"],
                  check_rows, speed_rows, errors_seen)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the grid into a bundle")
    b.add_argument("--attn-compile", default="build/bin/attn-compile")
    b.add_argument("--target", choices=("cpu", "cuda"), default="cuda")
    b.add_argument("--chip", default="sm_90")
    b.add_argument("--out", required=True)
    b.add_argument("--no-speed", action="store_true")
    b.add_argument("--no-naive", action="store_true",
                   help="no naive-lowering library per check case")
    b.add_argument("--shrink", type=int, default=1,
                   help="divide the speed cases' sizes by this (dry runs)")
    b.add_argument("--only", nargs="*", help="cases whose name contains one")
    b.add_argument("--tune", action="store_true",
                   help="add tune_cases(): tile shapes timed at one size")
    r = sub.add_parser("run", help="run a bundle")
    r.add_argument("--bundle", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--device", choices=("cpu", "cuda"))
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--iters", type=int, default=20)
    r.add_argument("--no-speed", action="store_true")
    r.add_argument("--only", nargs="*")
    r.add_argument("--match",
                   help="only the cases whose name this regular expression "
                        "matches (re.search), e.g. 'wgmma|^(bf16|f16)-d(64|"
                        "128)-(none|bottom_right)$' for the sm_90a rows and "
                        "their mma.sync speed baselines")
    r.add_argument("--isolate", action="store_true", default=None,
                   help="cases in worker processes (default on CUDA)")
    r.add_argument("--no-isolate", dest="isolate", action="store_false")
    r.add_argument("--case-timeout-s", type=float, default=60,
                   help="a check case running longer is killed (speed "
                        "cases: 3x)")
    r.add_argument("--deadline-s", type=float, default=0,
                   help="cases not begun this many seconds after the start "
                        "are reported as not run")
    r.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    r.add_argument("--inject-fault", nargs="*", help=argparse.SUPPRESS)
    r.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    r.add_argument("--progress", help=argparse.SUPPRESS)
    r.add_argument("--deadline-at", type=float, default=0,
                   help=argparse.SUPPRESS)
    r.add_argument("--peak", type=float, help=argparse.SUPPRESS)
    r.add_argument("--copy-gbs", type=float, help=argparse.SUPPRESS)
    args = p.parse_args()
    return build(args) if args.cmd == "build" else run(args)


if __name__ == "__main__":
    sys.exit(main())
