"""attn-compile's libraries loaded with ctypes (docs/c-abi.md): the one loader
of the project, used by attn.Kernel, scripts/gpu_check.py and bench/.

    lib = Library("libattn.so")          # reads libattn.json beside it
    entry = lib.entry()                  # its first function, or by name
    entry([q, k, v, out], dims, stream)  # buffer addresses; raises on a status

An entry is ``int32_t NAME(void *const *buffers, const int64_t *dims, void
*stream)``: the arguments' then the results' addresses, the dynamic sizes in
the order of the JSON's "dims", and a CUDA stream (or NULL).
"""

import collections.abc
import ctypes
import json
import os

ABI_VERSION = 1

# attn_status_t (docs/c-abi.md) -> the exception a caller gets.
_STATUS_ERRORS = {1: RuntimeError, 2: ValueError, 3: MemoryError,
                  4: RuntimeError, 5: RuntimeError}


class AttnError(RuntimeError):
    """attn-compile failed, or a library call returned an error status."""


class Library:
    """A library attn-compile wrote and the JSON description beside it."""

    def __init__(self, path, desc=None):
        """path: the library; desc: its JSON description, already read and
        checked (the package's disk cache), else read from beside it."""
        path = os.path.abspath(path)
        if desc is None:
            with open(os.path.splitext(path)[0] + ".json") as f:
                desc = json.load(f)
        self.desc = desc
        if self.desc.get("abi") != ABI_VERSION:
            raise AttnError(f"attn: {path}: ABI {self.desc.get('abi')}, this "
                            f"package speaks ABI {ABI_VERSION}")
        self.path = path
        self.target = self.desc["target"]
        self.functions = self.desc["functions"]
        self.handle = ctypes.CDLL(path)
        self.handle.attn_last_error.restype = ctypes.c_char_p
        self.handle.attn_last_error.argtypes = []

    def entry(self, name=None):
        """The function of that name (default: the first) as an Entry."""
        fn = self.functions[0] if name is None else next(
            (f for f in self.functions if f["name"] == name), None)
        if fn is None:
            raise ValueError(f"attn: {self.path} has no function {name!r} (it "
                             "has " + ", ".join(f["name"] for f in
                                                self.functions) + ")")
        return Entry(self, fn)

    def omp_set_num_threads(self):
        """omp_set_num_threads of the libomp an OpenMP library loaded (its
        DT_NEEDED, not another OpenMP runtime of the process such as
        torch's libgomp), or None for a library without OpenMP."""
        if not self.desc.get("openmp", False):
            return None
        path = _find_loaded("libomp")
        if path is None:
            return None
        fn = ctypes.CDLL(path).omp_set_num_threads
        fn.argtypes = [ctypes.c_int]
        fn.restype = None
        return fn

    def last_error(self):
        """The message of the calling thread's last failed call."""
        return self.handle.attn_last_error().decode(errors="replace")


class Entry:
    """One function of a Library. ``entry(pointers, dims, stream)`` calls it
    and raises on an error status; ``entry.fn`` is the bare ctypes function
    (for timing loops that check the status themselves)."""

    def __init__(self, library, desc):
        self.library = library
        self.desc = desc
        self.name = desc["name"]
        self.args = desc["args"]
        self.results = desc["results"]
        self.dims = desc["dims"]
        self.fn = getattr(library.handle, self.name)
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.fn.restype = ctypes.c_int32
        self.buffers_type = ctypes.c_void_p * (len(self.args) +
                                               len(self.results))
        self._dims_type = ctypes.c_int64 * max(1, len(self.dims))

    def __call__(self, pointers, dims=None, stream=None):
        """Runs the entry on raw buffer addresses (arguments, then results);
        dims: the dynamic sizes, a sequence in the JSON's order or a mapping
        from their names."""
        dims_arg = None
        if self.dims:
            if isinstance(dims, collections.abc.Mapping):
                dims = [dims[n] for n in self.dims]
            dims_arg = self._dims_type(*dims)
        status = self.fn(self.buffers_type(*pointers), dims_arg, stream)
        if status:
            self.raise_status(status)

    def raise_status(self, status):
        message = self.library.last_error()
        raise _STATUS_ERRORS.get(status, AttnError)(
            f"attn: {self.name}: {message or 'status ' + str(status)}")


def _find_loaded(stem):
    """The path of an already-loaded shared object whose name starts with stem."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.rsplit(None, 1)[-1]
                if os.path.basename(p).startswith(stem + ".so"):
                    return p
    except OSError:
        pass
    return None
