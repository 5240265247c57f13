#!/usr/bin/env python3
"""Port pressure of the CPU kernels' inner loops on another core, by llvm-mca.

Lowers one attn.sdpa through attn-opt's attn-lower-cpu (the kernels and
options given), translates it to LLVM IR, compiles it with llc for each
--mcpu, finds the innermost loops of the assembly that do vector arithmetic
(FMAs, bf16 dot products) and runs llvm-mca on each loop body with the same
--mcpu. Printed per loop: its instructions, what it is (its FMAs and the
softmax's exp2 instructions), llvm-mca's cycles per iteration, FMAs per
cycle, and the two busiest resources of the model. This is how the kernels'
loops are compared between cores when the host is another one (issue 57:
Intel's two 512-bit FMA ports on an AMD host).

  python3 bench/mca.py [--d 128] [--l 4096] [--dtype f32] [--causal]
                       [--kernels avx512] [--options "reg-block=4"]
                       [--mcpu znver4,skylake-avx512] [--mattr +avx512bf16]
                       [-v]

What llvm-mca is and is not: a model of the out-of-order core with every
load hitting L1 and no front-end limits, per loop body in isolation. LLVM
22's sapphirerapids and icelake-server models schedule 512-bit FMAs on port
0 only (as on the one-FMA-unit SKUs); skylake-avx512's has both port 0 and
port 5, as Xeons with two FMA units do, so that is the model to read for
those (docs/performance.md, journal/round-33.md).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXP2 = ("vreduceps", "vscalefps", "vrndscaleps", "vgetexpps")
MATH = ("vfmadd", "vfnmadd", "vfmsub", "vfnmsub", "vdpbf16ps", "vdpph",
        "tdpbf16ps", "tdpfp16ps")


def llvm_bin(tool: str) -> str:
    bindir = subprocess.run(["llvm-config-22", "--bindir"], text=True,
                            capture_output=True, check=True).stdout.strip()
    return os.path.join(bindir, tool)


def module(d: int, l: int, dtype: str, causal: bool) -> str:
    t = f"tensor<1x1x{l}x{d}x{dtype}>"
    attrs = " {is_causal}" if causal else ""
    return (f"func.func @attn(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
            f"  %o = attn.sdpa %q, %k, %v{attrs} : {t}, {t}, {t} -> {t}\n"
            f"  return %o : {t}\n}}\n")


def innermost_loops(asm: str) -> list:
    """(label, body lines) of each loop that contains no other loop: a
    backward jump to a label ends the loop that label starts."""
    lines = asm.splitlines()
    labels = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(\.LBB\w+):", line)
        if m:
            labels[m.group(1)] = i
    loops = []
    for i, line in enumerate(lines):
        m = re.match(r"^\s+j\w+\s+(\.LBB\w+)\s*$", line)
        if m and labels.get(m.group(1), i) < i:
            loops.append((labels[m.group(1)], i))
    inner = [a for a in loops
             if not any(b != a and a[0] <= b[0] and b[1] <= a[1]
                        for b in loops)]
    out = []
    for start, end in inner:
        body = [ln.strip() for ln in lines[start:end + 1]
                if ln.startswith("\t") and not ln.strip().startswith((".", "#"))]
        out.append((lines[start].split(":")[0], body))
    return out


def mca(body: list, mcpu: str, mattr: list, iterations: int = 200) -> dict:
    run = subprocess.run([llvm_bin("llvm-mca"), f"-mcpu={mcpu}", *mattr,
                          f"-iterations={iterations}"],
                         input="\n".join(body) + "\n", text=True,
                         capture_output=True)
    if run.returncode != 0:
        raise RuntimeError(f"llvm-mca -mcpu={mcpu}: {run.stderr.strip()}")
    text = run.stdout
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", text).group(1))
    names = dict(re.findall(r"^\[(\d+(?:\.\d+)?)\]\s+- (\S+)", text, re.M))
    head, vals = re.search(
        r"Resource pressure per iteration:\n(.*)\n(.*)\n", text).groups()
    keys = re.findall(r"\[([\d.]+)\]", head)
    pressure = {}
    for key, val in zip(keys, vals.split()):
        if val != "-":
            pressure[names.get(key, key)] = float(val)
    busiest = sorted(pressure.items(), key=lambda kv: -kv[1])[:2]
    return {"cycles": cycles / iterations, "busiest": busiest}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--l", type=int, default=4096)
    p.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"])
    p.add_argument("--causal", action="store_true")
    p.add_argument("--kernels", default="avx512")
    p.add_argument("--options", default="",
                   help="more attn-lower-cpu options, e.g. 'reg-block=4'")
    p.add_argument("--mcpu", default="znver4,skylake-avx512",
                   help="comma-separated llc/llvm-mca CPUs")
    p.add_argument("--mattr", default="",
                   help="llc/llvm-mca -mattr, e.g. +avx512bf16 on a model "
                   "of a core without it")
    p.add_argument("--attn-opt",
                   default=os.path.join(ROOT, "build", "bin", "attn-opt"))
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print each loop's instruction mix")
    args = p.parse_args(argv)
    if shutil.which("llvm-config-22") is None:
        print("mca: needs llvm-config-22 (LLVM 22's llc and llvm-mca)",
              file=sys.stderr)
        return 2
    if not os.path.exists(args.attn_opt) and not shutil.which(args.attn_opt):
        print(f"mca: no attn-opt at {args.attn_opt} (build first: "
              "bash scripts/setup.sh)", file=sys.stderr)
        return 2
    opts = f"kernels={args.kernels} {args.options}".strip()
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.mlir")
        with open(src, "w") as f:
            f.write(module(args.d, args.l, args.dtype, args.causal))
        lowered = subprocess.run(
            [args.attn_opt, src, f"--attn-lower-cpu={opts}"],
            text=True, capture_output=True)
        if lowered.returncode != 0:
            print(f"mca: attn-opt: {lowered.stderr.strip()}", file=sys.stderr)
            return 1
        llvmir = subprocess.run(
            [llvm_bin("mlir-translate"), "--mlir-to-llvmir"],
            input=lowered.stdout, text=True, capture_output=True, check=True)
        print(f"# d={args.d} L={args.l} {args.dtype}"
              f"{' causal' if args.causal else ''}, attn-lower-cpu=\"{opts}\"")
        for mcpu in args.mcpu.split(","):
            mattr = [f"-mattr={args.mattr}"] if args.mattr else []
            llc = subprocess.run(
                [llvm_bin("llc"), "-O3", f"-mcpu={mcpu}", *mattr, "-o", "-"],
                input=llvmir.stdout, text=True, capture_output=True)
            print(f"\n## -mcpu={mcpu} {' '.join(mattr)}\n")
            if llc.returncode != 0:
                # e.g. bf16 dot products on a CPU without AVX512-BF16.
                last = (llc.stderr.strip().splitlines() or ["crashed"])[0]
                print(f"llc -mcpu={mcpu} cannot compile these kernels: {last}")
                continue
            asm = llc.stdout
            print("| loop | instructions | FMAs/dots | exp2 ops | cycles/iter "
                  "| FMAs per cycle | busiest resources (per iter) |")
            print("| --- | --- | --- | --- | --- | --- | --- |")
            for label, body in innermost_loops(asm):
                ops = [ln.split()[0] for ln in body]
                fmas = sum(op.startswith(MATH) for op in ops)
                if fmas == 0:
                    continue
                exps = sum(op.startswith(EXP2) for op in ops)
                r = mca(body, mcpu, mattr)
                busy = ", ".join(f"{n} {v:.1f}" for n, v in r["busiest"])
                print(f"| {label} | {len(body)} | {fmas} | {exps} | "
                      f"{r['cycles']:.2f} | {fmas / r['cycles']:.2f} | "
                      f"{busy} |")
                if args.verbose:
                    mix = {}
                    for op in ops:
                        mix[op] = mix.get(op, 0) + 1
                    print("|  |  " + ", ".join(
                        f"{n} {c}" for n, c in sorted(
                            mix.items(), key=lambda kv: -kv[1])) + " |||||")
    return 0


if __name__ == "__main__":
    sys.exit(main())
