"""attn.sdpa_varlen's backward through torch.autograd (torch.ops.attn.
sdpa_varlen, attn.sdpa_varlen_grad compiled by attn-compile): the packed
gradients against PyTorch's own in f64, sequence by sequence, with an empty
query sequence, a sequence without keys, GQA and both causal alignments; and
a refused gradient of the lse. Skipped where torch is not installed."""

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import attn.torch  # noqa: E402,F401


def rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(dtype)


def rel(a, b):
    a, b = a.double(), b.double()
    n = b.norm()
    return ((a - b).norm() / (n if n > 0 else 1)).item()


def offsets(lengths):
    return torch.tensor([0] + list(torch.tensor(lengths).cumsum(0)),
                        dtype=torch.int32)


def torch_reference(q, k, v, d_out, lq, lk, hq, hkv, causal, scale):
    """Each sequence through PyTorch's SDPA in f64, packed back."""
    qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
    cq, ck = offsets(lq), offsets(lk)
    outs = []
    for s in range(len(lq)):
        qs = qd[cq[s]:cq[s + 1]].transpose(0, 1)[None]
        ks = kd[ck[s]:ck[s + 1]].transpose(0, 1)[None]
        vs = vd[ck[s]:ck[s + 1]].transpose(0, 1)[None]
        if lq[s] == 0:
            continue
        if lk[s] == 0:
            outs.append((cq[s], torch.zeros(lq[s], hq, v.shape[-1],
                                            dtype=torch.float64)))
            continue
        m = None
        if causal == "bottom_right":
            m = (torch.arange(lk[s])[None, :]
                 <= torch.arange(lq[s])[:, None] + lk[s] - lq[s])
        elif causal == "top_left":
            m = torch.arange(lk[s])[None, :] <= torch.arange(lq[s])[:, None]
        o = F.scaled_dot_product_attention(qs, ks, vs, attn_mask=m,
                                           scale=scale,
                                           enable_gqa=hq != hkv)
        outs.append((cq[s], o[0].transpose(0, 1)))
    total = sum((o * d_out[int(c):int(c) + o.shape[0]].double()).sum()
                for c, o in outs)
    total.backward()
    grads = []
    for t in (qd, kd, vd):
        grads.append(t.grad if t.grad is not None else torch.zeros_like(t))
    return grads


CASES = [
    # lengths q, lengths k, hq, hkv, d, dv, causal, dtype
    ([5, 17, 0, 1, 9], [7, 17, 3, 0, 30], 4, 2, 32, 24, None, torch.float32),
    ([5, 17, 0, 1, 9], [7, 17, 3, 0, 30], 4, 2, 32, 24, "bottom_right",
     torch.float32),
    ([12, 3, 20], [12, 8, 20], 2, 1, 16, 16, "top_left", torch.float32),
    ([12, 3, 20], [12, 8, 20], 2, 2, 16, 16, "bottom_right", torch.bfloat16),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(
    str(x) if not isinstance(x, list) else "/".join(map(str, x)) for x in c))
def test_varlen_grads_against_torch_f64(case):
    lq, lk, hq, hkv, d, dv, causal, dtype = case
    scale = 0.3
    q = rand((sum(lq), hq, d), 1, dtype).requires_grad_()
    k = rand((sum(lk), hkv, d), 2, dtype).requires_grad_()
    v = rand((sum(lk), hkv, dv), 3, dtype).requires_grad_()
    d_out = rand((sum(lq), hq, dv), 4, dtype)
    out, lse = torch.ops.attn.sdpa_varlen(q, k, v, offsets(lq), offsets(lk),
                                          scale, causal)
    assert lse.shape == (hq, sum(lq)) and lse.dtype == torch.float32
    out.backward(d_out)
    want = torch_reference(q, k, v, d_out, lq, lk, hq, hkv, causal, scale)
    # docs/numerics.md's bounds for the gradients: f32 1e-4 rel_l2 at these
    # sizes; bf16 a few bf16 ulps.
    bound = 1e-4 if dtype == torch.float32 else 2e-2
    for name, got, ref in zip(("d_query", "d_key", "d_value"),
                              (q.grad, k.grad, v.grad), want):
        assert got.dtype == dtype and got.shape == ref.shape
        assert rel(got, ref) < bound, (name, rel(got, ref))
    # The empty query sequence's keys (rows 24..26 of k) get zero gradients.
    if 0 in lq:
        s = lq.index(0)
        k0, k1 = int(offsets(lk)[s]), int(offsets(lk)[s + 1])
        assert bool((k.grad[k0:k1] == 0).all())
        assert bool((v.grad[k0:k1] == 0).all())


def test_lse_gradient_refused():
    lq = [4, 6]
    q = rand((10, 2, 8), 1).requires_grad_()
    k = rand((10, 2, 8), 2).requires_grad_()
    v = rand((10, 2, 8), 3).requires_grad_()
    out, lse = torch.ops.attn.sdpa_varlen(q, k, v, offsets(lq), offsets(lq),
                                          None, None)
    with pytest.raises(NotImplementedError, match="gradient of the lse"):
        (out.sum() + lse.sum()).backward()
