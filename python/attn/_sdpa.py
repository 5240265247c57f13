"""attn.sdpa: torch.nn.functional.scaled_dot_product_attention's arguments
over kernels compiled by attn-compile (docs/op.md).

Layouts: query ``[..., Hq, L, D]``, key ``[..., Hkv, S, D]``, value
``[..., Hkv, S, Dv]`` with equal leading dims (none, one or several; they are
flattened into the op's batch dim B), or ``[L, D]`` (B = Hq = 1). The mask
broadcasts to ``[..., Hq, L, S]`` as in torch.
"""

import collections.abc
import math
import numbers
import os
import sys

import numpy as np

from . import _kernel, _tensors

_CAUSAL = ("top_left", "bottom_right")

# Softcap and ALiBi run in the kernels' base-2 units: the cap and the slopes
# times log2(e), in f32 (docs/op.md). Where that product overflows, the
# scores become inf - inf = NaN, so such values are refused: |c| < 2.3587e38.
_LOG2E = np.float32(math.log2(math.e))
BASE2_LIMIT = float(np.finfo(np.float32).max) / math.log2(math.e)
# The most CPU threads a call may ask for (omp_set_num_threads takes a C
# int; far past any machine's cores, a team that large only exhausts memory).
MAX_THREADS = 4096


def show(x):
    """A caller's value as a message shows it: repr on one line, cut short."""
    text = " ".join(repr(x).split())
    return text if len(text) <= 80 else text[:77] + "..."


def is_int(x):
    """An integer (Python's or numpy's), not a bool."""
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(
        x, (bool, np.bool_))


def is_real(x):
    """A real number (Python's or numpy's), not a bool."""
    return isinstance(x, (numbers.Real, np.floating, np.integer)) and \
        not isinstance(x, (bool, np.bool_))


def flag(x, name, who):
    """A bool argument: bool, numpy's bool, or the int 0 or 1."""
    if isinstance(x, (bool, np.bool_)) or (is_int(x) and x in (0, 1)):
        return bool(x)
    raise TypeError(f"{who}: {name} must be a bool, got {show(x)}")


def real(x, name, who):
    """A real-number argument as a Python float (TypeError for another type;
    an int too large for a float is a ValueError)."""
    if not is_real(x):
        raise TypeError(f"{who}: {name} must be a real number, got {show(x)}")
    try:
        return float(x)
    except OverflowError:
        raise ValueError(f"{who}: {name} = {show(x)} is out of range") \
            from None


def check_base2_range(values, name, who):
    """Refuses values whose magnitude times log2(e) overflows f32 (or that
    are not finite): the scale, the softcap, the ALiBi slopes."""
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.asarray(values, np.float64).reshape(-1)
        bad = ~np.isfinite(np.abs(x.astype(np.float32)) * _LOG2E)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f"[{i}]" if x.size > 1 else ""
        raise ValueError(f"{who}: {name}{where} = {float(x[i]):.8g}: expected "
                         f"a finite value with |{name}| * log2(e) finite in "
                         f"f32 (|{name}| < {BASE2_LIMIT:.5g})")


def _err(message):
    return ValueError("attn.sdpa: expected " + message)


def _check_rank(name, shape, rank):
    if len(shape) != rank:
        raise _err(f"{name} to have rank {rank} (query's rank), but got rank "
                   f"{len(shape)}")


def aux_operand(backend, target, x, name, dtype, shapes, flat, like,
                who="attn.sdpa"):
    """An optional operand (key lengths, ALiBi slopes): an array of the
    query's kind, or a sequence of numbers (made one on query's device), of
    `dtype`, of one of `shapes`, contiguous and reshaped to `flat`; None
    stays None."""
    if x is None:
        return None
    x = from_sequence(backend, x, name, dtype, like, who)
    if _tensors.backend_of(x) is not backend:
        raise TypeError(f"{who}: expected {name} to be a {backend.name} "
                        f"array like query")
    x = backend.prepare(x, target)
    if backend.dtype_name(x) != dtype:
        raise TypeError(f"{who}: expected {name} element type to be "
                        f"{dtype}, but got {backend.dtype_name(x)}")
    if tuple(x.shape) not in [tuple(s) for s in shapes]:
        raise ValueError(f"{who}: expected {name} of shape " + " or ".join(
            str(tuple(s)) for s in shapes) + f", but got {tuple(x.shape)}")
    return x.reshape(flat)


