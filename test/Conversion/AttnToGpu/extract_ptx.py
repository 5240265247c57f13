#!/usr/bin/env python3
"""Prints the PTX held by the gpu.binary ops of an MLIR file (stdin).

`gpu-module-to-binary format=isa` stores the PTX as an MLIR string
attribute: this undoes its escapes (\\XX hex, \\", \\\\) so that ptxas and
FileCheck can read it. Every string that holds a `.version` line is printed,
in order.

With `--ptxas PTXAS ARGS...` it instead assembles each module on its own
(`PTXAS ARGS... module.ptx -o /dev/null`) and prints, per module, a line
`ptx-module: <entry name>` followed by everything ptxas printed (with `-v`:
registers, shared memory, spills); it fails if ptxas does.
"""
import os
import re
import subprocess
import sys
import tempfile


def unescape(body):
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1]
            if nxt in '"\\':
                out += nxt.encode()
                i += 2
                continue
            if nxt == "n":
                out += b"\n"
                i += 2
                continue
            if nxt == "t":
                out += b"\t"
                i += 2
                continue
            out.append(int(body[i + 1 : i + 3], 16))
            i += 3
            continue
        out += c.encode()
        i += 1
    return out.decode()


def modules(text):
    for match in re.finditer(r'"((?:[^"\\]|\\.)*)"', text, re.S):
        ptx = unescape(match.group(1))
        if ".version" in ptx:
            yield ptx


def assemble(ptxs, ptxas):
    with tempfile.TemporaryDirectory() as tmp:
        for n, ptx in enumerate(ptxs):
            entry = re.search(r"\.entry\s+(\w+)", ptx)
            print("ptx-module: " + (entry.group(1) if entry else "?"))
            path = os.path.join(tmp, "module%d.ptx" % n)
            with open(path, "w") as f:
                f.write(ptx)
            run = subprocess.run(
                ptxas + [path, "-o", os.devnull],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            sys.stdout.write(run.stdout)
            if run.returncode:
                sys.exit("extract_ptx.py: ptxas failed on " + path)


def main():
    ptxs = list(modules(sys.stdin.read()))
    if not ptxs:
        sys.exit("extract_ptx.py: no PTX string in the input")
    if len(sys.argv) > 2 and sys.argv[1] == "--ptxas":
        assemble(ptxs, sys.argv[2:])
        return
    for ptx in ptxs:
        sys.stdout.write(ptx)


if __name__ == "__main__":
    main()
