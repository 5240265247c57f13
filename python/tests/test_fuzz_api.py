"""A seeded fuzzer of the Python API's argument parsing: attn.sdpa,
attn.sdpa_varlen, attn.compile, a compiled Kernel's call and (with torch)
attn.sdpa on torch tensors and torch.ops.attn.sdpa, called with hostile
arguments: wrong types, lists for arrays, NaN, inf, huge and tiny values,
arrays of the wrong dtype, rank or shape, 0-size dims.

Every call must return, reach the compiler with a spec attn-compile can read
(the compiler is replaced by a stub that records the spec, so that thousands
of calls fit in seconds; the first ATTN_FUZZ_COMPILES of them, default 2,
are then compiled for real), or raise TypeError or ValueError with a message
of one line. torch.ops.attn.sdpa's own schema check, which runs before attn's
code and raises torch's RuntimeError ("Expected a value of type ..."), is
torch's refusal and is accepted as such.

$ATTN_FUZZ_SECONDS (default 3) and $ATTN_FUZZ_SEED (default 0), as
test_fuzz_onnx.py; case i of seed s is the same on every machine.
"""

import math
import os
import random
import time
import traceback

import numpy as np
import pytest

import attn
from attn import _kernel, _sdpa

from test_fuzz_onnx import fuzz_budget


class Accepted(Exception):
    """Raised by the stub compiler: the arguments reached attn-compile."""

    def __init__(self, source, flags):
        super().__init__(source)
        self.source, self.flags = source, flags


NUMBERS = [None, True, False, 0, 1, -1, 2, 3, 2**31, 2**63, 2**100,
           -2**100, 0.0, -0.0, 1e-50, 1e-45, 1e-38, 0.5, 1.5, float("nan"),
           float("inf"), float("-inf"), 3e38, 2.3e38, 2.4e38, 1e308,
           np.int64(3), np.int32(-5), np.float32("nan"), np.float64(0.125),
           np.bool_(True)]
OTHERS = ["", "ab", "top_left", "bottom_right", "\n", "1", "x" * 300,
          b"top_left", [1, 2], [1, "a"], (1,), (-2, 5), (1, 2, 3), (2**70, 1),
          (1.5, 2), ["1", "2"], np.array([1, 2]), np.array([3]),
          np.zeros((2, 2)), object(), {}, {"a": 1}, set(), print]
VALUES = NUMBERS + OTHERS


def small(rng):
    return rng.choice([0, 1, 2, 3, 4, 8])


def hostile_array(rng, base_shape, dtype=np.float32):
    """An array near `base_shape`: right, or with a dim changed (0 among
    them), a rank changed, another dtype, a list, or non-contiguous."""
    shape = list(base_shape)
    r = rng.random()
    if r < 0.15 and shape:
        shape[rng.randrange(len(shape))] = small(rng)
    elif r < 0.2:
        shape = shape[1:] if rng.random() < 0.5 else [1] + shape
    x = np.random.default_rng(rng.randrange(1000)).standard_normal(
        shape).astype(np.float32)
    r = rng.random()
    if r < 0.06:
        return x.astype(rng.choice([np.float64, np.int32, np.float16,
                                    np.bool_, np.complex64]))
    if r < 0.09:
        return x.tolist()
    if r < 0.12 and x.ndim >= 2:
        return np.swapaxes(x, -1, -2)
    if r < 0.13:
        return rng.choice(OTHERS)
    return x.astype(dtype)


