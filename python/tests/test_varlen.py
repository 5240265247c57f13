"""attn.sdpa_varlen on packed numpy arrays (and torch tensors) against
conftest's float64 reference, one sequence at a time: sequence b's rows of
the result must be the reference of its own rows (docs/op.md), with the
causal alignment, window and ALiBi at its own lengths (conftest.bias)."""

import numpy as np
import pytest

import attn
from conftest import BF16, bias, check, randn

T1 = {"threads": 1}


def packed(lengths_q, lengths_k, hq, hkv, d, dv=None, dtype=np.float32,
           extra_q=0):
    """Packed q, k, v and the int32 offsets; `extra_q` rows past the last
    sequence (rows of no sequence)."""
    cq = np.concatenate(([0], np.cumsum(lengths_q))).astype(np.int32)
    ck = np.concatenate(([0], np.cumsum(lengths_k))).astype(np.int32)
    q = randn((int(cq[-1]) + extra_q, hq, d), dtype, 1)
    k = randn((int(ck[-1]), hkv, d), dtype, 2)
    v = randn((int(ck[-1]), hkv, dv or d), dtype, 3)
    return q, k, v, cq, ck


def check_sequences(out, lse, q, k, v, cq, ck, causal=None, window=None,
                    slopes=None, scale=None, softcap=None):
    """Each sequence against the reference of its own rows; rows of no
    sequence and sequences without keys: out 0, lse -inf."""
    hq, hkv = q.shape[1], k.shape[1]
    covered = np.zeros(q.shape[0], bool)
    for b in range(len(cq) - 1):
        q0, q1, k0, k1 = int(cq[b]), int(cq[b + 1]), int(ck[b]), int(ck[b + 1])
        covered[q0:q1] = True
        if q1 == q0:
            continue
        if k1 == k0:
            assert (out[q0:q1] == 0).all()
            assert lse is None or np.isneginf(lse[:, q0:q1]).all()
            continue
        # [rows, H, D] -> [1, H, rows, D]; key/value heads repeated for GQA.
        own = [np.swapaxes(x, 0, 1)[None] for x in
               (q[q0:q1], np.repeat(k[k0:k1], hq // hkv, axis=1),
                np.repeat(v[k0:k1], hq // hkv, axis=1))]
        s = None if slopes is None else (slopes if slopes.ndim == 1
                                         else slopes[b])
        mask = bias(1, hq, q1 - q0, k1 - k0, slopes=s, causal=causal,
                    window=window)
        check(np.swapaxes(out[q0:q1], 0, 1)[None], *own, mask=mask,
              scale=scale, softcap=softcap,
              lse=None if lse is None else lse[:, q0:q1][None])
    assert (out[~covered] == 0).all()
    assert lse is None or np.isneginf(lse[:, ~covered]).all()


@pytest.mark.parametrize("causal", [None, "top_left", "bottom_right"])
def test_matches_each_sequence(causal):
    # An empty sequence, one without keys, GQA, Dv != D, and two rows past
    # the last sequence.
    lq, lk = [17, 0, 5, 33, 8], [40, 3, 0, 21, 8]
    q, k, v, cq, ck = packed(lq, lk, 4, 2, 32, 24, extra_q=2)
    out, lse = attn.sdpa_varlen(q, k, v, cq, ck, max(lq), max(lk),
                                causal=causal, return_lse=True, **T1)
    assert out.shape == (q.shape[0], 4, 24) and out.dtype == np.float32
    assert lse.shape == (4, q.shape[0]) and lse.dtype == np.float32
    check_sequences(out, lse, q, k, v, cq, ck, causal=causal)


@pytest.mark.parametrize("per_sequence", [False, True])
def test_alibi_window_softcap_scale(per_sequence):
    lq, lk = [9, 30, 1], [20, 30, 64]
    q, k, v, cq, ck = packed(lq, lk, 2, 2, 16)
    slopes = np.abs(randn((3, 2) if per_sequence else (2,), seed=7)) / 4
    out = attn.sdpa_varlen(q, k, v, cq, ck, causal="bottom_right",
                           window=(6, -1), softcap=3.0, scale=0.3,
                           alibi_slopes=slopes, **T1)
    check_sequences(out, None, q, k, v, cq, ck, causal="bottom_right",
                    window=(6, -1), slopes=slopes, scale=0.3, softcap=3.0)


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_low_precision(dtype):
    if dtype is None:
        pytest.skip("ml_dtypes is not installed")
    lq, lk = [48, 7], [80, 19]
    q, k, v, cq, ck = packed(lq, lk, 2, 1, 64, dtype=dtype)
    out = attn.sdpa_varlen(q, k, v, cq, ck, causal="top_left", **T1)
    assert out.dtype == dtype
    check_sequences(out, None, q, k, v, cq, ck, causal="top_left")


def test_one_library_for_every_packing(private_cache):
    # Totals and B are dynamic in the library: a second packing of the same
    # heads, dims and attributes reuses it.
    for lq, lk in (([5, 9], [5, 9]), ([1, 2, 3, 40], [7, 0, 3, 2])):
        q, k, v, cq, ck = packed(lq, lk, 2, 2, 16)
        out = attn.sdpa_varlen(q, k, v, cq, ck, **T1)
        check_sequences(out, None, q, k, v, cq, ck)
    info = attn.cache_info()
    assert info["misses"] == 1 and info["hits"] == 1


def test_nothing_to_run():
    # No key rows at all, or no sequence: out 0, lse -inf (nothing compiled).
    q, k, v, cq, ck = packed([3, 2], [0, 0], 2, 2, 8)
    out, lse = attn.sdpa_varlen(q, k, v, cq, ck, return_lse=True, **T1)
    assert (out == 0).all() and np.isneginf(lse).all()
    zero = np.zeros(1, np.int32)
    out = attn.sdpa_varlen(q, q[:0], q[:0], zero, zero, **T1)
    assert out.shape == q.shape and (out == 0).all()


def test_threads():
    q, k, v, cq, ck = packed([70, 3, 129], [70, 90, 5], 4, 4, 32)
    one = attn.sdpa_varlen(q, k, v, cq, ck, causal="bottom_right", **T1)
    two = attn.sdpa_varlen(q, k, v, cq, ck, causal="bottom_right", threads=2)
    np.testing.assert_array_equal(one, two)


def test_bad_offsets_are_refused():
    q, k, v, cq, ck = packed([4, 4], [4, 4], 2, 2, 8)

    def call(cu_q=cq, cu_k=ck, **kw):
        return attn.sdpa_varlen(q, k, v, cu_q, cu_k, **kw, **T1)

    i32 = np.int32
    with pytest.raises(ValueError, match=r"cu_seqlens_q\[0\] = 1: expected "
                       r"offsets from 0, non-decreasing, at most the 8 packed "
                       r"rows"):
        call(np.array([1, 4, 8], i32))
    with pytest.raises(ValueError, match=r"cu_seqlens_k\[2\] = 3: expected "
                       r"offsets from 0, non-decreasing"):
        call(cu_k=np.array([0, 4, 3], i32))
    with pytest.raises(ValueError, match=r"cu_seqlens_q\[2\] = 9: .* at most "
                       r"the 8 packed rows"):
        call(np.array([0, 4, 9], i32))
    with pytest.raises(ValueError, match=r"expected cu_seqlens_k dim 0 \(2\) "
                       r"to equal cu_seqlens_q dim 0 \(3\)"):
        call(cu_k=np.array([0, 8], i32))
    with pytest.raises(ValueError, match=r"expected cu_seqlens_q to hold "
                       r"B \+ 1 >= 1 offsets \(rank 1\), but got shape \(0,\)"):
        call(np.zeros(0, i32))
    with pytest.raises(TypeError, match="cu_seqlens_q element type to be "
                       "int32, but got int64"):
        call(cq.astype(np.int64))
    with pytest.raises(ValueError, match=r"expected max_seqlen_k \(3\) to be "
                       r"at least the longest key sequence \(4\)"):
        call(max_seqlen_k=3)
    with pytest.raises(ValueError, match="True is ambiguous"):
        call(causal=True)
    with pytest.raises(ValueError, match=r"expected alibi_slopes of shape "
                       r"\(2,\) or \(2, 2\), but got \(3,\)"):
        call(alibi_slopes=np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"expected query to have rank 3"):
        attn.sdpa_varlen(q[None], k, v, cq, ck, **T1)
    with pytest.raises(ValueError, match=r"query heads \(query dim 1: 2\) to "
                       r"be a positive multiple of key/value heads \(key dim "
                       r"1: 3\)"):
        k3 = np.zeros((8, 3, 8), np.float32)
        attn.sdpa_varlen(q, k3, k3, cq, ck, **T1)


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    q, k, v, cq, ck = packed([5, 12], [9, 12], 4, 2, 16)
    want, want_lse = attn.sdpa_varlen(q, k, v, cq, ck, causal="top_left",
                                      return_lse=True, **T1)
    out, lse = attn.sdpa_varlen(*(torch.from_numpy(x) for x in
                                  (q, k, v, cq, ck)), causal="top_left",
                                return_lse=True, **T1)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(lse.numpy(), want_lse)
    with pytest.raises(ValueError, match=r"cu_seqlens_q\[1\] = 20"):
        attn.sdpa_varlen(torch.from_numpy(q), torch.from_numpy(k),
                         torch.from_numpy(v),
                         torch.tensor([0, 20, 17], dtype=torch.int32),
                         torch.from_numpy(ck), **T1)
