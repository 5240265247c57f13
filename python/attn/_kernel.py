"""Compiled kernels: attn-compile's libraries loaded with ctypes, and their caches.

A kernel is one entry of a library that attn-compile wrote (docs/c-abi.md):
``int32_t NAME(void *const *buffers, const int64_t *dims, void *stream)``,
described by the JSON file beside it. Libraries are cached in memory (keyed by
everything that goes into the compilation) and on disk under cache_dir(); a
library is published there by os.replace() of complete files, so concurrent
processes either see a whole library or none; a process about to compile one
holds an flock on a lock file beside it, so that processes wanting the same
library at once (the ranks of attn.distributed on one machine) compile it
once and load it. The JSON in the cache also records the library's size and
sha256 and its own description's sha256 (CACHE_RECORD); a cached library is
loaded only when both files are regular files of ours that no one else can
write and both hashes match, else it is compiled again and replaced.
"""

import fcntl
import hashlib
import json
import math
import os
import re
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

    def __init__(self, path, name=None, desc=None):
        library = _loader.Library(path, desc)
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
        from . import _sdpa, _tensors
        if stream is not None:
            if not (_sdpa.is_int(stream) and 0 <= stream < 2**64):
                raise TypeError(f"attn: {self.name}: stream must be None or "
                                f"a CUstream handle (an int), got "
                                f"{_sdpa.show(stream)}")
            stream = int(stream)
        if threads is not None:
            threads = _sdpa.run_options(None, "cpu", None, threads,
                                        f"attn: {self.name}")[0]
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
        empty = [d for d in self.dims if sizes[d] == 0]
        if empty:
            # The C ABI takes sizes >= 1; attn.sdpa's rule for 0-size calls.
            self._zero_size(outs, empty[0])
            return outs[0] if len(outs) == 1 else tuple(outs)
        ptrs = [backend.pointer(x) for x in prepared + outs]
        dims = [sizes[d] for d in self.dims]
        if stream is None:
            stream = backend.stream(prepared[0])
        self.call_pointers(ptrs, dims, stream, threads)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _zero_size(self, outs, dim):
        """Fills the results of a call with a dynamic size of 0 without
        calling the library (whose sizes are >= 1), as attn.sdpa does: empty
        results stay empty; an attention of a spec with no keys gives out 0
        and lse -inf (docs/op.md, rule 6). A function compiled from .mlir
        text has no such rule: a ValueError unless all results are empty."""
        if all(math.prod(x.shape) == 0 for x in outs):
            return
        if self.spec is None:
            raise ValueError(f"attn: {self.name}: dim {dim} is 0: the library "
                             f"takes sizes >= 1 and this function (compiled "
                             f"from .mlir text) has no rule for a 0-size call")
        fills = [0, float("-inf")]
        for x, fill in zip(outs, fills):
            if math.prod(x.shape):
                x[...] = fill


def compile_options(target="cpu", cpu="native", chip=None, cuda_toolkit=None,
                    **options):
    """attn-compile's flags, as a tuple, for a target and attn.compile's
    keyword arguments `options`: the tuning knobs by name (_knobs.flags,
    from attn-compile's own table), checked there; cpu (cpu), chip and
    cuda_toolkit (cuda) are the target's."""
    from ._sdpa import show
    if not isinstance(target, str) or target not in ("cpu", "cuda"):
        raise ValueError(f"attn: target must be 'cpu' or 'cuda', got "
                         f"{show(target)}")
    for what, value in (("cpu", cpu), ("chip", chip),
                        ("cuda_toolkit", cuda_toolkit)):
        if value is not None:
            word(value, what, "attn.compile", path=what == "cuda_toolkit")
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


def word(value, what, who, path=False):
    """A string argument that goes to attn-compile's command line as one
    word: a str, not empty, without control characters (or spaces, unless it
    is a path), not starting with '-'."""
    from ._sdpa import show
    if not isinstance(value, str):
        raise TypeError(f"{who}: {what} must be a str, got {show(value)}")
    bad = [c for c in value if not c.isprintable() or (c.isspace()
                                                        and not path)]
    if not value or bad or value.startswith("-"):
        raise ValueError(f"{who}: {what} must be one word (printable, no "
                         f"spaces, not starting with '-'), got {show(value)}")
    return value


_SPEC_KEY = re.compile(r"[a-z][a-z0-9_]*\Z")


