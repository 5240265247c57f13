"""Where the package finds attn-compile and where it keeps compiled libraries.

The disk cache (docs/python.md) holds libraries that the process will
dlopen, so it takes only a directory that no one else can write into:
the configured one when it is ours and writable by no one else; in a
directory anyone may write into but only owners may rename or delete from
(sticky, as /tmp), a subdirectory of our own, ``attn-<uid>``; otherwise (a
directory of another user's, one others can write into, a file, a path that
cannot be made, a read-only file system) a private temporary directory for
this process, with one warning. The files in it are checked one by one by
_kernel before they are loaded (trusted_open).
"""

import atexit
import os
import shutil
import stat
import tempfile
import warnings

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


def configured_cache_dir():
    """$ATTN_CACHE_DIR, else $XDG_CACHE_HOME/attn, else ~/.cache/attn."""
    d = os.environ.get("ATTN_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "attn")
    return d


def _own_dir(path):
    """path as a directory of ours that no one else can write into (made
    with mode 0700 if absent), or the reason it is not one."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError as error:
        return None, f"cannot make it: {error.strerror or error}"
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError as error:
            return None, f"a broken symbolic link: {error.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return None, "not a directory"
    if st.st_uid != os.geteuid():
        return None, f"owned by uid {st.st_uid}, not by this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None, "writable by group or others (chmod go-w it)"
    if not os.access(path, os.W_OK | os.X_OK):
        return None, "not writable"
    return path, None


def _usable(path):
    """The directory to keep libraries in for the configured `path`, or
    (None, why not)."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if (st is not None and stat.S_ISDIR(st.st_mode)
            and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            and st.st_mode & stat.S_ISVTX):
        # Shared and sticky (/tmp): a subdirectory of our own in it.
        sub = os.path.join(path, f"attn-{os.geteuid()}")
        d, why = _own_dir(sub)
        return (d, None) if d else (None, f"{sub}: {why}")
    d, why = _own_dir(path)
    if d is None:
        return None, why
    # A probe write: a read-only file system passes the checks above.
    try:
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=d)
        os.close(fd)
        os.unlink(probe)
    except OSError as error:
        return None, f"cannot write into it: {error.strerror or error}"
    return d, None


_fallback = {}  # configured path -> the private temporary directory


def cache_dir():
    """The directory the compiled libraries are kept in: the configured one
    (configured_cache_dir()) where it is safe and writable, else a private
    temporary directory for this process (removed at exit; one warning
    saying why). Raises RuntimeError when not even that can be made."""
    path = configured_cache_dir()
    if path in _fallback:
        return _fallback[path]
    d, why = _usable(path)
    if d is not None:
        return d
    try:
        tmp = tempfile.mkdtemp(prefix="attn-cache-")
    except OSError as error:
        raise RuntimeError(
            f"attn: cache directory {path}: {why}; and no temporary directory "
            f"could be made ({error.strerror or error}): set ATTN_CACHE_DIR "
            "to a directory of yours") from None
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    _fallback[path] = tmp
    warnings.warn(f"attn: cache directory {path}: {why}; compiled kernels "
                  f"are kept in {tmp} for this process only (set "
                  "ATTN_CACHE_DIR to a directory of yours)", RuntimeWarning,
                  stacklevel=3)
    return tmp


def trusted_open(path):
    """An fd open for reading on path if it is a regular file (not a
    symbolic link) that we own and no one else can write, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if (stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        return fd
    os.close(fd)
    return None
