"""attn.jax: attn's kernels in JAX programs through the XLA FFI handler
(attn/_jax_ffi.cc), against jax.nn.dot_product_attention and the f64
reference (docs/numerics.md's f32 rule), under jax.jit, jax.vmap and
jax.grad. Skipped where jax is not installed."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import attn.jax as attn_jax  # noqa: E402
from conftest import check, rel_l2  # noqa: E402


def rand(shape, seed):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape),
                       jnp.float32)


def bhld(x):
    """[B, T, N, H] (JAX's layout) as [B, N, T, H] (attn's), numpy."""
    return np.swapaxes(np.asarray(x), 1, 2)


# GQA (4 query heads, 2 key/value heads) and Lk > Lq.
Q, K, V = rand((2, 16, 4, 32), 0), rand((2, 24, 2, 32), 1), rand((2, 24, 2, 32), 2)


def test_forward_matches_jax_and_reference():
    out = attn_jax.sdpa(Q, K, V, causal=True)
    ref = jax.nn.dot_product_attention(Q, K, V, is_causal=True)
    # Both meet the f32 rule against the f64 reference; hence each other.
    check(bhld(out), bhld(Q), bhld(K), bhld(V), is_causal=True)
    check(bhld(ref), bhld(Q), bhld(K), bhld(V), is_causal=True)
    assert rel_l2(np.asarray(out, np.float64), np.asarray(ref, np.float64)) <= 2e-5


def test_jit_and_bool_mask():
    mask = jnp.asarray(np.random.default_rng(3).random((2, 1, 16, 24)) > 0.3)
    f = jax.jit(lambda q, k, v, m: attn_jax.sdpa(q, k, v, mask=m, scale=0.2))
    out = f(Q, K, V, mask)
    check(bhld(out), bhld(Q), bhld(K), bhld(V), mask=np.asarray(mask),
          scale=0.2)
    ref = jax.nn.dot_product_attention(Q, K, V, mask=mask, scale=0.2)
    assert rel_l2(np.asarray(out, np.float64), np.asarray(ref, np.float64)) <= 2e-5
    # The second call reuses the compiled program (and kernel).
    assert np.array_equal(np.asarray(f(Q, K, V, mask)), np.asarray(out))


def test_bottom_right():
    out = attn_jax.sdpa(Q, K, V, causal="bottom_right")
    check(bhld(out), bhld(Q), bhld(K), bhld(V), is_causal=True,
          causal="bottom_right")


def test_vmap_runs_each_mapped_call():
    qs = jnp.stack([Q, 2 * Q, -Q])
    out = jax.vmap(lambda q: attn_jax.sdpa(q, K, V, causal=True))(qs)
    assert out.shape == (3,) + Q.shape
    for i in range(3):
        ref = jax.nn.dot_product_attention(qs[i], K, V, is_causal=True)
        assert rel_l2(np.asarray(out[i], np.float64),
                      np.asarray(ref, np.float64)) <= 2e-5


def test_grad_matches_jax():
    def loss(fn):
        return lambda q, k, v: jnp.sum(fn(q, k, v) ** 2)
    ours = jax.jit(jax.grad(loss(lambda q, k, v: attn_jax.sdpa(
        q, k, v, causal=True)), argnums=(0, 1, 2)))(Q, K, V)
    theirs = jax.grad(loss(lambda q, k, v: jax.nn.dot_product_attention(
        q, k, v, is_causal=True)), argnums=(0, 1, 2))(Q, K, V)
    for name, a, b in zip("qkv", ours, theirs):
        assert a.shape == b.shape, name
        # Two f32 computations of the same gradient.
        assert rel_l2(np.asarray(a, np.float64),
                      np.asarray(b, np.float64)) <= 1e-5, name


def test_errors():
    with pytest.raises(TypeError, match="bool mask"):
        attn_jax.sdpa(Q, K, V, mask=jnp.zeros((2, 1, 16, 24)))
    with pytest.raises(ValueError, match="mask dim 3"):
        attn_jax.sdpa(Q, K, V, mask=jnp.ones((1, 1, 16, 5), bool))
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        attn_jax.sdpa(rand((2, 16, 3, 32), 4), K, V)
    with pytest.raises(ValueError, match="causal must be"):
        attn_jax.sdpa(Q, K, V, causal="diagonal")
