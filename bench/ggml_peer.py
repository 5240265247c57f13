"""ggml's `ggml_flash_attn_ext` (CPU backend) as a peer of attn in the bench.

bench/run.py times it beside attn-run and PyTorch on the same shapes; this
module has no other dependency than NumPy and the `ggml` module of PyPI's
`ggml-python` (which builds and ships libggml; scripts/bench.sh installs it).

What is timed, and how (bench/README.md, "ggml"):
- Q is f32; K and V are f16 (`kv="f16"`, ggml's fast path: its tiled CPU
  kernel and its decode split-KV path read f16 K/V) or f32 (`kv="f32"`).
  The inputs are the bench's seeded standard normals; f16 K/V are those
  values rounded to f16, and the reference is computed on exactly the values
  ggml got.
- Causal (bottom-right) is ggml's own way: an f16 mask of 0 / -inf over
  [Lq, Lk], broadcast over heads and batch, as llama.cpp passes it.
- One graph (one flash_attn_ext node) planned once on a persistent ggml
  thread pool of `threads` threads (ggml_threadpool_new), then computed once
  as a warm-up and `runs` times more; the median wall time is reported, as
  attn-run and the PyTorch rows do.
- The output is checked against an f64 reference (plain NumPy) on every row
  or, above `full_check_pairs` query-key pairs, on evenly spaced query rows
  of every head (the reference of a row is exact: all its keys). The bound
  is the one SPEC holds attn's own row of that precision to: f32 case with
  f32 K/V: f32 fixed bounds (rel_l2 <= 1e-5, max_abs <= 1e-4 *
  max(1, max|ref|)); f32 case with f16 K/V: the f16 bound (rel_l2 <= 2e-3);
  bf16 case: the bf16 bound (rel_l2 <= 1.6e-2). A run that fails the check
  has no GFLOP/s reported. (ggml's non-tiled f16 path, used for Lq < 64 and
  decode, rounds Q to f16 and accumulates P·V in f16: its rel_l2 grows with
  Lk, ~3e-3 at Lk=512 and ~1e-2 at Lk=4096.)

Run alone (`python3 bench/ggml_peer.py [--threads N]`), it checks ggml's
flash_attn_ext against the f64 reference on two small cases (f16 K/V causal,
f32 K/V not), as scripts/bench.sh does before it times ggml; exit 1 if one
fails.
"""

import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

# attn's f64 reference (python/attn/reference.py), from the checkout's python/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "python"))
from attn import reference  # noqa: E402

REL_L2 = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}
F32_MAX_ABS = 1e-4

_ggml = None
_ggml_error = None


def load():
    """The ggml module, or None (and the reason in load_error())."""
    global _ggml, _ggml_error
    if _ggml is None and _ggml_error is None:
        try:
            import ggml  # PyPI: ggml-python
            if hasattr(ggml, "ggml_cpu_init"):
                ggml.ggml_cpu_init()  # f16 tables of the CPU backend
            _ggml = ggml
        except Exception as e:  # pragma: no cover - depends on the machine
            _ggml_error = f"{type(e).__name__}: {e}"
    return _ggml


def load_error():
    return _ggml_error


def describe() -> str:
    """ggml-python's version and the SIMD the library was built with."""
    g = load()
    if g is None:
        return f"not run ({_ggml_error})"
    feats = [n for n in ("avx2", "fma", "f16c", "avx512", "avx512_bf16")
             if getattr(g, f"ggml_cpu_has_{n}", lambda: 0)()]
    return f"ggml-python {g.__version__}, CPU backend ({', '.join(feats)})"