def from_sequence(backend, x, name, dtype, like, who):
    """x itself when it is a numpy array or a torch tensor; a list or tuple
    of numbers as an array of `dtype` (int32 or f32) of the query's kind and
    device."""
    if isinstance(x, np.ndarray) or not isinstance(
            x, (list, tuple)):
        return x
    try:
        host = np.array(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{who}: expected {name} to be an array or a "
                        f"sequence of numbers, got {show(x)}") from None
    if dtype == "int32":
        ok = np.isfinite(host) & (host == np.round(host)) & \
            (np.abs(host) <= np.iinfo(np.int32).max)
        if not ok.all():
            i = int(np.flatnonzero(~ok.reshape(-1))[0])
            raise ValueError(f"{who}: expected {name} to hold int32 values, "
                             f"got {float(host.reshape(-1)[i]):.8g}")
        host = host.astype(np.int32)
    else:
        with np.errstate(over="ignore"):
            host = host.astype(np.float32)
    return backend.from_host(host, like)


def default_threads():
    """torch.get_num_threads() when torch is imported, else $OMP_NUM_THREADS,
    else the number of CPUs this process may run on."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_num_threads"):
        return torch.get_num_threads()
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def prepare_inputs(backend, query, key, value, who):
    """The target and the prepared query, key and value (all of query's
    kind)."""
    for name, x in (("key", key), ("value", value)):
        if _tensors.backend_of(x) is not backend:
            raise TypeError(f"{who}: expected {name} to be a "
                            f"{backend.name} array like query")
    target = backend.target(query)
    return (target,) + tuple(backend.prepare(x, target)
                             for x in (query, key, value))


def element_type(backend, q, k, v, who):
    """The element type of query, key and value (f32, f16 or bf16, equal)."""
    dt = backend.dtype_name(q)
    if dt not in ("f32", "f16", "bf16"):
        raise TypeError(f"{who}: expected query element type to be f32, "
                        f"f16 or bf16, but got {dt}")
    if dt == "bf16" and backend.name == "numpy" and "bf16" not in \
            _kernel.NP_DTYPES:
        raise TypeError(f"{who}: bf16 numpy arrays need ml_dtypes")
    for name, x in (("key", k), ("value", v)):
        if backend.dtype_name(x) != dt:
            raise TypeError(f"{who}: expected {name} element type "
                            f"({backend.dtype_name(x)}) to equal query element "
                            f"type ({dt})")
    return dt


def score_options(window, softcap, who):
    """window as (left, right), each -1 or >= 0 (ints); softcap a real
    number, finite and > 0 as an f32, and in the base-2 range."""
    if window is not None:
        if isinstance(window, (str, bytes)) or not isinstance(
                window, (collections.abc.Sequence, np.ndarray)):
            raise TypeError(f"{who}: window must be a pair (left, right) of "
                            f"ints, got {show(window)}")
        items = list(window)
        if len(items) != 2 or not all(is_int(w) for w in items):
            raise TypeError(f"{who}: window must be a pair (left, right) of "
                            f"ints, got {show(window)}")
        window = tuple(int(w) for w in items)
        if min(window) < -1 or max(window) > 2**63 - 1:
            raise ValueError(f"{who}: window must be (left, right), each "
                             f"-1 or >= 0, got {window!r}")
    if softcap is not None:
        softcap = real(softcap, "softcap", who)
        if not (0 < softcap < float("inf")) or (
                softcap < 1 and np.float32(softcap) == 0):
            f32 = " (0 as an f32)" if 0 < softcap < 1 else ""
            raise ValueError(f"{who}: softcap must be finite and "
                             f"positive, got {softcap!r}{f32}")
        check_base2_range(softcap, "softcap", who)
    return window, softcap


def check_scale(scale, who):
    """None, or a real number that is finite and non-zero as an f32 (the op's
    scale attribute)."""
    if scale is None:
        return None
    scale = real(scale, "scale", who)
    with np.errstate(over="ignore"):
        as_f32 = np.float32(scale)
    if not math.isfinite(scale) or not np.isfinite(as_f32) or as_f32 == 0:
        f32 = "" if not math.isfinite(scale) or scale == 0 else \
            f" ({float(as_f32)} as an f32)"
        raise ValueError(f"{who}: expected scale to be finite and "
                         f"non-zero, but got {scale!r}{f32}")
    # The op's verifier bounds the scale as the softcap (docs/op.md).
    check_base2_range([scale], "scale", who)
    return scale


def run_options(backend, target, q, threads, who):
    """(threads, openmp, chip): CPU threads (default_threads() by default)
    and a library with OpenMP for more than one; the chip of q's device on
    cuda."""
    if threads is not None and not is_int(threads):
        raise TypeError(f"{who}: threads must be an int, got {show(threads)}")
    if threads is not None and not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"{who}: threads must be in [1, {MAX_THREADS}], got "
                         f"{threads}")
    if target == "cpu":
        if threads is None:
            threads = default_threads()
        threads = int(threads)
        return threads, threads > 1, None
    # cuda: kernels for the tensor's device (docs/gpu.md: what has run on a GPU)
    return None, False, "sm_%d%d" % backend.torch.cuda.get_device_capability(
        q.device)


def variant_spec(window, softcap, scale, key_lengths, alibi, lse):
    """The spec keys (docs/attn-run.md) of the attention variants given."""
    text = ""
    if window is not None:
        text += f",window={window[0]}:{window[1]}"
    if softcap is not None:
        text += f",softcap={softcap!r}"
    if scale is not None:
        text += f",scale={scale!r}"
    if key_lengths:
        text += ",key_lengths=1"
    if alibi is not None:
        text += f",alibi={alibi}"
    if lse:
        text += ",lse=1"
    return text


def cached_kernel(ckey, spec, target, openmp, chip):
    """The kernel cached under `ckey`, else compiled from spec() (called only
    then) for the target."""
    kernel = _kernel._memory.get(ckey)
    if kernel is not None:
        _kernel._stats["hits"] += 1
        return kernel
    # openmp is a knob of the CPU pipeline only; False is attn-compile's own.
    return _kernel.get_kernel(
        spec(), _kernel.compile_options(
            target, openmp=openmp or None, chip=chip,
            cuda_toolkit=os.environ.get("ATTN_CUDA_TOOLKIT")), key=ckey)


def sdpa(query, key, value, attn_mask=None, is_causal=False, scale=None,
         enable_gqa=False, *, causal="top_left", return_lse=False,
         threads=None, dropout_p=0.0, window=None, softcap=None,
         key_lengths=None, alibi_slopes=None, dynamic=False):
    """Scaled dot-product attention, fused, compiled by attn.

    Arguments as torch.nn.functional.scaled_dot_product_attention's (a bool
    mask is true where a query may attend; a float mask, of the query's
    dtype, is added to the scaled scores), plus:

    causal: "top_left" (torch's is_causal, key j visible to query i iff
        j <= i) or "bottom_right" (j <= i + S - L, KV-cache decoding); used
        when is_causal is true. A mask and is_causal may be combined.
    return_lse: also return the natural-log log-sum-exp ``[..., Hq, L]`` (f32).
    window: ``(left, right)``, a sliding window (the op's ``window``; -1 is
        unbounded): key j visible to query i iff d - left <= j <= d + right,
        d = i with is_causal and causal="top_left", else i + S - L.
    softcap: ``c > 0``: scores become c * tanh(s / c) before the mask.
    key_lengths: int32 ``[...]`` (the leading dims; ``[1]`` without any):
        batch b sees keys j < key_lengths[b] only (ONNX's nonpad_kv_seqlen,
        a KV cache filled to different lengths); bottom_right causality and
        windows align to that length.
    alibi_slopes: f32 ``[Hq]`` or ``[..., Hq]``: ALiBi, scores
        s - slope * |i + S_b - L - j| (FlashAttention's convention; S_b the
        batch's key length), after the softcap, before the mask.
    threads: CPU threads (default: torch's setting when torch is imported,
        else $OMP_NUM_THREADS, else all CPUs). threads > 1 uses a library
        compiled with OpenMP.
    dropout_p: must be 0 (accepted for torch's signature).
    dynamic: one library for every B, L and S (attn-compile's dynamic=1)
        instead of one per shape: a growing KV cache or varying lengths
        compile once (per heads, head dims, dtype, variants and the mask's
        broadcast dims).

    A row with nothing visible gives 0 (torch gives NaN). Inputs are numpy
    arrays (f32, f16, bf16 via ml_dtypes) or torch tensors; the result is of
    the same kind. Non-contiguous inputs are copied.
    """
    backend = _tensors.backend_of(query)
    if real(dropout_p, "dropout_p", "attn.sdpa") != 0:
        raise ValueError(f"attn.sdpa: dropout_p must be 0, got {dropout_p}")
    is_causal = flag(is_causal, "is_causal", "attn.sdpa")
    enable_gqa = flag(enable_gqa, "enable_gqa", "attn.sdpa")
    return_lse = flag(return_lse, "return_lse", "attn.sdpa")
    window, softcap = score_options(window, softcap, "attn.sdpa")
    if not isinstance(causal, str) or causal not in _CAUSAL:
        raise ValueError(f"attn.sdpa: causal must be 'top_left' or "
                         f"'bottom_right', got {show(causal)}")
    target, q, k, v = prepare_inputs(backend, query, key, value, "attn.sdpa")

    qs, ks, vs = tuple(q.shape), tuple(k.shape), tuple(v.shape)
    rank = len(qs)
    if rank < 2:
        raise _err(f"query to have rank 2 or more, but got rank {rank}")
    _check_rank("key", ks, rank)
    _check_rank("value", vs, rank)

    dt = element_type(backend, q, k, v, "attn.sdpa")

    # Dims as the user numbered them: -1 head dim, -2 sequence, -3 heads.
    def dim(i):
        return i % rank

    for i in range(rank - 3 if rank >= 3 else 0):
        for name, s in (("key", ks), ("value", vs)):
            if s[i] != qs[i]:
                raise _err(f"{name} dim {i} ({s[i]}) to equal query dim {i} "
                           f"({qs[i]})")
    if ks[-1] != qs[-1]:
        raise _err(f"key dim {dim(-1)} ({ks[-1]}) to equal query dim "
                   f"{dim(-1)} ({qs[-1]})")
    if vs[-2] != ks[-2]:
        raise _err(f"value dim {dim(-2)} ({vs[-2]}) to equal key dim "
                   f"{dim(-2)} ({ks[-2]})")
    lead = qs[:-3]
    b = math.prod(lead)
    hq, lq, d = (qs[-3] if rank >= 3 else 1), qs[-2], qs[-1]
    hkv, lk, dv = (ks[-3] if rank >= 3 else 1), ks[-2], vs[-1]
    if rank >= 3:
        if vs[-3] != ks[-3]:
            raise _err(f"value dim {dim(-3)} ({vs[-3]}) to equal key dim "
                       f"{dim(-3)} ({ks[-3]})")
        if hq != hkv and not enable_gqa:
            raise _err(f"key dim {dim(-3)} ({hkv}) to equal query dim "
                       f"{dim(-3)} ({hq}) (enable_gqa=True allows fewer "
                       f"key/value heads)")
        if hkv <= 0 or hq % hkv:
            raise _err(f"query heads (query dim {dim(-3)}: {hq}) to be a "
                       f"positive multiple of key/value heads (key dim "
                       f"{dim(-3)}: {hkv})")
    if d <= 0 or dv <= 0:
        raise _err(f"positive head dims, but got query dim {dim(-1)} ({d}) "
                   f"and value dim {dim(-1)} ({dv})")
    scale = check_scale(scale, "attn.sdpa")

    out_shape = qs[:-1] + (dv,)
    lse_shape = qs[:-1]

    # The mask: broadcast to [..., Hq, L, S], then viewed as rank 4.
    mask_kind, mask_shape, m = "none", None, None
    if attn_mask is not None:
        if _tensors.backend_of(attn_mask) is not backend:
            raise TypeError(f"attn.sdpa: expected attn_mask to be a "
                            f"{backend.name} array like query")
        m = backend.prepare(attn_mask, target)
        mt = backend.dtype_name(m)
        if mt == "bool":
            mask_kind = "bool"
        elif mt == dt:
            mask_kind = "float"
        else:
            raise TypeError(f"attn.sdpa: expected mask element type to be bool "
                            f"or the query element type ({dt}), but got {mt}")
        ms = tuple(m.shape)
        if len(ms) > rank:
            raise _err(f"mask to have rank at most {rank} (query's rank), but "
                       f"got rank {len(ms)}")
        ms = (1,) * (rank - len(ms)) + ms
        full = lead + ((hq,) if rank >= 3 else ()) + (lq, lk)
        names = [f"query dim {i}" for i in range(len(lead))]
        names += (["Hq"] if rank >= 3 else []) + ["L", "S"]
        for i, (md, fd) in enumerate(zip(ms, full)):
            if md != 1 and md != fd:
                raise _err(f"mask dim {i} ({md}) to be 1 or {names[i]} ({fd})")
        mlead = ms[:len(lead)]
        if all(x == 1 for x in mlead):
            mb = 1
        elif mlead == lead:
            mb = b
        else:  # partly broadcast leading dims: materialize them
            m = backend.expand(m.reshape(ms), lead + ms[len(lead):])
            mb = b
        mh = ms[-3] if rank >= 3 else 1
        mask_shape = (mb, mh, ms[-2], ms[-1])
        m = m.reshape(mask_shape)

    kl = aux_operand(backend, target, key_lengths, "key_lengths", "int32",
                     [lead] if lead else [(1,), ()], (b,), q)
    alibi, sl = "none", None
    if alibi_slopes is not None:
        heads = (hq,) if rank >= 3 else (1,)
        alibi_slopes = from_sequence(backend, alibi_slopes, "alibi_slopes",
                                     "f32", q, "attn.sdpa")
        shape = tuple(getattr(alibi_slopes, "shape", ()))
        alibi = "h" if shape == heads or not lead else "bh"
        sl = aux_operand(backend, target, alibi_slopes, "alibi_slopes", "f32",
                         [heads] if alibi == "h" else [lead + heads],
                         heads if alibi == "h" else (b,) + heads, q)
        check_base2_range(backend.to_host(sl), "alibi_slopes", "attn.sdpa")

    if b == 0 or lq == 0 or hq == 0:
        out = backend.empty(out_shape, dt, q)
        return (out, backend.empty(lse_shape, "f32", q)) if return_lse else out
    if lk == 0:  # nothing visible anywhere: 0 and -inf (docs/op.md rule 6)
        out = backend.full(out_shape, 0, dt, q)
        if return_lse:
            return out, backend.full(lse_shape, float("-inf"), "f32", q)
        return out

    c = causal if is_causal else "none"
    threads, openmp, chip = run_options(backend, target, q, threads,
                                        "attn.sdpa")
    sizes = (b, lq, lk)
    if dynamic:  # the library's sizes are '?': key on what stays fixed
        sizes = None
        if mask_shape is not None:
            # Mask dims of size 1 stay static 1 (broadcast) in the library.
            mask_shape = tuple(n if n == 1 else 2 for n in mask_shape)
    ckey = ("sdpa", target, dt, sizes, hq, hkv, d, dv, mask_kind,
            mask_shape, c, scale, bool(return_lse), openmp, chip, window,
            softcap, kl is not None, alibi)

    def spec():
        text = (f"b={b},hq={hq},hkv={hkv},lq={lq},lk={lk},d={d},dv={dv},"
                f"dtype={dt},causal={c},mask={mask_kind}")
        if mask_shape is not None:
            text += ",mask_shape=" + "x".join(map(str, m.shape))
        if dynamic:
            text += ",dynamic=1"
        return text + variant_spec(window, softcap, scale, kl is not None,
                                   alibi if sl is not None else None,
                                   return_lse)

    kernel = cached_kernel(ckey, spec, target, openmp, chip)

    out = backend.empty(out_shape, dt, q)
    ptrs = [backend.pointer(q), backend.pointer(k), backend.pointer(v)]
    if m is not None:
        ptrs.append(backend.pointer(m))
    ptrs += [backend.pointer(x) for x in (kl, sl) if x is not None]
    ptrs.append(backend.pointer(out))
    if return_lse:
        lse = backend.empty(lse_shape, "f32", q)
        ptrs.append(backend.pointer(lse))
    dims = dict(b=b, lq=lq, lk=lk) if dynamic else None
    kernel.call_pointers(ptrs, dims, backend.stream(q), threads)
    return (out, lse) if return_lse else out