def sdpa_case(rng, backend):
    b, hq, hkv, lq, lk, d = 1, 4, 2, 3, 5, 8
    kw = {}
    q = hostile_array(rng, [b, hq, lq, d])
    k = hostile_array(rng, [b, hkv, lk, d])
    v = hostile_array(rng, [b, hkv, lk, d])
    params = {
        "attn_mask": lambda: rng.choice([
            hostile_array(rng, [1, 1, lq, lk], np.bool_),
            hostile_array(rng, [lq, lk]), rng.choice(VALUES)]),
        "is_causal": lambda: rng.choice([True, False] + VALUES),
        "scale": lambda: rng.choice(NUMBERS + OTHERS[:6]),
        "enable_gqa": lambda: rng.choice([True] * 4 + VALUES),
        "causal": lambda: rng.choice(["top_left", "bottom_right"] + VALUES),
        "return_lse": lambda: rng.choice([True, False] + VALUES),
        "threads": lambda: rng.choice([1, 2, 4096, 4097] + VALUES),
        "dropout_p": lambda: rng.choice([0.0, 0] + VALUES),
        "window": lambda: rng.choice([(2, -1), [0, 0], (-1, -1)] + VALUES),
        "softcap": lambda: rng.choice([30.0, 2.358e38, 2.359e38] + VALUES),
        "key_lengths": lambda: rng.choice([
            np.array([3], np.int32), [3], [2**40], [-1], [1.5], ["a"],
            hostile_array(rng, [b], np.int32)] + VALUES),
        "alibi_slopes": lambda: rng.choice([
            [0.5] * hq, [float("nan")] * hq, [3e38] * hq, [1e39] * hq,
            np.full(hq, 0.25, np.float32), [[0.1] * hq],
            hostile_array(rng, [hq])] + VALUES),
    }
    kw["enable_gqa"] = True
    for name in rng.sample(sorted(params), rng.choice([1, 1, 2, 3])):
        kw[name] = params[name]()
    args = [q, k, v]
    if backend == "torch":
        torch = pytest.importorskip("torch")
        args = [torch.from_numpy(np.ascontiguousarray(x))
                if isinstance(x, np.ndarray) else x for x in args]
        for name in ("attn_mask", "key_lengths", "alibi_slopes"):
            if isinstance(kw.get(name), np.ndarray) and rng.random() < 0.7:
                kw[name] = torch.from_numpy(np.ascontiguousarray(kw[name]))
    return lambda: attn.sdpa(*args, **kw), kw


def varlen_case(rng):
    tq, tk, hq, hkv, d = 5, 7, 4, 2, 8
    q = hostile_array(rng, [tq, hq, d])
    k = hostile_array(rng, [tk, hkv, d])
    v = hostile_array(rng, [tk, hkv, d])
    cq = rng.choice([np.array([0, 2, 5], np.int32), np.array([0], np.int32),
                     np.array([0, 6], np.int32), np.array([1, 5], np.int32),
                     [0, 2, 5], np.array([0, 2, 5])])
    ck = rng.choice([np.array([0, 3, 7], np.int32),
                     np.array([0, 7, 3], np.int32), np.array([0, 0, 0],
                                                             np.int32)])
    params = {
        "max_seqlen_q": lambda: rng.choice([3, 1] + VALUES),
        "max_seqlen_k": lambda: rng.choice([4, 0] + VALUES),
        "scale": lambda: rng.choice(NUMBERS),
        "causal": lambda: rng.choice([None, "top_left", True] + VALUES),
        "window": lambda: rng.choice([(1, 1)] + VALUES),
        "softcap": lambda: rng.choice([5.0] + NUMBERS),
        "alibi_slopes": lambda: rng.choice([[0.5] * hq, [3e38] * hq,
                                            np.zeros((2, hq), np.float32)]
                                           + VALUES),
        "return_lse": lambda: rng.choice([True] + VALUES),
        "threads": lambda: rng.choice([1] + VALUES),
    }
    kw = {n: params[n]() for n in rng.sample(sorted(params),
                                             rng.choice([0, 1, 2]))}
    return lambda: attn.sdpa_varlen(q, k, v, cq, ck, **kw), kw


SPEC_KEYS = ["b", "hq", "hkv", "lq", "lk", "d", "dv", "dtype", "causal",
             "mask", "mask_shape", "scale", "lse", "softcap", "window",
             "dynamic", "alibi", "key_lengths", "bogus", "B", "1x", ""]


