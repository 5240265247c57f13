"""attn inside Hugging Face transformers (attn.transformers): small randomly
initialised models built from configs (no weights downloaded), run with
attn_implementation="attn" against transformers' "sdpa" and "eager" on the
same weights. Skipped where torch or transformers is not installed.

Logits are held to docs/numerics.md's f32 rule against the model run in
float64 with eager attention, the rule's `sens` (the input's own
conditioning) measured by transformers' own f32 implementations: how far
"sdpa" and "eager" in f32 land from the same f64 result."""

import copy

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import attn.transformers as attn_tf  # noqa: E402

NAME = attn_tf.register()


def small(config_cls, **kw):
    """A tiny config: two layers, hidden 64, four query heads of dim 16.
    initializer_range 0.2 makes the attention far from uniform."""
    base = dict(vocab_size=96, hidden_size=64, intermediate_size=96,
                num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=128, initializer_range=0.2)
    base.update(kw)
    return config_cls(**base)


def build(config, auto=transformers.AutoModelForCausalLM):
    torch.manual_seed(0)
    return auto.from_config(config, attn_implementation=NAME).eval()


def with_impl(model, impl, dtype=None):
    """A copy of model (same weights) running attention `impl`."""
    other = copy.deepcopy(model)
    if dtype is not None:
        other = other.to(dtype)
    other.set_attn_implementation(impl)
    return other


def errors(x, ref):
    x, ref = x.double(), ref.double()
    return (float((x - ref).norm() / ref.norm()),
            float((x - ref).abs().max()))


def check_f32_rule(got, ref64, others):
    """docs/numerics.md's f32 rule for `got` against the f64 result ref64,
    sens taken from transformers' own f32 results `others`."""
    sens = [errors(o, ref64) for o in others]
    sens_rel = max(s[0] for s in sens)
    sens_abs = max(s[1] for s in sens)
    rel, mabs = errors(got, ref64)
    assert rel <= 1e-5 + 4 * sens_rel, (rel, sens)
    bound = 1e-4 * max(1.0, float(ref64.abs().max())) + 4 * sens_abs
    assert mabs <= bound, (mabs, bound, sens)


def run_logits(model, ids, mask=None):
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask).logits


# Decoders: (config, f32 implementations transformers has for it).
# Gemma 2's softcap is refused by transformers' "sdpa": eager only.
DECODERS = {
    "llama": (lambda: small(transformers.LlamaConfig, num_key_value_heads=2),
              ("sdpa", "eager")),
    "mistral": (lambda: small(transformers.MistralConfig, num_key_value_heads=2,
                              sliding_window=6), ("sdpa", "eager")),
    "gemma2": (lambda: small(transformers.Gemma2Config, num_key_value_heads=2,
                             head_dim=16, sliding_window=6,
                             attn_logit_softcapping=2.0,
                             query_pre_attn_scalar=16), ("eager",)),
}


@pytest.mark.parametrize("arch", sorted(DECODERS))
def test_decoder_logits_and_generate(arch):
    make_config, impls = DECODERS[arch]
    model = build(make_config())
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 96, (2, 20), generator=g)
    attn_tf.reset_stats()
    got = run_logits(model, ids)
    assert attn_tf.stats() == {"calls": 2, "fallbacks": {}}
    others = [run_logits(with_impl(model, impl), ids) for impl in impls]
    ref64 = run_logits(with_impl(model, "eager", torch.float64), ids)
    check_f32_rule(got, ref64, others)

    # Greedy generation with a KV cache: a left-padded batch (the mask
    # goes to attn as a mask) and, for the sliding windows, past the window.
    mask = torch.ones_like(ids)
    mask[0, :5] = 0
    kw = dict(attention_mask=mask, max_new_tokens=8, do_sample=False,
              pad_token_id=0)
    with torch.no_grad():
        tokens = model.generate(ids, **kw)
        for impl in impls:
            assert torch.equal(tokens, with_impl(model, impl).generate(ids, **kw))
    assert not attn_tf.stats()["fallbacks"]


def test_bert_encoder_with_padding():
    config = small(transformers.BertConfig, intermediate_size=96)
    model = build(config, transformers.AutoModel)
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(3, 96, (3, 24), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 17:] = 0   # right padding: attn's key lengths
    mask[2, 9:] = 0

    def hidden(m):
        with torch.no_grad():
            return m(input_ids=ids, attention_mask=mask).last_hidden_state

    attn_tf.reset_stats()
    got = hidden(model)
    assert attn_tf.stats() == {"calls": 2, "fallbacks": {}}
    others = [hidden(with_impl(model, impl)) for impl in ("sdpa", "eager")]
    ref64 = hidden(with_impl(model, "eager", torch.float64))
    valid = mask.bool()  # padded positions are not compared
    check_f32_rule(got[valid], ref64[valid], [o[valid] for o in others])


def test_llama_gradients():
    """A training step's parameter gradients (right-padded batch: the mask
    goes to the backward as a mask) against sdpa's and eager's, under the
    f32 rule against float64."""
    model = build(DECODERS["llama"][0]()).train()
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(3, 96, (2, 16), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 11:] = 0
    labels = ids.masked_fill(mask == 0, -100)

    def grads(m):
        m.zero_grad()
        m(input_ids=ids, attention_mask=mask, labels=labels).loss.backward()
        return torch.cat([p.grad.flatten() for p in m.parameters()
                          if p.grad is not None])

    attn_tf.reset_stats()
    got = grads(model)
    assert attn_tf.stats() == {"calls": 2, "fallbacks": {}}
    others = [grads(with_impl(model, impl)) for impl in ("sdpa", "eager")]
    ref64 = grads(with_impl(model, "eager", torch.float64))
    check_f32_rule(got, ref64, others)


