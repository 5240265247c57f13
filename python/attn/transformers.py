"""attn as an attention implementation of Hugging Face transformers.

    import attn.transformers
    attn.transformers.register()                 # adds "attn" (once)
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="attn")
    model.generate(...)                          # attention runs attn's kernels
    attn.transformers.stats()                    # calls and fallbacks by reason

register() adds the function to transformers' AttentionInterface and
transformers' SDPA mask builder (boolean 4-D masks, or none where torch's
is_causal would do) to its AttentionMaskInterface under the same name. Each
call goes to the custom op torch.ops.attn.sdpa (attn.torch: forward, and
backward through autograd), with one library for all sequence lengths
(attn.sdpa's dynamic=True), so prefills of any length compile once, and a
decode step (one query) to a static library (which has the decode path)
for the KV cache rounded up to a multiple of DECODE_BUCKET (256) keys, its
padding hidden by key lengths, so generate() compiles once per 256 tokens:

- scale: the module's ``scaling``; grouped-query heads are read in place
  (the op's GQA), never repeated.
- masks: a boolean mask that is exactly causal (top-left, or bottom-right
  with a KV cache) and/or a sliding window (the model's ``sliding_window``:
  keys i - sliding_window < j <= i) and/or right padding becomes the op's
  causal, window and key_lengths, with no mask tensor; any other mask (left
  padding in batched generate(), custom 4-D masks) is passed as the op's
  mask. Under autograd a window or padding is passed as the mask, which the
  backward (attn.sdpa_grad) takes.
- softcap: the model's ``attn_logit_softcapping`` (Gemma 2), the op's
  softcap.

What attn does not do goes to transformers' own code, counted by reason in
stats() and logged once per reason (logger "attn"): dropout > 0 (training
mode with attention dropout), output_attentions, a mask that requires grad
(position biases being trained), a softcap under autograd
(the backward has none) or on a CUDA device under autograd (the backward is
CPU-only), element types other than f32/f16/bf16, other devices, and masks
that are not tensors. The fallback is transformers' "sdpa", or the model's
own eager attention where sdpa cannot (softcap, attention weights).
"""

import collections
import logging
import sys
import weakref

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import (
    create_position_bias_mask, sdpa_attention_forward)
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from . import torch as _attn_torch  # noqa: F401  (registers torch.ops.attn)

_log = logging.getLogger("attn")
_SUPPORTED = (torch.float32, torch.float16, torch.bfloat16)

_stats = {"calls": 0, "fallbacks": collections.Counter()}


def register(name="attn"):
    """Registers attn under `name` in transformers' attention and mask
    registries; models then take ``attn_implementation=name``. Returns
    name."""
    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, sdpa_mask)
    return name


def stats():
    """{"calls": n, "fallbacks": {reason: n}}: calls that ran attn and those
    that went to transformers' attention, since the last reset_stats()."""
    return {"calls": _stats["calls"],
            "fallbacks": dict(_stats["fallbacks"])}


def reset_stats():
    _stats["calls"] = 0
    _stats["fallbacks"].clear()


class Plan:
    """How one mask maps to attn.sdpa: causal alignment (or None), window
    (left, right) (or None), key lengths (int32 [B]) and the mask left to
    pass (or None)."""

    def __init__(self, causal=None, window=None, key_lengths=None, mask=None):
        self.causal = causal
        self.window = window
        self.key_lengths = key_lengths
        self.mask = mask

    def __repr__(self):
        kl = None if self.key_lengths is None else self.key_lengths.tolist()
        return (f"Plan(causal={self.causal}, window={self.window}, "
                f"key_lengths={kl}, mask={self.mask is not None})")


