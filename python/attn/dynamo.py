"""attn as a torch.compile backend: ``torch.compile(model, backend="attn")``.

    compiled = torch.compile(model, backend="attn")   # no import needed
    y = compiled(x)                  # its SDPA calls ran torch.ops.attn.sdpa
    attn.dynamo.stats()              # {"replaced": n, "fallbacks": {...}}

The package registers the backend name "attn" with torch._dynamo through the
entry point group ``torch_dynamo_backends`` (python/pyproject.toml), so
torch.compile finds it once attn is installed (``attn.dynamo.register()``
does it by hand for a package on sys.path but not installed). The backend rewrites each graph dynamo captures: every call of
``F.scaled_dot_product_attention`` (``torch._C._nn.scaled_dot_product_attention``)
or of the aten op ``aten.scaled_dot_product_attention`` becomes
``torch.ops.attn.sdpa`` with the same query, key, value, mask (boolean, or
float of the query's type), is_causal (torch's top-left alignment), scale and
enable_gqa, with one library for all sequence lengths (``dynamic``); then
Inductor compiles the graph as ``backend="inductor"`` would (attn's op is an
opaque call in it; torch.compile's ``mode`` and ``options`` are Inductor's).
``backend="attn_eager"`` rewrites the same way and runs the graph without
Inductor. ``rewrite(gm)`` applies the same rewrite to any FX graph
(``torch.export``'s ``ep.module()``).

Calls left to torch's SDPA, counted by reason in stats() and logged (logger
"attn", one line per graph): dropout_p other than a literal 0, is_causal or
scale that are not constants, masks of another element type, element types
other than f32/f16/bf16, devices other than cpu and cuda, a mask that
requires grad (attn's backward gives none), and autograd where attn's
backward (attn::sdpa_backward, AOTAutograd traces it) cannot run: CUDA
tensors, ranks other than 4. Counts are per SDPA call site of each compiled
graph (a recompile counts again), not per run.
"""

import collections
import inspect
import logging

import torch
import torch.nn.functional as F

from . import torch as _attn_torch  # noqa: F401  (registers torch.ops.attn)

_log = logging.getLogger("attn")
_SUPPORTED = (torch.float32, torch.float16, torch.bfloat16)
_TARGETS = (F.scaled_dot_product_attention,
            torch.ops.aten.scaled_dot_product_attention.default)

_stats = {"replaced": 0, "fallbacks": collections.Counter()}


def _signature(query, key, value, attn_mask=None, dropout_p=0.0,
               is_causal=False, scale=None, enable_gqa=False):
    """F.scaled_dot_product_attention's (and the aten op's) arguments."""


_SIGNATURE = inspect.signature(_signature)


def stats():
    """{"replaced": n, "fallbacks": {reason: n}}: SDPA calls of compiled
    graphs that became attn.sdpa and those left to torch, since the last
    reset_stats()."""
    return {"replaced": _stats["replaced"],
            "fallbacks": dict(_stats["fallbacks"])}


def reset_stats():
    _stats["replaced"] = 0
    _stats["fallbacks"].clear()


def _value(node):
    """The fake tensor (or constant) an FX argument stands for."""
    if isinstance(node, torch.fx.Node):
        return node.meta.get("example_value", node.meta.get("val"))
    return node


def _fallback_reason(args):
    q = _value(args["query"])
    if not isinstance(q, torch.Tensor):
        return "no example value"
    if args["dropout_p"] != 0.0 or isinstance(args["dropout_p"],
                                              torch.fx.Node):
        return "dropout"
    for name in ("is_causal", "enable_gqa"):
        if not isinstance(args[name], bool):
            return f"{name} not a constant"
    scale = args["scale"]
    if scale is not None and not isinstance(scale, (int, float)):
        return "scale not a constant"
    if q.dtype not in _SUPPORTED:
        return f"dtype {q.dtype}"
    if q.device.type not in ("cpu", "cuda"):
        return f"device {q.device.type}"
    mask = _value(args["attn_mask"])
    if mask is not None and mask.dtype not in (torch.bool, q.dtype):
        return f"mask dtype {mask.dtype}"
    if mask is not None and mask.requires_grad:
        return "mask requires grad"  # attn's backward has no mask gradient
    if any(isinstance(t, torch.Tensor) and t.requires_grad
           for t in (q, _value(args["key"]), _value(args["value"]))):
        # attn.sdpa_grad: CPU and [B, H, L, D] tensors
        if q.device.type != "cpu":
            return "autograd on " + q.device.type
        if q.dim() != 4:
            return f"autograd on rank {q.dim()}"
    return None


def rewrite(gm):
    """Replaces the SDPA calls of the torch.fx.GraphModule gm that attn can
    take by torch.ops.attn.sdpa (in place; recompiles gm). Returns
    (replaced, {reason: count of calls left to torch})."""
    replaced, left = 0, collections.Counter()
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in _TARGETS:
            continue
        args = _SIGNATURE.bind(*node.args, **node.kwargs)
        args.apply_defaults()
        args = args.arguments
        reason = _fallback_reason(args)
        if reason is not None:
            left[reason] += 1
            continue
        with gm.graph.inserting_before(node):
            new = gm.graph.call_function(
                torch.ops.attn.sdpa.default,
                (args["query"], args["key"], args["value"],
                 args["attn_mask"], args["is_causal"],
                 None if args["scale"] is None else float(args["scale"]),
                 args["enable_gqa"], "top_left", None, None, None, None,
                 True))
        new.meta.update(node.meta)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        replaced += 1
    if replaced:
        gm.recompile()
    return replaced, left


def _rewrite_counted(gm):
    replaced, left = rewrite(gm)
    _stats["replaced"] += replaced
    _stats["fallbacks"].update(left)
    if replaced or left:
        _log.info("attn.dynamo: %d SDPA call(s) to attn.sdpa, %d left to "
                  "torch%s", replaced, sum(left.values()),
                  "".join(f"; {r}: {n}" for r, n in sorted(left.items())))


def attn_backend(gm, example_inputs, mode=None, options=None, name=None):
    """The backend "attn": rewrite(gm), then Inductor (torch.compile's mode
    and options are Inductor's)."""
    _rewrite_counted(gm)
    return torch._TorchCompileInductorWrapper(mode, options, None)(
        gm, example_inputs)


def attn_eager_backend(gm, example_inputs, **kwargs):
    """The backend "attn_eager": rewrite(gm), then the graph runs as it is
    (no Inductor: quick to compile, for debugging and tests)."""
    _rewrite_counted(gm)
    return gm.forward


def register():
    """Registers the backends "attn" and "attn_eager" with torch._dynamo
    where the package's
    entry point has not (attn used from a checkout, not installed). Safe
    to call again."""
    from torch._dynamo.backends.registry import _COMPILER_FNS, \
        register_backend
    for name, fn in (("attn", attn_backend),
                     ("attn_eager", attn_eager_backend)):
        if name not in _COMPILER_FNS:
            register_backend(fn, name=name)
