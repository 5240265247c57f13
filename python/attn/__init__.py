"""attn: fused scaled dot-product attention, compiled by attn-compile.

    import attn
    out = attn.sdpa(q, k, v, is_causal=True)          # numpy or torch
    out = attn.sdpa_varlen(q, k, v, cu_q, cu_k)       # packed sequences
    kernel = attn.compile("b=1,hq=8,lq=128,d=64")     # a callable kernel
    attn.cache_info()                                 # hits, compiles, seconds

The package carries its attn-compile (``pip install ./python``,
docs/python.md) and loads the libraries it writes with ctypes over their C
ABI (docs/c-abi.md); attn.reference is the float64 reference to check them
against, attn.torch registers the torch custom op ``attn::sdpa``, attn.onnx
imports ONNX Attention nodes.
"""

from ._kernel import AttnError, Kernel, cache_clear, cache_info
from . import reference
from ._sdpa import default_threads, sdpa
from ._varlen import sdpa_varlen
from . import _kernel
from ._knobs import knobs


def compile(source, target="cpu", *, name=None, entry=None, cpu="native",
            chip=None, cuda_toolkit=None, tuning=None, **options):
    """Compiles one attention into a callable attn.Kernel (cached).

    source: a spec string as attn-run's --sdpa takes it
        (``"b=2,hq=8,hkv=2,lq=128,d=64,causal=top_left,lse=1"``; see
        docs/attn-run.md), a dict of the same keys, or the text of a .mlir
        file (``entry`` picks its function).
    target: "cpu" or "cuda"; cpu: the CPU to compile for ("native", or an
        LLVM CPU name); chip, cuda_toolkit (cuda); name: the exported symbol.
    options: the fused lowering's tuning knobs (include/attn/Tuning/
        Tuning.td, docs/tuning.md; attn.knobs() lists them), each named as
        attn-compile's flag with _ for -: block_q=32, decode_rows=0,
        openmp=True, omp_schedule="static", kernels="avx2",
        lazy_rescale=True (cuda), ... An unknown name or a value of the wrong
        type raises TypeError; a knob of the other target, or a value
        attn-compile refuses (out of range, a word it does not take),
        ValueError. tuning: a dict of the same knobs (the kernel's .tuning
        gives back those it was compiled with: attn.compile(spec,
        **kernel.tuning)).
    The kernel is cached in memory and on disk (attn.cache_info()).
    """
    source = _kernel.spec_source(source)
    if name is not None:
        _kernel.word(name, "name", "attn.compile")
        if not name.isidentifier() or not name.isascii():
            raise ValueError(f"attn.compile: name must be a C identifier, "
                             f"got {name!r}")
    if entry is not None:
        _kernel.word(entry, "entry", "attn.compile")
    if tuning is not None and not isinstance(tuning, dict):
        raise TypeError(f"attn.compile: tuning must be a dict of knobs, got "
                        f"{type(tuning).__name__}")
    if tuning:
        twice = sorted(set(tuning) & set(options))
        if twice:
            raise TypeError(f"attn.compile: {twice[0]} given twice, as a "
                            "keyword and in tuning=")
        options = {**tuning, **options}
    flags = _kernel.compile_options(target, cpu=cpu, chip=chip,
                                    cuda_toolkit=cuda_toolkit, **options)
    return _kernel.get_kernel(source, flags, name=name, entry=entry)


__all__ = ["sdpa", "sdpa_varlen", "compile", "knobs", "cache_info",
           "cache_clear", "Kernel", "AttnError", "default_threads"]
