"""attn.jax: attn's fused attention inside JAX programs (jax.jit, jax.grad,
jax.vmap), through XLA's FFI (docs/integrations.md).

``attn.jax.sdpa(q, k, v, causal=..., scale=..., mask=...)`` takes
jax.nn.dot_product_attention's layout: query ``[B, T, N, H]``, key and value
``[B, S, K, H]`` (``N % K == 0``: grouped-query heads), a bool mask
broadcastable to ``[B, N, T, S]`` (true: may attend). The forward pass is
attn.sdpa and the backward attn.sdpa_grad, each compiled by attn-compile for
the call's static shapes (cached in memory and on disk, as attn.sdpa's
kernels are) and run by one XLA FFI handler (attn/_jax_ffi.cc) that calls the
compiled entry point. The handler is compiled on first use with the system
C++ compiler against the installed jaxlib's headers (jax.ffi.include_dir())
into the package's cache: the wheel does not depend on jax, and the handler
always matches the jaxlib that loads it.
"""

import ctypes
import functools
import hashlib
import os
import subprocess
import threading

import jax
import jax.numpy as jnp
import numpy as np

from . import _build, _grad, _kernel, _sdpa

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "_jax_ffi.cc")
_TARGET = "attn_call"
_lock = threading.Lock()
_registered = set()
_handler = None

_DTYPES = {jnp.dtype(jnp.float32): "f32", jnp.dtype(jnp.float16): "f16",
           jnp.dtype(jnp.bfloat16): "bf16"}


def _platform():
    """The FFI platform of JAX's default backend: "cpu" or "CUDA"."""
    backend = jax.default_backend()
    if backend == "cpu":
        return "cpu"
    if backend in ("gpu", "cuda"):
        return "CUDA"
    raise NotImplementedError(f"attn.jax: no kernels for JAX's {backend} "
                              "backend (cpu and cuda only)")


