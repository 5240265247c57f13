"""attn.sdpa_varlen: FlashAttention's varlen API (flash_attn_varlen_func) over
the op attn.sdpa_varlen (docs/op.md).

B sequences of different lengths are packed along the rows, without padding:
query ``[total_q, Hq, D]``, key ``[total_k, Hkv, D]``, value
``[total_k, Hkv, Dv]``; sequence b owns query rows
``cu_seqlens_q[b]:cu_seqlens_q[b+1]`` and key/value rows
``cu_seqlens_k[b]:cu_seqlens_k[b+1]``, and its rows of the result are exactly
attn.sdpa of its own rows. One library (dynamic totals and B) serves every
packing of the same heads, head dims, dtype and attributes.
"""

import numpy as np

from . import _sdpa, _tensors

_WHO = "attn.sdpa_varlen"
_CAUSAL = (None, False, "top_left", "bottom_right")


def _err(message):
    return ValueError(f"{_WHO}: expected {message}")


def _offsets(backend, target, x, name, rows):
    """cu_seqlens as given (int32 on the target) and its host values, checked:
    rank 1, B + 1 >= 1 offsets from 0, non-decreasing, at most `rows`. The
    op leaves other offsets undefined, so they are refused here."""
    if _tensors.backend_of(x) is not backend:
        raise TypeError(f"{_WHO}: expected {name} to be a {backend.name} "
                        f"array like query")
    x = backend.prepare(x, target)
    if backend.dtype_name(x) != "int32":
        raise TypeError(f"{_WHO}: expected {name} element type to be int32, "
                        f"but got {backend.dtype_name(x)}")
    if len(x.shape) != 1 or x.shape[0] == 0:
        raise _err(f"{name} to hold B + 1 >= 1 offsets (rank 1), but got "
                   f"shape {tuple(x.shape)}")
    host = backend.to_host(x).astype(np.int64)
    previous = np.concatenate(([0], host[:-1]))
    bad = np.flatnonzero((host < previous) | (host > rows) |
                         (np.arange(host.size) == 0) & (host != 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{_WHO}: {name}[{i}] = {host[i]}: expected offsets "
                         f"from 0, non-decreasing, at most the {rows} packed "
                         f"rows")
    return x, host


def _max_seqlen(given, lengths, name, what):
    """FlashAttention's max_seqlen_q/k: optional; when given, at least the
    longest sequence (a smaller one would drop rows there)."""
    longest = int(lengths.max(initial=0))
    if given is not None and not _sdpa.is_int(given):
        raise TypeError(f"{_WHO}: {name} must be an int, got "
                        f"{_sdpa.show(given)}")
    if given is not None and int(given) < longest:
        raise _err(f"{name} ({int(given)}) to be at least the longest {what} "
                   f"sequence ({longest})")


def _call(kernel, pointers, shapes, stream, threads):
    """Runs `kernel` on `pointers` (arguments, then results) whose shapes are
    `shapes`: its dynamic sizes are read off them by the names in its JSON."""
    sizes = {}
    for desc, shape in zip(kernel.args + kernel.results, shapes):
        for want, got in zip(desc["shape"], shape):
            if isinstance(want, str):
                sizes[want] = got
    kernel.call_pointers(pointers, [sizes[d] for d in kernel.dims], stream,
                         threads)


def sdpa_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q=None,
                max_seqlen_k=None, scale=None, causal=None, window=None,
                softcap=None, alibi_slopes=None, *, return_lse=False,
                threads=None):
    """Attention over packed sequences of different lengths (attn.sdpa_varlen).

    q ``[total_q, Hq, D]``, k ``[total_k, Hkv, D]``, v ``[total_k, Hkv, Dv]``
    (f32, f16 or bf16; Hq a multiple of Hkv); cu_seqlens_q, cu_seqlens_k:
    int32 ``[B + 1]`` offsets (from 0, non-decreasing, within the packed
    rows; others are refused). Sequence b's rows of the result are attn.sdpa
    of its own rows, with its own lengths ``Lq_b``, ``Lk_b``:

    max_seqlen_q, max_seqlen_k: FlashAttention's; optional, checked to be at
        least the longest sequence (the kernel does not need them).
    scale: default 1/sqrt(D).
    causal: None (none), "top_left" (key j visible to query i iff j <= i) or
        "bottom_right" (j <= i + Lk_b - Lq_b, FlashAttention's causal=True).
        True is refused as ambiguous (torch's is_causal is top_left).
    window: ``(left, right)``, -1 unbounded, around the causal alignment's
        diagonal (bottom_right without causal); softcap: ``c > 0``.
    alibi_slopes: f32 ``[Hq]`` or ``[B, Hq]``: s - slope * |i + Lk_b - Lq_b - j|.
    return_lse: also return the f32 log-sum-exp ``[Hq, total_q]``
        (FlashAttention's varlen layout).
    threads: as attn.sdpa's.

    Returns out ``[total_q, Hq, Dv]`` of q's dtype (and lse). Rows past
    cu_seqlens_q[B], and sequences without keys, give out 0 and lse -inf.
    numpy arrays or torch tensors in, the same kind out.
    """
    backend = _tensors.backend_of(q)
    window, softcap = _sdpa.score_options(window, softcap, _WHO)
    return_lse = _sdpa.flag(return_lse, "return_lse", _WHO)
    if isinstance(causal, bool) and causal:
        raise ValueError(f"{_WHO}: causal must be None, 'top_left' or "
                         f"'bottom_right' (True is ambiguous: torch's "
                         f"is_causal is 'top_left', FlashAttention's causal "
                         f"'bottom_right')")
    if not (causal is None or causal is False or (
            isinstance(causal, str) and causal in _CAUSAL)):
        raise ValueError(f"{_WHO}: causal must be None, 'top_left' or "
                         f"'bottom_right', got {_sdpa.show(causal)}")
    scale = _sdpa.check_scale(scale, _WHO)
    target, q, k, v = _sdpa.prepare_inputs(backend, q, k, v, _WHO)
    for name, x in (("query", q), ("key", k), ("value", v)):
        if len(x.shape) != 3:
            raise _err(f"{name} to have rank 3 ([total, heads, head dim]), "
                       f"but got rank {len(x.shape)}")
    dt = _sdpa.element_type(backend, q, k, v, _WHO)
    (total_q, hq, d), (total_k, hkv, dk), dv = q.shape, k.shape, v.shape[2]
    for name, got, ref, want in (("key dim 2", dk, "query dim 2", d),
                                 ("value dim 0", v.shape[0], "key dim 0",
                                  total_k),
                                 ("value dim 1", v.shape[1], "key dim 1",
                                  hkv)):
        if got != want:
            raise _err(f"{name} ({got}) to equal {ref} ({want})")
    if hkv <= 0 or hq % hkv:
        raise _err(f"query heads (query dim 1: {hq}) to be a positive "
                   f"multiple of key/value heads (key dim 1: {hkv})")
    if d <= 0 or dv <= 0:
        raise _err(f"positive head dims, but got query dim 2 ({d}) and value "
                   f"dim 2 ({dv})")
    cq, host_q = _offsets(backend, target, cu_seqlens_q, "cu_seqlens_q",
                          total_q)
    ck, host_k = _offsets(backend, target, cu_seqlens_k, "cu_seqlens_k",
                          total_k)
    if host_k.size != host_q.size:
        raise _err(f"cu_seqlens_k dim 0 ({host_k.size}) to equal "
                   f"cu_seqlens_q dim 0 ({host_q.size})")
    b = host_q.size - 1
    _max_seqlen(max_seqlen_q, np.diff(host_q), "max_seqlen_q", "query")
    _max_seqlen(max_seqlen_k, np.diff(host_k), "max_seqlen_k", "key")
    alibi, sl = "none", None
    if alibi_slopes is not None:
        alibi_slopes = _sdpa.from_sequence(backend, alibi_slopes,
                                           "alibi_slopes", "f32", q, _WHO)
        alibi = "h" if len(getattr(alibi_slopes, "shape", ())) == 1 else "bh"
        shape = (hq,) if alibi == "h" else (b, hq)
        sl = _sdpa.aux_operand(backend, target, alibi_slopes, "alibi_slopes",
                               "f32", [(hq,), (b, hq)], shape, q, _WHO)
        _sdpa.check_base2_range(backend.to_host(sl), "alibi_slopes", _WHO)

    out_shape, lse_shape = (total_q, hq, dv), (hq, total_q)
    if total_q == 0 or total_k == 0 or b == 0:
        # Nothing to run (the ABI's sizes are >= 1): out 0, lse -inf.
        out = backend.full(out_shape, 0, dt, q)
        if return_lse:
            return out, backend.full(lse_shape, float("-inf"), "f32", q)
        return out

    threads, openmp, chip = _sdpa.run_options(backend, target, q, threads,
                                              _WHO)
    c = causal or "none"
    ckey = ("sdpa_varlen", target, dt, hq, hkv, d, dv, c, scale,
            bool(return_lse), openmp, chip, window, softcap, alibi)
    # One sequence of one row: every size the library takes is dynamic.
    kernel = _sdpa.cached_kernel(
        ckey, lambda: (f"hq={hq},hkv={hkv},d={d},dv={dv},seqlens_q=1,"
                       f"seqlens_k=1,dtype={dt},causal={c},dynamic=1" +
                       _sdpa.variant_spec(window, softcap, scale, False,
                                          alibi if sl is not None else None,
                                          return_lse)),
        target, openmp, chip)

    args = [q, k, v, cq, ck] + ([sl] if sl is not None else [])
    results = [backend.empty(out_shape, dt, q)]
    if return_lse:
        results.append(backend.empty(lse_shape, "f32", q))
    _call(kernel, [backend.pointer(x) for x in args + results],
          [tuple(x.shape) for x in args + results], backend.stream(q), threads)
    return tuple(results) if return_lse else results[0]
