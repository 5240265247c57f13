#!/usr/bin/env python3
"""Two attn-compile builds compared in one process, for a machine that other
jobs share: SPEC is compiled for the cpu (one thread, no OpenMP) by each
compiler into a library (docs/c-abi.md); both libraries are loaded into this
process and called on the same seeded inputs, CALLS calls of one, then CALLS
of the other, ROUNDS times (the order flipped every round), each call timed
by this process's CPU time. Prints the best and the median ms of each, B/A
of both, and whether the two outputs are bit for bit the same (each
library writes its own output buffers, poisoned with NaN before every batch,
so an element one of them leaves unwritten shows). Each library is called
once before the rounds (page faults, cold caches). Without --openmp the
calls run on one thread; with it, CPU time adds up every thread's.

  python3 bench/ab-aot.py SPEC CALLS ROUNDS COMPILER_A COMPILER_B [attn-compile args]
e.g. python3 bench/ab-aot.py hq=8,lq=1000,lk=3001,d=80,mask=bool 3 8 \\
       old/attn-compile build/bin/attn-compile

Needs numpy. Inputs: normals (f32, f16, bf16 rounded down), masks true with
probability 0.8, key lengths uniform in [0, Lk]. Static shapes only.
"""
import ctypes
import json
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def make_input(rng, arg):
    shape, dtype = arg["shape"], arg["dtype"]
    if not all(isinstance(n, int) for n in shape):
        sys.exit("ab-aot: dynamic shapes are not supported (dynamic=0)")
    if dtype == "f32":
        return rng.standard_normal(shape, dtype=np.float32)
    if dtype == "f16":
        return rng.standard_normal(shape).astype(np.float16)
    if dtype == "bf16":
        bits = rng.standard_normal(shape, dtype=np.float32).view(np.uint32)
        return (bits >> 16).astype(np.uint16)
    if dtype == "i1":
        return (rng.random(shape) < 0.8).astype(np.uint8)
    if dtype == "i32":
        return rng.integers(0, 1 << 30, shape).astype(np.int32)
    sys.exit(f"ab-aot: no inputs for dtype {dtype}")


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    spec, calls, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    compilers, extra = sys.argv[4:6], sys.argv[6:]
    out_types = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}
    with tempfile.TemporaryDirectory() as tmp:
        libs = []
        for tag, compiler in zip("AB", compilers):
            path = f"{tmp}/lib{tag}.so"
            subprocess.run([compiler, "--sdpa", spec, "--target", "cpu",
                            "-o", path] + extra, check=True)
            with open(path[:-3] + ".json") as f:
                fn = json.load(f)["functions"][0]
            libs.append((tag, getattr(ctypes.CDLL(path), fn["name"]), fn))
        fn = libs[0][2]
        rng = np.random.default_rng(0)
        args = [make_input(rng, a) for a in fn["args"]]
        for a, desc in zip(args, fn["args"]):
            if desc["name"] == "key_lengths":
                a %= fn["args"][1]["shape"][2] + 1
        results, buffers = {}, {}
        for tag, entry, _ in libs:
            results[tag] = [np.zeros(r["shape"], out_types[r["dtype"]])
                            for r in fn["results"]]
            buffers[tag] = (ctypes.c_void_p * (len(args) + len(fn["results"])))(
                *[x.ctypes.data for x in args + results[tag]])
            if entry(buffers[tag], None, None) != 0:
                sys.exit(f"ab-aot: library {tag} failed")
        times = {"A": [], "B": []}
        for r in range(rounds):
            for tag, entry, _ in (libs if r % 2 == 0 else libs[::-1]):
                for x in results[tag]:
                    # All bits set: NaN in f32, f16 and bf16 alike.
                    x.view(np.uint8)[...] = 0xFF
                for _ in range(calls):
                    start = time.process_time()
                    status = entry(buffers[tag], None, None)
                    times[tag].append(time.process_time() - start)
                    if status != 0:
                        sys.exit(f"ab-aot: library {tag} returned {status}")
        outputs = results
    same = all(np.array_equal(a, b) for a, b in zip(outputs["A"], outputs["B"]))
    best = {t: min(v) * 1e3 for t, v in times.items()}
    med = {t: statistics.median(v) * 1e3 for t, v in times.items()}
    print(f"{spec}: A best {best['A']:.2f} median {med['A']:.2f} ms, "
          f"B best {best['B']:.2f} median {med['B']:.2f} ms; B/A best "
          f"{best['B'] / best['A']:.3f} median {med['B'] / med['A']:.3f}; "
          f"outputs {'identical' if same else 'DIFFER'} "
          f"({rounds} rounds of {calls} calls each)")


if __name__ == "__main__":
    main()
