"""attn.compile: specs, dicts and .mlir text; the in-memory and on-disk caches."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import attn
from attn import _kernel
from conftest import check, randn


MLIR = textwrap.dedent("""
    func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    }
    func.func @attend(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                      %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
      %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
          : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
          -> tensor<1x2x8x16xf32>
      return %o : tensor<1x2x8x16xf32>
    }
    """)


def test_spec_kernel():
    kernel = attn.compile("b=1,hq=2,lq=16,lk=24,d=32,causal=bottom_right,lse=1")
    assert kernel.target == "cpu" and kernel.name == "sdpa"
    assert [a["name"] for a in kernel.args] == ["query", "key", "value"]
    q, k, v = randn((1, 2, 16, 32), seed=1), randn((1, 2, 24, 32), seed=2), \
        randn((1, 2, 24, 32), seed=3)
    out, lse = kernel(q, k, v)
    check(out, q, k, v, is_causal=True, causal="bottom_right", lse=lse)


def test_dict_spec_and_dynamic_sizes():
    kernel = attn.compile({"hq": 4, "hkv": 2, "lq": 8, "d": 16,
                           "mask": "bool", "dynamic": 1})
    assert kernel.dims == ["b", "lq", "lk"]
    for b, lq, lk in ((1, 8, 8), (3, 5, 19)):
        q = randn((b, 4, lq, 16), seed=b)
        k, v = randn((b, 2, lk, 16), seed=2), randn((b, 2, lk, 16), seed=3)
        m = np.random.default_rng(lk).random((1, 4, lq, lk)) < 0.8
        out = kernel(q, k, v, m)
        check(out, q, k, v, mask=m)


def test_mlir_text_entry():
    kernel = attn.compile(MLIR, entry="attend")
    assert kernel.name == "attend"
    q, k, v = (randn((1, 2, 8, 16), seed=s) for s in (1, 2, 3))
    check(kernel(q, k, v), q, k, v, is_causal=True)


def test_kernel_argument_errors():
    kernel = attn.compile("b=1,hq=2,lq=16,lk=24,d=32,causal=bottom_right,lse=1")
    q = randn((1, 2, 16, 32))
    with pytest.raises(TypeError, match="takes 3 arguments"):
        kernel(q, q)
    with pytest.raises(ValueError, match=r"expected key dim 2 \(16\) to equal 24"):
        kernel(q, q, q)
    with pytest.raises(TypeError, match="expected key element type to be f32"):
        kernel(q, q.astype(np.float16), q)


def test_bad_spec_and_options():
    with pytest.raises(ValueError, match="--sdpa"):
        attn.compile("b=1,hq=2,lq=16,d=32,dtype=f64")
    with pytest.raises(ValueError, match="target must be"):
        attn.compile("b=1,hq=2,lq=16,d=32", target="tpu")
    with pytest.raises(ValueError, match="block-q must be positive"):
        attn.compile("b=1,hq=2,lq=16,d=32", block_q=0)


def test_bad_sources_and_words():
    # .mlir text that does not verify: a ValueError of one line naming the
    # first error (it was an AttnError holding every diagnostic).
    bad = MLIR.replace("tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, "
                       "tensor<1x2x8x16xf32>\n", "tensor<1x2x8x16xf32>, "
                       "tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>\n", 1)
    assert bad != MLIR
    with pytest.raises(ValueError) as info:
        attn.compile(bad, entry="attend")
    assert str(info.value).startswith("attn.compile: <source>:")
    assert "error: " in str(info.value) and "\n" not in str(info.value)
    # A dict's values are words of the spec: no ',' or '=' smuggling keys in.
    with pytest.raises(ValueError, match="spec value of lq must be one word "
                                         "without ',' or '='"):
        attn.compile({"hq": 2, "lq": "4,lq=8", "d": 8})
    with pytest.raises(ValueError, match="name must be one word"):
        attn.compile("b=1,hq=2,lq=16,d=32", name="a b")
    with pytest.raises(ValueError, match="name must be a C identifier"):
        attn.compile("b=1,hq=2,lq=16,d=32", name="1x")
    with pytest.raises(TypeError, match="tuning must be a dict of knobs, got "
                                        "list"):
        attn.compile("b=1,hq=2,lq=16,d=32", tuning=[1])


@pytest.mark.parametrize("b,lq,lk", [(0, 3, 5), (2, 0, 5), (2, 3, 0),
                                     (0, 0, 0)])
def test_dynamic_kernel_takes_zero_sizes_as_sdpa_does(b, lq, lk):
    # The library takes sizes >= 1; the kernel answers 0-size calls itself,
    # as attn.sdpa does (it raised the library's "must be in [1, 2^40]").
    kernel = attn.compile({"hq": 2, "lq": 4, "d": 8, "lse": 1, "dynamic": 1})
    q, k = randn((b, 2, lq, 8), seed=1), randn((b, 2, lk, 8), seed=2)
    out, lse = kernel(q, k, k)
    want, want_lse = attn.sdpa(q, k, k, return_lse=True)
    assert out.shape == want.shape == (b, 2, lq, 8)
    assert lse.shape == want_lse.shape == (b, 2, lq)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(lse, want_lse)
    if out.size:
        assert (out == 0).all() and np.isneginf(lse).all()


def test_second_call_hits_memory(private_cache):
    spec = "b=1,hq=2,lq=8,d=16"
    first = attn.compile(spec)
    info = attn.cache_info()
    assert info["misses"] == 1 and info["hits"] == 0
    assert info["compile_seconds"] > 0
    assert attn.compile(spec) is first
    q = randn((1, 2, 8, 16))
    attn.sdpa(q, q, q, threads=1)  # the same spec through sdpa: compiled once
    attn.sdpa(q, q, q, threads=1)  # ... then a memory hit
    info = attn.cache_info()
    assert info["hits"] == 2 and info["misses"] == 2, info
    assert info["directory"] == str(private_cache)


def test_second_process_hits_disk(private_cache):
    script = ("import attn, json; attn.compile('b=1,hq=2,lq=8,d=16,lse=1'); "
              "print(json.dumps(attn.cache_info()))")
    import json
    runs = [json.loads(subprocess.run(
        [sys.executable, "-c", script], capture_output=True,
        text=True, check=True).stdout) for _ in range(2)]
    assert runs[0]["misses"] == 1 and runs[0]["disk_hits"] == 0
    assert runs[1]["misses"] == 0 and runs[1]["disk_hits"] == 1
    assert runs[1]["compile_seconds"] == 0


def test_concurrent_processes(private_cache):
    # Three processes wanting the same library at once: one compiles it
    # (under the lock file beside it), the others wait and load it.
    script = ("import attn, numpy as np; k = attn.compile('b=1,hq=2,lq=8,d=16,"
              "causal=top_left'); q = np.ones((1, 2, 8, 16), np.float32); "
              "assert np.allclose(k(q, q, q), 1); "
              "print(attn.cache_info()['misses'])")
    procs = [subprocess.Popen([sys.executable, "-c", script],
                              stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate()[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    assert sum(int(o) for o in outs) == 1, outs  # compiled once
    files = sorted(os.listdir(private_cache))
    # One library, its JSON and its lock file, no staging left.
    assert len(files) == 3, files
    assert [os.path.splitext(f)[1] for f in files] == [".json", ".lock", ".so"]


@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/bin/ptxas"),
                    reason="no CUDA toolkit")
def test_cuda_target_compiles():
    # attn.sdpa through the fused GPU lowering into a cuda library (running
    # it needs a GPU and device tensors).
    k = attn.compile("b=1,hq=2,lq=8,d=16", target="cuda")
    assert k.target == "cuda"


def test_cuda_target_rejects_cpu_options():
    # Knobs of the CPU pipeline only (Tuning.td), and --cpu, are refused
    # before attn-compile runs.
    with pytest.raises(ValueError, match="openmp is an option of target='cpu', "
                       "not target='cuda'"):
        attn.compile("b=1,hq=2,lq=8,d=16", target="cuda", openmp=True)
    with pytest.raises(ValueError, match="omp_schedule is an option of "
                       "target='cpu'"):
        attn.compile("b=1,hq=2,lq=8,d=16", target="cuda",
                     omp_schedule="static")
    with pytest.raises(ValueError, match="cpu is an option of target='cpu'"):
        attn.compile("b=1,hq=2,lq=8,d=16", target="cuda", cpu="znver4")


def test_omp_schedule():
    # The query-block loops' OpenMP schedule: attn-compile's guided unless
    # asked otherwise, recorded in the library's JSON; only with openmp.
    spec = "b=1,hq=2,lq=64,d=16"
    assert attn.compile(spec).omp_schedule is None
    assert attn.compile(spec, openmp=True).omp_schedule == "guided"
    k = attn.compile(spec, openmp=True, omp_schedule="static")
    assert k.omp_schedule == "static"
    q = np.random.default_rng(0).standard_normal((1, 2, 64, 16)).astype(np.float32)
    ref = attn.compile(spec)(q, q, q)
    np.testing.assert_array_equal(k(q, q, q), ref)
    with pytest.raises(ValueError, match="--omp-schedule is an option of --openmp"):
        attn.compile(spec, omp_schedule="static")
    with pytest.raises(ValueError, match="--omp-schedule must be static, "
                       "dynamic or guided, got 'auto'"):
        attn.compile(spec, openmp=True, omp_schedule="auto")


def test_tuning():
    # The fused lowering's tuning knobs (docs/tuning.md), attn.compile's
    # keywords: attn-compile's flags, recorded in the library's JSON and on
    # the kernel; the results still meet the numerics rule.
    spec = "b=1,hq=8,hkv=1,lq=1,lk=300,d=64,lse=1"
    assert attn.compile(spec).tuning == {}
    assert attn.compile(spec, block_q=16).tuning == {"block_q": 16}
    tuning = {"decode_rows": 16, "kv_splits": 2, "reg_block": 3,
              "decode_prefetch_locality": 3, "decode_prefetch": "none",
              "blend_stores": False}
    k = attn.compile(spec, **tuning)
    assert k.tuning == tuning
    # tuning= takes the same, and the kernel's gives them back.
    assert attn.compile(spec, tuning=tuning) is k
    assert attn.compile(spec, **k.tuning) is k
    q, kk, v = (randn(s, seed=i) for i, s in
                enumerate(((1, 8, 1, 64), (1, 1, 300, 64), (1, 1, 300, 64))))
    out, lse = k(q, kk, v)
    check(out, q, np.repeat(kk, 8, axis=1), np.repeat(v, 8, axis=1), lse=lse)
    with pytest.raises(ValueError, match="reg_block is an option of "
                       "target='cpu', not target='cuda'"):
        attn.compile(spec, target="cuda", reg_block=2)
    with pytest.raises(TypeError, match="given twice"):
        attn.compile(spec, reg_block=2, tuning={"reg_block": 3})
    # Ranges and words are attn-compile's, and a bad value is the caller's.
    with pytest.raises(ValueError, match="--decode-prefetch must be auto, all "
                       "or none"):
        attn.compile(spec, decode_prefetch="some")
    with pytest.raises(ValueError, match="--prefetch-spread must be a power of two"):
        attn.compile(spec, prefetch_spread=3)


def test_keywords_are_the_knobs():
    # attn.compile's keywords are the tools' knobs of Tuning.td, as the
    # attn-compile the package runs prints them: each turns into its flag.
    cpu, cuda = attn.knobs("cpu"), attn.knobs("cuda")
    assert {"block_q", "decode_rows", "openmp", "kernels"} <= set(cpu)
    assert {"block_q", "decode_rows", "lazy_rescale", "fold_scale"} <= set(cuda)
    assert "lazy_rescale" not in cpu and "reg_block" not in cuda
    assert cpu["decode_rows"]["flag"] == "--decode-rows"
    assert "avx2" in cpu["vector_width"]["targets"]["cpu"]["defaults"]
    samples = {"int": 1, "bool": True, "str": None}
    for target, known in (("cpu", cpu), ("cuda", cuda)):
        for name, knob in known.items():
            value = samples[knob["type"]]
            if value is None:  # a word: the first one the table allows
                value = {"kernels": "auto", "decode_prefetch": "auto",
                         "omp_schedule": "guided"}[name]
            flags = _kernel.compile_options(target, **{name: value})
            assert flags[2].startswith(knob["flag"] + "="), (name, flags)


def test_unknown_or_mistyped_keyword():
    # One line that names the keyword, before anything is compiled.
    spec = "b=1,hq=2,lq=8,d=16"
    with pytest.raises(TypeError) as e:
        attn.compile(spec, decode_row=4)
    assert str(e.value) == ("attn.compile() got an unexpected keyword "
                            "argument 'decode_row' (did you mean "
                            "'decode_rows'?)")
    with pytest.raises(TypeError) as e:
        attn.compile(spec, block_q="16")
    assert str(e.value) == "attn.compile: block_q must be an int, got str"
    with pytest.raises(TypeError, match="reg_block must be an int, got float"):
        attn.compile(spec, reg_block=2.5)
    with pytest.raises(TypeError, match="blend_stores must be a bool, got int"):
        attn.compile(spec, blend_stores=1)
    with pytest.raises(TypeError, match="decode_prefetch must be a str, got int"):
        attn.compile(spec, decode_prefetch=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'tile'"):
        attn.compile(spec, tuning={"tile": 2})
