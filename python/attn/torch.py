"""attn for PyTorch: the custom ops ``torch.ops.attn.sdpa`` (and
``attn.sdpa_lse``, which also returns the log-sum-exp; ``attn.sdpa_varlen``,
packed sequences with their lse) and a context manager that routes
``F.scaled_dot_product_attention`` to it.

    import attn.torch
    out = torch.ops.attn.sdpa(q, k, v, None, True, None, False, "top_left")
    with attn.torch.use_attn():          # every F.scaled_dot_product_attention
        y = model(x)                     # call inside goes to attn

The op has a fake (meta) implementation, so torch.compile traces it as one
opaque node of the graph. The ops are differentiable on the CPU: the
backward of sdpa and sdpa_lse (rank-4 tensors) is attn.sdpa_grad, as the
custom op attn::sdpa_backward (so AOTAutograd traces it too), that of
sdpa_varlen attn.sdpa_varlen_grad (docs/op.md), each compiled for the shapes
at hand. ``sdpa_lse`` keeps the forward's lse for it; ``sdpa`` recomputes it (one
more forward) since its result does not include it.
CPU tensors are passed by address when contiguous (copied otherwise); CUDA
tensors go to a cuda library on the current stream (untested: it needs a
GPU, which the machines attn is built on do not have).
"""

import contextlib
from typing import Optional

import torch
import torch.nn.functional as F

from . import _grad, _sdpa, _varlen


@torch.library.custom_op("attn::sdpa", mutates_args=())
def sdpa(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
         attn_mask: Optional[torch.Tensor] = None, is_causal: bool = False,
         scale: Optional[float] = None, enable_gqa: bool = False,
         causal: str = "top_left", window: Optional[list[int]] = None,
         softcap: Optional[float] = None,
         key_lengths: Optional[torch.Tensor] = None,
         alibi_slopes: Optional[torch.Tensor] = None,
         dynamic: bool = False) -> torch.Tensor:
    """attn.sdpa on torch tensors, as a torch custom op (the variants and
    dynamic as attn.sdpa's keywords of the same names)."""
    return _sdpa.sdpa(query, key, value, attn_mask, is_causal, scale,
                      enable_gqa, causal=causal, window=window,
                      softcap=softcap, key_lengths=key_lengths,
                      alibi_slopes=alibi_slopes, dynamic=dynamic)


@sdpa.register_fake
def _sdpa_fake(query, key, value, attn_mask=None, is_causal=False, scale=None,
               enable_gqa=False, causal="top_left", window=None, softcap=None,
               key_lengths=None, alibi_slopes=None, dynamic=False):
    return query.new_empty(tuple(query.shape[:-1]) + (value.shape[-1],))