def compile_case(rng):
    r = rng.random()
    if r < 0.4:
        source = {"hq": 2, "lq": 4, "d": 8}
        for _ in range(rng.choice([1, 2])):
            source[rng.choice(SPEC_KEYS)] = rng.choice(
                VALUES + ["f32", "1x1x4x4", "2:-1", "a,b", "x=y", "a b"])
    elif r < 0.6:
        source = rng.choice(["hq=2,lq=4,d=8", "hq=2,lq=4,d=8,scale=1e-50",
                             "hq=2,lq=4,d=8\n", "hq=2,lq=4,d=\x00",
                             "func.func @f() { return }", "", "hq=2,,",
                             "hq=2,lq=4,d=8,softcap=nan"])
    else:
        source = rng.choice(VALUES)
    kw = {}
    params = {
        "target": lambda: rng.choice(["cpu", "cuda"] + VALUES),
        "name": lambda: rng.choice(["k1", "-o", "a b", "1x", "é"] + VALUES),
        "entry": lambda: rng.choice(["f", "--help"] + VALUES),
        "cpu": lambda: rng.choice(["generic", "-mattr=x", "a b"] + VALUES),
        "chip": lambda: rng.choice(["sm_90"] + VALUES),
        "cuda_toolkit": lambda: rng.choice(["/usr/local/cuda", "a\x00b"]
                                           + VALUES),
        "tuning": lambda: rng.choice([{"block_q": 16}, {"bogus": 1}, [1]]
                                     + VALUES),
        "block_q": lambda: rng.choice([16, 0, -16] + VALUES),
        "omp_schedule": lambda: rng.choice(["static", "x y", "\n"] + VALUES),
        "decode_prefetch": lambda: rng.choice(["all", "a\tb"] + VALUES),
        "bogus_knob": lambda: 1,
    }
    for name in rng.sample(sorted(params), rng.choice([0, 1, 2])):
        kw[name] = params[name]()
    return lambda: attn.compile(source, **kw), dict(kw, source=source)


def kernel_case(rng, kernel):
    b, lq, lk = (rng.choice([0, 1, 2]) for _ in range(3))
    args = [hostile_array(rng, [b, 2, lq, 8]), hostile_array(rng, [b, 2, lk, 8]),
            hostile_array(rng, [b, 2, lk, 8])]
    if rng.random() < 0.1:
        args = args[:rng.randrange(3)] + ([args[0]] * rng.randrange(2))
    kw = {}
    if rng.random() < 0.3:
        kw["stream"] = rng.choice(VALUES)
    if rng.random() < 0.3:
        kw["threads"] = rng.choice(VALUES)
    return lambda: kernel(*args, **kw), dict(kw, shapes=[
        getattr(a, "shape", type(a).__name__) for a in args])


def torch_op_case(rng):
    torch = pytest.importorskip("torch")
    import attn.torch  # noqa: F401  (registers torch.ops.attn)
    q = torch.randn(1, 2, 3, 8)
    k = torch.randn(1, 2, rng.choice([0, 4]), 8)
    positional = [q, k, k, None, rng.choice([True, False]), None, False,
                  "top_left", None, None, None, None]
    for _ in range(rng.choice([1, 2])):
        i = rng.randrange(3, len(positional))
        positional[i] = rng.choice(VALUES + [[1, 1], [-2, 0], 3e38,
                                             torch.tensor([0.5, 0.5])])
    return lambda: torch.ops.attn.sdpa(*positional), {"args": positional[3:]}


def one_line(error):
    text = str(error)
    return bool(text) and "\n" not in text and "\r" not in text


@pytest.fixture
def stub_compiler(monkeypatch):
    def cached_kernel(ckey, spec, target, openmp, chip):
        raise Accepted(spec(), _kernel.compile_options(
            target, openmp=openmp or None, chip=chip))

    def get_kernel(source, flags, name=None, entry=None, key=None):
        raise Accepted(source, flags)

    monkeypatch.setattr(_sdpa, "cached_kernel", cached_kernel)
    monkeypatch.setattr(_kernel, "get_kernel", get_kernel)


