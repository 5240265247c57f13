#!/usr/bin/env python3
"""Compares two .npy outputs of attn-run (--dump): the raised program's fused
result against the unraised program's. Exits 1 (with the figures) when the
relative L2 error or the max abs error exceeds the bound, when the shapes
differ, or when NaN appears where the reference has none.

    compare.py REF.npy OUT.npy [--rtol-l2 X] [--atol X]

bf16 files (raw bits, <u2) are widened to f32 first.
"""
import argparse
import sys

import numpy as np


def load(path):
    a = np.load(path)
    if a.dtype == np.uint16:  # bf16 stored as its raw bits
        a = (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ref")
    p.add_argument("out")
    p.add_argument("--rtol-l2", type=float, default=1e-5)
    p.add_argument("--atol", type=float, default=1e-4)
    a = p.parse_args()
    ref, out = load(a.ref), load(a.out)
    if ref.shape != out.shape:
        print(f"FAIL: shapes differ: {ref.shape} vs {out.shape}")
        return 1
    if np.isnan(out).any() and not np.isnan(ref).any():
        print("FAIL: NaN in the output, none in the reference")
        return 1
    finite = ~np.isnan(ref)
    diff = np.abs(out[finite] - ref[finite])
    max_abs = float(diff.max()) if diff.size else 0.0
    norm = float(np.linalg.norm(ref[finite]))
    rel_l2 = float(np.linalg.norm(diff)) / norm if norm else max_abs
    ok = rel_l2 <= a.rtol_l2 and max_abs <= a.atol * max(1.0, float(np.abs(ref[finite]).max()))
    print(f"{'PASS' if ok else 'FAIL'}: rel_l2 {rel_l2:.3e} max_abs {max_abs:.3e} "
          f"({ref.size} elements)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
