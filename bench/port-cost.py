#!/usr/bin/env python3
"""What one 512-bit instruction costs beside a stream of FMAs (or vdpbf16ps).

A loop of 12 independent 512-bit FMAs (or dot products) runs at the FMA
units' rate; adding N copies of one other instruction (independent of each
other and of the FMAs: fixed sources, their own destination) to every
iteration costs nothing where that instruction runs on other units, and about
a cycle per copy where it takes an FMA slot. (The two-source permutes also
read their destination: one chain per copy across iterations, shorter than
an iteration.) Printed: the extra cycles per
added instruction, at an assumed clock (--ghz; only the scale of the column,
the ratios hold at any clock). This is how the kernels' choices were made on
the Zen 4 of journal/round-24.md: there a 512-bit store
took two FMA slots and vcmpps a whole one, while shuffles of one source,
vreduceps, vscalefps and integer ops took none.

  python3 bench/port-cost.py [--iters N] [--ghz 3.7] [--cc gcc]

Builds a small C file of inline assembly with CC (-O1 -march=x86-64-v4 plus
avx512bf16 where the CPU has it); needs avx512f, says so and exits 0 where
the CPU has none.
"""
import argparse
import os
import subprocess
import sys
import tempfile

# AT&T syntax, destination last; {d} the instruction's own register
# (zmm12..zmm15), {off} its own 64-byte slot in a buffer. zmm24/zmm25 hold
# fixed sources; zmm0..zmm11 are the FMAs' accumulators.
OPS = [
    ("vfmadd231ps", "vfmadd231ps %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vmulps", "vmulps %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vaddps", "vaddps %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vmaxps", "vmaxps %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vreduceps", "vreduceps $1, %%zmm24, %%zmm{d}", None),
    ("vscalefps", "vscalefps %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vrndscaleps", "vrndscaleps $8, %%zmm24, %%zmm{d}", None),
    ("vcvtps2dq", "vcvtps2dq %%zmm24, %%zmm{d}", None),
    ("vpaddd", "vpaddd %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vpslld", "vpslld $23, %%zmm24, %%zmm{d}", None),
    ("vpandq", "vpandq %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vpermw", "vpermw %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vpermps", "vpermps %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vpermt2ps", "vpermt2ps %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vpermt2w", "vpermt2w %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vshuff64x2", "vshuff64x2 $0x4e, %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vshufps", "vshufps $0xb1, %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vunpcklpd", "vunpcklpd %%zmm24, %%zmm25, %%zmm{d}", None),
    ("vbroadcastss m32", "vbroadcastss (%%rsi), %%zmm{d}", None),
    ("vcmpps -> k", "vcmpps $4, %%zmm24, %%zmm25, %%k{k}", None),
    ("vmovaps load", "vmovaps {off}(%%rsi), %%zmm{d}", None),
    ("vmovaps store", "vmovaps %%zmm{d}, {off}(%%rsi)", None),
    ("vmovaps store ymm", "vmovaps %%ymm{d}, {off}(%%rsi)", None),
    ("vmovaps store {k}", "vmovaps %%zmm{d}, {off}(%%rsi)%{{%%k1%}}", None),
    ("vcvtne2ps2bf16", "vcvtne2ps2bf16 %%zmm24, %%zmm25, %%zmm{d}", "bf16"),
    ("vdpbf16ps", "vdpbf16ps %%zmm24, %%zmm25, %%zmm{d}", "bf16"),
]
BASES = [
    ("fma", "vfmadd231ps %%zmm24, %%zmm25, %%zmm{d}", None),
    ("dpbf16", "vdpbf16ps %%zmm24, %%zmm25, %%zmm{d}", "bf16"),
]
EXTRA = 4
CLOBBERS = ",".join(f'"xmm{i}"' for i in range(16)) + ',"memory"'


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def source(cases):
    out = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <time.h>",
        "static double now(void) { struct timespec t;"
        " clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }",
        "static float buf[1024] __attribute__((aligned(64)));",
    ]
    for i, (_, body) in enumerate(cases):
        asm = "\\n\\t".join(body)
        out.append(
            f"static double f{i}(long n) {{ double t = now(); __asm__ volatile("
            f'"1:\\n\\t{asm}\\n\\tdec %%rcx\\n\\tjnz 1b" : "+c"(n) : "S"(buf) : '
            f"{CLOBBERS}); return now() - t; }}")
    out.append("int main(int argc, char **argv) { long n = atol(argv[1]);")
    out.append('  __asm__ volatile("vpxord %%zmm24, %%zmm24, %%zmm24\\n\\t'
               'vpxord %%zmm25, %%zmm25, %%zmm25\\n\\tkxnorw %%k1, %%k1, %%k1"'
               ' ::: "xmm24", "xmm25");')
    for i in range(len(cases)):
        out.append(f"  f{i}(n / 10); printf(\"%.6e\\n\", f{i}(n));")
    out.append("  return 0; }")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=20_000_000)
    ap.add_argument("--ghz", type=float, default=3.7)
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    args = ap.parse_args()
    flags = cpu_flags()
    if "avx512f" not in flags:
        print("port-cost: this CPU has no avx512f; nothing to measure")
        return 0
    have = {"bf16": "avx512_bf16" in flags}
    cases, labels = [], []
    for bname, bop, bneed in BASES:
        if bneed and not have[bneed]:
            continue
        base = [bop.format(d=i) for i in range(12)]
        cases.append((bname, base))
        labels.append((bname, None))
        for name, op, need in OPS:
            if need and not have[need]:
                continue
            extra = [op.format(d=12 + j, k=2 + j, off=64 * (j + 1))
                     for j in range(EXTRA)]
            cases.append((name, base + extra))
            labels.append((bname, name))
    march = ["-march=x86-64-v4"] + (["-mavx512bf16"] if have["bf16"] else [])
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "p.c"), os.path.join(tmp, "p")
        with open(src, "w") as f:
            f.write(source(cases))
        subprocess.run([args.cc, "-O1", *march, "-o", exe, src], check=True)
        times = [float(x) for x in subprocess.run(
            [exe, str(args.iters)], check=True, capture_output=True,
            text=True).stdout.split()]
    cyc = 1e9 * args.ghz / args.iters
    base_t = None
    for (bname, name), t in zip(labels, times):
        if name is None:
            base_t = t
            print(f"{bname}: 12 per iteration, {t * cyc:.2f} cycles an "
                  f"iteration at {args.ghz} GHz")
            continue
        extra = (t - base_t) * cyc / EXTRA
        print(f"  + {name:18s} {extra:+.2f} cycles each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
