"""bf16-output-rounding.test's inputs and its check of the dumped outputs.

  make DIR: bf16 query, key and value [1, 2, 128, 64] (raw bits, seeded
    normals) with two NaNs in the value: a quiet one with a payload (0x7FC1)
    and a negative signalling one (0xFF81): one output column of every row
    of each head is NaN (2 x 128 values).
  check DIR: prints how many NaN outputs fused.npy and naive.npy have,
    whether they are in the same places, and the bits of each side's NaNs:
    the integer rounding of the output (attn-expand-bf16-truncf) gives
    0x7FC0, as the naive lowering's truncf does where arith-expand rounds
    it (a host without AVX512-BF16).
"""
import sys

import numpy as np


def to_bf16(x):
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def is_nan(bits):
    return ((bits & 0x7F80) == 0x7F80) & ((bits & 0x7F) != 0)


def make(d):
    rng = np.random.default_rng(1)
    shape = (1, 2, 128, 64)
    q, k, v = (to_bf16(rng.standard_normal(shape)) for _ in range(3))
    v[0, 1, 5, 3] = 0x7FC1
    v[0, 0, 77, 60] = 0xFF81
    for i, a in enumerate((q, k, v)):
        np.save(f"{d}/arg{i}.npy", a)


def check(d):
    fused = np.load(f"{d}/fused.npy")
    naive = np.load(f"{d}/naive.npy")
    assert fused.dtype == np.uint16 and naive.dtype == np.uint16
    nan_f, nan_n = is_nan(fused), is_nan(naive)
    print(f"NaN outputs: fused {int(nan_f.sum())}, naive {int(nan_n.sum())}")
    print(f"same places: {bool(np.array_equal(nan_f, nan_n))}")
    print("fused NaN bits:", " ".join(f"{b:#06x}" for b in np.unique(fused[nan_f])))
    print("naive NaN bits:", " ".join(f"{b:#06x}" for b in np.unique(naive[nan_n])))


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](sys.argv[2])
