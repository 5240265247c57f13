"""scripts/sweep.py, the random sweep of attn-run specs: its cases are the
same for a seed, valid by construction (what docs/attn-run.md and
attn.sdpa_grad accept), and a case attn-run fails is reported and fails the
sweep."""

import importlib.util
import os
import stat
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
spec = importlib.util.spec_from_file_location("sweep", SWEEP)
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)

CASES = [sweep.draw_case(3, i) for i in range(400)]


def test_cases_repeat_for_a_seed():
    assert [sweep.draw_case(3, i) for i in range(400)] == CASES
    assert [sweep.draw_case(4, i) for i in range(400)] != CASES


def test_cases_are_valid_specs():
    for s, args, grad in CASES:
        assert s["hq"] % s["hkv"] == 0
        if "seqlens_q" in s:
            n = len(s["seqlens_q"].split("/"))
            assert len(s.get("seqlens_k", s["seqlens_q"]).split("/")) == n
            assert not {"b", "lq", "lk", "mask", "key_lengths"} & set(s)
        if "mask_shape" in s:
            full = [s["b"], s["hq"], s["lq"], s["lk"]]
            shape = [int(x) for x in s["mask_shape"].split("x")]
            assert all(x in (1, f) for x, f in zip(shape, full))
        if grad:
            # attn.sdpa_grad takes a mask, scale and causal only, and
            # --grad takes no --guard-pages.
            assert not {"window", "softcap", "key_lengths", "alibi",
                        "seqlens_q"} & set(s)
            assert "--guard-pages" not in args


def test_cases_cover_the_features():
    keys = set()
    for s, args, grad in CASES:
        keys |= set(s) | {a for a in args if a.startswith("--")}
    for want in ["mask", "window", "softcap", "alibi", "key_lengths",
                 "seqlens_q", "dynamic", "lse", "causal", "--grad",
                 "--guard-pages", "--kv-splits", "--decode-rows",
                 "--block-q", "--reg-block", "--prefetch-spread"]:
        assert want in keys, want


def test_kernels_come_from_the_host_list():
    # Only paths the CPU runs; the rest of a case does not depend on them.
    every = ("avx2", "avx512", "avx512-bf16", "amx", "amx-emulated")
    seen = set()
    for i in range(400):
        spec, args, grad = sweep.draw_case(3, i, every)
        if "--emulate-amx" in args:
            assert args[args.index("--kernels") + 1] == "amx"
            assert args[args.index("--emulate-amx") + 1] == "true"
            assert args[args.index("--amx-fp16") + 1] in ("true", "false")
            seen.add("amx-emulated")
        elif "--kernels" in args:
            seen.add(args[args.index("--kernels") + 1])
        assert spec == CASES[i][0] and grad == CASES[i][2]
        only_avx2 = CASES[i][1]
        if "--kernels" in only_avx2:
            assert only_avx2[only_avx2.index("--kernels") + 1] == "avx2"
    assert seen == set(every)
    assert sweep.host_kernels() == ("avx2",)


def test_kernels_forced_on_every_case():
    # --kernels: every case on the path, the rest of each case as drawn.
    every = ("avx2", "avx512-bf16", "amx-emulated")
    fp16 = set()
    for i in range(100):
        spec, args, grad = sweep.draw_case(3, i, every, "amx-emulated")
        assert spec == CASES[i][0] and grad == CASES[i][2]
        assert args.count("--kernels") == 1
        assert args[args.index("--kernels") + 1] == "amx"
        assert args[args.index("--emulate-amx") + 1] == "true"
        fp16.add(args[args.index("--amx-fp16") + 1])
        spec, args, grad = sweep.draw_case(3, i, every, "avx2")
        assert args[args.index("--kernels") + 1] == "avx2"
        assert "--emulate-amx" not in args
    assert fp16 == {"true", "false"}


def test_kernels_the_host_lacks_are_refused(tmp_path):
    # A fake attn-run that runs avx512 only: no amx, emulated or not.
    fake = tmp_path / "attn-run"
    fake.write_text('#!/bin/sh\ncase "$*" in *"--kernels avx512"|'
                    '*"--kernels avx512 "*) exit 0 ;; esac\nexit 2\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    r = subprocess.run([sys.executable, SWEEP, "--seed", "1", "--cases", "3",
                        "--attn-run", str(fake), "--kernels", "amx"],
                       capture_output=True, text=True)
    assert r.returncode == 3
    assert "--kernels amx is not among this host's paths" in r.stdout


def test_a_failing_case_fails_the_sweep(tmp_path):
    fake = tmp_path / "attn-run"
    fake.write_text("#!/bin/sh\necho '  out  f64  rel_l2 1  FAIL'\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    r = subprocess.run([sys.executable, SWEEP, "--seed", "1", "--cases", "3",
                        "--attn-run", str(fake)], capture_output=True,
                       text=True)
    assert r.returncode == 1
    assert "FAIL case 0 (exit 1)" in r.stdout
    assert "sweep: 0 passed, 1 failed" in r.stdout


def _attn_run():
    path = os.environ.get("ATTN_RUN") or os.path.join(ROOT, "build", "bin", "attn-run")
    if not os.path.exists(path):
        pytest.skip("attn-run not built")
    return path


def test_host_kernels_are_those_attn_run_takes(tmp_path):
    # A fake attn-run that runs avx512 only: the probe keeps avx2 and it.
    fake = tmp_path / "attn-run"
    fake.write_text('#!/bin/sh\ncase "$*" in *"--kernels avx512"|'
                    '*"--kernels avx512 "*) exit 0 ;; esac\nexit 2\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    assert sweep.host_kernels(str(fake)) == ("avx2", "avx512")
    assert set(sweep.host_kernels(_attn_run())) <= {
        "avx2", "avx512", "avx512-bf16", "amx", "amx-emulated"}


def test_a_few_cases_pass():
    r = subprocess.run([sys.executable, SWEEP, "--seed", "11", "--cases", "4",
                        "--attn-run", _attn_run()], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout
    assert "sweep: 4 passed, 0 failed" in r.stdout
