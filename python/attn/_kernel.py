"""Compiled kernels: attn-compile's libraries loaded with ctypes, and their caches.

A kernel is one entry of a library that attn-compile wrote (docs/c-abi.md):
``int32_t NAME(void *const *buffers, const int64_t *dims, void *stream)``,
described by the JSON file beside it. Libraries are cached in memory (keyed by
everything that goes into the compilation) and on disk under cache_dir(); a
library is published there by os.replace() of complete files, so concurrent
processes either see a whole library or none; a process about to compile one
holds an flock on a lock file beside it, so that processes wanting the same
library at once (the ranks of attn.distributed on one machine) compile it
once and load it.
"""

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import numpy as np

from . import _build, _knobs, _loader
from ._loader import ABI_VERSION, AttnError

try:
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bf16 numpy arrays need ml_dtypes; torch bf16 does not
    ml_dtypes = None
    _BF16 = None

NP_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
             "bool": np.dtype(np.bool_)}
if _BF16 is not None:
    NP_DTYPES["bf16"] = _BF16
DTYPE_NAMES = {v: k for k, v in NP_DTYPES.items()}


_lock = threading.Lock()
_memory = {}  # key -> Kernel
_stats = {"hits": 0, "disk_hits": 0, "misses": 0, "compile_seconds": 0.0,
          "load_seconds": 0.0}
_machine = None


def _machine_id():
    """What a "native" library depends on besides the compiler: this CPU."""
    global _machine
    if _machine is None:
        model = ""
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith(("model name", "flags")):
                        model += line
        except OSError:
            pass
        _machine = hashlib.sha256(model.encode()).hexdigest()[:16]
    return _machine


_compiler_ids = {}  # (path, size, mtime) -> content hash


