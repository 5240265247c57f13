"""Compiled kernels: attn-compile's libraries loaded with ctypes, and their caches.

A kernel is one entry of a library that attn-compile wrote (docs/c-abi.md):
``int32_t NAME(void *const *buffers, const int64_t *dims, void *stream)``,
described by the JSON file beside it. Libraries are cached in memory (keyed by
everything that goes into the compilation) and on disk under cache_dir(); a
library is published there by os.replace() of complete files, so concurrent
processes either see a whole library or none and at worst compile it twice.
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import numpy as np

from . import _build, _loader
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
        # The tuning options given when it was compiled, as attn.compile's
        # tuning= takes them (options left at their defaults are absent;
        # block_q and block_kv are attn.compile's own arguments).
        self.tuning = {k: v for k, v in library.desc.get("tuning", {}).items()
                       if k not in ("block_q", "block_kv")}
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


# attn.compile's tuning keys per target: the names of the library JSON's
# "tuning" (docs/c-abi.md), each attn-compile's flag with - for _; the bools
# are flags that take =true/=false, the strings take a word; attn-compile
# checks the ranges and the words.
_TUNING_INTS = {
    "cpu": ("narrow_block_q", "kv_splits", "decode_rows", "reg_block",
            "row_vectors", "prefetch_spread", "decode_prefetch_locality"),
    "cuda": ("kv_splits", "decode_rows", "decode_stages", "decode_unroll",
             "shared_memory"),
}
_TUNING_BOOLS = {"cpu": ("blend_stores",),
                 "cuda": ("fold_scale", "lazy_rescale")}
_TUNING_STRS = {"cpu": ("decode_prefetch",), "cuda": ()}


def _tuning_flags(target, tuning):
    ints, bools = _TUNING_INTS[target], _TUNING_BOOLS[target]
    strs = _TUNING_STRS[target]
    flags = []
    for key in sorted(tuning):
        value = tuning[key]
        flag = "--" + key.replace("_", "-")
        if key in bools:
            if not isinstance(value, bool):
                raise TypeError(f"attn: tuning[{key!r}] must be a bool, got "
                                f"{type(value).__name__}")
            flags.append(f"{flag}={'true' if value else 'false'}")
        elif key in ints:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"attn: tuning[{key!r}] must be an int, got "
                                f"{type(value).__name__}")
            flags += [flag, str(value)]
        elif key in strs:
            if not isinstance(value, str):
                raise TypeError(f"attn: tuning[{key!r}] must be a str, got "
                                f"{type(value).__name__}")
            flags.append(f"{flag}={value}")
        else:
            raise ValueError(f"attn: tuning key {key!r} is not one of "
                             f"target={target!r}'s: "
                             + ", ".join(sorted(ints + bools + strs)))
    return flags


def compile_options(target="cpu", openmp=False, cpu="native", block_q=None,
                    block_kv=None, chip=None, cuda_toolkit=None,
                    omp_schedule=None, tuning=None):
    """attn-compile's flags for these options (validated), as a tuple."""
    if target not in ("cpu", "cuda"):
        raise ValueError(f"attn: target must be 'cpu' or 'cuda', got {target!r}")
    flags = ["--target", target]
    if tuning:
        flags += _tuning_flags(target, tuning)
    if target == "cpu":
        if cpu != "native":
            flags += ["--cpu", str(cpu)]
        if openmp:
            flags.append("--openmp")
        if omp_schedule is not None:
            if not openmp:
                raise ValueError("attn: omp_schedule goes with openmp=True")
            if omp_schedule not in ("static", "dynamic", "guided"):
                raise ValueError("attn: omp_schedule must be 'static', "
                                 f"'dynamic' or 'guided', got {omp_schedule!r}")
            flags += ["--omp-schedule", omp_schedule]
        for flag, v in (("--block-q", block_q), ("--block-kv", block_kv)):
            if v is not None:
                if int(v) <= 0:
                    raise ValueError(f"attn: {flag[2:]} must be positive, got {v}")
                flags += [flag, str(int(v))]
    else:
        if openmp or block_q or block_kv or cpu != "native" or omp_schedule:
            raise ValueError("attn: openmp, omp_schedule, cpu, block_q and "
                             "block_kv are for "
                             "target='cpu'")
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
    if os.path.exists(lib) and os.path.exists(lib[:-3] + ".json"):
        t0 = time.perf_counter()
        k = Kernel(lib, fname)
        _stats["load_seconds"] += time.perf_counter() - t0
        _stats["disk_hits"] += 1
        return k
    os.makedirs(directory, exist_ok=True)
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
