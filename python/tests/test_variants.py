"""attn.sdpa's key_lengths and alibi_slopes (and window, softcap) from Python,
against conftest's float64 reference: each variant written out as the
additive float mask it means (docs/op.md), -inf where a key is hidden, so
the reference is the plain softmax of conftest.reference()."""

import numpy as np
import pytest

import attn
from conftest import BF16, bias, check, randn

T1 = {"threads": 1}


def qkv(qshape, kshape, dtype=np.float32):
    return randn(qshape, dtype, 1), randn(kshape, dtype, 2), randn(
        kshape, dtype, 3)


@pytest.mark.parametrize("causal,lq,lk", [
    (None, 33, 70), ("bottom_right", 33, 70), ("top_left", 70, 33),
    ("bottom_right", 1, 200),
])
def test_key_lengths(causal, lq, lk):
    b, hq = 4, 2
    q, k, v = qkv((b, hq, lq, 32), (b, hq, lk, 32))
    lengths = np.array([lk, 0, 5, lk // 2 + 1], np.int32)
    kw = dict(is_causal=causal is not None, causal=causal or "top_left")
    out, lse = attn.sdpa(q, k, v, key_lengths=lengths, return_lse=True,
                         **kw, **T1)
    check(out, q, k, v, mask=bias(b, hq, lq, lk, lengths, causal=causal),
          lse=lse)
    assert (out[1] == 0).all() and np.isneginf(lse[1]).all()


@pytest.mark.parametrize("per_batch", [False, True])
def test_alibi(per_batch):
    b, hq, hkv, lq, lk = 2, 4, 2, 40, 57
    q, k, v = qkv((b, hq, lq, 32), (b, hkv, lk, 32))
    slopes = (np.abs(randn((b, hq) if per_batch else (hq,), seed=7)) / 4)
    out, lse = attn.sdpa(q, k, v, alibi_slopes=slopes, enable_gqa=True,
                         return_lse=True, **T1)
    k2, v2 = (np.repeat(x, hq // hkv, axis=1) for x in (k, v))
    check(out, q, k2, v2, mask=bias(b, hq, lq, lk, slopes=slopes), lse=lse)


def test_alibi_key_lengths_window_causal():
    b, hq, lq, lk = 3, 2, 29, 64
    q, k, v = qkv((b, hq, lq, 16), (b, hq, lk, 16))
    lengths = np.array([64, 30, 3], np.int32)
    slopes = np.array([[0.1, 0.3], [0.02, 0.5], [0.2, 0.2]], np.float32)
    out = attn.sdpa(q, k, v, is_causal=True, causal="bottom_right",
                    window=(8, -1), key_lengths=lengths, alibi_slopes=slopes,
                    **T1)
    check(out, q, k, v, mask=bias(b, hq, lq, lk, lengths, slopes,
                                  "bottom_right", (8, -1)))


def test_compiled_kernel_takes_key_lengths_and_slopes():
    # attn.compile's kernel reads the library's JSON, where the key lengths
    # are "i32": an int32 array must be accepted (it once was refused).
    b, hq, lq, lk = 3, 2, 20, 40
    kernel = attn.compile(f"b={b},hq={hq},lq={lq},lk={lk},d=16,key_lengths=1,"
                          "alibi=bh,causal=bottom_right,lse=1")
    assert [a["dtype"] for a in kernel.args] == ["f32", "f32", "f32", "int32",
                                                 "f32"]
    q, k, v = qkv((b, hq, lq, 16), (b, hq, lk, 16))
    lengths = np.array([40, 0, 13], np.int32)
    slopes = np.array([[0.1, 0.3], [0.02, 0.5], [0.2, 0.2]], np.float32)
    out, lse = kernel(q, k, v, lengths, slopes)
    check(out, q, k, v, mask=bias(b, hq, lq, lk, lengths, slopes,
                                  "bottom_right"), lse=lse)
    with pytest.raises(TypeError, match="key_lengths element type"):
        kernel(q, k, v, lengths.astype(np.int64), slopes)


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_low_precision(dtype):
    if dtype is None:
        pytest.skip("ml_dtypes is not installed")
    b, hq, lq, lk = 2, 2, 48, 80
    q, k, v = qkv((b, hq, lq, 64), (b, hq, lk, 64), dtype)
    lengths = np.array([80, 41], np.int32)
    slopes = np.array([0.25, 0.0625], np.float32)
    out = attn.sdpa(q, k, v, key_lengths=lengths, alibi_slopes=slopes, **T1)
    assert out.dtype == dtype
    check(out, q, k, v, mask=bias(b, hq, lq, lk, lengths, slopes))


def test_three_dims_and_leading_dims():
    # [H, L, D]: one batch, key lengths [1]; two leading dims: [2, 3].
    q, k, v = qkv((2, 9, 16), (2, 20, 16))
    out = attn.sdpa(q, k, v, key_lengths=np.array([7], np.int32), **T1)
    check(out[None], q[None], k[None], v[None],
          mask=bias(1, 2, 9, 20, [7]))
    q, k, v = qkv((2, 3, 2, 9, 16), (2, 3, 2, 20, 16))
    lengths = np.arange(6, dtype=np.int32).reshape(2, 3) * 3 + 1
    slopes = np.full((2, 3, 2), 0.125, np.float32)
    out = attn.sdpa(q, k, v, key_lengths=lengths, alibi_slopes=slopes, **T1)
    m = bias(6, 2, 9, 20, lengths.reshape(6), slopes.reshape(6, 2))
    check(out.reshape(6, 2, 9, 16), q.reshape(6, 2, 9, 16),
          k.reshape(6, 2, 20, 16), v.reshape(6, 2, 20, 16), mask=m)


def test_errors():
    q, k, v = qkv((2, 2, 8, 16), (2, 2, 8, 16))
    with pytest.raises(TypeError, match="key_lengths element type to be "
                                        "int32, but got int64"):
        attn.sdpa(q, k, v, key_lengths=np.array([1, 2]), **T1)
    with pytest.raises(ValueError, match=r"key_lengths of shape \(2,\), but "
                                         r"got \(3,\)"):
        attn.sdpa(q, k, v, key_lengths=np.array([1, 2, 3], np.int32), **T1)
    with pytest.raises(TypeError, match="alibi_slopes element type to be "
                                        "f32, but got float64"):
        attn.sdpa(q, k, v, alibi_slopes=np.ones(2), **T1)
    with pytest.raises(ValueError, match=r"alibi_slopes of shape \(2, 2\), "
                                         r"but got \(2, 3\)"):
        attn.sdpa(q, k, v, alibi_slopes=np.ones((2, 3), np.float32), **T1)


def test_sequences_for_key_lengths_and_slopes():
    # Lists are taken as arrays of the query's kind (a list of slopes was
    # an AttributeError).
    q, k, v = qkv((2, 2, 8, 16), (2, 2, 12, 16))
    want = attn.sdpa(q, k, v, key_lengths=np.array([12, 5], np.int32),
                     alibi_slopes=np.array([0.5, 0.25], np.float32), **T1)
    got = attn.sdpa(q, k, v, key_lengths=[12, 5], alibi_slopes=[0.5, 0.25],
                    **T1)
    np.testing.assert_array_equal(got, want)
    got = attn.sdpa(q, k, v, key_lengths=(12, 5),
                    alibi_slopes=[[0.5, 0.25], [0.5, 0.25]], **T1)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="expected alibi_slopes to be an array "
                                        "or a sequence of numbers"):
        attn.sdpa(q, k, v, alibi_slopes=[0.5, "a"], **T1)
    with pytest.raises(ValueError, match="expected key_lengths to hold int32 "
                                         "values, got 1.5"):
        attn.sdpa(q, k, v, key_lengths=[12, 1.5], **T1)
    with pytest.raises(ValueError, match="expected key_lengths to hold int32 "
                                         "values"):
        attn.sdpa(q, k, v, key_lengths=[2**40, 1], **T1)


@pytest.mark.parametrize("slopes,message", [
    ([0.5, 3e38], r"alibi_slopes\[1\] = 3e\+38: expected a finite value "
                  r"with \|alibi_slopes\| \* log2\(e\) finite in f32"),
    ([float("nan"), 0.5], r"alibi_slopes\[0\] = nan"),
    ([-float("inf"), 0.5], r"alibi_slopes\[0\] = -inf"),
])
def test_slopes_out_of_the_finite_range_refused(slopes, message):
    # slope * log2(e) = inf gave NaN scores (inf * distance 0).
    q, k, v = qkv((1, 2, 8, 16), (1, 2, 8, 16))
    with pytest.raises(ValueError, match=message):
        attn.sdpa(q, k, v, alibi_slopes=np.array(slopes, np.float32), **T1)
    with pytest.raises(ValueError, match=message):
        attn.sdpa_varlen(q[0].swapaxes(0, 1), k[0].swapaxes(0, 1),
                         v[0].swapaxes(0, 1), np.array([0, 8], np.int32),
                         np.array([0, 8], np.int32), alibi_slopes=slopes)


def test_base2_range_edge():
    # The last f32 whose product with log2(e) is finite in f32 is accepted,
    # the next one refused: the rule is the kernels' own arithmetic.
    from attn import _sdpa
    top = np.float32(_sdpa.BASE2_LIMIT)
    while not np.isfinite(top * np.float32(np.log2(np.e))):
        top = np.nextafter(top, np.float32(0))
    nxt = np.nextafter(top, np.float32(np.inf))
    assert abs(float(top) / _sdpa.BASE2_LIMIT - 1) < 1e-6
    _sdpa.check_base2_range([float(top), -float(top)], "s", "t")
    assert _sdpa.score_options(None, float(top), "t")[1] == float(top)
    with pytest.raises(ValueError, match=r"t: s\[1\] = "):
        _sdpa.check_base2_range([1.0, float(nxt)], "s", "t")
    with pytest.raises(ValueError, match="softcap = "):
        _sdpa.score_options(None, float(nxt), "t")


def test_torch_custom_op():
    torch = pytest.importorskip("torch")
    import attn.torch  # noqa: F401  (registers torch.ops.attn)
    q, k, v = (torch.from_numpy(x) for x in qkv((2, 2, 17, 16),
                                                (2, 2, 30, 16)))
    lengths = torch.tensor([30, 11], dtype=torch.int32)
    slopes = torch.tensor([0.1, 0.4], dtype=torch.float32)
    out = torch.ops.attn.sdpa(q, k, v, None, True, None, False,
                              "bottom_right", [6, -1], 20.0, lengths, slopes)
    want = attn.sdpa(q, k, v, is_causal=True, causal="bottom_right",
                     window=(6, -1), softcap=20.0, key_lengths=lengths,
                     alibi_slopes=slopes, **T1)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-6)
    fake = torch._subclasses.fake_tensor.FakeTensorMode()
    with fake:
        fq, fk, fv = (fake.from_tensor(x) for x in (q, k, v))
        shape = torch.ops.attn.sdpa(fq, fk, fv, None, False, None, False,
                                    "top_left", None, None,
                                    fake.from_tensor(lengths), None).shape
    assert shape == (2, 2, 17, 16)
    qg = q.clone().requires_grad_()
    with pytest.raises(NotImplementedError, match="does not take key_lengths"):
        torch.ops.attn.sdpa(qg, k, v, None, False, None, False, "top_left",
                            None, None, lengths, None).sum().backward()
