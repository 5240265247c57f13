#!/usr/bin/env python3
"""A/B of two attention calls in one process, call by call: the bench's one
A/B harness.

Each side is a library that an attn-compile built from SPEC (`--a`/`--b`:
the attn-compile, default $ATTN_COMPILE, else build/bin/attn-compile, else
attn-compile on PATH; `--a-args`/`--b-args`: that side's own attn-compile
flags; after `--`: flags for both), or PyTorch's CPU SDPA (`--a torch`).
Both are loaded into this process and called alternately on the same
seeded inputs, A then B, then B then A, ..., PAIRS pairs, each call timed by
this process's CPU time or by the wall clock. A pair's B/A is taken while
the machine is in one state, so the median of the pairs' ratios is steadier
than best or median times taken apart; its 95% interval is bootstrapped
from the pairs. Prints the best of each side, the best's ratio, the paired
median B/A with its interval and quartiles, and whether the two outputs are
bit for bit the same (outputs start as NaN: an element a side leaves
unwritten shows). Each side (each copy) is called once before the pairs.

What it compares:
  two attn-compile builds     --a old/attn-compile --b build/bin/attn-compile
  two option sets, one build  --a-args=--reg-block=4 --b-args=--reg-block=6
  two ops of the same shapes  --b-spec=SPEC_B: B compiled from SPEC_B (another
                              dtype, mask or scale), its inputs from the same
                              seed in its own dtypes, outputs not compared
  attn against PyTorch        --a torch: B/A is attn's time over torch's; it
                              prints both sides' rel_l2 against torch's f32
                              SDPA of the same (rounded) inputs and GFLOP/s
  where the inputs lie        --pages, --kv-gap (below), one library twice

Clock: --clock cpu (this process's CPU time: every thread's, so one that
waits for another counts) or wall; the default is cpu with one thread and
no torch side, else wall. --threads T sets OMP_NUM_THREADS, compiles with
--openmp when T > 1 and gives torch T threads (default 1).
--copies=N: each side calls N copies of its inputs and outputs in turn (pair
k the k % N-th of both), allocated A, B, A, B, ... with odd-sized arrays
between them: a decode's time depends on where its K and V lie, and one
process's placement is one draw of it (journal/round-30.md).
--cold=MIB: before each call, untimed, a read of a MIB MiB buffer, which
leaves the caches and the TLB holding other data, as a model's other layers
do between two of its attention calls (round twenty-eight).
--pages=P or PA,PB (each numpy, small or huge): numpy (the default) is
numpy's own arrays, on transparent huge pages from 4 MiB up where THP is
`madvise`; small is numpy's arrays without that madvise, on 4 KiB pages as
a C caller's malloc has them (and then, where both sides are small, every
other array of the process too: the --cold buffer, the spacers); huge is
2 MiB-aligned buffers under madvise(MADV_HUGEPAGE) (rounds twenty-six and
twenty-eight). PA,PB gives the sides pages of their own: --pages=small,huge
is one library's call on 4 KiB against 2 MiB pages.
--kv-gap=G or GA,GB: K and V of each side in one 2 MiB-aligned buffer, V
G bytes after K's end (round thirty: f32 decode with V 4 KiB after K took
1.4 times as long as with V right after it, on 2 MiB pages).
Inputs: normals (f16, bf16: rounded down), masks true with probability 0.8,
key lengths uniform in [0, Lk]. Static shapes only. Needs numpy (and torch
for a torch side).

e.g. python3 bench/ab.py b=32,hq=12,lq=128,d=64 --pairs 100 --threads 2 \\
       --a-args=--omp-schedule=static
     python3 bench/ab.py hq=32,hkv=8,lq=1,lk=32768,d=128 --pairs 24 \\
       --b-spec=hq=32,hkv=8,lq=1,lk=32768,d=128,dtype=bf16 \\
       --copies=4 --pages=small --cold=256
     python3 bench/ab.py hq=8,lq=4096,d=64,dtype=bf16 --pairs 10 --a torch
(--a-args=FLAGS with `=`: argparse takes a value that starts with - only so.)
"""
import argparse
import ctypes
import json
import mmap
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# attn's loader (python/attn/_loader.py), from the checkout's python/.
sys.path.insert(0, os.path.join(REPO, "python"))
from attn import _loader  # noqa: E402
NP_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16,
            "i1": np.uint8, "i32": np.int32}
