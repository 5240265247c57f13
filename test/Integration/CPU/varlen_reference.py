"""An f64 reference for attn.sdpa_varlen, independent of attn's lowerings.

Usage: varlen_reference.py DIR DTYPE CU_Q CU_K HQ HKV CAUSAL [WINDOW] [SOFTCAP]
                           [ALIBI]
DIR holds attn-run --dump's arg0..2.npy (packed q [total_q, Hq, D], k and v
[total_k, Hkv, D]), fused.npy, fused_1.npy, naive.npy, naive_1.npy (out [total_q, Hq, Dv],
lse [Hq, total_q]). CU_Q, CU_K: comma-separated offsets. CAUSAL: none, top_left,
bottom_right. WINDOW: L:R or none. SOFTCAP: C or none. ALIBI: argN.npy
holding the slopes ([Hq] or [B, Hq]; s -= slope * |i + Lk_b - Lq_b - j|).
The lse may be fused_1.npy (a .mlir entry) or fused_lse.npy (--sdpa).
Computes every sequence on its own, in
double, from the same (rounded) inputs, and prints the fused and naive results' worst
error against the bound for DTYPE, the rows that see nothing, and PASS/FAIL.
"""
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

d, dtype = sys.argv[1], sys.argv[2]
cu_q = [int(x) for x in sys.argv[3].split(",")]
cu_k = [int(x) for x in sys.argv[4].split(",")]
hq, hkv, causal = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
window = None
if len(sys.argv) > 8 and sys.argv[8] != "none":
    window = [int(x) for x in sys.argv[8].split(":")]
softcap = None
if len(sys.argv) > 9 and sys.argv[9] != "none":
    softcap = float(sys.argv[9])
slopes = None
if len(sys.argv) > 10:
    slopes = np.load(f"{d}/{sys.argv[10]}").astype(np.float64)


def load(name):
    a = np.load(f"{d}/{name}")
    if dtype == "bf16" and a.dtype == np.uint16:
        a = a.view(ml_dtypes.bfloat16)
    return a.astype(np.float64)


q, k, v = load("arg0.npy"), load("arg1.npy"), load("arg2.npy")
scale = 1.0 / np.sqrt(q.shape[2])
group = hq // hkv

ref = np.zeros((q.shape[0], hq, v.shape[2]))
ref_lse = np.full((hq, q.shape[0]), -np.inf)
for b in range(len(cu_q) - 1):
    q0, q1, k0, k1 = cu_q[b], cu_q[b + 1], cu_k[b], cu_k[b + 1]
    lq, lk = q1 - q0, k1 - k0
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    diag = i if causal == "top_left" else i + lk - lq
    visible = np.ones((lq, lk), bool)
    if causal != "none":
        visible &= j <= diag
    if window is not None:
        if window[0] >= 0:
            visible &= j >= diag - window[0]
        if window[1] >= 0:
            visible &= j <= diag + window[1]
    for h in range(hq):
        s = scale * q[q0:q1, h, :] @ k[k0:k1, h // group, :].T
        if softcap is not None:
            s = softcap * np.tanh(s / softcap)
        if slopes is not None:
            slope = slopes[h] if slopes.ndim == 1 else slopes[b, h]
            s = s - slope * np.abs(i + lk - lq - j)
        s = np.where(visible, s, -np.inf)
        for r in range(lq):
            if not visible[r].any():
                continue
            m = s[r].max()
            p = np.exp(s[r] - m)
            ref[q0 + r, h, :] = p @ v[k0:k1, h // group, :] / p.sum()
            ref_lse[h, q0 + r] = m + np.log(p.sum())

bound = {"f32": 1e-4, "f16": 4e-3, "bf16": 3e-2}[dtype]
fin = np.isfinite(ref_lse)
empty = ~fin
all_ok = True
for which in ("fused", "naive"):
    out = load(f"{which}.npy")
    name = f"{d}/{which}_1.npy"
    try:
        lse = np.load(name).astype(np.float64)
    except FileNotFoundError:
        lse = np.load(f"{d}/{which}_lse.npy").astype(np.float64)
    assert out.shape == ref.shape, out.shape
    assert lse.shape == ref_lse.shape, lse.shape
    err = np.abs(out - ref).max() if out.size else 0.0
    lse_err = np.abs(lse[fin] - ref_lse[fin]).max() if fin.any() else 0.0
    empty_ok = bool(np.all(np.isneginf(lse[empty])) and
                    np.all(out.transpose(1, 0, 2)[empty] == 0))
    ok = (err <= bound * max(1.0, np.abs(ref).max()) and lse_err <= 1e-3 and
          empty_ok and not np.isnan(out).any())
    all_ok &= ok
    print(f"{which}: out max_abs {err:.3g} lse max_abs {lse_err:.3g} "
          f"bound {bound}; rows seeing nothing: {int(empty.sum())} "
          f"(out 0, lse -inf: {empty_ok})")
print("PASS" if all_ok else "FAIL")
