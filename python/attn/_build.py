"""Where the package finds attn-compile and where it keeps compiled libraries."""

import os

_compiler = None

# attn-compile as `pip install ./python` put it in the package
# (cmake/AttnInstall.cmake, component attn-python).
PACKAGED_COMPILER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "_native", "bin", "attn-compile")


def compiler_path():
    """The attn-compile executable: the package's own, or $ATTN_COMPILE when
    it is set (another build's, for testing one)."""
    global _compiler
    if _compiler is not None:
        return _compiler
    path = os.environ.get("ATTN_COMPILE") or PACKAGED_COMPILER
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError(
            f"attn: attn-compile not found at {path}: install the package "
            "(pip install ./python, docs/python.md), or set ATTN_COMPILE")
    _compiler = os.path.realpath(path)
    return _compiler


def cache_dir():
    """$ATTN_CACHE_DIR, else $XDG_CACHE_HOME/attn, else ~/.cache/attn."""
    d = os.environ.get("ATTN_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "attn")
    return d
