"""attn.sdpa on numpy arrays against the float64 reference (docs/numerics.md)."""

import numpy as np
import pytest

import attn
from conftest import BF16, check, randn, reference

T1 = {"threads": 1}


def qkv(qshape, kshape, vshape=None, dtype=np.float32):
    vshape = vshape or kshape
    return (randn(qshape, dtype, 1), randn(kshape, dtype, 2),
            randn(vshape, dtype, 3))


@pytest.mark.parametrize("qshape,kshape", [
    ((2, 4, 33, 32), (2, 4, 40, 32)),        # [B, H, L, D]
    ((4, 17, 64), (4, 29, 64)),              # [H, L, D], as torch takes it
    ((19, 16), (23, 16)),                    # [L, D]
    ((2, 3, 2, 8, 16), (2, 3, 2, 12, 16)),   # two leading batch dims
])
def test_layouts(qshape, kshape):
    q, k, v = qkv(qshape, kshape)
    out = attn.sdpa(q, k, v, **T1)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    check(out, q, k, v)


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_low_precision(dtype):
    if dtype is None:
        pytest.skip("ml_dtypes is not installed")
    q, k, v = qkv((1, 4, 64, 64), (1, 4, 80, 64), dtype=dtype)
    out, lse = attn.sdpa(q, k, v, is_causal=True, return_lse=True, **T1)
    assert out.dtype == dtype
    check(out, q, k, v, is_causal=True)


@pytest.mark.parametrize("causal,lq,lk", [
    ("top_left", 48, 48), ("top_left", 40, 56),
    ("bottom_right", 40, 56), ("bottom_right", 56, 40),
])
def test_causal(causal, lq, lk):
    q, k, v = qkv((1, 2, lq, 32), (1, 2, lk, 32))
    out, lse = attn.sdpa(q, k, v, is_causal=True, causal=causal,
                         return_lse=True, **T1)
    check(out, q, k, v, is_causal=True, causal=causal, lse=lse)


def test_gqa_decode_lse():
    q, k, v = qkv((2, 8, 1, 64), (2, 2, 300, 64))
    out, lse = attn.sdpa(q, k, v, is_causal=True, causal="bottom_right",
                         enable_gqa=True, return_lse=True, **T1)
    assert lse.shape == (2, 8, 1)
    check(out, q, k, v, is_causal=True, causal="bottom_right", lse=lse)


def test_scale_and_value_head_dim():
    q, k, v = qkv((1, 2, 24, 32), (1, 2, 24, 32), (1, 2, 24, 48))
    out = attn.sdpa(q, k, v, scale=0.3, **T1)
    assert out.shape == (1, 2, 24, 48)
    check(out, q, k, v, scale=0.3)


def bool_mask(shape, seed=7):
    return np.random.default_rng(seed).random(shape) < 0.8


@pytest.mark.parametrize("mshape", [(2, 4, 16, 24), (16, 24), (4, 1, 24)])
def test_bool_mask(mshape):
    q, k, v = qkv((2, 4, 16, 32), (2, 4, 24, 32))
    m = bool_mask(mshape)
    out = attn.sdpa(q, k, v, attn_mask=m, **T1)
    check(out, q, k, v, mask=m)


def test_float_mask_with_causal():
    q, k, v = qkv((1, 4, 16, 32), (1, 4, 16, 32))
    m = randn((1, 4, 16, 16), seed=9)
    m[0, 1, 3, :5] = -np.inf
    out = attn.sdpa(q, k, v, attn_mask=m, is_causal=True, **T1)
    check(out, q, k, v, mask=m, is_causal=True)


def test_mask_partly_broadcast_leading_dims():
    # [2, 3, H, L, D] with a mask [2, 1, 1, L, S]: materialized to [6, 1, L, S].
    q, k, v = qkv((2, 3, 2, 8, 16), (2, 3, 2, 12, 16))
    m = bool_mask((2, 1, 1, 8, 12))
    out = attn.sdpa(q, k, v, attn_mask=m, **T1)
    check(out, q, k, v, mask=m)


def test_empty_rows_give_zero_and_minus_inf():
    q, k, v = qkv((1, 2, 16, 32), (1, 2, 24, 32))
    m = bool_mask((1, 2, 16, 24))
    m[0, 1, 5, :] = False
    out, lse = attn.sdpa(q, k, v, attn_mask=m, return_lse=True, **T1)
    assert (out[0, 1, 5] == 0).all() and np.isneginf(lse[0, 1, 5])
    check(out, q, k, v, mask=m, lse=lse)


