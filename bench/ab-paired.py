#!/usr/bin/env python3
"""Two attn-compile libraries compared call by call, for a machine whose
speed drifts from one second to the next: SPEC is compiled by COMPILER_A
(with --a-args) and COMPILER_B (with --b-args); both libraries are loaded
into this process and called alternately on the same seeded inputs (A then
B, then B then A, ...), PAIRS pairs, each call timed by this process's CPU
time (default) or by the wall clock (--wall: the one to use with --openmp,
where a thread that waits for another still counts). Each pair's B/A is
taken while the machine is in one state, so the median of the pairs' ratios
is steadier than best or median times taken apart; a 95% interval of that
median is bootstrapped from the pairs. Prints the best of each side, the
best's ratio, the paired median B/A with its interval and quartiles, and
whether the two outputs are bit for bit the same.
With --b-spec=SPEC_B, B is compiled from SPEC_B instead: an op of the same
shapes (another dtype, mask or scale), its inputs drawn from the same seed
in its own dtypes, its outputs not compared. Then the paired B/A is a ratio
of two ops' times taken side by side, e.g. bf16 against f32 decode
(journal/round-30.md).
With --copies=N each side calls N copies of its inputs and outputs in turn
(pair k the k % N-th of both), allocated A, B, A, B, ... with odd-sized
arrays between them: a decode's time depends on where its K and V lie (on
2 MiB pages, f32 with V an odd number of 4 KiB pages after K's end took 1.4
times as long), and one process's placement is one draw of it; N draws give
the pairs' median over several (journal/round-30.md).

  python3 bench/ab-paired.py SPEC PAIRS COMPILER_A COMPILER_B
      [--wall] [--a-args=FLAGS] [--b-args=FLAGS] [--b-spec=SPEC_B]
      [--copies=N] [--small-pages] [--cold=MIB] [-- common attn-compile args]
(FLAGS after `=`: argparse takes a value that starts with - only so.)
e.g. OMP_NUM_THREADS=2 python3 bench/ab-paired.py b=32,hq=12,lq=128,d=64 \\
       100 build/bin/attn-compile build/bin/attn-compile --wall \\
       --a-args=--omp-schedule=static -- --openmp

Inputs as bench/ab-aot.py's (normals, masks true with probability 0.8), in
numpy's arrays: on transparent huge pages from 4 MiB up where THP is
`madvise` (numpy's default); with --small-pages on 4 KiB pages, as a C or
C++ caller's malloc has them (the decode kernels read K and V at a different
rate on the two: journal/round-26.md).
With --cold=MIB each call is preceded, untimed, by a read of a MIB MiB
buffer, which leaves the caches and the TLB holding other data (as attn-run
--peak's read probe between its timed calls does, and a model's other layers
between two of its attention calls): a decode's page walks on 4 KiB pages
then miss the caches too (journal/round-28.md).
Static shapes only. Needs numpy.
"""
import argparse
import ctypes
import importlib.util
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "ab_aot", os.path.join(_here, "ab-aot.py"))
ab_aot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ab_aot)

NP_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}


def build(compiler, spec, args, path):
    command = [compiler, "--sdpa", spec, "--target", "cpu", "-o", path] + args
    if subprocess.run(command).returncode != 0:
        sys.exit(f"ab-paired: {shlex.join(command)} failed")
    fn = json.load(open(path[:-3] + ".json"))["functions"][0]
    return getattr(ctypes.CDLL(path), fn["name"]), fn


