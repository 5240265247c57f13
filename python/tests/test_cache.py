"""The disk cache's defences (docs/python.md, "The disk cache"): a cached
library is loaded only when its files are ours, writable by no one else, and
match the size and sha256 its JSON records; anything else is compiled again
and replaced. Directories others can write into, files in the way and paths
that cannot be made fall back to a private temporary cache with one warning.

Most tests replace attn-compile by a stub that copies one library compiled
once (the cache logic is what is tested; a stub call is what "compiled again"
means); the test of a truncated library runs the real compiler in a child
process, where the old SIGBUS would have ended that process only.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

import attn
from attn import _build, _kernel
from conftest import check, randn

SPEC = "b=1,hq=2,lq=4,d=8"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A library compiled for SPEC and its JSON (as the cache holds them)."""
    d = tmp_path_factory.mktemp("pristine")
    old = os.environ.get("ATTN_CACHE_DIR")
    os.environ["ATTN_CACHE_DIR"] = str(d)
    try:
        attn.cache_clear()
        attn.compile(SPEC)
    finally:
        if old is None:
            del os.environ["ATTN_CACHE_DIR"]
        else:
            os.environ["ATTN_CACHE_DIR"] = old
        attn.cache_clear()
    # The library and its JSON (the compile lock beside them holds nothing).
    files = sorted(p for p in os.listdir(d)
                   if p.startswith("libattn_") and not p.endswith(".lock"))
    assert [os.path.splitext(f)[1] for f in files] == [".json", ".so"]
    return {os.path.splitext(f)[1]: d / f for f in files}


@pytest.fixture
def stub(monkeypatch, pristine):
    """attn-compile replaced by a copy of the pristine files; counts calls."""
    calls = []
    real_run = subprocess.run

    def run(cmd, *args, **kwargs):
        if cmd[0] != _build.compiler_path() or "-o" not in cmd:
            return real_run(cmd, *args, **kwargs)
        out = cmd[cmd.index("-o") + 1]
        calls.append(out)
        # attn-compile's own JSON (without the cache record), then the .so.
        desc = json.loads(pristine[".json"].read_text())
        desc.pop(_kernel.CACHE_RECORD)
        with open(out[:-3] + ".json", "w") as f:
            json.dump(desc, f)
        shutil.copyfile(pristine[".so"], out)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(_kernel.subprocess, "run", run)
    return calls


def cached(cache, pristine):
    """Copies the pristine library into `cache`: its paths (.so, .json)."""
    cache.mkdir(mode=0o700, exist_ok=True)
    paths = {}
    for ext, src in pristine.items():
        paths[ext] = cache / src.name
        shutil.copyfile(src, paths[ext])
        os.chmod(paths[ext], 0o755 if ext == ".so" else 0o644)
    return paths


def replace_bytes(path, data):
    """New contents for path under a new inode (the old one may be mapped
    by this process: writing into it in place could fault its code)."""
    tmp = str(path) + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, os.stat(path).st_mode)
    os.replace(tmp, path)


def compile_and_run():
    kernel = attn.compile(SPEC)
    q, k, v = (randn((1, 2, 4, 8), seed=s) for s in (1, 2, 3))
    check(kernel(q, k, v), q, k, v)
    return kernel


def test_intact_entry_is_a_disk_hit(private_cache, pristine, stub):
    cached(private_cache, pristine)
    compile_and_run()
    assert stub == [] and attn.cache_info()["disk_hits"] == 1


def test_record_holds_size_and_hashes(private_cache, pristine):
    desc = json.loads(pristine[".json"].read_text())
    record = desc[_kernel.CACHE_RECORD]
    assert record["size"] == os.path.getsize(pristine[".so"])
    assert record["sha256"] == _kernel._sha256_file(open(pristine[".so"],
                                                         "rb"))
    assert record["description_sha256"] == _kernel._desc_sha256(desc)
    assert stat.S_IMODE(os.stat(pristine[".so"]).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(pristine[".json"]).st_mode) == 0o644


@pytest.mark.parametrize("damage", ["truncated", "overwritten", "json-garbage",
                                    "json-edited", "json-missing-record",
                                    "so-writable-by-others",
                                    "json-writable-by-others", "so-symlink"])
