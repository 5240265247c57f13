"""Every script in bench/ and scripts/ answers --help (and -h) with a usage
paragraph and exit status 0, quickly, without building anything: the build
folders it could use are pointed at paths that must still be absent
afterwards, and attn-compile and attn-run at a path that does not exist."""

import glob
import os
import re
import signal
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPTS = sorted(
    os.path.relpath(p, ROOT)
    for d in ("bench", "scripts") for ext in ("py", "sh")
    for p in glob.glob(os.path.join(ROOT, d, f"*.{ext}")))


def test_scripts_found():
    assert "bench/ab.py" in SCRIPTS and "scripts/setup.sh" in SCRIPTS


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_help(script, flag, tmp_path):
    nothing = tmp_path / "absent"
    env = dict(os.environ, ATTN_BUILD_DIR=str(nothing / "build"),
               ATTN_ASAN_BUILD_DIR=str(nothing / "build-asan"),
               ATTN_COMPILE=str(nothing / "attn-compile"),
               ATTN_RUN=str(nothing / "attn-run"))
    runner = ["bash"] if script.endswith(".sh") else [sys.executable]
    # Its own session: a script that starts building anyway is stopped
    # whole, compiler processes included.
    proc = subprocess.Popen(runner + [os.path.join(ROOT, script), flag],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{script} {flag} still ran after 60 s")
    assert proc.returncode == 0, out + err
    assert re.search(r"^usage:", out, re.I | re.M), out
    # A paragraph: some line of prose besides the usage line and options.
    prose = [line for line in out.splitlines()
             if len(line) >= 40 and not line.lower().startswith("usage")
             and not line.lstrip().startswith("-")]
    assert prose, out
    assert not nothing.exists()
    assert not os.listdir(tmp_path)
