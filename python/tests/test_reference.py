"""attn.reference, the one f64 reference of the project (the tests,
scripts/gpu_check.py and bench/ use it): its variants against the same
problem written as a float mask (conftest.bias), a subset of rows against
all rows, and errors()' treatment of infinities and NaN."""

import math

import numpy as np
import pytest

from attn import reference
from conftest import bias, randn


@pytest.mark.parametrize("causal,window,lengths,slopes", [
    ("bottom_right", None, [30, 0, 11], None),
    ("top_left", (5, -1), None, [0.25, 0.5]),
    (None, (7, 3), [12, 30, 29], [[0.1, 0.2], [0.3, 0.4], [0.0, 0.05]]),
    ("bottom_right", (4, 0), [17, 30, 1], [0.125, 0.0625]),
])
def test_variants_are_their_float_mask(causal, window, lengths, slopes):
    b, hq, hkv, lq, lk = 3, 2, 1, 20, 30
    q = randn((b, hq, lq, 16), seed=1)
    k = randn((b, hkv, lk, 16), seed=2)
    v = randn((b, hkv, lk, 8), seed=3)
    lengths = None if lengths is None else np.array(lengths)
    slopes = None if slopes is None else np.array(slopes)
    out, lse = reference.sdpa(q, k, v, causal=causal, window=window,
                              key_lengths=lengths, alibi_slopes=slopes)
    mask = bias(b, hq, lq, lk, lengths, slopes, causal, window)
    want, want_lse = reference.sdpa(q, k, v, mask)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-12, atol=1e-12)
    assert out.shape == (b, hq, lq, 8) and lse.shape == (b, hq, lq)


def test_rows_are_those_of_the_whole():
    q, k, v = randn((2, 4, 40, 16), seed=1), randn((2, 2, 50, 16), seed=2), \
        randn((2, 2, 50, 16), seed=3)
    mask = np.random.default_rng(4).random((1, 4, 40, 50)) < 0.7
    options = dict(causal="bottom_right", softcap=3.0, scale=0.3,
                   window=(9, 2), key_lengths=np.array([50, 33]))
    out, lse = reference.sdpa(q, k, v, mask, **options)
    rows = [0, 7, 39]
    part, part_lse = reference.sdpa(q, k, v, mask, rows=rows, **options)
    np.testing.assert_array_equal(part, out[:, :, rows])
    np.testing.assert_array_equal(part_lse, lse[:, :, rows])


def test_empty_rows_and_sensitivity():
    q, k, v = randn((1, 2, 6, 8), seed=1), randn((1, 2, 4, 8), seed=2), \
        randn((1, 2, 4, 8), seed=3)
    out, lse = reference.sdpa(q, k, v, causal="bottom_right")
    # Lq > Lk bottom-right: the first two rows see no key.
    assert (out[:, :, :2] == 0).all() and np.isneginf(lse[:, :, :2]).all()
    sens = reference.sensitivity(q, k, v, causal="bottom_right", seed=1)
    assert all(0 < s < 1e-5 for s in sens), sens


def test_errors():
    ref = np.array([1.0, -np.inf, 3.0])
    assert reference.errors(ref, ref) == (0.0, 0.0)
    max_abs, rel = reference.errors(np.array([1.0, -np.inf, 4.0]), ref)
    assert max_abs == 1.0 and math.isclose(rel, 1 / math.sqrt(10))
    assert reference.errors(np.array([np.nan, -np.inf, 3.0]), ref) == (
        math.inf, math.inf)