def test_non_contiguous_inputs_are_copied():
    q, k, v = qkv((2, 4, 33, 32), (2, 4, 40, 32))
    qt = np.ascontiguousarray(np.swapaxes(q, 1, 2)).swapaxes(1, 2)
    assert not qt.flags.c_contiguous
    k2 = np.ascontiguousarray(k[:, :, ::-1])[:, :, ::-1]
    assert not k2.flags.c_contiguous
    out = attn.sdpa(qt, k2, v, **T1)
    np.testing.assert_array_equal(out, attn.sdpa(q, k, v, **T1))


def test_zero_sizes():
    q, k, v = qkv((1, 2, 0, 16), (1, 2, 5, 16))
    assert attn.sdpa(q, k, v).shape == (1, 2, 0, 16)
    q, k, v = qkv((1, 2, 3, 16), (1, 2, 0, 16))
    out, lse = attn.sdpa(q, k, v, return_lse=True)
    assert (out == 0).all() and np.isneginf(lse).all()


def test_threads_match_single_thread():
    q, k, v = qkv((1, 4, 160, 32), (1, 4, 160, 32))
    one = attn.sdpa(q, k, v, is_causal=True, threads=1)
    two = attn.sdpa(q, k, v, is_causal=True, threads=2)
    check(two, q, k, v, is_causal=True)
    np.testing.assert_allclose(two, one, rtol=0, atol=1e-6)


def test_default_threads_follow_omp_num_threads():
    import subprocess
    import sys
    import os
    env = dict(os.environ, OMP_NUM_THREADS="3")
    r = subprocess.run([sys.executable, "-c",
                        "import attn; print(attn.default_threads())"],
                       env=env, capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "3"


Q = randn((1, 4, 8, 16))
K = randn((1, 2, 8, 16))


@pytest.mark.parametrize("call,exc,message", [
    (lambda: attn.sdpa(Q, randn((1, 4, 8, 32)), randn((1, 4, 8, 32))),
     ValueError, "expected key dim 3 (32) to equal query dim 3 (16)"),
    (lambda: attn.sdpa(Q, randn((4, 8, 16)), randn((4, 8, 16))),
     ValueError, "expected key to have rank 4 (query's rank), but got rank 3"),
    (lambda: attn.sdpa(Q, K, K),
     ValueError, "expected key dim 1 (2) to equal query dim 1 (4)"),
    (lambda: attn.sdpa(Q, randn((1, 3, 8, 16)), randn((1, 3, 8, 16)),
                       enable_gqa=True),
     ValueError, "to be a positive multiple of key/value heads"),
    (lambda: attn.sdpa(Q, K, randn((1, 2, 9, 16)), enable_gqa=True),
     ValueError, "expected value dim 2 (9) to equal key dim 2 (8)"),
    (lambda: attn.sdpa(Q, randn((2, 4, 8, 16)), randn((2, 4, 8, 16))),
     ValueError, "expected key dim 0 (2) to equal query dim 0 (1)"),
    (lambda: attn.sdpa(Q, Q.astype(np.float16), Q),
     TypeError, "expected key element type (f16) to equal query element type (f32)"),
    (lambda: attn.sdpa(Q.astype(np.float64), Q, Q),
     TypeError, "expected query element type to be f32, f16 or bf16, but got float64"),
    (lambda: attn.sdpa(Q, Q, Q, attn_mask=np.zeros((8, 8), np.float64)),
     TypeError, "expected mask element type to be bool or the query element type"),
    (lambda: attn.sdpa(Q, Q, Q, attn_mask=np.zeros((3, 8, 8), bool)),
     ValueError, "expected mask dim 1 (3) to be 1 or Hq (4)"),
    (lambda: attn.sdpa(Q, Q, Q, attn_mask=np.zeros((1, 1, 1, 4, 8, 8), bool)),
     ValueError, "expected mask to have rank at most 4"),
    (lambda: attn.sdpa(Q, Q, Q, scale=0.0),
     ValueError, "expected scale to be finite and non-zero, but got 0.0"),
    (lambda: attn.sdpa(Q, Q, Q, scale=float("nan")),
     ValueError, "expected scale to be finite and non-zero"),
    (lambda: attn.sdpa(Q, Q, Q, dropout_p=0.1),
     ValueError, "dropout_p must be 0"),
    (lambda: attn.sdpa(Q, Q, Q, is_causal=True, causal="diagonal"),
     ValueError, "causal must be 'top_left' or 'bottom_right'"),
    (lambda: attn.sdpa(Q, Q, Q, threads=0),
     ValueError, "threads must be in [1, 4096], got 0"),
    (lambda: attn.sdpa(Q, Q, Q, threads="2"),
     TypeError, "threads must be an int, got '2'"),
    (lambda: attn.sdpa(Q, Q, Q, window="ab"),
     TypeError, "window must be a pair (left, right) of ints, got 'ab'"),
    (lambda: attn.sdpa(Q, Q, Q, window=(1.5, 2)),
     TypeError, "window must be a pair (left, right) of ints, got (1.5, 2)"),
    (lambda: attn.sdpa(Q, Q, Q, softcap=3e38),
     ValueError, "softcap = 3e+38: expected a finite value with |softcap| * "
     "log2(e) finite in f32 (|softcap| < 2.3587e+38)"),
    (lambda: attn.sdpa(Q, Q, Q, scale=-3e38),
     ValueError, "scale = -3e+38: expected a finite value with |scale| * "
     "log2(e) finite in f32 (|scale| < 2.3587e+38)"),
    (lambda: attn.sdpa(Q, Q, Q, softcap=1e-50),
     ValueError, "softcap must be finite and positive, got 1e-50 (0 as an "
     "f32)"),
    (lambda: attn.sdpa(Q, Q, Q, scale=1e-50),
     ValueError, "expected scale to be finite and non-zero, but got 1e-50 "
     "(0.0 as an f32)"),
    (lambda: attn.sdpa(Q, Q, Q, scale="0.1"),
     TypeError, "scale must be a real number, got '0.1'"),
    (lambda: attn.sdpa(Q, Q, Q, is_causal="yes"),
     TypeError, "is_causal must be a bool, got 'yes'"),
    (lambda: attn.sdpa(Q, Q, Q, dropout_p=np.zeros(2)),
     TypeError, "dropout_p must be a real number"),
    (lambda: attn.sdpa(Q.tolist(), Q, Q),
     TypeError, "expected a numpy array or a torch tensor, got builtins.list"),
    (lambda: attn.sdpa(randn((16,)), randn((16,)), randn((16,))),
     ValueError, "expected query to have rank 2 or more, but got rank 1"),
])
def test_errors(call, exc, message):
    with pytest.raises(exc) as info:
        call()
    assert message in str(info.value)


def test_nan_input_propagates_without_crash():
    q, k, v = qkv((1, 2, 16, 32), (1, 2, 16, 32))
    q[0, 1, 3, 0] = np.nan
    out = attn.sdpa(q, k, v, **T1)
    assert np.isnan(out[0, 1, 3]).all()
    assert not np.isnan(np.delete(out[0, 1], 3, axis=0)).any()
    assert not np.isnan(out[0, 0]).any()


def test_concurrent_python_threads():
    from concurrent.futures import ThreadPoolExecutor
    q, k, v = qkv((2, 4, 33, 32), (2, 4, 40, 32))
    want = attn.sdpa(q, k, v, **T1)
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: attn.sdpa(q, k, v, **T1), range(16)))
    for o in outs:
        np.testing.assert_array_equal(o, want)