def handler_library():
    """The compiled FFI handlers (attn/_jax_ffi.cc), built on first use into
    $ATTN_CACHE_DIR/jax-ffi/<hash of the source, the headers' path, jax's
    version and the compiler>/."""
    global _handler
    with _lock:
        if _handler is not None:
            return _handler
        include = jax.ffi.include_dir()
        cxx = os.environ.get("CXX", "c++")
        with open(_SOURCE, "rb") as f:
            source = f.read()
        key = hashlib.sha256(source + include.encode() + jax.__version__.encode()
                             + cxx.encode()).hexdigest()[:16]
        out_dir = os.path.join(_build.cache_dir(), "jax-ffi", key)
        path = os.path.join(out_dir, "libattn_jax_ffi.so")
        if not os.path.exists(path):
            os.makedirs(out_dir, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            cmd = [cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-w",
                   "-I", include, _SOURCE, "-o", tmp]
            try:
                subprocess.run(cmd, check=True, capture_output=True,
                               text=True)
            except FileNotFoundError:
                raise RuntimeError(f"attn.jax: no C++ compiler ({cxx}) to "
                                   "build the FFI handler; set $CXX") from None
            except subprocess.CalledProcessError as e:
                raise RuntimeError("attn.jax: building the FFI handler failed:"
                                   f" {' '.join(cmd)}\n{e.stderr}") from None
            os.replace(tmp, path)
        _handler = ctypes.CDLL(path)
        return _handler


def _register(platform):
    lib = handler_library()
    with _lock:
        if platform in _registered:
            return
        symbol = "AttnCallCpu" if platform == "cpu" else "AttnCallCuda"
        jax.ffi.register_ffi_target(
            _TARGET, jax.ffi.pycapsule(getattr(lib, symbol)),
            platform=platform)
        _registered.add(platform)


def _ttype(shape, dtype):
    return _grad._ttype(shape, dtype)


def _forward_module(qs, ks, vs, dt, mask_type, causal, scale):
    """@sdpa_fwd: attn.sdpa with its lse, for these static [B, H, L, D]
    shapes."""
    os_ = qs[:-1] + (vs[-1],)
    ls = qs[:-1]
    args = [f"%q: {_ttype(qs, dt)}", f"%k: {_ttype(ks, dt)}",
            f"%v: {_ttype(vs, dt)}"]
    types = [_ttype(qs, dt), _ttype(ks, dt), _ttype(vs, dt)]
    mask = ""
    if mask_type is not None:
        args.append(f"%m: {mask_type}")
        types.append(mask_type)
        mask = " mask(%m)"
    attr = _grad.attributes(scale, causal)
    results = f"{_ttype(os_, dt)}, {_ttype(ls, 'f32')}"
    return (f"func.func @sdpa_fwd({', '.join(args)}) -> ({results}) {{\n"
            f"  %o, %l = attn.sdpa %q, %k, %v{mask}{attr}\n"
            f"      : {', '.join(types)} -> {results}\n"
            f"  return %o, %l : {results}\n}}\n")


def _entry(text, entry, platform):
    """(entry address, attn_last_error address) of the kernel compiled from
    `text` (memory and disk cache: attn/_kernel.py)."""
    if platform == "cpu":
        threads = _sdpa.default_threads()
        options = _kernel.compile_options("cpu", openmp=(threads > 1) or None)
    else:
        cc = getattr(jax.devices()[0], "compute_capability", None)
        if not cc:
            raise NotImplementedError("attn.jax: the GPU's compute "
                                      "capability is unknown")
        options = _kernel.compile_options(
            "cuda", chip="sm_" + cc.replace(".", ""),
            cuda_toolkit=os.environ.get("ATTN_CUDA_TOOLKIT"))
    kernel = _kernel.get_kernel(text, options, entry=entry,
                                key=("jax", entry, text, tuple(options)))
    lib = kernel.entry.library.handle
    return (ctypes.cast(kernel.entry.fn, ctypes.c_void_p).value,
            ctypes.cast(lib.attn_last_error, ctypes.c_void_p).value)


@functools.lru_cache(maxsize=None)
def _entries(qs, ks, vs, dt, mask_type, causal, scale, platform):
    fwd = _entry(_forward_module(qs, ks, vs, dt, mask_type, causal, scale),
                 "sdpa_fwd", platform)
    bwd_text = _grad._module(qs, ks, vs, dt, mask_type, causal, scale)
    return fwd, bwd_text


@functools.lru_cache(maxsize=None)
def _backward_entry(text, platform):
    return _entry(text, "sdpa_grad", platform)


def _call(entry, results, *args):
    fn, last_error = entry
    return jax.ffi.ffi_call(_TARGET, results, vmap_method="sequential")(
        *args, fn=np.int64(fn), last_error=np.int64(last_error))


def _mask_type(mask):
    if mask is None:
        return None
    return _ttype(mask.shape, "i1")


@functools.partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def _sdpa_bhld(q, k, v, mask, causal, scale):
    out, _ = _forward(q, k, v, mask, causal, scale)
    return out


def _forward(q, k, v, mask, causal, scale):
    platform = _platform()
    _register(platform)
    dt = _DTYPES[jnp.dtype(q.dtype)]
    fwd, _ = _entries(q.shape, k.shape, v.shape, dt, _mask_type(mask), causal,
                      scale, platform)
    results = (jax.ShapeDtypeStruct(q.shape[:-1] + v.shape[-1:], q.dtype),
               jax.ShapeDtypeStruct(q.shape[:-1], jnp.float32))
    args = (q, k, v) if mask is None else (q, k, v, mask)
    return _call(fwd, results, *args)


def _fwd_rule(q, k, v, mask, causal, scale):
    out, lse = _forward(q, k, v, mask, causal, scale)
    return out, (q, k, v, mask, out, lse)


def _bwd_rule(causal, scale, saved, d_out):
    q, k, v, mask, out, lse = saved
    platform = _platform()
    dt = _DTYPES[jnp.dtype(q.dtype)]
    _, text = _entries(q.shape, k.shape, v.shape, dt, _mask_type(mask), causal,
                       scale, platform)
    bwd = _backward_entry(text, platform)
    results = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in (q, k, v))
    args = (q, k, v, out, lse, d_out.astype(q.dtype))
    if mask is not None:
        args += (mask,)
    dq, dk, dv = _call(bwd, results, *args)
    return dq, dk, dv, None


