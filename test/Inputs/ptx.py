#!/usr/bin/env python3
"""The PTX in the gpu.binary ops of a GPU pipeline's output (format=isa).

  ptx.py --print < out.mlir            every kernel's PTX, one after another
  ptx.py --ptxas PTXAS --arch sm_80 < out.mlir
                                       assembles each kernel with `ptxas -v`
                                       and prints one line per kernel (its
                                       registers, spills, stack, shared memory
                                       and barriers) and a line for each
                                       warning or performance note of ptxas,
                                       then the totals over all kernels
  ptx.py --ptxas PTXAS --arch sm_90a --sass NVDISASM < out.mlir
                                       also disassembles each cubin and
                                       prints a line of SASS instruction
                                       counts per kernel (HGMMA, of them in
                                       loops, UTMALDG, SYNCS, USETMAXREG,
                                       HMMA, LDL, STL, BAR); --print-sass
                                       prints the SASS too

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


SASS_OPS = ["HGMMA", "UTMALDG", "SYNCS", "USETMAXREG", "HMMA", "LDL", "STL", "BAR"]
LABEL = re.compile(r"^\s*(\.L_\w+):")
BRANCH = re.compile(r"\bBRA\b.*?`?\(?(\.L_\w+)")


def sass_summary(sass):
    """Counts of the instructions in SASS_OPS (by opcode prefix: SYNCS counts
    every SYNCS.* mbarrier op), and of the HGMMA that sit in a loop: between a
    label and a later branch back to it."""
    lines = sass.splitlines()
    counts = {op: 0 for op in SASS_OPS}
    labels, hgmma, in_loop = {}, [], set()
    for i, line in enumerate(lines):
        label = LABEL.match(line)
        if label:
            labels[label.group(1)] = i
            continue
        code = line.split("*/", 1)[-1] if "*/" in line else line
        words = re.findall(r"\b[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*\b", code)
        opcode = next((w for w in words if not w.startswith("P") or "." in w or len(w) > 3), "")
        for op in SASS_OPS:
            if opcode.split(".")[0] == op:
                counts[op] += 1
        if opcode.startswith("HGMMA"):
            hgmma.append(i)
        branch = BRANCH.search(code)
        if branch and branch.group(1) in labels and labels[branch.group(1)] < i:
            start = labels[branch.group(1)]
            in_loop.update(h for h in hgmma if start < h < i)
    parts = [f"{counts['HGMMA']} HGMMA ({len(in_loop)} in loops)"]
    parts += [f"{counts[op]} {op}" for op in SASS_OPS[1:]]
    return ", ".join(parts)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--print", action="store_true")
    parser.add_argument("--ptxas")
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--sass")
    parser.add_argument("--print-sass", action="store_true")
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
            cubin = os.path.join(tmp, f"{index}_{name}.cubin") if args.sass else os.devnull
            run = subprocess.run(
                [args.ptxas, "-v", f"-arch={args.arch}", path, "-o", cubin],
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
            for line in run.stderr.splitlines():
                if "warning" in line or "Performance Loss" in line:
                    print(f"@{name}: ptxas: {line.strip()}")
            if args.sass:
                dis = subprocess.run([args.sass, "-c", cubin], capture_output=True, text=True)
                if dis.returncode != 0:
                    print(f"error: nvdisasm failed on @{name}:\n{dis.stderr}")
                    return 1
                if args.print_sass:
                    print(dis.stdout)
                print(f"@{name}: SASS: " + sass_summary(dis.stdout))
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