@torch.library.custom_op("attn::sdpa_lse", mutates_args=())
def sdpa_lse(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
             attn_mask: Optional[torch.Tensor] = None, is_causal: bool = False,
             scale: Optional[float] = None, enable_gqa: bool = False,
             causal: str = "top_left", window: Optional[list[int]] = None,
             softcap: Optional[float] = None,
             key_lengths: Optional[torch.Tensor] = None,
             alibi_slopes: Optional[torch.Tensor] = None,
             dynamic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """attn.sdpa(..., return_lse=True) as a torch custom op: (out, lse)."""
    return _sdpa.sdpa(query, key, value, attn_mask, is_causal, scale,
                      enable_gqa, causal=causal, return_lse=True,
                      window=window, softcap=softcap, key_lengths=key_lengths,
                      alibi_slopes=alibi_slopes, dynamic=dynamic)


@sdpa_lse.register_fake
def _sdpa_lse_fake(query, key, value, attn_mask=None, is_causal=False,
                   scale=None, enable_gqa=False, causal="top_left",
                   window=None, softcap=None, key_lengths=None,
                   alibi_slopes=None, dynamic=False):
    out = query.new_empty(tuple(query.shape[:-1]) + (value.shape[-1],))
    return out, query.new_empty(tuple(query.shape[:-1]), dtype=torch.float32)


@torch.library.custom_op("attn::sdpa_backward", mutates_args=())
def sdpa_backward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                  out: torch.Tensor, lse: torch.Tensor, d_out: torch.Tensor,
                  attn_mask: Optional[torch.Tensor] = None,
                  is_causal: bool = False, scale: Optional[float] = None,
                  causal: str = "top_left"
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """attn.sdpa_grad (docs/op.md) as a torch custom op: (d_query, d_key,
    d_value) for the gradient d_out of attn::sdpa's result, given its out
    and lse. An op of its own so that AOTAutograd (torch.compile) traces the
    backward as one opaque node."""
    return tuple(_grad.sdpa_backward(query, key, value, out, lse, d_out,
                                     attn_mask, is_causal, scale,
                                     causal=causal))


@sdpa_backward.register_fake
def _sdpa_backward_fake(query, key, value, out, lse, d_out, attn_mask=None,
                        is_causal=False, scale=None, causal="top_left"):
    return (query.new_empty(query.shape), key.new_empty(key.shape),
            value.new_empty(value.shape))


def _setup(ctx, inputs, output):
    query, key, value, attn_mask, is_causal, scale, _, causal = inputs[:8]
    # attn.sdpa_grad has no window, softcap, key lengths or ALiBi.
    ctx.variants = [name for name, x in zip(
        ("window", "softcap", "key_lengths", "alibi_slopes"), inputs[8:12])
        if x is not None]
    out, lse = output if isinstance(output, tuple) else (output, None)
    ctx.save_for_backward(query, key, value, attn_mask, out, lse)
    ctx.options = (is_causal, scale, causal)
    ctx.enable_gqa, ctx.dynamic = inputs[6], inputs[12]


def _backward(ctx, d_out, d_lse=None):
    query, key, value, attn_mask, out, lse = ctx.saved_tensors
    if ctx.variants:
        raise NotImplementedError(
            "attn: the backward (attn.sdpa_grad) does not take "
            + ", ".join(ctx.variants))
    if d_lse is not None and bool((d_lse != 0).any()):
        raise NotImplementedError(
            "attn: the backward does not take a gradient of the lse")
    is_causal, scale, causal = ctx.options
    if lse is None:  # attn::sdpa: its lse was not kept
        _, lse = torch.ops.attn.sdpa_lse(
            query, key, value, attn_mask, is_causal, scale, ctx.enable_gqa,
            causal, None, None, None, None, ctx.dynamic)
    grads = torch.ops.attn.sdpa_backward(query, key, value, out, lse, d_out,
                                         attn_mask, is_causal, scale, causal)
    return (*grads, None, None, None, None, None, None, None, None, None,
            None)


torch.library.register_autograd("attn::sdpa", _backward, setup_context=_setup)
torch.library.register_autograd("attn::sdpa_lse", _backward,
                                setup_context=_setup)


@torch.library.custom_op("attn::sdpa_varlen", mutates_args=())
def sdpa_varlen(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor,
                scale: Optional[float] = None, causal: Optional[str] = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """attn.sdpa_varlen(..., return_lse=True) as a torch custom op: (out
    [total_q, Hq, Dv], lse [Hq, total_q]), differentiable on the CPU
    (attn.sdpa_varlen_grad) with respect to query, key and value."""
    return _varlen.sdpa_varlen(query, key, value, cu_seqlens_q, cu_seqlens_k,
                               scale=scale, causal=causal, return_lse=True)


@sdpa_varlen.register_fake
def _sdpa_varlen_fake(query, key, value, cu_seqlens_q, cu_seqlens_k,
                      scale=None, causal=None):
    total_q, hq = query.shape[0], query.shape[1]
    out = query.new_empty((total_q, hq, value.shape[-1]))
    return out, query.new_empty((hq, total_q), dtype=torch.float32)


def _setup_varlen(ctx, inputs, output):
    query, key, value, cu_q, cu_k, scale, causal = inputs
    ctx.save_for_backward(query, key, value, cu_q, cu_k, *output)
    ctx.options = dict(scale=scale, causal=causal)


def _backward_varlen(ctx, d_out, d_lse=None):
    query, key, value, cu_q, cu_k, out, lse = ctx.saved_tensors
    if d_lse is not None and bool((d_lse != 0).any()):
        raise NotImplementedError(
            "attn: the backward does not take a gradient of the lse")
    grads = _grad.sdpa_varlen_backward(query, key, value, out, lse, d_out,
                                       cu_q, cu_k, **ctx.options)
    return (*grads, None, None, None, None)


torch.library.register_autograd("attn::sdpa_varlen", _backward_varlen,
                                setup_context=_setup_varlen)


_SUPPORTED = (torch.float32, torch.float16, torch.bfloat16)


class _Swap:
    """What use_attn() yields: how many calls went to attn and how many fell
    back to torch (dropout, autograd, unsupported dtype or device)."""

    def __init__(self):
        self.calls = 0
        self.fallbacks = 0


@contextlib.contextmanager
def use_attn(causal="top_left"):
    """Routes torch.nn.functional.scaled_dot_product_attention to attn.

    Applies to code that looks the function up as ``F.scaled_dot_product_attention``
    (torch's own nn.MultiheadAttention does) while the context is active.
    Calls attn cannot take (dropout_p > 0, tensors that require grad under
    autograd, other dtypes or devices) go to torch's function unchanged.
    causal: the alignment used for is_causal=True ("top_left" is torch's).
    """
    original = F.scaled_dot_product_attention
    swap = _Swap()

    def replacement(query, key, value, attn_mask=None, dropout_p=0.0,
                    is_causal=False, scale=None, enable_gqa=False):
        grad = torch.is_grad_enabled() and any(
            t is not None and t.requires_grad
            for t in (query, key, value, attn_mask))
        if (dropout_p or grad or query.dtype not in _SUPPORTED
                or query.device.type not in ("cpu", "cuda")):
            swap.fallbacks += 1
            return original(query, key, value, attn_mask=attn_mask,
                            dropout_p=dropout_p, is_causal=is_causal,
                            scale=scale, enable_gqa=enable_gqa)
        swap.calls += 1
        return torch.ops.attn.sdpa(query, key, value, attn_mask, is_causal,
                                   scale, enable_gqa, causal)

    F.scaled_dot_product_attention = replacement
    try:
        yield swap
    finally:
        F.scaled_dot_product_attention = original