PAGES = ("numpy", "small", "huge")
HUGE_PAGE = 2 << 20


def default_compiler():
    """$ATTN_COMPILE, else the build's attn-compile, else the one on PATH."""
    if os.environ.get("ATTN_COMPILE"):
        return os.environ["ATTN_COMPILE"]
    build = os.environ.get("ATTN_BUILD_DIR", os.path.join(REPO, "build"))
    path = os.path.join(build, "bin", "attn-compile")
    return path if os.path.exists(path) else (
        shutil.which("attn-compile") or path)


def compile_library(compiler, spec, args, path, tool="ab"):
    """Builds SPEC into the cpu library PATH; its first function's JSON."""
    command = [compiler, "--sdpa", spec, "--target", "cpu", "-o", path] + args
    if subprocess.run(command).returncode != 0:
        sys.exit(f"{tool}: {shlex.join(command)} failed")
    with open(path[:-3] + ".json") as f:
        fn = json.load(f)["functions"][0]
    for t in fn["args"] + fn["results"]:
        if not all(isinstance(n, int) for n in t["shape"]):
            sys.exit(f"{tool}: dynamic shapes are not supported (dynamic=0)")
    return fn


def load_entry(path, name):
    """The library's entry (docs/c-abi.md): int32 NAME(void **buffers,
    const int64_t *dims, void *stream), the bare ctypes function of attn's
    loader."""
    return _loader.Library(path).entry(name).fn


def nbytes(tensor):
    """The bytes of one tensor of a library's JSON (static shape)."""
    size = np.dtype(NP_TYPES[tensor["dtype"]]).itemsize
    for n in tensor["shape"]:
        size *= n
    return size


def make_input(rng, arg, fn):
    """Seeded values for one argument of FN's JSON."""
    shape, dtype = arg["shape"], arg["dtype"]
    if dtype == "f32":
        return rng.standard_normal(shape, dtype=np.float32)
    if dtype == "f16":
        return rng.standard_normal(shape).astype(np.float16)
    if dtype == "bf16":
        bits = rng.standard_normal(shape, dtype=np.float32).view(np.uint32)
        return (bits >> 16).astype(np.uint16)
    if dtype == "i1":
        return (rng.random(shape) < 0.8).astype(np.uint8)
    if dtype == "i32":
        values = rng.integers(0, 1 << 30, shape).astype(np.int32)
        if arg["name"] == "key_lengths":
            key = next(a for a in fn["args"] if a["name"] == "key")
            values %= key["shape"][2] + 1
        return values
    sys.exit(f"ab: no inputs for dtype {dtype}")


def make_inputs(fn, seed):
    rng = np.random.default_rng(seed)
    return [make_input(rng, a, fn) for a in fn["args"]]


def numpy_huge_pages(on):
    """Whether numpy madvise(MADV_HUGEPAGE)s the arrays of 4 MiB and more
    that it allocates from now on (its default: yes)."""
    core = getattr(np, "_core", None) or np.core
    core.multiarray._set_madvise_hugepage(on)


