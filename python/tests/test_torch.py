"""attn with PyTorch: tensors in and out, against
torch.nn.functional.scaled_dot_product_attention and the f64 reference; the
custom op under torch.compile; the F.scaled_dot_product_attention swap on
transformer blocks. Skipped where torch is not installed."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import attn  # noqa: E402
import attn.torch  # noqa: E402
from conftest import check  # noqa: E402


def t(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(dtype)


def as_np(x):
    if x.dtype == torch.bfloat16:
        import ml_dtypes
        return x.float().numpy().astype(ml_dtypes.bfloat16)
    return x.numpy()


def assert_matches_torch(out, ref_torch, q, k, v, **kw):
    """out (attn) and torch both against the f64 reference under the rules,
    and attn against torch directly within the f32 bound."""
    assert out.dtype == q.dtype and out.shape == ref_torch.shape
    mask = kw.pop("attn_mask", None)
    check(as_np(out), as_np(q), as_np(k), as_np(v),
          mask=None if mask is None else as_np(mask), **kw)


@pytest.mark.parametrize("case", [
    dict(q=(2, 4, 32, 32), k=(2, 4, 48, 32)),
    dict(q=(4, 20, 32), k=(4, 20, 32), is_causal=True),
    dict(q=(1, 8, 24, 64), k=(1, 2, 24, 64), is_causal=True, enable_gqa=True),
    dict(q=(2, 4, 16, 32), k=(2, 4, 24, 32), mask="bool"),
    dict(q=(2, 4, 16, 32), k=(2, 4, 24, 32), mask="float", scale=0.2),
    dict(q=(1, 2, 64, 64), k=(1, 2, 64, 64), dtype=torch.float16, is_causal=True),
    dict(q=(1, 2, 64, 64), k=(1, 2, 64, 64), dtype=torch.bfloat16),
])
def test_against_torch(case):
    dtype = case.get("dtype", torch.float32)
    q, k, v = (t(case["q"], dtype, 1), t(case["k"], dtype, 2),
               t(case["k"], dtype, 3))
    mask = None
    mshape = case["q"][:-1] + (case["k"][-2],)
    if case.get("mask") == "bool":
        mask = torch.rand(mshape[-2:], generator=torch.Generator().manual_seed(4)) < 0.8
    elif case.get("mask") == "float":
        mask = t((1,) + mshape[1:], dtype, 5)
    kw = dict(is_causal=case.get("is_causal", False), scale=case.get("scale"))
    gqa = case.get("enable_gqa", False)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                         enable_gqa=gqa, **kw)
    out = attn.sdpa(q, k, v, attn_mask=mask, enable_gqa=gqa, threads=1, **kw)
    assert isinstance(out, torch.Tensor)
    assert_matches_torch(out, ref, q, k, v, attn_mask=mask, **kw)
    if dtype == torch.float32:
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)


def test_bottom_right_lse_and_non_contiguous():
    q = t((1, 16, 2, 32), seed=1).transpose(1, 2)  # [B, H, L, D], strided
    k, v = t((1, 2, 40, 32), seed=2), t((1, 2, 40, 32), seed=3)
    assert not q.is_contiguous()
    out, lse = attn.sdpa(q, k, v, is_causal=True, causal="bottom_right",
                         return_lse=True, threads=1)
    assert lse.dtype == torch.float32 and lse.shape == (1, 2, 16)
    check(out.numpy(), q.numpy(), k.numpy(), v.numpy(), is_causal=True,
          causal="bottom_right", lse=lse.numpy())


def test_threads_default_to_torch():
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert attn.default_threads() == 1
    finally:
        torch.set_num_threads(old)


def test_errors_on_tensors():
    q = t((1, 2, 8, 16))
    with pytest.raises(TypeError, match="expected key to be a torch array"):
        attn.sdpa(q, q.numpy(), q)
    with pytest.raises(ValueError, match=r"expected key dim 3 \(8\) to equal query dim 3 \(16\)"):
        attn.sdpa(q, t((1, 2, 8, 8)), t((1, 2, 8, 8)))
    with pytest.raises(TypeError, match="element type"):
        attn.sdpa(q, q.double(), q)


def test_custom_op_and_fake():
    q, k, v = t((1, 4, 16, 32), seed=1), t((1, 4, 16, 32), seed=2), t((1, 4, 16, 32), seed=3)
    out = torch.ops.attn.sdpa(q, k, v, None, True, None, False, "top_left")
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
    torch.library.opcheck(torch.ops.attn.sdpa.default, (q, k, v, None, True, None, False, "top_left"))


def test_torch_compile_calls_the_op():
    q, k, v = t((1, 4, 16, 32), seed=1), t((1, 4, 16, 32), seed=2), t((1, 4, 16, 32), seed=3)

    def f(q, k, v):
        return torch.ops.attn.sdpa(q * 2, k, v, None, True, None, False, "top_left") + 1

    compiled = torch.compile(f, fullgraph=True, backend="eager")
    out = compiled(q, k, v)
    ref = F.scaled_dot_product_attention(q * 2, k, v, is_causal=True) + 1
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)


class LlamaBlock(nn.Module):
    """A small Llama-style attention block: GQA, causal, RMSNorm, SwiGLU."""

    def __init__(self, dim=128, heads=8, kv_heads=2):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.n1, self.n2 = nn.RMSNorm(dim), nn.RMSNorm(dim)
        self.w1 = nn.Linear(dim, 2 * dim, bias=False)
        self.w3 = nn.Linear(dim, 2 * dim, bias=False)
        self.w2 = nn.Linear(2 * dim, dim, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        h = self.n1(x)
        q = self.wq(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.wk(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, -1))
        h = self.n2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def rel(x, ref):
    return float((x.double() - ref.double()).norm() / ref.double().norm())


def test_swap_in_llama_block():
    torch.manual_seed(0)
    block = LlamaBlock().eval()
    x = torch.randn(2, 40, 128)
    with torch.no_grad():
        ref = block(x)
        with attn.torch.use_attn() as swap:
            out = block(x)
    assert swap.calls == 1 and swap.fallbacks == 0
    assert rel(out, ref) <= 1e-5
    # and under torch.compile: the swapped call is the custom op in the graph
    with torch.no_grad(), attn.torch.use_attn() as swap:
        out = torch.compile(block, backend="eager")(x)
    assert swap.calls >= 1 and rel(out, ref) <= 1e-5


def test_swap_in_transformer_encoder_layer():
    torch.manual_seed(0)
    # batch_first=False keeps torch off its fused fast path, so the layer
    # goes through nn.MultiheadAttention -> F.scaled_dot_product_attention.
    layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128,
                                       dropout=0.0).eval()
    x = torch.randn(24, 2, 64)
    mask = nn.Transformer.generate_square_subsequent_mask(24)
    with torch.no_grad():
        ref = layer(x, src_mask=mask, is_causal=True)
        with attn.torch.use_attn() as swap:
            out = layer(x, src_mask=mask, is_causal=True)
    assert swap.calls == 1
    assert rel(out, ref) <= 1e-5


def test_swap_falls_back_under_autograd():
    q = t((1, 2, 8, 16)).requires_grad_()
    with attn.torch.use_attn() as swap:
        F.scaled_dot_product_attention(q, q, q).sum().backward()
    assert swap.fallbacks == 1 and q.grad is not None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_tensors():
    # Runs only where a CUDA device is (never yet): attn-compile --target cuda
    # with the fused GPU lowering.
    q = t((1, 2, 64, 64)).cuda()
    out = attn.sdpa(q, q, q, is_causal=True)
    ref = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)


def test_lse_op_under_torch_compile():
    q, k, v = t((1, 4, 1, 32), seed=1), t((1, 2, 24, 32), seed=2), t((1, 2, 24, 32), seed=3)
    args = (q, k, v, None, True, None, True, "bottom_right")
    torch.library.opcheck(torch.ops.attn.sdpa_lse.default, args)
    out, lse = torch.compile(lambda *a: torch.ops.attn.sdpa_lse(*a),
                             fullgraph=True, backend="eager")(*args)
    assert lse.shape == (1, 4, 1) and lse.dtype == torch.float32
    check(out.numpy(), q.numpy(), k.numpy(), v.numpy(), is_causal=True,
          causal="bottom_right", lse=lse.numpy())


def test_dynamic_library_serves_every_length(private_cache):
    # dynamic=True: one library (attn-compile's dynamic=1) for all B, L, S
    # of the same heads, head dims and mask broadcast (which mask dims are
    # 1): a growing KV cache compiles once.
    for b, lq, lk in ((2, 5, 9), (3, 2, 17), (2, 7, 7)):
        q = t((b, 4, lq, 16), seed=lq)
        k, v = t((b, 2, lk, 16), seed=lk), t((b, 2, lk, 16), seed=lk + 1)
        mask = torch.rand(b, 1, lq, lk, generator=torch.Generator().manual_seed(b)) < 0.8
        mask[..., 0] = True
        out = torch.ops.attn.sdpa(q, k, v, mask, True, None, True,
                                  "bottom_right", None, None, None, None, True)
        check(out.numpy(), q.numpy(), k.numpy(), v.numpy(), mask=mask.numpy(),
              is_causal=True, causal="bottom_right")
    assert attn.cache_info()["misses"] == 1