def _fit_structure(mask, batch, sliding_window):
    """The Plan that reproduces the boolean mask [B or 1, 1, Lq, Lk] exactly
    with causal, window and right-padding key lengths and no mask tensor,
    or None where none does."""
    if mask.dim() != 4 or mask.shape[1] != 1:
        return None
    m = mask[:, 0]
    lq, lk = m.shape[-2:]
    j = torch.arange(lk, device=m.device)
    i = torch.arange(lq, device=m.device)[:, None]
    # Right padding: no query sees a key past len_b (the last key seen;
    # the comparison below checks the keys before it).
    seen = m.any(dim=1)
    lens = torch.where(seen.any(-1), lk - seen.flip(-1).int().argmax(-1), 0)
    padded = bool((lens != lk).any())
    # With key lengths attn aligns bottom-right causality and windows to
    # each batch's own length, transformers to Lk: only top-left then.
    aligns = ["top_left"] if padded else ["top_left", "bottom_right"]
    windows = [None] + ([int(sliding_window) - 1] if sliding_window else [])
    candidates = [(None, None)] + [(c, w) for c in aligns for w in windows]
    for causal, left in candidates:
        if causal is None:
            visible = torch.ones(lq, lk, dtype=torch.bool, device=m.device)
        else:
            diag = i + (lk - lq if causal == "bottom_right" else 0)
            visible = j <= diag
            if left is not None:
                visible = visible & (j >= diag - left)
        if padded:
            visible = visible[None] & (j < lens[:, None, None])
        if torch.equal(torch.broadcast_to(visible, m.shape), m):
            kl = None
            if padded:
                kl = lens.to(torch.int32).expand(batch).contiguous()
            return Plan(causal, None if left is None else (left, 0), kl)
    return None


# The plans of the last masks seen: a model passes the same mask tensor to
# each of its layers, so each is analysed once per forward.
_plans = collections.OrderedDict()


def _plan_for(mask, batch, sliding_window):
    try:
        version = mask._version
    except RuntimeError:  # an inference tensor keeps no version counter
        version = None
    key = (id(mask), version, batch, sliding_window)
    hit = _plans.get(key)
    if hit is not None and hit[0]() is mask:
        _plans.move_to_end(key)
        return hit[1]
    plan = _fit_structure(mask, batch, sliding_window)
    _plans[key] = (weakref.ref(mask), plan)
    while len(_plans) > 8:
        _plans.popitem(last=False)
    return plan


def plan(attention_mask, query, key, is_causal, sliding_window=None,
         grad=False):
    """The Plan for one call: `attention_mask` as transformers passes it
    (None, a boolean or float 4-D tensor), query [B, Hq, Lq, D], key
    [B, Hkv, Lk, D]; `grad`: the call is differentiated (only causal and
    masks then, what the backward takes)."""
    lq = query.shape[2]
    if attention_mask is None:
        # transformers' sdpa: is_causal only for more than one query, and
        # top-left (an empty static cache's unused keys come after Lq).
        return Plan("top_left" if is_causal and lq > 1 else None)
    if attention_mask.dtype != torch.bool:
        return Plan(mask=attention_mask.to(query.dtype))
    fitted = None
    if not torch.compiler.is_compiling():
        fitted = _plan_for(attention_mask, query.shape[0], sliding_window)
    if fitted is None:
        return Plan(mask=_squeeze_broadcast(attention_mask))
    if grad and (fitted.window is not None or
                 fitted.key_lengths is not None):
        return Plan(fitted.causal, mask=_squeeze_broadcast(attention_mask))
    return fitted


def _squeeze_broadcast(mask):
    """An expanded mask (stride 0) as its one stored slice, so that attn
    does not copy the broadcast."""
    index = tuple(slice(0, 1) if st == 0 and n > 1 else slice(None)
                  for n, st in zip(mask.shape, mask.stride()))
    return mask[index]


# Decode steps (one query) run a static library for the keys rounded up to
# a multiple of this: the dynamic library has no decode path (a static Lq
# selects it), and one library per length would compile at every step.
DECODE_BUCKET = 256


def _decode_bucket(key, value, p):
    """key and value padded with zero rows to a multiple of DECODE_BUCKET,
    and the plan with key lengths that hide the padding (bottom-right
    causality and windows align to the key lengths, so they are unchanged;
    the mask is padded too)."""
    lk = key.shape[2]
    pad = -lk % DECODE_BUCKET
    lengths = p.key_lengths
    if lengths is None:
        lengths = torch.full((key.shape[0],), lk, dtype=torch.int32,
                             device=key.device)
    mask = p.mask
    if pad:
        key = torch.nn.functional.pad(key, (0, 0, 0, pad))
        value = torch.nn.functional.pad(value, (0, 0, 0, pad))
        if mask is not None and mask.shape[-1] != 1:
            mask = torch.nn.functional.pad(mask, (0, pad))
    return key, value, Plan(p.causal, p.window, lengths, mask)