def test_damaged_entry_is_compiled_again(damage, private_cache, pristine,
                                         stub):
    paths = cached(private_cache, pristine)
    so, js = paths[".so"], paths[".json"]
    data = so.read_bytes()
    if damage == "truncated":
        replace_bytes(so, data[:len(data) // 2])
    elif damage == "overwritten":
        replace_bytes(so, data[:100] + bytes(b ^ 0xFF for b in data[100:200])
                      + data[200:])
    elif damage == "json-garbage":
        replace_bytes(js, b"{\"abi\": 1, \x00garbage")
    elif damage == "json-edited":
        desc = json.loads(js.read_text())
        desc["functions"][0]["args"][0]["shape"][0] = 1000
        replace_bytes(js, json.dumps(desc).encode())
    elif damage == "json-missing-record":
        desc = json.loads(js.read_text())
        del desc[_kernel.CACHE_RECORD]
        replace_bytes(js, json.dumps(desc).encode())
    elif damage == "so-writable-by-others":
        os.chmod(so, 0o777)
    elif damage == "json-writable-by-others":
        os.chmod(js, 0o666)
    else:
        elsewhere = private_cache.parent / "elsewhere.so"
        shutil.move(so, elsewhere)
        os.symlink(elsewhere, so)
    compile_and_run()
    assert len(stub) == 1, "the damaged entry was loaded"
    # Replaced by intact files that the next process loads.
    assert not so.is_symlink()
    assert so.read_bytes() == pristine[".so"].read_bytes()
    assert stat.S_IMODE(os.stat(so).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(js).st_mode) == 0o644
    attn.cache_clear()
    compile_and_run()
    assert len(stub) == 1 and attn.cache_info()["disk_hits"] == 1


def test_files_of_another_user_are_not_loaded(private_cache, pristine, stub):
    if os.geteuid() != 0:
        pytest.skip("making a file another user owns needs root")
    paths = cached(private_cache, pristine)
    os.chown(paths[".so"], 12345, 12345)
    compile_and_run()
    assert len(stub) == 1
    assert os.stat(paths[".so"]).st_uid == os.geteuid()


def test_truncated_library_in_a_new_process(private_cache, pristine):
    # Before the size and hash were checked, a truncated library was
    # dlopen'ed and the process died of SIGBUS (a child process here, which
    # compiles it again with the real attn-compile).
    so = cached(private_cache, pristine)[".so"]
    data = so.read_bytes()
    so.write_bytes(data[:len(data) // 3])
    code = (f"import attn; attn.compile({SPEC!r}); "
            "print(attn.cache_info()['misses'])")
    env = dict(os.environ, ATTN_CACHE_DIR=str(private_cache))
    run = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr}"
    assert run.stdout.split() == ["1"]
    assert so.stat().st_size > len(data) // 3


def effective_dir(monkeypatch, path):
    monkeypatch.setenv("ATTN_CACHE_DIR", str(path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = _build.cache_dir()
    return d, [str(w.message) for w in caught]


def test_directory_others_can_write_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    d, caught = effective_dir(monkeypatch, shared)
    assert d != str(shared) and os.path.dirname(d) != str(shared)
    assert len(caught) == 1 and "writable by group or others" in caught[0]
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    # One warning per process and directory.
    assert effective_dir(monkeypatch, shared) == (d, [])


def test_sticky_shared_directory_gets_a_subdirectory(tmp_path, monkeypatch):
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    d, caught = effective_dir(monkeypatch, shared)
    assert caught == []
    assert d == str(shared / f"attn-{os.geteuid()}")
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700


def test_squatted_subdirectory_is_refused(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("making a directory another user owns needs root")
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    squat = shared / f"attn-{os.geteuid()}"
    squat.mkdir(mode=0o700)
    os.chown(squat, 12345, 12345)
    d, caught = effective_dir(monkeypatch, shared)
    assert not d.startswith(str(shared))
    assert len(caught) == 1 and "owned by uid 12345" in caught[0]


@pytest.mark.parametrize("kind", ["a-file", "under-a-file", "proc",
                                  "read-only"])
def test_unusable_directory_falls_back(kind, tmp_path, monkeypatch,
                                       pristine, stub):
    if kind == "a-file":
        path = tmp_path / "file"
        path.write_text("x")
    elif kind == "under-a-file":
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "attn"
    elif kind == "proc":
        path = "/proc/attn-cache"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only directory")
        path = tmp_path / "ro"
        path.mkdir()
        os.chmod(path, 0o500)
    monkeypatch.setenv("ATTN_CACHE_DIR", str(path))
    attn.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_and_run()
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert f"cache directory {path}: " in str(caught[0].message)
    assert attn.cache_info()["directory"] != str(path)
    assert len(stub) == 1
    attn.cache_clear()
