"""Shared by the tests: the float64 reference (attn.reference: docs/op.md)
and docs/numerics.md's rules. The tests run against the installed package
(CTest's python-package installs it into BUILD/python/venv, where
python-pytest runs them)."""

import numpy as np
import pytest

from attn import reference as _reference

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BF16 = None


def reference(q, k, v, mask=None, is_causal=False, causal="top_left",
              scale=None, noise=None, softcap=None):
    """out [..., Hq, L, Dv] and lse [..., Hq, L] in float64 (docs/op.md):
    attn.reference.sdpa with torch's is_causal and attn's causal alignment."""
    return _reference.sdpa(q, k, v, mask,
                           causal=causal if is_causal else None, scale=scale,
                           softcap=softcap, noise=noise)


def sensitivity(q, k, v, mask, is_causal, causal, scale, ref, seed=0,
                softcap=None):
    """docs/numerics.md's sens of out: how far the f64 reference moves under
    f32-sized noise in the scores (three draws; largest rel_l2, max_abs)."""
    sens = _reference.sensitivity(
        q, k, v, mask, seed=seed + 12345, causal=causal if is_causal else None,
        scale=scale, softcap=softcap, ref=(ref, None))
    return sens[0], sens[1]


def rel_l2(x, ref):
    return _reference.errors(x, ref)[1]


def check(out, q, k, v, mask=None, is_causal=False, causal="top_left",
          scale=None, lse=None, softcap=None):
    """Asserts docs/numerics.md's rule for out's dtype (and f32's for lse)."""
    ref, ref_lse = reference(q, k, v, mask, is_causal, causal, scale,
                             softcap=softcap)
    out64 = np.asarray(out, np.float64)
    assert out.shape == ref.shape
    assert not np.isnan(out64).any(), "NaN in the result of NaN-free inputs"
    if out.dtype == np.float32:
        sr, sa = sensitivity(q, k, v, mask, is_causal, causal, scale, ref,
                             softcap=softcap)
        err = rel_l2(out64, ref)
        assert err <= 1e-5 + 4 * sr, (err, sr)
        mabs = float(np.max(np.abs(out64 - ref), initial=0.0))
        bound = 1e-4 * max(1.0, float(np.max(np.abs(ref), initial=0.0))) + 4 * sa
        assert mabs <= bound, (mabs, bound)
    else:
        # The "naive" oracle here: f32 numpy from the same low-precision
        # inputs, rounded once to the output type.
        naive, _ = reference(*(np.asarray(x, np.float32) for x in (q, k, v)),
                             None if mask is None else np.asarray(
                                 mask, np.bool_ if mask.dtype == np.bool_
                                 else np.float32),
                             is_causal, causal, scale, softcap=softcap)
        naive = naive.astype(np.float32).astype(out.dtype).astype(np.float64)
        err = rel_l2(out64, ref)
        cap = 2e-3 if out.dtype == np.float16 else 1.6e-2
        assert err <= 2 * rel_l2(naive, ref) + 1e-6, (err, rel_l2(naive, ref))
        assert err <= cap, err
    if lse is not None:
        assert lse.dtype == np.float32 and lse.shape == ref_lse.shape
        fin = np.isfinite(ref_lse)
        assert (np.isneginf(lse) == ~fin).all()
        l64 = np.asarray(lse, np.float64)[fin]
        assert rel_l2(l64, ref_lse[fin]) <= 1e-5
        assert np.max(np.abs(l64 - ref_lse[fin]), initial=0.0) <= 1e-4 * max(
            1.0, float(np.max(np.abs(ref_lse[fin]), initial=0.0)))


def bias(b, hq, L, S, key_lengths=None, slopes=None, causal=None,
         window=None):
    """The float64 [b, hq, L, S] mask the variants amount to: key j of batch
    n hidden past key_lengths[n], by causality or outside the window (the
    bottom-right diagonal at the batch's own key length); ALiBi subtracts
    slope * |i + S_n - L - j|."""
    i = np.arange(L)[:, None]
    j = np.arange(S)[None, :]
    out = np.zeros((b, hq, L, S))
    for n in range(b):
        sn = S if key_lengths is None else min(max(int(key_lengths[n]), 0), S)
        visible = np.broadcast_to(j < sn, (L, S)).copy()
        diag = i if causal == "top_left" else i + sn - L
        if causal is not None:
            visible &= j <= diag
        if window is not None:
            if window[0] >= 0:
                visible &= j >= diag - window[0]
            if window[1] >= 0:
                visible &= j <= diag + window[1]
        for h in range(hq):
            m = np.where(visible, 0.0, -np.inf)
            if slopes is not None:
                slope = slopes[h] if slopes.ndim == 1 else slopes[n, h]
                m = m - float(slope) * np.abs(i + sn - L - j)
            out[n, h] = m
    return out


def randn(shape, dtype=np.float32, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape)
    return x.astype(np.float32).astype(dtype)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """An empty cache directory and a clean in-memory cache for one test."""
    import attn
    monkeypatch.setenv("ATTN_CACHE_DIR", str(tmp_path / "cache"))
    attn.cache_clear()
    yield tmp_path / "cache"
    attn.cache_clear()


def pytest_report_header(config):
    """Which attn the tests import (the installed package, CTest's venv)."""
    import attn
    from attn import _build
    try:
        compiler = _build.compiler_path()
    except RuntimeError as e:
        compiler = str(e)
    return [f"attn: {attn.__file__}", f"attn-compile: {compiler}"]
