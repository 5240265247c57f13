"""attn.sdpa's backward through torch.autograd (attn.sdpa_grad compiled by
attn-compile): the gradients against PyTorch's own in f64, gradcheck, and a
training step of a small causal transformer block. Skipped where torch is not
installed."""

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import attn.torch  # noqa: E402,F401


def rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(dtype)


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm()).item()


def torch_reference(q, k, v, d_out, mask, causal, lq, lk, scale):
    """PyTorch's gradients in f64 (its math path), bottom-right causality as
    a mask."""
    qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
    kw = dict(scale=scale, enable_gqa=q.shape[1] != k.shape[1])
    m = None if mask is None else (mask if mask.dtype == torch.bool
                                   else mask.double())
    if causal == "bottom_right":
        cm = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + lk - lq
        m = cm if m is None else (m & cm if m.dtype == torch.bool else
                                  m.masked_fill(~cm, float("-inf")))
    elif causal == "top_left":
        kw["is_causal"] = True
    out = F.scaled_dot_product_attention(qd, kd, vd, attn_mask=m, **kw)
    out.backward(d_out.double())
    return qd.grad, kd.grad, vd.grad


CASES = [
    # b, hq, hkv, lq, lk, d, dv, causal, mask
    (1, 2, 2, 37, 37, 16, 16, "none", None),
    (2, 4, 2, 33, 70, 32, 24, "bottom_right", None),
    (1, 4, 1, 48, 48, 64, 64, "top_left", None),
    (2, 2, 2, 29, 41, 16, 16, "none", "bool"),
    (1, 4, 2, 20, 66, 8, 8, "bottom_right", "float"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_grads_against_torch_f64(case):
    b, hq, hkv, lq, lk, d, dv, causal, mask_kind = case
    q = rand((b, hq, lq, d), 1).requires_grad_()
    k = rand((b, hkv, lk, d), 2).requires_grad_()
    v = rand((b, hkv, lk, dv), 3).requires_grad_()
    mask = None
    if mask_kind == "bool":
        mask = rand((1, 1, lq, lk), 4) > -1.0  # ~84% visible, rows non-empty
        mask[..., 0] = True
    elif mask_kind == "float":
        mask = rand((b, 1, lq, lk), 4)
    d_out = rand((b, hq, lq, dv), 5)
    out = torch.ops.attn.sdpa(q, k, v, mask, causal != "none", None,
                              hq != hkv,
                              causal if causal != "none" else "top_left")
    out.backward(d_out)
    ref = torch_reference(q, k, v, d_out, mask, causal, lq, lk, None)
    for got, want in zip((q.grad, k.grad, v.grad), ref):
        assert rel(got, want) < 2e-5


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 4e-3),
                                       (torch.bfloat16, 3e-2)])
def test_low_precision_grads(dtype, tol):
    q, k, v = (rand((1, 2, 40, 32), s, dtype).requires_grad_()
               for s in (1, 2, 3))
    d_out = rand((1, 2, 40, 32), 5, dtype)
    out, _ = torch.ops.attn.sdpa_lse(q, k, v, None, True, None, False,
                                     "top_left")
    out.backward(d_out)
    ref = torch_reference(q, k, v, d_out, None, "top_left", 40, 40, None)
    for got, want in zip((q.grad, k.grad, v.grad), ref):
        assert got.dtype == dtype
        assert rel(got, want) < tol


@pytest.mark.filterwarnings("ignore:Input #.* is not a double precision")
def test_gradcheck_f32():
    # attn has no f64 kernels: gradcheck's finite differences run in f32,
    # hence the step and tolerances (an f64 gradcheck would use 1e-6/1e-5).
    q, k, v = (rand((1, 2, 5, 4), s).requires_grad_() for s in (1, 2, 3))

    def f(q, k, v):
        return torch.ops.attn.sdpa(q, k, v, None, True, 0.7, False,
                                   "top_left")

    assert torch.autograd.gradcheck(f, (q, k, v), eps=1e-2, atol=5e-3,
                                    rtol=5e-3, nondet_tol=1e-6,
                                    fast_mode=False)


def test_lse_gradient_is_refused():
    q, k, v = (rand((1, 1, 8, 8), s).requires_grad_() for s in (1, 2, 3))
    out, lse = torch.ops.attn.sdpa_lse(q, k, v, None, False, None, False,
                                       "top_left")
    with pytest.raises(NotImplementedError, match="lse"):
        (out.sum() + lse.sum()).backward()


class Block(nn.Module):
    """A pre-norm causal transformer block whose attention is `attend`."""

    def __init__(self, dim=32, heads=4, attend=None):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                 nn.Linear(4 * dim, dim))
        self.attend = attend

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads,
                                               c // self.heads).unbind(2)
        y = self.attend(q.transpose(1, 2).contiguous(),
                        k.transpose(1, 2).contiguous(),
                        v.transpose(1, 2).contiguous())
        x = x + self.proj(y.transpose(1, 2).reshape(b, n, c))
        return x + self.mlp(self.norm2(x))


def test_training_step_matches_torch():
    torch.manual_seed(0)
    ours = Block(attend=lambda q, k, v: torch.ops.attn.sdpa(
        q, k, v, None, True, None, False, "top_left"))
    theirs = Block(attend=lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True))
    theirs.load_state_dict(ours.state_dict())
    x = rand((2, 24, 32), 7)
    target = rand((2, 24, 32), 8)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (ours, theirs)]
    for step in range(2):
        losses = []
        for m, opt in zip((ours, theirs), opts):
            opt.zero_grad()
            loss = F.mse_loss(m(x), target)
            loss.backward()
            losses.append(loss.item())
        assert abs(losses[0] - losses[1]) <= 1e-5 * abs(losses[1])
        for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
            assert rel(p.grad, q.grad) < 1e-4, (step, name)
        for opt in opts:
            opt.step()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert rel(p.detach(), q.detach()) < 1e-5
