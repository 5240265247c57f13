#!/usr/bin/env python3
"""attn.jax.sdpa against XLA's CPU attention (jax.nn.dot_product_attention,
implementation="xla"), both under jax.jit, paired: each round times ITERS
calls of one then ITERS of the other (alternating which goes first), and
the figures are per call over ROUNDS rounds: the median and best wall time,
the median process CPU time (all threads; the figure to quote on a shared
machine), and the ratio of medians (xla / attn: > 1 means attn is faster).
Also, with --grad, the gradient of sum(out**2) in q, k, v (attn.sdpa_grad
against XLA's differentiated attention).

Shapes in JAX's layout: --b B --t T --s S --n N --k K --h H (query [B, T, N,
H], key/value [B, S, K, H]); --causal; f32. The first call of each compiles
(attn: attn-compile, cached; XLA: its JIT) and is not timed. Each output is
checked against the other before timing (rel_l2 <= 2e-5).

e.g. python3 bench/jax_sdpa.py --b 1 --t 2048 --n 8 --h 64 --causal --grad
"""
import argparse
import statistics
import sys
import time

import numpy as np


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--b", type=int, default=1)
    p.add_argument("--t", type=int, default=1024)
    p.add_argument("--s", type=int, default=None, help="default: T")
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--k", type=int, default=None, help="default: N")
    p.add_argument("--h", type=int, default=64)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--grad", action="store_true")
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--rounds", type=int, default=7)
    return p.parse_args(argv)


def timed(fn, args, iters):
    """(wall, cpu) seconds per call over `iters` calls."""
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(iters):
        out = fn(*args)
    jax.block_until_ready(out)
    return ((time.perf_counter() - w0) / iters,
            (time.process_time() - c0) / iters)


def compare(name, fa, fx, args, a):
    ra, rx = fa(*args), fx(*args)
    for x, y in zip(ra if isinstance(ra, tuple) else (ra,),
                    rx if isinstance(rx, tuple) else (rx,)):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        err = np.linalg.norm(x - y) / np.linalg.norm(y)
        if not err <= 2e-5:
            sys.exit(f"jax_sdpa.py: {name}: attn and xla differ (rel_l2 {err:.3g})")
    rows = {"attn": [], "xla": []}
    for r in range(a.rounds):
        order = (("attn", fa), ("xla", fx)) if r % 2 == 0 else (("xla", fx), ("attn", fa))
        for who, fn in order:
            rows[who].append(timed(fn, args, a.iters))
    med = {w: (statistics.median(x[0] for x in v), min(x[0] for x in v),
               statistics.median(x[1] for x in v)) for w, v in rows.items()}
    for w in ("attn", "xla"):
        print(f"{name:8s} {w:5s} wall median {med[w][0] * 1e3:9.3f} ms  best "
              f"{med[w][1] * 1e3:9.3f} ms  cpu median {med[w][2] * 1e3:9.3f} ms")
    print(f"{name:8s} xla/attn wall {med['xla'][0] / med['attn'][0]:.2f}x  cpu "
          f"{med['xla'][2] / med['attn'][2]:.2f}x")


def main(argv):
    a = parse_args(argv)
    global jax, jnp, attn
    import jax
    import jax.numpy as jnp

    import attn.jax
    s, k = a.s or a.t, a.k or a.n
    rng = np.random.default_rng(0)
    q = jnp.asarray(rng.standard_normal((a.b, a.t, a.n, a.h)), jnp.float32)
    kk = jnp.asarray(rng.standard_normal((a.b, s, k, a.h)), jnp.float32)
    v = jnp.asarray(rng.standard_normal((a.b, s, k, a.h)), jnp.float32)
    causal = True if a.causal else None
    ours = lambda q, k, v: attn.jax.sdpa(q, k, v, causal=causal)  # noqa: E731
    xla = lambda q, k, v: jax.nn.dot_product_attention(  # noqa: E731
        q, k, v, is_causal=a.causal, implementation="xla")
    print(f"jax {jax.__version__}, backend {jax.default_backend()}, "
          f"q [{a.b}, {a.t}, {a.n}, {a.h}], k/v [{a.b}, {s}, {k}, {a.h}], "
          f"causal={a.causal}, f32, {a.rounds} rounds x {a.iters} calls")
    compare("forward", jax.jit(ours), jax.jit(xla), (q, kk, v), a)
    if a.grad:
        def grad(fn):
            return jax.jit(jax.grad(lambda q, k, v: jnp.sum(fn(q, k, v) ** 2),
                                    argnums=(0, 1, 2)))
        compare("grad", grad(ours), grad(xla), (q, kk, v), a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
