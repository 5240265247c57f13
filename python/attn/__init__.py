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


def compile(source, target="cpu", *, name=None, entry=None, openmp=False,
            cpu="native", block_q=None, block_kv=None, chip=None,
            cuda_toolkit=None, omp_schedule=None, tuning=None):
    """Compiles one attention into a callable attn.Kernel (cached).

    source: a spec string as attn-run's --sdpa takes it
        (``"b=2,hq=8,hkv=2,lq=128,d=64,causal=top_left,lse=1"``; see
        docs/attn-run.md), a dict of the same keys, or the text of a .mlir
        file (``entry`` picks its function).
    target: "cpu" or "cuda". Options: openmp, cpu, block_q, block_kv (cpu);
        omp_schedule ("guided", attn-compile's default, "dynamic" or
        "static"; with openmp only); chip, cuda_toolkit (cuda); name: the
        exported symbol; tuning: a dict of the fused lowering's other
        options by the names of the library JSON's "tuning" (cpu:
        narrow_block_q, kv_splits, decode_rows, reg_block, row_vectors,
        prefetch_spread, decode_prefetch_locality, decode_prefetch (a
        str: "auto", "all" or "none"), blend_stores; cuda:
        kv_splits, decode_rows, decode_stages, decode_unroll,
        shared_memory, fold_scale, lazy_rescale; docs/c-abi.md), e.g.
        {"decode_rows": 0}; the kernel's
        .tuning gives back those that were given. A value attn-compile
        refuses raises ValueError.
    The kernel is cached in memory and on disk (attn.cache_info()).
    """
    if isinstance(source, dict):
        source = ",".join(f"{k}={v}" for k, v in source.items())
    if not isinstance(source, str):
        raise TypeError("attn.compile: expected a spec string, a dict or .mlir "
                        f"text, got {type(source).__name__}")
    flags = _kernel.compile_options(target, openmp=openmp, cpu=cpu,
                                    block_q=block_q, block_kv=block_kv,
                                    chip=chip, cuda_toolkit=cuda_toolkit,
                                    omp_schedule=omp_schedule, tuning=tuning)
    return _kernel.get_kernel(source, flags, name=name, entry=entry)


__all__ = ["sdpa", "sdpa_varlen", "compile", "cache_info", "cache_clear", "Kernel",
           "AttnError", "default_threads"]