def _fallback_reason(query, key, dropout, softcap, attention_mask, kwargs):
    if dropout:
        return "dropout"
    if kwargs.get("output_attentions"):
        return "output_attentions"
    if query.dtype not in _SUPPORTED:
        return f"dtype {query.dtype}"
    if query.device.type not in ("cpu", "cuda"):
        return f"device {query.device.type}"
    if attention_mask is not None and not isinstance(attention_mask,
                                                     torch.Tensor):
        return "mask type " + type(attention_mask).__name__
    grad = torch.is_grad_enabled() and any(
        t.requires_grad for t in (query, key))
    if (torch.is_grad_enabled() and attention_mask is not None
            and attention_mask.requires_grad):
        return "mask requires grad"  # learned biases: attn gives no gradient
    if grad and softcap is not None:
        return "softcap under autograd"
    if grad and query.device.type != "cpu":
        return "autograd on " + query.device.type
    return None


def _count_fallback(reason):
    if not _stats["fallbacks"][reason]:
        _log.info("attn.transformers: falling back to transformers' "
                  "attention (%s)", reason)
    _stats["fallbacks"][reason] += 1


def _eager(module, query, key, value, attention_mask, dropout, scaling,
           is_causal, kwargs):
    """The model's own eager attention (its module's
    eager_attention_forward), which takes an additive float mask."""
    eager = getattr(sys.modules[type(module).__module__],
                    "eager_attention_forward", None)
    if eager is None:
        raise NotImplementedError(
            f"attn.transformers: {type(module).__name__} needs eager "
            "attention, but its module has no eager_attention_forward")
    lq, lk = query.shape[2], key.shape[2]
    if attention_mask is None and is_causal and lq > 1:
        attention_mask = torch.ones(lq, lk, dtype=torch.bool,
                                    device=query.device).tril()[None, None]
    if attention_mask is not None and attention_mask.dtype == torch.bool:
        attention_mask = torch.zeros(
            attention_mask.shape, dtype=query.dtype,
            device=query.device).masked_fill(
                ~attention_mask, torch.finfo(query.dtype).min)
    return eager(module, query, key, value, attention_mask, dropout=dropout,
                 scaling=scaling, **kwargs)


def attention_forward(module, query, key, value, attention_mask,
                      dropout=0.0, scaling=None, sliding_window=None,
                      softcap=None, is_causal=None, position_bias=None,
                      **kwargs):
    """transformers' attention interface: query [B, Hq, Lq, D], key and
    value [B, Hkv, Lk, D(v)] -> (out [B, Lq, Hq, Dv], None)."""
    if is_causal is None:
        is_causal = getattr(module, "is_causal", True)
    if position_bias is not None:  # T5-style biases: one float mask
        attention_mask = create_position_bias_mask(
            position_bias, attention_mask, is_causal and query.shape[2] > 1,
            query, key)
        is_causal = False
    reason = _fallback_reason(query, key, dropout, softcap, attention_mask,
                              kwargs)
    if reason is not None:
        _count_fallback(reason)
        if softcap is not None or kwargs.get("output_attentions"):
            return _eager(module, query, key, value, attention_mask, dropout,
                          scaling, is_causal, dict(kwargs, softcap=softcap))
        return sdpa_attention_forward(module, query, key, value,
                                      attention_mask, dropout=dropout,
                                      scaling=scaling, is_causal=is_causal,
                                      **kwargs)
    grad = torch.is_grad_enabled() and any(
        t.requires_grad for t in (query, key, value))
    p = plan(attention_mask, query, key, is_causal, sliding_window, grad)
    dynamic = True
    if query.shape[2] == 1 and not grad and not torch.compiler.is_compiling():
        key, value, p = _decode_bucket(key, value, p)
        dynamic = False
    out = torch.ops.attn.sdpa(
        query, key, value, p.mask, p.causal is not None, scaling,
        query.shape[1] != key.shape[1], p.causal or "top_left",
        None if p.window is None else list(p.window), softcap, p.key_lengths,
        None, dynamic)
    _stats["calls"] += 1
    return out.transpose(1, 2).contiguous(), None