def main():
    argv = sys.argv[1:]
    common = []
    if "--" in argv:
        common = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("spec")
    parser.add_argument("pairs", type=int)
    parser.add_argument("compiler_a")
    parser.add_argument("compiler_b")
    parser.add_argument("--wall", action="store_true")
    parser.add_argument("--a-args", default="")
    parser.add_argument("--b-args", default="")
    parser.add_argument("--b-spec", default="")
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--small-pages", action="store_true")
    parser.add_argument("--cold", type=int, default=0, metavar="MIB")
    opts = parser.parse_args(argv)
    if opts.small_pages:
        # numpy puts arrays of 4 MiB and more on transparent huge pages
        # (madvise) by default; with this, on 4 KiB pages, as a C or C++
        # caller's malloc gives them where THP is `madvise`.
        np._core.multiarray._set_madvise_hugepage(False)
    if opts.pairs < 2:
        sys.exit("ab-paired: PAIRS must be at least 2")
    if opts.cold < 0:
        sys.exit("ab-paired: --cold must not be negative")
    if opts.copies < 1:
        sys.exit("ab-paired: --copies must be at least 1")
    clock = time.perf_counter if opts.wall else time.process_time

    with tempfile.TemporaryDirectory() as tmp:
        sides = []
        for name, compiler, extra, spec in (
                ("a", opts.compiler_a, opts.a_args, opts.spec),
                ("b", opts.compiler_b, opts.b_args, opts.b_spec or opts.spec)):
            sides.append(build(compiler, spec, shlex.split(extra) + common,
                               os.path.join(tmp, f"lib{name}.so")))
        arg_lists = [fn["args"] for _, fn in sides]
        if opts.b_spec:
            # Another op: the same shapes, dtypes of its own.
            arg_lists = [[a["shape"] for a in args] for args in arg_lists]
        if arg_lists[0] != arg_lists[1]:
            sys.exit("ab-paired: the two libraries take different arguments")
        # calls[copy][side]; the spacers between the copies kept alive.
        calls, spacers = [], []
        spacing = random.Random(opts.seed)
        for copy in range(opts.copies):
            calls.append([])
            for entry, fn in sides:
                rng = np.random.default_rng(opts.seed)
                args = [ab_aot.make_input(rng, a) for a in fn["args"]]
                results = [np.zeros(r["shape"], NP_TYPES[r["dtype"]])
                           for r in fn["results"]]
                buffers = (ctypes.c_void_p * (len(args) + len(results)))(
                    *[x.ctypes.data for x in args + results])
                # args too: `buffers` holds only their addresses.
                calls[copy].append((entry, buffers, results, args))
                if opts.copies > 1:
                    spacers.append(np.ones(
                        spacing.randrange(1, 4096) * 4096 + 64, np.uint8))

        # Another buffer read between the calls (--cold), 8 bytes at a time.
        evict = np.ones(opts.cold * (1 << 17), np.int64) if opts.cold else None

        def timed(side, copy=0):
            entry, buffers, _, _ = calls[copy][side]
            if evict is not None:
                evict.sum()
            start = clock()
            status = entry(buffers, None, None)
            elapsed = clock() - start
            if status != 0:
                sys.exit(f"ab-paired: library {'ab'[side]} returned {status}")
            return elapsed

        for copy in range(opts.copies):
            timed(0, copy)
            timed(1, copy)
        ta, tb, ratios = [], [], []
        for k in range(opts.pairs):
            # Each copy's pairs alternate which side goes first.
            copy = k % opts.copies
            if (k // opts.copies) % 2:
                b = timed(1, copy)
                a = timed(0, copy)
            else:
                a = timed(0, copy)
                b = timed(1, copy)
            ta.append(a)
            tb.append(b)
            ratios.append(b / a)
        same = None if opts.b_spec else all(
            np.array_equal(x.view(np.uint8), y.view(np.uint8))
            for copy in calls for x, y in zip(copy[0][2], copy[1][2]))

    ratios.sort()
    boot = random.Random(opts.seed)
    medians = sorted(
        statistics.median(boot.choices(ratios, k=len(ratios)))
        for _ in range(400))
    q = len(ratios) // 4
    outputs = {None: f"B: {opts.b_spec}, outputs not compared",
               True: "outputs identical", False: "outputs DIFFER"}[same]
    copies = f", {opts.copies} copies" if opts.copies > 1 else ""
    print(f"{opts.spec}: {'wall' if opts.wall else 'CPU'} time, "
          f"{opts.pairs} pairs{copies}: A best {min(ta) * 1e3:.2f} ms, "
          f"B best {min(tb) * 1e3:.2f} ms, best B/A {min(tb) / min(ta):.3f}; "
          f"paired median B/A {statistics.median(ratios):.3f} "
          f"(95% {medians[10]:.3f}-{medians[389]:.3f}; "
          f"quartiles {ratios[q]:.3f}-{ratios[-1 - q]:.3f}); "
          f"{outputs}")


if __name__ == "__main__":
    main()