def test_fallbacks_are_counted():
    model = build(DECODERS["gemma2"][0]())
    ids = torch.randint(3, 96, (1, 10), generator=torch.Generator().manual_seed(4))
    attn_tf.reset_stats()
    with torch.no_grad():
        out = model(input_ids=ids, output_attentions=True)
    assert attn_tf.stats() == {"calls": 0,
                               "fallbacks": {"output_attentions": 2}}
    assert len(out.attentions) == 2 and out.attentions[0].shape == (1, 4, 10, 10)
    ref = run_logits(with_impl(model, "eager"), ids)
    torch.testing.assert_close(out.logits, ref)
    # Training: the softcap has no backward in attn.
    attn_tf.reset_stats()
    model.train()
    model(input_ids=ids).logits.sum().backward()
    assert attn_tf.stats() == {"calls": 0,
                               "fallbacks": {"softcap under autograd": 2}}


@pytest.mark.parametrize("case", ["causal", "cache", "window", "padding",
                                  "bidirectional-padding", "left-padding"])
def test_mask_plans(case):
    """Which boolean masks become attn's causal/window/key lengths, and
    which stay masks (the masks transformers' sdpa_mask builds)."""
    from transformers.masking_utils import (
        and_masks, causal_mask_function, padding_mask_function, sdpa_mask,
        sliding_window_causal_mask_function, bidirectional_mask_function)
    q = torch.zeros(2, 4, 6, 16)
    pad = torch.ones(2, 6, dtype=torch.bool)
    lk, q_offset, fn, window = 6, 0, causal_mask_function, None
    expect = dict(causal="top_left")
    if case == "cache":
        lk, q_offset, pad = 9, 3, torch.ones(2, 9, dtype=torch.bool)
        expect = dict(causal="bottom_right")
    elif case == "window":
        lk, q_offset, pad = 9, 3, torch.ones(2, 9, dtype=torch.bool)
        window, fn = 3, sliding_window_causal_mask_function(3)
        expect = dict(causal="bottom_right", window=(2, 0))
    elif case == "padding":
        pad[1, 4:] = False
        expect = dict(causal="top_left", key_lengths=[6, 4])
    elif case == "bidirectional-padding":
        pad[0, 5:] = False
        fn = bidirectional_mask_function
        expect = dict(causal=None, key_lengths=[5, 6])
    elif case == "left-padding":
        pad[1, :2] = False
        expect = dict(causal=None, mask=True)
    m = sdpa_mask(batch_size=2, q_length=6, kv_length=lk, q_offset=q_offset,
                  mask_function=and_masks(fn, padding_mask_function(pad)),
                  allow_is_causal_skip=False)
    k = torch.zeros(2, 2, lk, 16)
    p = attn_tf.plan(m, q, k, True, window)
    assert p.causal == expect.get("causal")
    assert p.window == expect.get("window")
    kl = expect.get("key_lengths")
    assert (p.key_lengths is None if kl is None
            else p.key_lengths.tolist() == kl)
    assert (p.mask is not None) == expect.get("mask", False)
    with torch.inference_mode():  # inference tensors have no _version
        assert attn_tf.plan(m.clone(), q, k, True, window).causal == p.causal
    # Under autograd a window or padding stays a mask (the backward's).
    g = attn_tf.plan(m, q, k, True, window, grad=True)
    assert g.key_lengths is None and g.window is None
    assert g.causal == p.causal
    assert (g.mask is not None) == bool(
        expect.get("mask") or kl or expect.get("window"))


def test_decode_step():
    """One query over 300 cached keys: K and V padded to 512 rows for a
    static library (DECODE_BUCKET), key lengths hiding the padding; with no
    mask, a left-padding mask and a sliding window, against transformers'
    sdpa."""
    import types
    from transformers.integrations.sdpa_attention import \
        sdpa_attention_forward
    module = types.SimpleNamespace(is_causal=True, num_key_value_groups=2)
    g = torch.Generator().manual_seed(5)
    q = torch.randn(2, 4, 1, 16, generator=g)
    k, v = (torch.randn(2, 2, 300, 16, generator=g) for _ in range(2))
    left = torch.ones(2, 1, 1, 300, dtype=torch.bool)
    left[1, ..., :7] = False
    window = torch.zeros(2, 1, 1, 300, dtype=torch.bool)
    window[..., -6:] = True
    for mask, sliding in ((None, None), (left, None), (window, 6)):
        p = attn_tf.plan(mask, q, k, True, sliding)
        kp, vp, bp = attn_tf._decode_bucket(k, v, p)
        assert kp.shape[2] == vp.shape[2] == 512
        assert bp.key_lengths.tolist() == [300, 300]
        assert (bp.window is None) == (sliding is None)
        out, _ = attn_tf.attention_forward(module, q, k, v, mask,
                                           scaling=0.25,
                                           sliding_window=sliding)
        ref, _ = sdpa_attention_forward(module, q, k, v, mask, scaling=0.25)
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
