"""Python call overhead of attn.sdpa on decode-size shapes, against PyTorch SDPA.

For each shape (one query row, a short KV cache, GQA) it times, in one process
and one thread, the median of N calls of:

  kernel  the library's entry through ctypes with prepared buffers (the
          kernel itself plus one ctypes call, ~0.5 us)
  numpy   attn.sdpa(q, k, v, ...) on numpy arrays (cache lookup, checks,
          result allocation, the call)
  torch   attn.sdpa on torch CPU tensors (data_ptr, zero copy)
  op      torch.ops.attn.sdpa (the custom op: the dispatcher on top)
  torch SDPA  torch.nn.functional.scaled_dot_product_attention

and reports each as us per call and as us above `kernel`. Run:

  python3 bench/python_overhead.py [--runs N] [--out bench/results]

(needs `import attn` to work: scripts/setup.sh; torch is optional.)
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

SHAPES = [  # (hq, hkv, lk, d)
    (8, 2, 16, 64),
    (32, 8, 128, 128),
    (32, 8, 1024, 128),
]


def median_us(fn, runs):
    for _ in range(max(10, runs // 10)):
        fn()
    samples = []
    batch = 20
    for _ in range(max(1, runs // batch)):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - t0) / batch * 1e6)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=4000)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__),
                                                  "results"))
    args = ap.parse_args()
    import attn
    try:
        import torch
        import torch.nn.functional as F
        import attn.torch  # noqa: F401
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rows = []
    for hq, hkv, lk, d in SHAPES:
        rng = np.random.default_rng(0)
        q = rng.standard_normal((1, hq, 1, d), dtype=np.float32)
        k = rng.standard_normal((1, hkv, lk, d), dtype=np.float32)
        v = rng.standard_normal((1, hkv, lk, d), dtype=np.float32)
        kw = dict(is_causal=True, causal="bottom_right", enable_gqa=True,
                  threads=1)
        attn.sdpa(q, k, v, **kw)  # compile (or load) once
        kernel = attn.compile(f"b=1,hq={hq},hkv={hkv},lq=1,lk={lk},d={d},"
                              "causal=bottom_right")
        out = np.empty((1, hq, 1, d), np.float32)
        bufs = kernel.entry.buffers_type(q.ctypes.data, k.ctypes.data,
                                         v.ctypes.data, out.ctypes.data)
        entry = kernel.entry.fn
        t = {"kernel": median_us(lambda: entry(bufs, None, None), args.runs),
             "numpy": median_us(lambda: attn.sdpa(q, k, v, **kw), args.runs)}
        if torch is not None:
            tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
            t["torch"] = median_us(lambda: attn.sdpa(tq, tk, tv, **kw),
                                   args.runs)
            t["op"] = median_us(lambda: torch.ops.attn.sdpa(
                tq, tk, tv, None, True, None, True, "bottom_right"), args.runs)
            # torch's is_causal is top-left; with Lq = 1 that hides all but
            # key 0, so torch runs the full-visibility decode (no mask).
            t["torch_sdpa"] = median_us(lambda: F.scaled_dot_product_attention(
                tq, tk, tv, enable_gqa=True), args.runs)
        rows.append(((hq, hkv, lk, d), t))

    lines = ["# Python call overhead (decode, f32, 1 thread)", "",
             f"Median of {args.runs} calls in batches of 20, µs per call; "
             "in brackets: µs above `kernel` (the library's entry called "
             "through ctypes with prepared buffers). "
             f"Python {sys.version.split()[0]}"
             + (f", torch {torch.__version__}" if torch else "") + ". "
             "The overhead is a difference of two medians: it is meaningful "
             "where the kernel is short (first row); for long kernels it is "
             "within the run-to-run noise of the machine.", "",
             "| b=1 lq=1 hq hkv lk d | kernel | attn.sdpa numpy | attn.sdpa torch "
             "| torch.ops.attn.sdpa | torch SDPA |",
             "| --- | --- | --- | --- | --- | --- |"]
    for (hq, hkv, lk, d), t in rows:
        base = t["kernel"]

        def cell(name):
            if name not in t:
                return "–"
            return f"{t[name]:.1f} (+{t[name] - base:.1f})"

        lines.append(f"| {hq} {hkv} {lk} {d} | {base:.1f} | {cell('numpy')} | "
                     f"{cell('torch')} | {cell('op')} | "
                     + (f"{t['torch_sdpa']:.1f}" if "torch_sdpa" in t else "–")
                     + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "python_overhead.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
