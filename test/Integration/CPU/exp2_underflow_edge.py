"""Writes arg0-2.npy for exp2-underflow-edge.test: every query row scores
key 0 at 0 and keys 1..63 at log2-unit offsets x from -128 to -125 below it
(x = -127 and -126.5 exactly among them), so exp2 runs across its clamp
(-127) and the last exponents of the floats. q = e_0, k[j] = x_j /
(scale * log2 e) e_0: the scores are exact in f32 (in bf16, k's rounding
moves them by up to 2^-9 relative, still around -127); v is seeded normals.

  exp2_underflow_edge.py DIR HQ LQ [f32|bf16]"""
import sys

import numpy as np

out, hq, lq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dtype = sys.argv[4] if len(sys.argv) > 4 else "f32"
d, lk = 16, 64
scale = 1 / np.sqrt(d)
x = np.concatenate([[0.0, -127.0, -126.5],
                    np.linspace(-128.0, -125.0, lk - 3)])
q = np.zeros((1, hq, lq, d), np.float32)
q[..., 0] = 1
k = np.zeros((1, 1, lk, d), np.float32)
k[0, 0, :, 0] = x / (scale * np.log2(np.e))
v = np.random.default_rng(5).standard_normal((1, 1, lk, d)).astype(np.float32)
for i, a in enumerate((q, k, v)):
    if dtype == "bf16":  # raw bits, rounded to nearest even
        bits = a.view(np.uint32).astype(np.uint64)
        a = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    np.save(f"{out}/arg{i}.npy", a)