def test_api_argument_fuzz(stub_compiler):
    seconds, seed = fuzz_budget()
    try:
        import torch
        import attn.torch  # noqa: F401
        kinds = ["sdpa", "sdpa", "torch", "varlen", "compile", "kernel",
                 "torch_op"]
        # torch's first call of a custom op takes seconds: not the budget's.
        empty = torch.zeros(1, 1, 0, 8)
        torch.ops.attn.sdpa(empty, empty, empty)
    except ImportError:
        kinds = ["sdpa", "sdpa", "varlen", "compile", "kernel"]
    # A dynamic kernel for the calls (compiled for real, not by the stub).
    kernel = _original_get_kernel(
        "b=1,hq=2,lq=4,d=8,lse=1,dynamic=1",
        _kernel.compile_options("cpu"))
    deadline = time.monotonic() + seconds
    accepted, outcomes, i = [], {}, 0
    while time.monotonic() < deadline:
        rng = random.Random(f"api-fuzz:{seed}:{i}")
        kind = rng.choice(kinds)
        if kind == "sdpa":
            call, what = sdpa_case(rng, "numpy")
        elif kind == "torch":
            call, what = sdpa_case(rng, "torch")
        elif kind == "varlen":
            call, what = varlen_case(rng)
        elif kind == "compile":
            call, what = compile_case(rng)
        elif kind == "kernel":
            call, what = kernel_case(rng, kernel)
        else:
            call, what = torch_op_case(rng)
        where = f"seed {seed} case {i} ({kind}: {what!r:.600})"
        try:
            result = call()
        except Accepted as reached:
            outcome = "compiled"
            source = reached.source
            assert isinstance(source, str) and "\x00" not in source, where
            if not _kernel._is_mlir(source):
                assert source.isprintable() and " " not in source, \
                    f"{where}: spec {source!r}"
            accepted.append((where, source, reached.flags))
        except (TypeError, ValueError) as error:
            outcome = type(error).__name__
            assert one_line(error), f"{where}: {type(error).__name__} of " \
                                    f"more than one line: {error!r}"
        except RuntimeError as error:
            outcome = "torch schema"
            assert kind == "torch_op" and "Expected a value of type" in str(
                error), f"{where}: {traceback.format_exc(limit=8)}"
        except Exception:
            pytest.fail(f"{where}: {traceback.format_exc(limit=8)}")
        else:
            outcome = "returned"
            check_returned(result, kind, what, where)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        i += 1
    print(f"api fuzz: seed {seed}, {i} cases in {seconds} s: {outcomes}")
    assert i >= 50, f"only {i} cases ran in {seconds} s"
    # The first few specs that reached the stub, compiled for real: they
    # must compile or be refused with one line.
    n = int(os.environ.get("ATTN_FUZZ_COMPILES", "2"))
    seen = set()
    for where, source, flags in accepted:
        if len(seen) >= n:
            break
        if (source, flags) in seen or _kernel._is_mlir(source):
            continue
        seen.add((source, flags))
        try:
            _original_get_kernel(source, flags)
        except ValueError as error:
            assert one_line(error), f"{where}: {error!r}"


_original_get_kernel = _kernel.get_kernel


def check_returned(result, kind, what, where):
    """What a call that returned gave: results of 0-size calls are empty,
    or 0 (out) and -inf (lse) where there are no keys."""
    outs = result if isinstance(result, tuple) else (result,)
    for x in outs:
        x = np.asarray(x.detach() if hasattr(x, "detach") else x)
        assert x.size == 0 or np.isfinite(x).all() or np.isneginf(x).all(), \
            f"{where}: returned {x!r:.300}"
    if kind == "kernel":
        out, key = np.asarray(outs[0]), what["shapes"][1]
        if out.size and isinstance(key, tuple) and math.prod(key) == 0:
            assert (out == 0).all() and np.isneginf(outs[1]).all(), where