def spec_source(source):
    """attn.compile's source as the text attn-compile takes: a spec string,
    a dict of spec keys (values: ints, floats, bools as 0/1, or words), or
    .mlir text."""
    from ._sdpa import show
    if isinstance(source, dict):
        items = []
        for key, value in source.items():
            if not isinstance(key, str) or not _SPEC_KEY.match(key):
                raise ValueError(f"attn.compile: a spec key must be a name "
                                 f"like 'lq' or 'mask_shape', got {show(key)}")
            if isinstance(value, (bool, np.bool_)):
                value = int(value)
            if isinstance(value, (int, float, np.integer, np.floating)):
                value = repr(value.item() if isinstance(
                    value, np.generic) else value)
            elif isinstance(value, str):
                if not value or any(c in ",=" or not c.isprintable()
                                    or c.isspace() for c in value):
                    raise ValueError(f"attn.compile: spec value of {key} must "
                                     f"be one word without ',' or '=', got "
                                     f"{show(value)}")
            else:
                raise TypeError(f"attn.compile: spec value of {key} must be "
                                f"an int, a float, a bool or a str, got "
                                f"{show(value)}")
            items.append(f"{key}={value}")
        source = ",".join(items)
    if not isinstance(source, str):
        raise TypeError("attn.compile: expected a spec string, a dict or .mlir "
                        f"text, got {type(source).__name__}")
    if "\0" in source:
        raise ValueError("attn.compile: the source holds a NUL character")
    if not _is_mlir(source) and not source.isprintable():
        raise ValueError(f"attn.compile: a spec string must be printable, got "
                         f"{show(source)}")
    return source


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


# The key of the JSON in the cache that records what the library must be.
CACHE_RECORD = "python_cache"
# A cached JSON larger than this is not a description attn-compile wrote.
_MAX_JSON_BYTES = 1 << 20


def _sha256_file(f):
    h = hashlib.sha256()
    for chunk in iter(lambda: f.read(1 << 20), b""):
        h.update(chunk)
    return h.hexdigest()


def _desc_sha256(desc):
    """The sha256 of a description without its cache record."""
    rest = {k: v for k, v in desc.items() if k != CACHE_RECORD}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()


def _cached_desc(lib):
    """The description of the cached library `lib` when its JSON and the
    library are files of ours that no one else can write, the JSON parses,
    and the library's size and sha256 and the description's own sha256 are
    those its record says; else None (compile it again)."""
    fd = _build.trusted_open(lib[:-3] + ".json")
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            raw = f.read(_MAX_JSON_BYTES + 1)
        desc = json.loads(raw) if len(raw) <= _MAX_JSON_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None
    record = desc.get(CACHE_RECORD) if isinstance(desc, dict) else None
    if not isinstance(record, dict) or \
            record.get("description_sha256") != _desc_sha256(desc):
        return None
    fd = _build.trusted_open(lib)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        if os.fstat(f.fileno()).st_size != record.get("size") or \
                _sha256_file(f) != record.get("sha256"):
            return None
    return desc


def _record(out):
    """Adds the cache record to the JSON attn-compile wrote beside `out`
    (in the staging directory) and returns the description."""
    with open(out[:-3] + ".json") as f:
        desc = json.load(f)
    with open(out, "rb") as f:
        desc[CACHE_RECORD] = {"size": os.fstat(f.fileno()).st_size,
                              "sha256": _sha256_file(f),
                              "description_sha256": _desc_sha256(desc)}
    with open(out[:-3] + ".json", "w") as f:
        json.dump(desc, f, indent=1)
    # Whatever the umask: writable by us only (the cache's own rule).
    os.chmod(out, 0o755)
    os.chmod(out[:-3] + ".json", 0o644)
    return desc


def _compile_error(proc, staging):
    """The exception for a failed attn-compile run: a ValueError for what
    the caller gave (a spec, a flag, .mlir text that does not parse or
    verify), with attn-compile's one line (or the first MLIR error); else
    AttnError with everything it printed."""
    msg = proc.stderr.strip().replace(os.path.join(staging, "input.mlir"),
                                      "<source>")
    lines = msg.splitlines()
    last = lines[-1] if lines else f"exit {proc.returncode}"
    prefix = "attn-compile: error: "
    if proc.returncode == 2 and ("--sdpa" in last or
                                 last.startswith(prefix + "--")):
        # --sdpa's spec, a tuning value out of range, a --cpu or --kernels
        # it cannot take.
        return ValueError(last[len(prefix):])
    if proc.returncode == 2 and last.startswith(prefix + "could not parse"):
        first = next((l for l in lines if ": error: " in l), last)
        return ValueError(f"attn.compile: {first}")
    return AttnError(last[len(prefix):] if last.startswith(prefix) else msg)


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
    with open(lib[:-3] + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        k = _load_cached(lib, fname)  # another process may have compiled it
        if k is not None:
            return k
        return _compile(source, flags, name, entry, compiler, is_mlir,
                        directory, lib, digest, fname)


def _load_cached(lib, fname):
    """The kernel of a library already in the cache directory whose record
    checks out (_cached_desc), else None."""
    t0 = time.perf_counter()
    desc = _cached_desc(lib)
    if desc is None:
        return None
    k = Kernel(lib, fname, desc)
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
            raise _compile_error(proc, staging) from None
        desc = _record(out)
        # The JSON first, the library last; a reader that sees one file new
        # and the other old finds the hashes differ and compiles again.
        os.replace(out[:-3] + ".json", lib[:-3] + ".json")
        os.replace(out, lib)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Kernel(lib, fname, desc)


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
