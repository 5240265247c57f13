"""The backward pass of attn.sdpa (and attn.sdpa_varlen) on torch tensors:
attn.sdpa_grad (attn.sdpa_varlen_grad; docs/op.md) compiled by attn-compile
for the concrete shapes and run on the CPU. Used by the autograd formulas of
attn.torch's custom ops.

Rank-4 tensors only ([B, H, L, D], as torch's SDPA takes them); masks of
rank 4 whose dims are 1 or the full size; CPU tensors. Other inputs raise
NotImplementedError rather than compute something else."""

from . import _kernel, _sdpa, _tensors

_DTYPES = {"f32": "f32", "f16": "f16", "bf16": "bf16"}


def _ttype(shape, dtype):
    return "tensor<" + "x".join(str(s) for s in shape) + f"x{dtype}>"


def attributes(scale, causal):
    """The op's attribute dictionary (with its leading space) for a scale
    (None: the default) and a causal alignment ("none": no band), "" when
    neither is given."""
    attrs = []
    if scale is not None:
        attrs.append(f"scale = {float(scale)!r} : f32")
    if causal != "none":
        attrs.append(f"causal = #attn.causal<{causal}>")
    return (" {" + ", ".join(attrs) + "}") if attrs else ""


def _module(qs, ks, vs, dt, mask_type, causal, scale):
    """The .mlir text of @sdpa_grad for these static shapes."""
    os_ = qs[:-1] + (vs[-1],)
    types = [_ttype(qs, dt), _ttype(ks, dt), _ttype(vs, dt), _ttype(os_, dt),
             _ttype(qs[:-1], "f32"), _ttype(os_, dt)]
    args = [f"%a{i}: {t}" for i, t in enumerate(types)]
    operands = ", ".join(f"%a{i}" for i in range(6))
    mask = ""
    if mask_type is not None:
        args.append(f"%m: {mask_type}")
        mask = " mask(%m)"
        types.append(mask_type)
    attr = attributes(scale, causal)
    results = ", ".join(types[:3])
    return (f"func.func @sdpa_grad({', '.join(args)}) -> ({results}) {{\n"
            f"  %dq, %dk, %dv = attn.sdpa_grad {operands}{mask}{attr}\n"
            f"      : {', '.join(types)} -> {results}\n"
            f"  return %dq, %dk, %dv : {results}\n}}\n")


def sdpa_backward(query, key, value, out, lse, d_out, attn_mask=None,
                  is_causal=False, scale=None, *, causal="top_left",
                  threads=None):
    """(d_query, d_key, d_value) of attn.sdpa for the gradient d_out of its
    result; out and lse are the forward's (attn.sdpa(..., return_lse=True))."""
    backend = _tensors.backend_of(query)
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError(
            "attn: the backward takes rank-4 [B, H, L, D] tensors")
    if query.device.type != "cpu":
        raise NotImplementedError("attn: the backward runs on the CPU only")
    dt = backend.dtype_name(query)
    if dt not in _DTYPES:
        raise NotImplementedError(f"attn: no backward for {dt}")
    mask_type = None
    tensors = [query, key, value, out, lse, d_out.to(query.dtype)]
    if attn_mask is not None:
        if attn_mask.dim() != 4:
            raise NotImplementedError(
                "attn: the backward takes a rank-4 mask (dims 1 or full)")
        mdt = "i1" if attn_mask.dtype == backend.torch.bool \
            else backend.dtype_name(attn_mask)
        mask_type = _ttype(tuple(attn_mask.shape), mdt)
        tensors.append(attn_mask)
    c = causal if is_causal else "none"
    if threads is None:
        threads = _sdpa.default_threads()
    openmp = int(threads) > 1
    text = _module(tuple(query.shape), tuple(key.shape), tuple(value.shape),
                   dt, mask_type, c, scale)
    kernel = _kernel.get_kernel(
        text, _kernel.compile_options("cpu", openmp=openmp or None),
        entry="sdpa_grad", key=("sdpa_grad", text, openmp))
    # The library's argument order is the function's: the mask comes last.
    return kernel(*[t.contiguous() for t in tensors], threads=int(threads))


def _varlen_module(qs, ks, vs, b, dt, causal, scale):
    """The .mlir text of @sdpa_grad (attn.sdpa_varlen_grad) for these static
    packed shapes and B sequences."""
    os_ = qs[:-1] + (vs[-1],)
    cu = _ttype((b + 1,), "i32")
    types = [_ttype(qs, dt), _ttype(ks, dt), _ttype(vs, dt), _ttype(os_, dt),
             _ttype((qs[1], qs[0]), "f32"), _ttype(os_, dt), cu, cu]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(8))
    attr = attributes(scale, causal)
    results = ", ".join(types[:3])
    return (f"func.func @sdpa_grad({args}) -> ({results}) {{\n"
            f"  %dq, %dk, %dv = attn.sdpa_varlen_grad {operands}{attr}\n"
            f"      : {', '.join(types)} -> {results}\n"
            f"  return %dq, %dk, %dv : {results}\n}}\n")


def sdpa_varlen_backward(query, key, value, out, lse, d_out, cu_seqlens_q,
                         cu_seqlens_k, causal=None, scale=None, *,
                         threads=None):
    """(d_query, d_key, d_value) of attn.sdpa_varlen for the gradient d_out
    of its result; out and lse ([Hq, total_q]) are the forward's. Packed
    rank-3 CPU tensors and int32 offsets, as the forward takes them."""
    backend = _tensors.backend_of(query)
    if query.device.type != "cpu":
        raise NotImplementedError("attn: the backward runs on the CPU only")
    dt = backend.dtype_name(query)
    if dt not in _DTYPES:
        raise NotImplementedError(f"attn: no backward for {dt}")
    if threads is None:
        threads = _sdpa.default_threads()
    openmp = int(threads) > 1
    b = int(cu_seqlens_q.shape[0]) - 1
    text = _varlen_module(tuple(query.shape), tuple(key.shape),
                          tuple(value.shape), b, dt, causal or "none", scale)
    kernel = _kernel.get_kernel(
        text, _kernel.compile_options("cpu", openmp=openmp or None),
        entry="sdpa_grad", key=("sdpa_varlen_grad", text, openmp))
    tensors = [query, key, value, out, lse, d_out.to(query.dtype),
               cu_seqlens_q, cu_seqlens_k]
    return kernel(*[t.contiguous() for t in tensors], threads=int(threads))