def make_inputs(b, hq, hkv, lq, lk, d, seed, kv="f16"):
    """Seeded standard normals: q f32 [B,Hq,Lq,D]; k, v [B,Hkv,Lk,D] of the
    K/V type (f16: the f32 draws rounded)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, hq, lq, d), dtype=np.float32)
    k = rng.standard_normal((b, hkv, lk, d), dtype=np.float32)
    v = rng.standard_normal((b, hkv, lk, d), dtype=np.float32)
    dt = {"f16": np.float16, "f32": np.float32}[kv]
    return q, k.astype(dt), v.astype(dt)


def visible(lq, lk, causal, rows):
    """[len(rows), lk] bool: key j visible to query i (docs/op.md)."""
    if causal == "none":
        return np.ones((len(rows), lk), bool)
    if causal != "bottom_right":
        raise ValueError(f"causal={causal}: only none and bottom_right")
    j = np.arange(lk)[None, :]
    return j <= (np.asarray(rows)[:, None] + (lk - lq))


def reference_rows(q, k, v, causal, rows):
    """f64 SDPA output [B,Hq,len(rows),D] for the query rows `rows`
    (attn.reference, one head at a time)."""
    b, hq = q.shape[:2]
    hkv = k.shape[1]
    out = np.empty((b, hq, len(rows), v.shape[-1]))
    for bi in range(b):
        for h in range(hq):
            out[bi, h] = reference.sdpa(
                q[bi, h], k[bi, h // (hq // hkv)], v[bi, h // (hq // hkv)],
                causal=causal, rows=rows)[0]
    return out


def rule(case_dtype, kv):
    """The precision whose bound applies (see the module's doc)."""
    if case_dtype == "bf16":
        return "bf16"
    return "f32" if kv == "f32" else "f16"


def check(out, q, k, v, causal, prec, full_check_pairs=1 << 26, nrows=256):
    """Compares out [B,Hq,Lq,D] with the f64 reference under the bound of
    `prec` (f32, f16, bf16); returns a dict with rel_l2, max_abs, rows (how
    many query rows per head were checked), bound, ok."""
    b, hq, lq, _ = q.shape
    lk = k.shape[2]
    if b * hq * lq * lk <= full_check_pairs:
        rows = np.arange(lq)
    else:
        rows = np.unique(np.linspace(0, lq - 1, min(nrows, lq)).astype(int))
    ref = reference_rows(q, k, v, causal, rows)
    got = np.asarray(out[:, :, rows], np.float64)
    err = got - ref
    rel = float(np.linalg.norm(err) / np.linalg.norm(ref))
    mx = float(np.abs(err).max()) if err.size else 0.0
    if not np.isfinite(got).all():
        rel, ok = float("nan"), False
    elif prec == "f32":
        ok = (rel <= REL_L2["f32"]
              and mx <= F32_MAX_ABS * max(1.0, float(np.abs(ref).max())))
    else:
        ok = rel <= REL_L2[prec]
    return {"rel_l2": rel, "max_abs": mx, "rows": len(rows),
            "bound": REL_L2[prec], "ok": bool(ok)}


class Peer:
    """A ggml thread pool of `threads` threads, kept across runs."""

    def __init__(self, threads: int):
        g = load()
        if g is None:
            raise RuntimeError(f"ggml unavailable: {_ggml_error}")
        self.g = g
        self.threads = threads
        params = g.ggml_threadpool_params_default(threads)
        self.pool = g.ggml_threadpool_new(ctypes.byref(params))
        if not self.pool:
            raise RuntimeError("ggml_threadpool_new failed")

    def close(self):
        if self.pool:
            self.g.ggml_threadpool_free(self.pool)
            self.pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def attention(self, q, k, v, causal="none", runs=0):
        """out [B,Hq,Lq,D] f32 of ggml_flash_attn_ext, and the wall times in
        ms of `runs` computes after one warm-up compute (runs=0: one compute,
        no times)."""
        g = self.g
        b, hq, lq, d = q.shape
        hkv, lk, dv = k.shape[1], k.shape[2], v.shape[3]
        if k.dtype != v.dtype or k.dtype not in (np.float16, np.float32):
            raise ValueError("K and V must both be f16 or both f32")
        if hq % hkv:
            raise ValueError("hq must be a multiple of hkv")
        kv_type = g.GGML_TYPE_F16 if k.dtype == np.float16 else \
            g.GGML_TYPE_F32
        mask = None
        if causal != "none":
            vis = visible(lq, lk, causal, np.arange(lq))
            mask = np.where(vis, 0.0, -np.inf).astype(np.float16)
        arrays = [np.ascontiguousarray(q, np.float32),
                  np.ascontiguousarray(k), np.ascontiguousarray(v)]
        nbytes = sum(a.nbytes for a in arrays) + 4 * b * hq * lq * dv
        if mask is not None:
            nbytes += mask.nbytes
        mem = nbytes + 16 * g.ggml_tensor_overhead() + \
            g.ggml_graph_overhead() + (1 << 20)
        ctx = g.ggml_init(g.ggml_init_params(mem_size=mem, mem_buffer=None,
                                             no_alloc=False))
        if not ctx:
            raise MemoryError(f"ggml_init({mem} bytes) failed")
        try:
            tq = g.ggml_new_tensor_4d(ctx, g.GGML_TYPE_F32, d, lq, hq, b)
            tk = g.ggml_new_tensor_4d(ctx, kv_type, d, lk, hkv, b)
            tv = g.ggml_new_tensor_4d(ctx, kv_type, dv, lk, hkv, b)
            tm = None
            tensors = [tq, tk, tv]
            if mask is not None:
                tm = g.ggml_new_tensor_4d(ctx, g.GGML_TYPE_F16, lk, lq, 1, 1)
                tensors.append(tm)
                arrays.append(mask)
            for t, a in zip(tensors, arrays):
                assert g.ggml_nbytes(t) == a.nbytes
                ctypes.memmove(g.ggml_get_data(t), a.ctypes.data, a.nbytes)
            to = g.ggml_flash_attn_ext(ctx, tq, tk, tv, tm,
                                       1.0 / float(np.sqrt(d)), 0.0, 0.0)
            g.ggml_flash_attn_ext_set_prec(to, g.GGML_PREC_F32)
            gf = g.ggml_new_graph(ctx)
            g.ggml_build_forward_expand(gf, to)
            plan = g.ggml_graph_plan(gf, self.threads, self.pool)
            work = None
            if plan.work_size:
                work = (ctypes.c_uint8 * plan.work_size)()
                plan.work_data = ctypes.cast(work, ctypes.POINTER(
                    ctypes.c_uint8))
            out_ptr = ctypes.cast(g.ggml_get_data(to),
                                  ctypes.POINTER(ctypes.c_float))
            res = np.ctypeslib.as_array(out_ptr, shape=(b, lq, hq, dv))
            res[...] = np.nan  # an element left unwritten fails the check
            ms = []
            for i in range(runs + 1):
                t0 = time.perf_counter()
                st = g.ggml_graph_compute(gf, ctypes.byref(plan))
                t1 = time.perf_counter()
                if st != 0:
                    raise RuntimeError(f"ggml_graph_compute: status {st}")
                if i:
                    ms.append(1e3 * (t1 - t0))
            del work
            # ggml's result is [B, Lq, Hq, Dv] ("permuted"): back to
            # [B, Hq, Lq, Dv], copied out of the context freed below (a
            # singleton Lq or Hq makes the transpose "contiguous" already).
            out = np.array(res.transpose(0, 2, 1, 3), copy=True)
        finally:
            g.ggml_free(ctx)
        return out, ms


def bench(threads, b, hq, hkv, lq, lk, d, causal, kv, runs, seed, flops,
          case_dtype="f32"):
    """One timed, checked ggml run: a dict with ms, gflops (None when the
    check fails), rel_l2, max_abs, check_rows, ok, kv; or {"error": ...}."""
    try:
        q, k, v = make_inputs(b, hq, hkv, lq, lk, d, seed, kv)
        with Peer(threads) as p:
            out, ms = p.attention(q, k, v, causal, runs)
        c = check(out, q, k, v, causal, rule(case_dtype, kv))
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}", "kv": kv}
    med = statistics.median(ms)
    return {"ms": med, "gflops": flops / (med * 1e6) if c["ok"] else None,
            "rel_l2": c["rel_l2"], "max_abs": c["max_abs"],
            "check_rows": c["rows"], "bound": c["bound"], "ok": c["ok"],
            "kv": kv, "runs": runs}


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    opts = p.parse_args(argv)
    for kv, causal in (("f16", "bottom_right"), ("f32", "none")):
        q, k, v = make_inputs(1, 4, 2, 80, 96, 64, 0, kv)
        with Peer(opts.threads) as peer:
            out, _ = peer.attention(q, k, v, causal)
        c = check(out, q, k, v, causal, rule("f32", kv))
        if not c["ok"]:
            print(f"ggml_peer: {kv} K/V, causal {causal}: {c}")
            return 1
    print(f"bench: {describe()}, flash_attn_ext matches the f64 reference")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
