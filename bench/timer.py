#!/usr/bin/env python3
"""Times one attn-compile library call by CPU time and by the wall clock,
with no Python in the timed loop: the bench's one timer.

SPEC is compiled by attn-compile (--compiler, default $ATTN_COMPILE, else
build/bin/attn-compile, else attn-compile on PATH; flags after `--` go to it;
--openmp added when --threads > 1), or --lib takes a library built before
(its JSON beside it). bench/timer.c, compiled here with $CC (default
clang-22, else cc), loads it, calls it once untimed, then ROUNDS rounds of
ITERS calls, and prints per call the best and the median round of the
process's CPU time over the threads (OMP_WAIT_POLICY=passive keeps idle
threads from spinning) and of the wall clock, with GFLOP/s at the best
(FLOPs as docs/op.md counts them, from the library's JSON). Other jobs on
the machine stretch a call's wall time much more than its CPU time, so the
CPU figure is the one to quote on a shared machine; for an A/B, bench/ab.py.

--roofline: first a 1 GiB read (--probe-mib) on --threads threads (the
read patterns of attn-run --peak, the best of them, each thread timed by
its own CPU time), then the share of the read-K/V-once roofline at the
median: (bytes of K and V / read bandwidth) / time per call; a decode's
figure (journal/rounds-01-02.md, "Decode, round two").
--pages malloc|small|huge: every buffer from aligned_alloc (the default: a
C caller's malloc), on 4 KiB pages (madvise(MADV_NOHUGEPAGE)) or on 2 MiB
pages (madvise(MADV_HUGEPAGE), where THP is `madvise`).
Inputs: bench/ab.py's (seeded normals, masks, key lengths in [0, Lk]).
Static shapes only. Needs numpy and a C compiler.

e.g. python3 bench/timer.py b=32,hq=12,lq=128,d=64 --iters 10 --rounds 5
     python3 bench/timer.py hq=32,hkv=8,lq=1,lk=32768,d=128,dtype=bf16 \\
       --threads 2 --rounds 15 --roofline
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import ab  # bench/ab.py: building the library, its inputs


def parse_args(argv):
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    p = argparse.ArgumentParser(
        prog="bench/timer.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="python3 bench/timer.py SPEC | --lib LIB.so [--iters N] "
              "[--rounds R] [--threads T] [--roofline [--probe-mib M]] "
              "[--pages malloc|small|huge] [--compiler PATH] [--seed S] "
              "[-- attn-compile args]")
    p.add_argument("spec", nargs="?", help="attn-run's --sdpa spec")
    p.add_argument("--lib", help="a library built before (its JSON beside it)")
    p.add_argument("--function", help="the library's function (default: its "
                   "first)")
    p.add_argument("--iters", type=int, default=1,
                   help="calls per round (default 1)")
    p.add_argument("--rounds", type=int, default=11,
                   help="rounds (default 11)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--roofline", action="store_true")
    p.add_argument("--probe-mib", type=int, default=1024,
                   help="--roofline's read, MiB (default 1024)")
    p.add_argument("--pages", choices=("malloc", "small", "huge"),
                   default="malloc")
    p.add_argument("--compiler", default=None)
    p.add_argument("--seed", type=int, default=0)
    opts = p.parse_args(argv)
    opts.extra = extra
    if bool(opts.spec) == bool(opts.lib):
        p.error("give SPEC or --lib, one of them")
    if opts.lib and extra:
        p.error("attn-compile args go with SPEC, not --lib")
    if min(opts.iters, opts.rounds, opts.threads, opts.probe_mib) < 1:
        p.error("--iters, --rounds, --threads and --probe-mib must be at "
                "least 1")
    return opts


def c_compiler():
    return os.environ.get("CC") or shutil.which("clang-22") or "cc"


def main(argv):
    opts = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if opts.lib:
            lib = os.path.abspath(opts.lib)
            with open(lib[:-3] + ".json") as f:
                fns = json.load(f)["functions"]
            fn = next((f for f in fns if f["name"] == opts.function), None) \
                if opts.function else fns[0]
            if fn is None:
                sys.exit(f"timer: no function {opts.function} in {lib}")
        else:
            lib = os.path.join(tmp, "libsdpa.so")
            extra = opts.extra + (["--openmp"] if opts.threads > 1 and
                                  "--openmp" not in opts.extra else [])
            fn = ab.compile_library(opts.compiler or ab.default_compiler(),
                                    opts.spec, extra, lib, tool="timer")
        names = [a["name"] for a in fn["args"]]
        if opts.roofline and ("key" not in names or "value" not in names):
            sys.exit("timer: --roofline needs a library with key and value")
        driver = os.path.join(tmp, "timer")
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "timer.c")
        command = [c_compiler(), "-O2", source, "-o", driver, "-ldl",
                   "-pthread"]
        if subprocess.run(command).returncode != 0:
            sys.exit(f"timer: {' '.join(command)} failed")
        buffers = []
        for i, x in enumerate(ab.make_inputs(fn, opts.seed)):
            path = os.path.join(tmp, f"in{i}.bin")
            x.tofile(path)
            buffers.append(f"i:{path}")
        buffers += [f"o:{ab.nbytes(r)}" for r in fn["results"]]
        env = dict(os.environ, OMP_NUM_THREADS=str(opts.threads),
                   OMP_WAIT_POLICY="passive")
        run = subprocess.run(
            [driver, lib, fn["name"], str(opts.iters), str(opts.rounds),
             str(opts.threads), opts.pages,
             str(opts.probe_mib if opts.roofline else 0)] + buffers,
            env=env, capture_output=True, text=True)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            sys.exit(f"timer: the driver exited {run.returncode}")
    cpu, wall, bw = [], [], None
    for line in run.stdout.splitlines():
        word, *values = line.split()
        if word == "round":
            cpu.append(float(values[0]))
            wall.append(float(values[1]))
        elif word == "probe":
            bw = [float(v) for v in values]
    flops = fn.get("flops")

    def figures(times):
        best, median = min(times), statistics.median(times)
        rate = f" ({flops / best / 1e9:.1f} GFLOP/s)" if flops else ""
        return f"best {best * 1e3:.3f} ms{rate}, median {median * 1e3:.3f} ms"
    what = opts.spec or f"{opts.lib}:{fn['name']}"
    threads = f", {opts.threads} threads" if opts.threads > 1 else ""
    calls = "1 call" if opts.iters == 1 else f"{opts.iters} calls"
    print(f"{what}: {opts.rounds} rounds of {calls}{threads}: "
          f"CPU time {figures(cpu)} | wall {figures(wall)}")
    if bw:
        kv = sum(ab.nbytes(fn["args"][names.index(n)])
                 for n in ("key", "value"))
        parts = []
        for gbs, times in zip(bw, (cpu, wall)):
            once = kv / (gbs * 1e9)
            share = 100 * once / statistics.median(times)
            parts.append(f"read {gbs:.1f} GB/s, K/V once {once * 1e3:.3f} "
                         f"ms: {share:.1f}% of the roofline")
        print(f"roofline: CPU time {parts[0]} | wall {parts[1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