def test_integer_mask_is_a_type_error():
    with pytest.raises(TypeError, match="but got uint8"):
        attn.sdpa(Q, Q, Q, attn_mask=np.ones((8, 8), np.uint8))


def test_threads_start_openmp_workers():
    import subprocess
    import sys
    script = ("import os, numpy as np, attn; q = np.ones((1, 8, 256, 32), "
              "np.float32); n = lambda: len(os.listdir('/proc/self/task')); "
              "attn.sdpa(q, q, q, threads=1); a = n(); "
              "attn.sdpa(q, q, q, threads=3); print(a, n())")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True,
                       text=True, check=True)
    one, three = map(int, r.stdout.split())
    assert three >= one + 2, (one, three)  # libomp's two workers joined


@pytest.mark.parametrize("causal,lq,lk,window", [
    ("none", 40, 56, (5, 2)), ("top_left", 48, 48, (7, -1)),
    ("bottom_right", 56, 40, (9, 0)),
])
def test_window_is_a_band_mask(causal, lq, lk, window):
    q, k, v = qkv((1, 2, lq, 32), (1, 2, lk, 32))
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    diag = i if causal == "top_left" else i + lk - lq
    band = np.ones((lq, lk), dtype=bool)
    if window[0] >= 0:
        band &= j >= diag - window[0]
    if window[1] >= 0:
        band &= j <= diag + window[1]
    kw = dict(is_causal=causal != "none",
              causal="top_left" if causal == "none" else causal, **T1)
    out = attn.sdpa(q, k, v, window=window, **kw)
    masked = attn.sdpa(q, k, v, attn_mask=band, **kw)
    np.testing.assert_allclose(out, masked, rtol=1e-5, atol=1e-6)


def test_softcap():
    q, k, v = qkv((1, 2, 33, 32), (1, 2, 47, 32))
    out = attn.sdpa(q, k, v, softcap=0.7, scale=1.0, **T1)
    ref, _ = reference(q, k, v, scale=1.0, softcap=0.7)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="softcap must be finite"):
        attn.sdpa(q, k, v, softcap=-1.0, **T1)
    with pytest.raises(ValueError, match="window must be"):
        attn.sdpa(q, k, v, window=(3, -4), **T1)
