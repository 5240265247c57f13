#!/usr/bin/env python3
"""The PTX in the gpu.binary ops of a GPU pipeline's output (format=isa).

  ptx.py --print < out.mlir            every kernel's PTX, one after another
  ptx.py --ptxas PTXAS --arch sm_80 < out.mlir
                                       assembles each kernel with `ptxas -v`
                                       and prints one line per kernel (its
                                       registers, spills, stack, shared memory
                                       and barriers), then the totals over all
                                       kernels

MLIR prints the PTX as an escaped string attribute (`assembly = "..."`, with
`\\XX` hex escapes and `\\"`, `\\\\`, `\\n`, `\\t`); this undoes the escaping.
Exits 1 when there is no PTX or ptxas fails. The lit tests reach it as `%ptx`.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BINARY = re.compile(r'gpu\.binary @(\w+)\s.*?assembly = "((?:[^"\\]|\\.)*)"')
INFO = {
    "registers": re.compile(r"Used (\d+) registers"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
    "stack": re.compile(r"(\d+) bytes stack frame"),
    "smem": re.compile(r"(\d+) bytes smem"),
    "barriers": re.compile(r"used (\d+) barriers"),
}


def unescape(text):
    simple = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] != "\\":
            out += text[i].encode()
            i += 1
        elif text[i + 1] in simple:
            out += simple[text[i + 1]].encode()
            i += 2
        else:
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
    return out.decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--print", action="store_true")
    parser.add_argument("--ptxas")
    parser.add_argument("--arch", default="sm_80")
    args = parser.parse_args()

    kernels = [(m.group(1), unescape(m.group(2))) for m in BINARY.finditer(sys.stdin.read())]
    if not kernels:
        print("error: no gpu.binary with PTX (assembly = ...) in the input")
        return 1
    if args.print:
        for name, ptx in kernels:
            print(f"// PTX of gpu.binary @{name}")
            print(ptx)
    if not args.ptxas:
        return 0

    totals = {key: 0 for key in INFO}
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, ptx) in enumerate(kernels):
            path = os.path.join(tmp, f"{index}_{name}.ptx")
            with open(path, "w") as f:
                f.write(ptx)
            run = subprocess.run(
                [args.ptxas, "-v", f"-arch={args.arch}", path, "-o", os.devnull],
                capture_output=True,
                text=True,
            )
            if run.returncode != 0:
                print(f"error: ptxas failed on @{name}:\n{run.stderr}")
                return 1
            info = {k: sum(int(x) for x in r.findall(run.stderr)) for k, r in INFO.items()}
            print(
                f"@{name}: {info['registers']} registers, {info['spill_stores']} bytes "
                f"spill stores, {info['spill_loads']} bytes spill loads, "
                f"{info['stack']} bytes stack, {info['smem']} bytes smem, "
                f"{info['barriers']} barriers"
            )
            totals["registers"] = max(totals["registers"], info["registers"])
            for key in ("spill_stores", "spill_loads", "stack"):
                totals[key] += info[key]
            totals["smem"] = max(totals["smem"], info["smem"])
            totals["barriers"] = max(totals["barriers"], info["barriers"])
    print(
        f"{len(kernels)} kernels assembled for {args.arch}: "
        f"at most {totals['registers']} registers, {totals['spill_stores']} bytes "
        f"spill stores, {totals['spill_loads']} bytes spill loads, "
        f"at most {totals['smem']} bytes smem"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
