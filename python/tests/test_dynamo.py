"""torch.compile(model, backend="attn") (attn.dynamo): SDPA calls of the
compiled graph become torch.ops.attn.sdpa without use_attn(); outputs
against eager torch; fallbacks counted. Skipped where torch is not
installed."""

import copy
import logging

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import attn.dynamo  # noqa: E402


class Block(nn.Module):
    """A GQA attention block that calls F.scaled_dot_product_attention the
    ways models do: causal, or a mask, an explicit scale (compiled with
    "attn_eager": Inductor would compile its linear layers' kernels)."""

    def __init__(self, dim=64, heads=4, kv_heads=2, mask=None, causal=False,
                 dropout=0.0):
        super().__init__()
        self.heads, self.kv_heads, self.d = heads, kv_heads, dim // heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * kv_heads * self.d)
        self.o = nn.Linear(dim, dim)
        self.mask, self.causal, self.dropout = mask, causal, dropout

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.heads, self.d).transpose(1, 2)
        k, v = self.kv(x).view(b, n, 2, self.kv_heads, self.d).unbind(2)
        y = F.scaled_dot_product_attention(
            q, k.transpose(1, 2), v.transpose(1, 2), attn_mask=self.mask,
            is_causal=self.causal, scale=0.2, enable_gqa=True,
            dropout_p=self.dropout)
        return self.o(torch.relu(y.transpose(1, 2).reshape(b, n, -1)))


def ops_of(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def capture_graphs(monkeypatch):
    """Records the graphs attn's backend hands to Inductor."""
    seen = []
    real = attn.dynamo.rewrite

    def spy(gm):
        result = real(gm)
        seen.append(gm)
        return result

    monkeypatch.setattr(attn.dynamo, "rewrite", spy)
    return seen


@pytest.mark.parametrize("kind", ["causal", "bool-mask", "float-mask"])
def test_compiled_block_against_eager(kind, monkeypatch, caplog):
    torch.manual_seed(0)
    n = 24
    mask = None
    if kind == "bool-mask":
        mask = torch.rand(2, 1, n, n) < 0.7
        mask[..., 0] = True
    elif kind == "float-mask":
        mask = torch.randn(1, 4, n, n)
    block = Block(mask=mask, causal=kind == "causal").eval()
    x = torch.randn(2, n, 64)
    graphs = capture_graphs(monkeypatch)
    torch._dynamo.reset()
    attn.dynamo.reset_stats()
    with torch.no_grad(), caplog.at_level(logging.INFO, logger="attn"):
        ref = block(x)
        out = torch.compile(block, backend="attn_eager")(x)
    assert attn.dynamo.stats() == {"replaced": 1, "fallbacks": {}}
    assert len(graphs) == 1
    ops = ops_of(graphs[0])
    assert torch.ops.attn.sdpa.default in ops
    assert F.scaled_dot_product_attention not in ops
    assert "1 SDPA call(s) to attn.sdpa, 0 left to torch" in caplog.text
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)


def test_inductor_backend(monkeypatch):
    """backend="attn": the rewritten graph through Inductor (a graph of
    attention alone: Inductor has no kernels of its own to compile)."""
    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                              scale=0.2, enable_gqa=True)

    q, k, v = torch.randn(2, 4, 24, 16), torch.randn(2, 2, 24, 16), \
        torch.randn(2, 2, 24, 16)
    graphs = capture_graphs(monkeypatch)
    torch._dynamo.reset()
    attn.dynamo.reset_stats()
    with torch.no_grad():
        out = torch.compile(f, backend="attn")(q, k, v)
    assert attn.dynamo.stats() == {"replaced": 1, "fallbacks": {}}
    assert ops_of(graphs[0]) == [torch.ops.attn.sdpa.default]
    torch.testing.assert_close(out, f(q, k, v), rtol=1e-4, atol=1e-5)


def test_fallbacks_counted(caplog):
    torch.manual_seed(0)
    x = torch.randn(2, 16, 64)
    torch._dynamo.reset()
    attn.dynamo.reset_stats()
    # Dropout in training; then float64, which attn has no kernels for.
    block = Block(causal=True, dropout=0.5).train()
    with caplog.at_level(logging.INFO, logger="attn"):
        torch.compile(block, backend="attn_eager")(x).sum().backward()
        block.dropout = 0.0
        block.double()
        torch._dynamo.reset()
        out = torch.compile(block, backend="attn_eager")(x.double())
    assert attn.dynamo.stats() == {
        "replaced": 0, "fallbacks": {"dropout": 1, "dtype torch.float64": 1}}
    assert "0 SDPA call(s) to attn.sdpa, 1 left to torch; dropout: 1" \
        in caplog.text
    torch.testing.assert_close(out, block(x.double()))


def test_compiled_training_step(monkeypatch):
    """Autograd through the compiled graph: AOTAutograd traces attn's
    backward (attn::sdpa_backward); gradients against eager torch's."""
    torch.manual_seed(0)
    block = Block(causal=True).train()
    x = torch.randn(2, 16, 64)
    ref = copy.deepcopy(block)
    ref(x).square().sum().backward()
    graphs = capture_graphs(monkeypatch)
    torch._dynamo.reset()
    attn.dynamo.reset_stats()
    torch.compile(block, backend="attn_eager")(x).square().sum().backward()
    assert attn.dynamo.stats() == {"replaced": 1, "fallbacks": {}}
    assert torch.ops.attn.sdpa.default in ops_of(graphs[0])
    for (name, p), r in zip(block.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, r.grad, rtol=1e-4, atol=1e-5,
                                   msg=name)


def test_rewrite_exported_program():
    """The aten op of a torch.export graph, rewritten in place."""
    class M(nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    q, k, v = (torch.randn(1, 2, 12, 16) for _ in range(3))
    gm = torch.export.export(M(), (q, k, v)).module()
    assert torch.ops.aten.scaled_dot_product_attention.default in ops_of(gm)
    assert attn.dynamo.rewrite(gm) == (1, {})
    assert torch.ops.attn.sdpa.default in ops_of(gm)
    assert torch.ops.aten.scaled_dot_product_attention.default \
        not in ops_of(gm)
    torch.testing.assert_close(gm(q, k, v), M()(q, k, v), rtol=1e-4,
                               atol=1e-5)