_sdpa_bhld.defvjp(_fwd_rule, _bwd_rule)


def sdpa(query, key, value, *, causal=None, scale=None, mask=None):
    """Attention as jax.nn.dot_product_attention computes it (its layout:
    query [B, T, N, H], key/value [B, S, K, H]), fused by attn.

    causal: None, True or "top_left" (key j visible to query i iff j <= i,
        jax's is_causal), or "bottom_right" (j <= i + S - T).
    scale: the scores' factor (default 1/sqrt(H)).
    mask: bool, broadcastable to [B, N, T, S]; true where a query may attend.
    A row with nothing visible gives 0. Differentiable in query, key and
    value (attn.sdpa_grad); under jax.vmap each mapped call runs on its own
    (the kernels are compiled for static shapes).
    """
    for name, x in (("query", query), ("key", key), ("value", value)):
        if x.ndim != 4:
            raise ValueError(f"attn.jax.sdpa: expected {name} of rank 4 "
                             f"([B, T, N, H]), got rank {x.ndim}")
    if jnp.dtype(query.dtype) not in _DTYPES:
        raise TypeError("attn.jax.sdpa: expected query element type f32, f16 "
                        f"or bf16, got {query.dtype}")
    if key.dtype != query.dtype or value.dtype != query.dtype:
        raise TypeError("attn.jax.sdpa: expected key and value of query's "
                        f"element type ({query.dtype}), got {key.dtype} and "
                        f"{value.dtype}")
    b, t, n, h = query.shape
    if key.shape[0] != b or value.shape[0] != b or key.shape[3] != h or \
            value.shape[1] != key.shape[1] or value.shape[2] != key.shape[2]:
        raise ValueError("attn.jax.sdpa: expected key [B, S, K, H] and value "
                         f"[B, S, K, Hv] for query {query.shape}, got key "
                         f"{key.shape} and value {value.shape}")
    if key.shape[2] <= 0 or n % key.shape[2]:
        raise ValueError(f"attn.jax.sdpa: expected query heads ({n}) to be a "
                         f"multiple of key/value heads ({key.shape[2]})")
    if causal is True:
        causal = "top_left"
    elif causal in (None, False):
        causal = "none"
    elif causal not in ("top_left", "bottom_right"):
        raise ValueError("attn.jax.sdpa: causal must be None, True, "
                         f"'top_left' or 'bottom_right', got {causal!r}")
    scale = _sdpa.check_scale(scale, "attn.jax.sdpa")
    s = key.shape[1]
    if mask is not None:
        if mask.dtype != jnp.bool_:
            raise TypeError("attn.jax.sdpa: expected a bool mask, got "
                            f"{mask.dtype}")
        if mask.ndim > 4:
            raise ValueError("attn.jax.sdpa: expected a mask of rank <= 4, "
                             f"got rank {mask.ndim}")
        mask = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
        for i, (md, full) in enumerate(zip(mask.shape, (b, n, t, s))):
            if md not in (1, full):
                raise ValueError(f"attn.jax.sdpa: expected mask dim {i} "
                                 f"({md}) to be 1 or {full}")
        mask = jax.lax.stop_gradient(mask)
    to_bhld = functools.partial(jnp.swapaxes, axis1=1, axis2=2)
    out = _sdpa_bhld(to_bhld(query), to_bhld(key), to_bhld(value), mask,
                     causal, scale)
    return to_bhld(out)
