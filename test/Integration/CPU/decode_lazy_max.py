"""decode-lazy-max.test's inputs: decode (Lq = 1) with scores that step up
and down across the keys, so that the decode kernel's running max
(maxUpdate, kDecodeMaxSlack = 8 in log2 units) stays, moves within the
slack and moves past it.

  make DIR DTYPE HQ HKV LK D: query [1, HQ, 1, D], key and value
    [1, HKV, LK, D] (f32 `<f4`, or bf16 as raw `<u2` bits). Query head h is
    one direction u, negated for odd h, plus a little noise, and key j is
    noise plus t_j * u / (scale * |u|^2), so that its score (scale * q.k,
    natural units) is about t_j in even heads and -t_j in odd ones: t = 0
    for the first 43 keys, then +4 (5.8 in log2 units: within the slack),
    +12 from key 85 (past it), +110 from key 121 (159 in log2 units: a
    probability of 2^159 overflows f32 if the max stays), then -10 from key
    203 (where the odd heads' max moves), with a ramp of 0.02 per key
    throughout. The rows that share a K/V head move their maxima in
    different blocks, and the steps fall inside blocks of 8 keys. With
    NAN_HEAD, one value of that query head is NaN.
  nanheads DIR: the query heads with a NaN output in DIR's fused.npy and
    naive.npy, and the largest difference of the other outputs.
"""
import sys

import numpy as np


def to_bf16(x):
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def make(d, dtype, hq, hkv, lk, dim, nan_head=None):
    hq, hkv, lk, dim = int(hq), int(hkv), int(lk), int(dim)
    rng = np.random.default_rng(3)
    scale = 1.0 / np.sqrt(dim)
    u = rng.standard_normal(dim)
    sign = np.where(np.arange(hq) % 2 == 0, 1.0, -1.0)[None, :, None, None]
    q = sign * u + 0.01 * rng.standard_normal((1, hq, 1, dim))
    j = np.arange(lk)
    steps = np.select(
        [j < 43, j < 85, j < 121, j < 203], [0.0, 4.0, 12.0, 110.0], -10.0)
    t = steps + 0.02 * j
    k = 0.3 * rng.standard_normal((1, hkv, lk, dim))
    k += (t / (scale * (u @ u)))[None, None, :, None] * u
    v = rng.standard_normal((1, hkv, lk, dim))
    if nan_head is not None:
        q[0, int(nan_head), 0, 5] = np.nan
    for i, a in enumerate((q, k, v)):
        a = to_bf16(a) if dtype == "bf16" else a.astype("<f4")
        np.save(f"{d}/arg{i}.npy", a)


def nanheads(d):
    fused = np.load(f"{d}/fused.npy")
    naive = np.load(f"{d}/naive.npy")
    for name, out in (("fused", fused), ("naive", naive)):
        heads = sorted({int(h) for h in np.argwhere(np.isnan(out))[:, 1]})
        print(f"{name} NaN heads: {heads}")
    finite = ~np.isnan(naive)
    print(f"other outputs within 1e-4: "
          f"{bool(np.abs(fused[finite] - naive[finite]).max() <= 1e-4)}")


if __name__ == "__main__":
    {"make": make, "nanheads": nanheads}[sys.argv[1]](*sys.argv[2:])
