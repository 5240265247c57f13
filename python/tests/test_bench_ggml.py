"""The bench's ggml peer (bench/ggml_peer.py, driven by bench/run.py): its
ggml_flash_attn_ext call must give the right answer on small cases, checked
against this suite's own f64 reference (conftest.reference), and its numerics
check must reject a wrong output. Skipped where ggml (PyPI's ggml-python,
installed by scripts/bench.sh) is not installed."""

import os
import sys

import numpy as np
import pytest

from conftest import reference, rel_l2

pytest.importorskip("ggml")
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..",
                                "bench"))
import ggml_peer  # noqa: E402

# (b, hq, hkv, lq, lk, d, causal, kv): the tiled prefill kernel (lq >= 64),
# the one-row-at-a-time kernel (lq < 64), the split-KV decode path (lq = 1,
# lk >= 512), GQA, bottom-right causal with lq < lk, and d = 128.
CASES = [
    (1, 4, 4, 80, 96, 64, "none", "f32"),
    (1, 4, 2, 80, 96, 64, "bottom_right", "f16"),
    (2, 4, 1, 100, 160, 128, "bottom_right", "f32"),
    (1, 4, 2, 16, 48, 64, "bottom_right", "f32"),
    (1, 8, 2, 1, 640, 128, "none", "f32"),
    (1, 8, 2, 1, 128, 64, "none", "f16"),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("b,hq,hkv,lq,lk,d,causal,kv", CASES)
def test_ggml_matches_reference(b, hq, hkv, lq, lk, d, causal, kv, threads):
    q, k, v = ggml_peer.make_inputs(b, hq, hkv, lq, lk, d, 7, kv)
    with ggml_peer.Peer(threads) as p:
        out, ms = p.attention(q, k, v, causal, runs=2)
    assert out.shape == (b, hq, lq, d) and len(ms) == 2
    ref, _ = reference(q, k, v, is_causal=causal != "none",
                       causal="bottom_right")
    assert np.isfinite(out).all()
    # f32 K/V: SPEC's f32 bound; f16 K/V (ggml rounds Q to f16 and
    # accumulates in f16 on its short paths): SPEC's f16 bound.
    assert rel_l2(out, ref) <= (1e-5 if kv == "f32" else 2e-3)
    # The bench's own reference and verdict agree with this suite's.
    rows = np.arange(lq)
    assert rel_l2(ggml_peer.reference_rows(q, k, v, causal, rows), ref) \
        < 1e-12
    c = ggml_peer.check(out, q, k, v, causal, ggml_peer.rule("f32", kv))
    assert c["ok"] and c["rows"] == lq


def test_check_rejects_wrong_output():
    q, k, v = ggml_peer.make_inputs(1, 2, 2, 64, 64, 64, 3, "f32")
    with ggml_peer.Peer(1) as p:
        out, _ = p.attention(q, k, v, "bottom_right")
    assert ggml_peer.check(out, q, k, v, "bottom_right", "f32")["ok"]
    # the non-causal answer is a wrong answer for a causal problem
    with ggml_peer.Peer(1) as p:
        full, _ = p.attention(q, k, v, "none")
    assert not ggml_peer.check(full, q, k, v, "bottom_right", "bf16")["ok"]
    bad = out.copy()
    bad[0, 1, 5, 3] = np.nan  # one element left unwritten
    assert not ggml_peer.check(bad, q, k, v, "bottom_right", "bf16")["ok"]
    bad = out * (1 + 1e-4)  # within f16's bound, not within f32's
    assert not ggml_peer.check(bad, q, k, v, "bottom_right", "f32")["ok"]
    assert ggml_peer.check(bad, q, k, v, "bottom_right", "f16")["ok"]


def test_bench_row_sampling_and_rate():
    # Above full_check_pairs the check samples rows (first and last among
    # them); bench() gives a rate only with a passing check.
    q, k, v = ggml_peer.make_inputs(1, 2, 2, 96, 96, 64, 5, "f16")
    with ggml_peer.Peer(2) as p:
        out, _ = p.attention(q, k, v, "bottom_right")
    c = ggml_peer.check(out, q, k, v, "bottom_right", "f16",
                        full_check_pairs=1000, nrows=10)
    assert c["ok"] and c["rows"] == 10
    flops = 2 * 2 * 128 * 96 * 97 // 2
    r = ggml_peer.bench(1, 1, 2, 2, 96, 96, 64, "bottom_right", "f16", 3, 0,
                        flops)
    assert r["ok"] and r["gflops"] > 0 and r["runs"] == 3
