"""bench/port-cost.py (the probe behind the Zen 4 store and shuffle costs in
journal/round-24.md): it must build its assembly with this
machine's compiler and report every instruction it knows for each stream the
CPU has (or say the CPU has no avx512f). A short run: no figure is checked,
only that the probe works."""

import os
import re
import subprocess
import sys

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.append(BENCH)  # after site-packages: a bench script never shadows a package
port_cost = __import__("port-cost")


def test_probe_reports_every_instruction():
    run = subprocess.run(
        [sys.executable, os.path.join(BENCH, "port-cost.py"), "--iters",
         "20000"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    flags = port_cost.cpu_flags()
    if "avx512f" not in flags:
        assert "no avx512f" in run.stdout
        pytest.skip("no avx512f here")
    streams = ["fma"] + (["dpbf16"] if "avx512_bf16" in flags else [])
    names = [n for n, _, need in port_cost.OPS
             if not need or "avx512_bf16" in flags]
    blocks = re.split(r"^(\w+): 12 per iteration", run.stdout, flags=re.M)[1:]
    assert blocks[::2] == streams
    for body in blocks[1::2]:
        rows = re.findall(r"^  \+ (.+?)\s+([-+][0-9.]+) cycles each$", body,
                          re.M)
        assert [r[0] for r in rows] == names
