#!/usr/bin/env python3
"""attn against PyTorch's CPU SDPA, call by call, for a machine whose speed
drifts from one second to the next: SPEC is compiled by attn-compile (with
--openmp when THREADS > 1, and any further attn-compile args after --), the
library and torch.nn.functional.scaled_dot_product_attention are called
alternately in this process on the same seeded inputs, ROUNDS pairs, each
call timed by the wall clock. Prints the best time of each side, their
ratio, the median of the per-pair ratios attn/torch and each side's rel_l2
against PyTorch's f32 SDPA of the same (rounded) inputs.

  python3 bench/torch-paired.py SPEC THREADS ROUNDS [-- attn-compile args]
  e.g. python3 bench/torch-paired.py hq=8,lq=4096,d=64,dtype=bf16 1 10

SPEC: attn-run's keys b, hq, hkv, lq, lk, d, dtype (f32, f16, bf16) and
causal (none, bottom_right; with lq == lk both alignments are PyTorch's
is_causal). FLOPs as docs/op.md counts them. Needs numpy and torch.
"""
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def parse_spec(spec):
    f = dict(kv.split("=") for kv in spec.split(","))
    unknown = set(f) - {"b", "hq", "hkv", "lq", "lk", "d", "dtype", "causal"}
    if unknown:
        sys.exit("torch-paired: not supported here: " + ", ".join(sorted(unknown)))
    s = {"b": int(f.get("b", 1)), "hq": int(f["hq"]), "lq": int(f["lq"]),
         "d": int(f["d"]), "dtype": f.get("dtype", "f32"),
         "causal": f.get("causal", "none")}
    s["hkv"] = int(f.get("hkv", s["hq"]))
    s["lk"] = int(f.get("lk", s["lq"]))
    if s["causal"] not in ("none", "bottom_right"):
        sys.exit("torch-paired: causal must be none or bottom_right")
    if s["causal"] != "none" and s["lq"] != s["lk"]:
        sys.exit("torch-paired: causal needs lq == lk (PyTorch's is_causal)")
    return s


def flops(s):
    if s["causal"] == "none":
        pairs = s["lq"] * s["lk"]
    else:
        pairs = sum(min(s["lk"], i + 1) for i in range(s["lq"]))
    return 2 * s["b"] * s["hq"] * 2 * s["d"] * pairs


def main(argv):
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    if len(argv) != 3:
        sys.exit(__doc__)
    spec, threads, rounds = argv[0], int(argv[1]), int(argv[2])
    s = parse_spec(spec)
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import torch

    compiler = os.environ.get("ATTN_COMPILE") or shutil.which("attn-compile") \
        or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "build", "bin", "attn-compile")
    tmp = tempfile.mkdtemp(prefix="torch-paired")
    lib = os.path.join(tmp, "lib.so")
    command = [compiler, "--sdpa", spec, "--target", "cpu", "-o", lib] + \
        (["--openmp"] if threads > 1 else []) + extra
    if subprocess.run(command).returncode != 0:
        sys.exit("torch-paired: " + " ".join(command) + " failed")
    fn = json.load(open(lib[:-3] + ".json"))["functions"][0]
    entry = getattr(ctypes.CDLL(lib), fn["name"])
    entry.restype = ctypes.c_int32

    torch.set_num_threads(threads)
    dt = {"f32": torch.float32, "bf16": torch.bfloat16,
          "f16": torch.float16}[s["dtype"]]
    g = torch.Generator().manual_seed(0)
    q = torch.randn(s["b"], s["hq"], s["lq"], s["d"], generator=g).to(dt)
    k = torch.randn(s["b"], s["hkv"], s["lk"], s["d"], generator=g).to(dt)
    v = torch.randn(s["b"], s["hkv"], s["lk"], s["d"], generator=g).to(dt)
    out = torch.full((s["b"], s["hq"], s["lq"], s["d"]), float("nan"),
                     dtype=dt)
    buffers = (ctypes.c_void_p * 4)(q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                    out.data_ptr())
    kw = {}
    if s["causal"] != "none":
        kw["is_causal"] = True
    if s["hkv"] != s["hq"]:
        kw["enable_gqa"] = True
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def time_attn():
        t0 = time.perf_counter()
        status = entry(buffers, None, None)
        t1 = time.perf_counter()
        if status != 0:
            sys.exit(f"torch-paired: the library returned status {status}")
        return t1 - t0

    def time_torch():
        with torch.inference_mode():
            t0 = time.perf_counter()
            result = sdpa(q, k, v, **kw)
            t1 = time.perf_counter()
        return t1 - t0, result

    time_attn()
    _, theirs = time_torch()
    attn_s, torch_s = [], []
    for i in range(rounds):
        # A then B, then B then A: neither side always runs first.
        if i % 2 == 0:
            attn_s.append(time_attn())
            torch_s.append(time_torch()[0])
        else:
            torch_s.append(time_torch()[0])
            attn_s.append(time_attn())
    with torch.inference_mode():
        ref = sdpa(q.float(), k.float(), v.float(), **kw)

    def rel_l2(x):
        return ((x.float() - ref).norm() / ref.norm()).item()

    work = flops(s)
    best_a, best_t = min(attn_s), min(torch_s)
    ratios = sorted(a / t for a, t in zip(attn_s, torch_s))
    print(f"{spec} threads={threads}, {rounds} pairs: "
          f"attn best {best_a * 1e3:.2f} ms ({work / best_a / 1e9:.1f} GFLOP/s), "
          f"torch {torch.__version__} best {best_t * 1e3:.2f} ms "
          f"({work / best_t / 1e9:.1f} GFLOP/s); best attn/torch "
          f"{best_a / best_t:.3f}, paired median {statistics.median(ratios):.3f}; "
          f"rel_l2 against torch f32: attn {rel_l2(out):.2e}, "
          f"torch {rel_l2(theirs):.2e}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main(sys.argv[1:])
