"""attn.compile's keyword arguments, derived from the tuning knobs.

The knobs are declared once, in include/attn/Tuning/Tuning.td (docs/tuning.md).
attn-compile prints their table (``attn-compile --print-knobs``, the
knobs.json scripts/tuning-gen.py makes), and the package reads it from the
attn-compile it runs: each knob a tool takes is a keyword of attn.compile,
named as its flag with ``_`` for ``-`` (``--decode-rows`` is
``decode_rows``), of the knob's type, turned into that flag. The names and
types are checked here, the values by attn-compile (its ranges and words).
"""

import difflib
import json
import os
import subprocess

from . import _build

_tables = {}  # (path, size, mtime) of attn-compile -> its knobs
PY_TYPES = {"int": int, "bool": bool, "str": str}


def table():
    """The knob table of the attn-compile the package runs, as it prints it."""
    compiler = _build.compiler_path()
    st = os.stat(compiler)
    key = (compiler, st.st_size, st.st_mtime_ns)
    if key not in _tables:
        proc = subprocess.run([compiler, "--print-knobs"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"attn: {compiler} --print-knobs failed: "
                               f"{proc.stderr.strip()}")
        _tables[key] = json.loads(proc.stdout)
    return _tables[key]


def knobs(target=None):
    """The tuning knobs attn.compile takes as keyword arguments: a dict of
    name -> {"type", "targets", "flag", "help", "defaults"} (for `target`,
    "cpu" or "cuda", only its own); docs/tuning.md has the same table."""
    out = {}
    for k in table()["knobs"]:
        if not k["tool"] or (target is not None and k["target"] != target):
            continue
        entry = out.setdefault(k["name"], {
            "type": k["type"], "flag": "--" + k["flag"], "targets": {}})
        entry["targets"][k["target"]] = {
            "help": k["help"], "defaults": k["library_defaults"]}
    return out


def flags(target, options):
    """attn-compile's flags for attn.compile's keyword arguments `options`
    (a dict; None values are left out), in the order of their names. A name
    that is no knob, or a value not of its knob's type, is a TypeError; a
    knob of the other target's pipeline only, a ValueError."""
    known = knobs()
    out = []
    for name in sorted(options):
        value = options[name]
        if value is None:
            continue
        knob = known.get(name)
        if knob is None:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError("attn.compile() got an unexpected keyword "
                            f"argument {name!r}{hint}")
        if target not in knob["targets"]:
            others = " and ".join(f"target={t!r}" for t in knob["targets"])
            raise ValueError(f"attn.compile: {name} is an option of {others}, "
                             f"not target={target!r}")
        want = PY_TYPES[knob["type"]]
        # bool is an int in Python: neither stands for the other here.
        if not isinstance(value, want) or (want is int
                                           and isinstance(value, bool)):
            article = "an" if knob["type"] == "int" else "a"
            raise TypeError(f"attn.compile: {name} must be {article} "
                            f"{knob['type']}, got {type(value).__name__}")
        if want is bool:
            value = "true" if value else "false"
        elif want is str and (not value.isprintable() or any(
                c.isspace() for c in value)):
            raise ValueError(f"attn.compile: {name} must be one word, got "
                             f"{value!r}")
        out.append(f"{knob['flag']}={value}")
    return out