def _compiler_id(path):
    """attn-compile as the cache key sees it: its content, so that a
    reinstall of the same attn-compile (pip install, a new venv) keeps the
    cache and a rebuild that changes it does not; hashed once per (path,
    size, mtime)."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _compiler_ids:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _compiler_ids[key] = h.hexdigest()
    return _compiler_ids[key]


class Kernel:
    """One entry of a compiled library; call it with numpy arrays or torch tensors.

    ``kernel(*args)`` checks the arguments against the library's JSON
    (dtypes, shapes; dynamic sizes are read off the arguments), allocates the
    results and returns them (one array, or a tuple when there are several).
    Non-contiguous arguments are copied. ``kernel.spec``, ``.args``,
    ``.results``, ``.dims``, ``.target`` and ``.path`` describe it.
    """

    def __init__(self, path, name=None):
        library = _loader.Library(path)
        entry = library.entry(name)
        self.path = library.path
        self.target = library.target
        self.openmp = bool(library.desc.get("openmp", False))
        # The query-block loops' OpenMP schedule; None without OpenMP.
        self.omp_schedule = library.desc.get("omp_schedule")
        # The tuning knobs given when it was compiled, as attn.compile's
        # keywords take them (attn.compile(spec, **kernel.tuning); knobs left
        # at their defaults are absent, openmp and omp_schedule are above).
        self.tuning = dict(library.desc.get("tuning", {}))
        self.name = entry.name
        self.spec = entry.desc.get("spec")
        # attn-compile writes "i1" (the mask) and "i32" (the key lengths):
        # the array backends call them "bool" and "int32".
        for a in entry.args + entry.results:
            a["dtype"] = {"i1": "bool", "i32": "int32"}.get(a["dtype"],
                                                            a["dtype"])
        self.args = entry.args
        self.results = entry.results
        self.dims = entry.dims
        # The loader's entry (attn/_loader.py): entry.fn is the bare ctypes
        # function, entry.buffers_type its buffer array (bench/ times them).
        self.entry = entry
        self._set_threads = library.omp_set_num_threads()

    def __repr__(self):
        return f"<attn.Kernel {self.name} ({self.target}) {self.spec or ''}>"

    # The one place that calls into the library.
    def call_pointers(self, pointers, dims=None, stream=None, threads=None):
        """Runs the entry on raw buffer addresses (arguments, then results)."""
        if threads is not None and self._set_threads is not None:
            self._set_threads(threads)
        self.entry(pointers, dims, stream)

    def __call__(self, *arrays, stream=None, threads=None):
        if len(arrays) != len(self.args):
            raise TypeError(f"attn: {self.name} takes {len(self.args)} "
                            f"arguments ({', '.join(a['name'] for a in self.args)}),"
                            f" got {len(arrays)}")
        from . import _tensors
        backend = _tensors.backend_of(arrays[0])
        sizes = {}
        prepared = []
        for a, x in zip(self.args, arrays):
            x = backend.prepare(x, self.target)
            if backend.dtype_name(x) != a["dtype"]:
                raise TypeError(f"attn: expected {a['name']} element type to "
                                f"be {a['dtype']}, but got "
                                f"{backend.dtype_name(x)}")
            shape = tuple(x.shape)
            if len(shape) != len(a["shape"]):
                raise ValueError(f"attn: expected {a['name']} to have rank "
                                 f"{len(a['shape'])}, but got rank {len(shape)}")
            for i, (want, got) in enumerate(zip(a["shape"], shape)):
                if isinstance(want, str):
                    if sizes.setdefault(want, got) != got:
                        raise ValueError(
                            f"attn: expected {a['name']} dim {i} ({got}) to "
                            f"equal {want} ({sizes[want]})")
                elif want != got:
                    raise ValueError(f"attn: expected {a['name']} dim {i} "
                                     f"({got}) to equal {want}")
            prepared.append(x)
        outs = [backend.empty(tuple(sizes[d] if isinstance(d, str) else d
                                    for d in r["shape"]), r["dtype"],
                              prepared[0])
                for r in self.results]
        ptrs = [backend.pointer(x) for x in prepared + outs]
        dims = [sizes[d] for d in self.dims]
        if stream is None:
            stream = backend.stream(prepared[0])
        self.call_pointers(ptrs, dims, stream, threads)
        return outs[0] if len(outs) == 1 else tuple(outs)


def compile_options(target="cpu", cpu="native", chip=None, cuda_toolkit=None,
                    **options):
    """attn-compile's flags, as a tuple, for a target and attn.compile's
    keyword arguments `options`: the tuning knobs by name (_knobs.flags,
    from attn-compile's own table), checked there; cpu (cpu), chip and
    cuda_toolkit (cuda) are the target's."""
    if target not in ("cpu", "cuda"):
        raise ValueError(f"attn: target must be 'cpu' or 'cuda', got {target!r}")
    flags = ["--target", target] + _knobs.flags(target, options)
    if target == "cpu":
        if cpu != "native":
            flags += ["--cpu", str(cpu)]
    else:
        if cpu != "native":
            raise ValueError("attn.compile: cpu is an option of target='cpu'")
        if chip:
            flags += ["--chip", chip]
        if cuda_toolkit:
            flags += ["--cuda-toolkit", cuda_toolkit]
    return tuple(flags)


def get_kernel(source, flags, name=None, entry=None, key=None):
    """The kernel for (source, flags): from memory, disk, or attn-compile.

    source is a spec string (``b=1,hq=8,...``) or the text of a .mlir file.
    key, when given, is the in-memory key (cheaper than the source text).
    """
    if key is None:
        key = (source, flags, name, entry)
    k = _memory.get(key)
    if k is not None:
        _stats["hits"] += 1
        return k
    with _lock:
        k = _memory.get(key)
        if k is not None:
            _stats["hits"] += 1
            return k
        k = _load_or_compile(source, flags, name, entry)
        _memory[key] = k
        return k


def _load_or_compile(source, flags, name, entry):
    compiler = _build.compiler_path()
    is_mlir = _is_mlir(source)
    ident = json.dumps([ABI_VERSION, _compiler_id(compiler), _machine_id(),
                        source, flags, name, entry])
    digest = hashlib.sha256(ident.encode()).hexdigest()[:32]
    directory = _build.cache_dir()
    lib = os.path.join(directory, f"libattn_{digest}.so")
    fname = name or (None if is_mlir else "sdpa")
    k = _load_cached(lib, fname)
    if k is not None:
        return k
    os.makedirs(directory, exist_ok=True)
    with open(lib[:-3] + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        k = _load_cached(lib, fname)  # another process may have compiled it
        if k is not None:
            return k
        return _compile(source, flags, name, entry, compiler, is_mlir,
                        directory, lib, digest, fname)


def _load_cached(lib, fname):
    """The kernel of a library already in the cache directory, else None."""
    if not (os.path.exists(lib) and os.path.exists(lib[:-3] + ".json")):
        return None
    t0 = time.perf_counter()
    k = Kernel(lib, fname)
    _stats["load_seconds"] += time.perf_counter() - t0
    _stats["disk_hits"] += 1
    return k


def _compile(source, flags, name, entry, compiler, is_mlir, directory, lib,
             digest, fname):
    staging = tempfile.mkdtemp(prefix=".staging-", dir=directory)
    try:
        out = os.path.join(staging, f"libattn_{digest}.so")
        cmd = [compiler]
        if is_mlir:
            src = os.path.join(staging, "input.mlir")
            with open(src, "w") as f:
                f.write(source)
            cmd.append(src)
            if entry:
                cmd += ["--entry", entry]
        else:
            cmd += ["--sdpa", source]
        if name:
            cmd += ["--name", name]
        cmd += list(flags) + ["-o", out]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        _stats["compile_seconds"] += time.perf_counter() - t0
        _stats["misses"] += 1
        if proc.returncode != 0:
            msg = proc.stderr.strip()
            last = msg.splitlines()[-1] if msg else f"exit {proc.returncode}"
            prefix = "attn-compile: error: "
            # Exit 2 naming a flag (--sdpa's spec, a tuning value out of
            # range, a --cpu or --kernels it cannot take): the caller's
            # argument, a ValueError.
            exc = ValueError if proc.returncode == 2 and (
                "--sdpa" in last or last.startswith(prefix + "--")) \
                else AttnError
            raise exc(last[len(prefix):] if last.startswith(prefix) else msg) \
                from None
        # The JSON first, the library last: a library on disk has its JSON.
        os.replace(out[:-3] + ".json", lib[:-3] + ".json")
        os.replace(out, lib)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Kernel(lib, fname)


def _is_mlir(source):
    return "\n" in source or "func.func" in source or "attn.sdpa" in source


def cache_info():
    """Cache statistics of this process: in-memory hits, disk hits, compiles
    (misses), seconds spent in attn-compile and in loading, entries, and the
    cache directory."""
    info = dict(_stats)
    info["entries"] = len(_memory)
    info["directory"] = _build.cache_dir()
    return info


def cache_clear(disk=False):
    """Forgets the in-memory kernels and the statistics; disk=True also
    deletes the libraries in the cache directory."""
    with _lock:
        _memory.clear()
        for k in _stats:
            _stats[k] = 0.0 if k.endswith("seconds") else 0
        if disk:
            d = _build.cache_dir()
            if os.path.isdir(d):
                for f in os.listdir(d):
                    if f.startswith("libattn_"):
                        os.remove(os.path.join(d, f))