def alloc(nbytes, pages):
    """NBYTES bytes starting on a 2 MiB boundary, on PAGES' pages; the
    area around them whole 2 MiB pages, so that the last can be huge too."""
    size = (nbytes + 2 * HUGE_PAGE - 1) // HUGE_PAGE * HUGE_PAGE
    if pages == "huge":
        area = mmap.mmap(-1, size, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        area.madvise(mmap.MADV_HUGEPAGE)
        raw = np.frombuffer(area, np.uint8)  # keeps `area` alive
    else:  # numpy's, huge or not as numpy_huge_pages() was last told
        raw = np.empty(size, np.uint8)
    start = -raw.ctypes.data % HUGE_PAGE
    return raw[start:start + nbytes]


def on_huge_pages(values):
    """Copies of VALUES, each on 2 MiB-aligned madvise(MADV_HUGEPAGE)
    memory."""
    out = []
    for x in values:
        buf = alloc(x.nbytes, "huge").view(x.dtype).reshape(x.shape)
        buf[...] = x
        out.append(buf)
    return out


def place_kv(fn, values, pages, gap):
    """VALUES with key and value moved into one buffer, V GAP bytes after
    K's end."""
    names = [a["name"] for a in fn["args"]]
    if "key" not in names or "value" not in names:
        sys.exit("ab: --kv-gap needs a one-attn.sdpa library (key, value)")
    k, v = values[names.index("key")], values[names.index("value")]
    buf = alloc(k.nbytes + gap + v.nbytes, pages)
    kb = buf[:k.nbytes].view(k.dtype).reshape(k.shape)
    vb = buf[k.nbytes + gap:].view(v.dtype).reshape(v.shape)
    kb[...], vb[...] = k, v
    values = list(values)
    values[names.index("key")], values[names.index("value")] = kb, vb
    return values


def anon_huge_kb():
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class AttnSide:
    """One attn library: per copy its buffers, outputs and inputs."""

    def __init__(self, path, fn):
        self.fn = fn
        self.entry = load_entry(path, fn["name"])
        self.copies = []

    def add_copy(self, inputs):
        results = [np.empty(r["shape"], NP_TYPES[r["dtype"]])
                   for r in self.fn["results"]]
        for x in results:
            x.view(np.uint8)[...] = 0xFF  # NaN in f32, f16 and bf16 alike
        buffers = (ctypes.c_void_p * (len(inputs) + len(results)))(
            *[x.ctypes.data for x in inputs + results])
        # inputs too: `buffers` holds only their addresses.
        self.copies.append((buffers, results, inputs))

    def call(self, copy):
        return self.entry(self.copies[copy][0], None, None)

    def outputs(self, copy):
        return self.copies[copy][1]

    def out_f32(self, copy):
        out, dtype = self.copies[copy][1][0], self.fn["results"][0]["dtype"]
        return bf16_to_f32(out) if dtype == "bf16" else out.astype(np.float32)


class TorchSide:
    """PyTorch's scaled_dot_product_attention on the other side's inputs."""

    KEYS = {"b", "hq", "hkv", "lq", "lk", "d", "dv", "dtype", "causal",
            "scale", "mask", "mask_shape"}

    def __init__(self, torch, spec, fn):
        self.torch, self.fn = torch, fn
        keys = dict(kv.split("=", 1) for kv in spec.split(","))
        unknown = sorted(set(keys) - self.KEYS)
        if unknown:
            sys.exit("ab: not supported with torch: " + ", ".join(unknown))
        self.causal = keys.get("causal", "none")
        if self.causal != "none" and keys.get("mask", "none") != "none":
            sys.exit("ab: not supported with torch: causal with a mask")
        self.kw = {}
        if "scale" in keys:
            self.kw["scale"] = float(keys["scale"])
        self.sdpa = torch.nn.functional.scaled_dot_product_attention
        self.copies = []

    def tensor(self, x, arg):
        t = self.torch.from_numpy(x)
        if arg["dtype"] == "bf16":
            return self.torch.from_numpy(x.view(np.int16)).view(
                self.torch.bfloat16)
        if arg["dtype"] == "i1":
            return t.bool()
        return t

    def arguments(self, tensors, f32=False):
        """q, k, v and the keywords of one call."""
        names = [a["name"] for a in self.fn["args"]]
        t = dict(zip(names, tensors))
        q, k, v = t["query"], t["key"], t["value"]
        kw = dict(self.kw)
        if f32:
            q, k, v = q.float(), k.float(), v.float()
        if q.shape[1] != k.shape[1]:
            kw["enable_gqa"] = True
        lq, lk = q.shape[2], k.shape[2]
        if self.causal == "top_left" or (self.causal == "bottom_right"
                                         and lq == lk):
            kw["is_causal"] = True
        elif self.causal == "bottom_right":
            i = self.torch.arange(lq)[:, None]
            kw["attn_mask"] = self.torch.arange(lk)[None, :] <= i + (lk - lq)
        if "mask" in t:
            mask = t["mask"]
            float_mask = f32 and mask.is_floating_point()
            kw["attn_mask"] = mask.float() if float_mask else mask
        return q, k, v, kw

    def add_copy(self, inputs):
        tensors = [self.tensor(x, a) for x, a in zip(inputs, self.fn["args"])]
        self.copies.append([self.arguments(tensors), None, inputs, tensors])

    def call(self, copy):
        q, k, v, kw = self.copies[copy][0]
        with self.torch.inference_mode():
            self.copies[copy][1] = self.sdpa(q, k, v, **kw)
        return 0

    def outputs(self, copy):
        return None

    def out_f32(self, copy):
        return self.copies[copy][1].float().numpy()

    def reference(self, copy):
        """torch's f32 SDPA of this copy's (rounded) inputs."""
        q, k, v, kw = self.arguments(self.copies[copy][3], f32=True)
        with self.torch.inference_mode():
            return self.sdpa(q, k, v, **kw).numpy()


def split_pair(text, parse, name):
    parts = text.split(",")
    if len(parts) not in (1, 2):
        sys.exit(f"ab: --{name} takes one value or two (A,B)")
    values = [parse(p) for p in parts]
    return values * 2 if len(values) == 1 else values


def parse_args(argv):
    common = []
    if "--" in argv:
        common = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    p = argparse.ArgumentParser(
        prog="bench/ab.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="python3 bench/ab.py SPEC [--pairs N] [--a WHAT] [--b WHAT] "
              "[--a-args=FLAGS] [--b-args=FLAGS] [--b-spec=SPEC_B] "
              "[--clock cpu|wall] [--threads T] [--copies N] [--cold MIB] "
              "[--pages P[,P]] [--kv-gap G[,G]] [--seed S] [--print-pairs] "
              "[-- attn-compile args]")
    p.add_argument("spec", help="attn-run's --sdpa spec (docs/attn-run.md)")
    p.add_argument("--pairs", type=int, default=20,
                   help="pairs of calls (default 20)")
    p.add_argument("--a", default=None, metavar="WHAT",
                   help="side A: an attn-compile or `torch`")
    p.add_argument("--b", default=None, metavar="WHAT",
                   help="side B: an attn-compile or `torch`")
    p.add_argument("--a-args", default="", metavar="FLAGS")
    p.add_argument("--b-args", default="", metavar="FLAGS")
    p.add_argument("--b-spec", default="", metavar="SPEC_B")
    p.add_argument("--clock", choices=("cpu", "wall"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--copies", type=int, default=1)
    p.add_argument("--cold", type=int, default=0, metavar="MIB")
    p.add_argument("--pages", default="numpy", metavar="P[,P]")
    p.add_argument("--kv-gap", default=None, metavar="G[,G]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--print-pairs", action="store_true",
                   help="print each pair's times and B/A")
    opts = p.parse_args(argv)
    opts.common = common
    if opts.pairs < 2:
        sys.exit("ab: --pairs must be at least 2")
    if opts.cold < 0:
        sys.exit("ab: --cold must not be negative")
    if opts.copies < 1:
        sys.exit("ab: --copies must be at least 1")
    if opts.threads < 1:
        sys.exit("ab: --threads must be at least 1")

    def page(text):
        if text not in PAGES:
            sys.exit(f"ab: --pages: {text} is not one of {', '.join(PAGES)}")
        return text
    opts.pages = split_pair(opts.pages, page, "pages")
    opts.kv_gap = (None if opts.kv_gap is None else
                   split_pair(opts.kv_gap, lambda g: int(g, 0), "kv-gap"))
    if opts.kv_gap and min(opts.kv_gap) < 0:
        sys.exit("ab: --kv-gap must not be negative")
    return opts


def main(argv):
    opts = parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(opts.threads)
    whats = [opts.a or default_compiler(), opts.b or default_compiler()]
    torch_side = [w == "torch" for w in whats]
    if all(torch_side):
        sys.exit("ab: one side at least must be an attn-compile")
    if any(torch_side) and opts.b_spec:
        sys.exit("ab: --b-spec does not go with a torch side")
    torch = None
    if any(torch_side):
        import torch
        torch.set_num_threads(opts.threads)
    clock_name = opts.clock or (
        "wall" if opts.threads > 1 or any(torch_side) else "cpu")
    clock = time.perf_counter if clock_name == "wall" else time.process_time
    openmp = ["--openmp"] if opts.threads > 1 and \
        "--openmp" not in opts.common else []

    with tempfile.TemporaryDirectory() as tmp:
        sides, built = [None, None], {}
        for i, (name, extra, spec) in enumerate((
                ("a", opts.a_args, opts.spec),
                ("b", opts.b_args, opts.b_spec or opts.spec))):
            if torch_side[i]:
                continue
            args = shlex.split(extra) + openmp + opts.common
            key = (whats[i], spec, tuple(args))
            if key not in built:  # the same library twice: build it once
                path = os.path.join(tmp, f"lib{name}.so")
                built[key] = (path, compile_library(whats[i], spec, args,
                                                    path))
            sides[i] = AttnSide(*built[key])
        attn_fn = next(s.fn for s in sides if s)
        for i in range(2):
            if torch_side[i]:
                sides[i] = TorchSide(torch, opts.spec, attn_fn)
        arg_lists = [s.fn["args"] for s in sides]
        if opts.b_spec:
            # Another op: the same shapes, dtypes of its own.
            arg_lists = [[a["shape"] for a in args] for args in arg_lists]
        if arg_lists[0] != arg_lists[1]:
            sys.exit("ab: the two libraries take different arguments")

        spacers, spacing = [], random.Random(opts.seed)
        for copy in range(opts.copies):
            for i, side in enumerate(sides):
                # small: numpy's arrays as a C caller's malloc gives them.
                numpy_huge_pages(opts.pages[i] != "small")
                values = make_inputs(side.fn, opts.seed)
                if opts.pages[i] == "huge":
                    values = on_huge_pages(values)
                if opts.kv_gap is not None:
                    values = place_kv(side.fn, values, opts.pages[i],
                                      opts.kv_gap[i])
                side.add_copy(values)
                if opts.copies > 1:
                    spacers.append(np.ones(
                        spacing.randrange(1, 4096) * 4096 + 64, np.uint8))
        if opts.pages != ["numpy", "numpy"] or opts.kv_gap is not None:
            print(f"AnonHugePages: {anon_huge_kb()} kB in this process")

        numpy_huge_pages(opts.pages != ["small", "small"])
        # Another buffer read between the calls (--cold), 8 bytes at a time.
        evict = np.ones(opts.cold * (1 << 17), np.int64) if opts.cold else None

        def timed(i, copy):
            if evict is not None:
                evict.sum()
            start = clock()
            status = sides[i].call(copy)
            elapsed = clock() - start
            if status != 0:
                sys.exit(f"ab: library {'AB'[i]} returned {status}")
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
            if opts.print_pairs:
                print(f"pair {k}: A {a * 1e3:.3f} ms, B {b * 1e3:.3f} ms, "
                      f"B/A {b / a:.3f}", flush=True)

        if any(torch_side):
            t = sides[torch_side.index(True)]
            ref = t.reference(0)

            def rel_l2(i):
                got = sides[i].out_f32(0).astype(np.float64)
                return np.linalg.norm(got - ref) / np.linalg.norm(ref)
            flops = attn_fn.get("flops")
            rates = (f"; GFLOP/s at best: A {flops / min(ta) / 1e9:.1f}, "
                     f"B {flops / min(tb) / 1e9:.1f}" if flops else "")
            outputs = (f"{'AB'[torch_side.index(True)]}: torch "
                       f"{torch.__version__}; rel_l2 against torch f32: "
                       f"A {rel_l2(0):.2e}, B {rel_l2(1):.2e}{rates}")
        elif opts.b_spec:
            outputs = f"B: {opts.b_spec}, outputs not compared"
        else:
            same = all(
                np.array_equal(x.view(np.uint8), y.view(np.uint8))
                for c in range(opts.copies)
                for x, y in zip(sides[0].outputs(c), sides[1].outputs(c)))
            outputs = "outputs identical" if same else "outputs DIFFER"

    ratios.sort()
    boot = random.Random(opts.seed)
    medians = sorted(
        statistics.median(boot.choices(ratios, k=len(ratios)))
        for _ in range(400))
    q = len(ratios) // 4
    copies = f", {opts.copies} copies" if opts.copies > 1 else ""
    print(f"{opts.spec}: {'wall' if clock_name == 'wall' else 'CPU'} time, "
          f"{opts.pairs} pairs{copies}: A best {min(ta) * 1e3:.2f} ms, "
          f"B best {min(tb) * 1e3:.2f} ms, best B/A {min(tb) / min(ta):.3f}; "
          f"paired median B/A {statistics.median(ratios):.3f} "
          f"(95% {medians[10]:.3f}-{medians[389]:.3f}; "
          f"quartiles {ratios[q]:.3f}-{ratios[-1 - q]:.3f}); "
          f"{outputs}")


if __name__ == "__main__":
    main(sys.argv[1:])
