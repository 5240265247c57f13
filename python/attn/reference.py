"""The float64 reference of attn.sdpa (docs/op.md) and the sensitivity that
docs/numerics.md's rules are stated in: plain numpy, no code shared with the
kernels it checks.

    from attn import reference
    out, lse = reference.sdpa(q, k, v, causal="bottom_right")
    out_rel, out_abs, lse_rel, lse_abs = reference.sensitivity(q, k, v)

The one Python reference of the project: the package's tests
(python/tests/conftest.py), the GPU device check (scripts/gpu_check.py) and
bench/ use it.
"""

import math

import numpy as np

__all__ = ["sdpa", "score_noise", "sensitivity", "errors"]


def _f32(x):
    """A Python float as the f32 attribute the op holds."""
    return float(np.float32(x))


def sdpa(q, k, v, mask=None, *, causal=None, scale=None, softcap=None,
         window=None, key_lengths=None, alibi_slopes=None, noise=None,
         rows=None):
    """out [..., Hq, Lq, Dv] and lse [..., Hq, Lq] in float64.

    q [..., Hq, Lq, D], k [..., Hkv, Lk, D], v [..., Hkv, Lk, Dv], or rank 2
    ([L, D]); query head h reads key/value head h // (Hq / Hkv).
    mask: bool (True: attend) or float (added to the scores), broadcast
        right-aligned to the scores [..., Hq, Lq, Lk].
    causal: None or "none", "top_left" or "bottom_right".
    scale: default 1/sqrt(D). scale and softcap are rounded to f32, as the
        op's attributes are.
    softcap: the scaled scores become softcap * tanh(s / softcap), before
        ALiBi and the mask.
    window: (left, right) keys either side of the diagonal, -1 unbounded;
        the diagonal is top-left only with causal="top_left", else
        bottom-right.
    key_lengths [B] (rank-4 inputs): keys at or past key_lengths[b] are
        hidden, and the bottom-right diagonal (and ALiBi's) sits at the
        sequence's own length.
    alibi_slopes [Hq] or [B, Hq]: subtracts slope * |i + Lk_b - Lq - j|.
    noise: added to the scaled scores (sensitivity()).
    rows: the query rows to compute (indices into Lq; default all): the
        results hold those rows only, causality and windows still counted
        from the rows' own positions.
    A row that sees no key gets out 0 and lse -inf.
    """
    q = np.asarray(q, np.float64)
    k = np.asarray(k, np.float64)
    v = np.asarray(v, np.float64)
    lq, lk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    if q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        group = q.shape[-3] // k.shape[-3]
        k = np.repeat(k, group, axis=-3)
        v = np.repeat(v, group, axis=-3)
    i = np.arange(lq) if rows is None else np.asarray(rows)
    if rows is not None:
        q = q[..., i, :]
    i = i.reshape(-1, 1)
    j = np.arange(lk).reshape(1, -1)
    scale = _f32(1.0 / math.sqrt(d) if scale is None else scale)
    s = scale * (q @ np.swapaxes(k, -1, -2))
    if noise is not None:
        s = s + noise
    if softcap:
        c = _f32(softcap)
        s = c * np.tanh(s / c)
    # Each sequence's key length [B, 1, 1, 1] (or Lk): keys past it are
    # hidden, and the bottom-right diagonal sits at it.
    klen = lk
    if key_lengths is not None:
        klen = np.clip(np.asarray(key_lengths, np.int64), 0, lk)
        klen = klen.reshape((-1,) + (1,) * (s.ndim - 1))
    if alibi_slopes is not None:
        slopes = np.asarray(alibi_slopes, np.float64)
        slopes = slopes.reshape(slopes.shape + (1, 1))
        s = s - slopes * np.abs(i + klen - lq - j)
    visible = np.ones(s.shape, bool)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype == np.bool_:
            mask_rows = mask if rows is None or mask.shape[-2] == 1 else \
                mask[..., np.asarray(rows), :]
            visible &= np.broadcast_to(mask_rows, s.shape)
        else:
            mask = mask.astype(np.float64)
            if rows is not None and mask.shape[-2] != 1:
                mask = mask[..., np.asarray(rows), :]
            s = s + mask
    diag = i if causal == "top_left" else i + klen - lq
    if causal not in (None, "none"):
        visible &= j <= diag
    if window is not None:
        left, right = window
        if left >= 0:
            visible &= j >= diag - left
        if right >= 0:
            visible &= j <= diag + right
    if key_lengths is not None:
        visible &= j < klen
    visible &= ~np.isneginf(s)
    m = np.where(visible, s, -np.inf).max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(visible, np.exp(np.where(visible, s, 0.0) - m), 0.0)
    z = e.sum(axis=-1, keepdims=True)
    p = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    out = p @ v
    z, m = z[..., 0], m[..., 0]
    lse = np.where(z > 0, m + np.log(np.where(z > 0, z, 1.0)), -np.inf)
    return out, lse


def score_noise(q, k, scale=None, rng=None):
    """docs/numerics.md's f32 rounding noise of the scaled scores:
    2^-24 * sqrt(D) * |scale| * sqrt(q^2 . k^2) times a standard normal draw
    per score (rng: a numpy Generator)."""
    q = np.asarray(q, np.float64)
    k = np.asarray(k, np.float64)
    if q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
    d = q.shape[-1]
    scale = _f32(1.0 / math.sqrt(d) if scale is None else scale)
    norms = np.sqrt((q * q) @ np.swapaxes(k * k, -1, -2))
    rng = np.random.default_rng() if rng is None else rng
    return 2.0 ** -24 * math.sqrt(d) * abs(scale) * norms * \
        rng.standard_normal(norms.shape)


def sensitivity(q, k, v, mask=None, *, seed=0, trials=3, ref=None,
                **options):
    """docs/numerics.md's sens: how far the reference moves when its scores
    carry f32-sized noise (score_noise), the largest of `trials` draws:
    (out rel_l2, out max_abs, lse rel_l2, lse max_abs). options: sdpa()'s;
    ref: sdpa()'s (out, lse) of these inputs, when already computed (None
    for a result not to measure)."""
    if ref is None:
        ref = sdpa(q, k, v, mask, **options)
    rng = np.random.default_rng(seed)
    worst = [0.0, 0.0, 0.0, 0.0]
    rows = options.get("rows")
    for _ in range(trials):
        noise = score_noise(q, k, options.get("scale"), rng)
        if rows is not None:
            noise = noise[..., np.asarray(rows), :]
        moved = sdpa(q, k, v, mask, noise=noise, **options)
        for n, (a, b) in enumerate(zip(moved, ref)):
            if b is None:
                continue
            max_abs, rel = errors(a, b)
            worst[2 * n] = max(worst[2 * n], rel)
            worst[2 * n + 1] = max(worst[2 * n + 1], max_abs)
    return tuple(worst)


def errors(got, ref):
    """(max_abs, rel_l2) of got against ref, over the elements where the two
    are not the same infinity; a NaN in got where ref has none gives inf."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    same_inf = np.isinf(got) & np.isinf(ref) & (got == ref)
    g, r = got[~same_inf], ref[~same_inf]
    if np.isnan(g).any() and not np.isnan(r[np.isnan(g)]).all():
        return math.inf, math.inf
    diff = np.abs(g - r)
    norm = math.sqrt(float((r * r).sum()))
    l2 = math.sqrt(float((diff * diff).sum()))
    return (float(diff.max()) if diff.size else 0.0,
            l2 / norm if norm > 0 else l2)
