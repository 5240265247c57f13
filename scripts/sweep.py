#!/usr/bin/env python3
"""A random sweep of attn-run's spec space: each case one `attn-run --sdpa`
(or `--grad`) process whose fused lowering is checked against the naive one
and the f64 reference, as attn-run always does (docs/attn-run.md).

The grids under test/Integration/CPU vary one feature at a time; this draws
them together: GQA, every dtype, D and Dv apart, single rows and keys,
causal both ways, windows, softcaps, ALiBi, key lengths, bool and float
masks of random broadcast shapes, lse, dynamic shapes, the varlen form, and
the pipeline's options (threads, split-K, decode rows, block sizes, register
blocks, prefetch spread), half the forward cases under --guard-pages. A case
fails when attn-run exits with anything but 0: 1 is a failed check, 2 a
refusal of a spec this generator means to be valid (a generator bug, or a
refusal the docs do not list), anything else a crash.

  python3 scripts/sweep.py [--seed S] [--cases N | --seconds T]
                           [--attn-run PATH] [--kernels PATH] [--keep-going]

Case i of seed S is the same on every machine (random.Random("S/i")) but
for its --kernels path, drawn from those the host runs; a failing case is
printed as the command line that repeats it. Without
--seed the seed is the time, printed first. Ends with `sweep: N passed, N
failed`; exit status 1 if a case failed, 3 if --kernels is not a path of
this host. One process at a time; the cases
take 0.5-4 s each on a 2-core Zen 3.
"""

import argparse
import os
import random
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Pipeline options of attn-run and the values drawn for them.
PIPELINE_OPTIONS = {
    "--kv-splits": [0, 1, 2, 3, 4],
    "--decode-rows": [0, 4, 16],
}


def _pick(rng, values, weights=None):
    return rng.choices(values, weights)[0]


def _mask_shape(rng, dims):
    """A broadcast shape of dims [B, Hq, Lq, Lk]: each dim kept or 1."""
    return "x".join(str(x if rng.random() < 0.5 else 1) for x in dims)


def draw_case(seed, index, host_kernels=("avx2",), kernels=None):
    """(spec dict, extra attn-run args, is_grad) of case `index`;
    `host_kernels` the --kernels paths this CPU runs (host_kernels()), one
    drawn for some cases; `kernels` one of them for every case."""
    rng = random.Random(f"{seed}/{index}")
    grad = rng.random() < 0.12
    varlen = not grad and rng.random() < 0.12
    hkv = _pick(rng, [1, 2, 3, 4])
    group = _pick(rng, [1, 2, 3, 4, 8], [3, 3, 1, 3, 1])
    d = _pick(rng, [8, 16, 24, 32, 40, 59, 64, 80, 96, 128, 256],
              [1, 2, 1, 3, 1, 1, 4, 2, 1, 4, 1])
    dv = d if rng.random() < 0.7 else _pick(rng, [8, 16, 32, 48, 64, 80, 128])
    spec = {"hq": hkv * group, "hkv": hkv, "d": d, "dv": dv,
            "dtype": _pick(rng, ["f32", "bf16", "f16"], [5, 3, 2])}
    if varlen:
        n = rng.randint(1, 4)
        spec["seqlens_q"] = "/".join(
            str(_pick(rng, [0, 1, rng.randint(1, 80)], [1, 2, 6]))
            for _ in range(n))
        if rng.random() < 0.6:
            spec["seqlens_k"] = "/".join(
                str(_pick(rng, [0, 1, rng.randint(1, 200)], [1, 1, 6]))
                for _ in range(n))
    else:
        b = _pick(rng, [1, 2, 3], [5, 3, 1])
        lq = _pick(rng, [1, 1, 2, 3, 4, 7, 16, 33, 64, 100, 130, 257])
        lk = _pick(rng, [1, 2, 5, 16, 31, 64, 100, 128, 129, 300, 513, 1100])
        spec.update(b=b, lq=lq, lk=lk)
        if rng.random() < 0.25:
            spec["mask"] = _pick(rng, ["bool", "float"])
            spec["mask_shape"] = _mask_shape(rng, [b, spec["hq"], lq, lk])
        # attn.sdpa_grad has no key lengths, window, softcap or ALiBi.
        if not grad and rng.random() < 0.2:
            spec["key_lengths"] = 1
    if rng.random() < 0.3:
        spec["causal"] = _pick(rng, ["top_left", "bottom_right"])
    if not grad:
        if rng.random() < 0.15:
            # Left bounds of 64 and 128: a multiple of the blocks, whose
            # lower-edge block the kernels take with its hidden pairs left
            # out (attn.hidden_below).
            spec["window"] = "%d:%d" % (_pick(rng, [-1, 0, 1, 5, 40, 64, 128]),
                                        _pick(rng, [-1, 0, 1, 5, 40]))
        if rng.random() < 0.15:
            spec["softcap"] = _pick(rng, [1, 5, 30])
        if rng.random() < 0.15:
            spec["alibi"] = _pick(rng, ["h", "bh"])
    if rng.random() < 0.1:
        spec["scale"] = _pick(rng, [0.05, 0.5, 2.0])
    if rng.random() < 0.35:
        spec["lse"] = 1
    if rng.random() < 0.15:
        spec["dynamic"] = 1

    args = ["--seed", str(rng.randint(0, 1000)),
            "--threads", str(_pick(rng, [1, 2]))]
    if grad:
        args.append("--grad")
        if rng.random() < 0.3:
            args += ["--grad-block-q", str(_pick(rng, [16, 32, 64])),
                     "--grad-block-kv", str(_pick(rng, [32, 64, 128]))]
    elif rng.random() < 0.5:
        args.append("--guard-pages")
    for option, values in PIPELINE_OPTIONS.items():
        if rng.random() < 0.2:
            args += [option, str(_pick(rng, values))]
    if rng.random() < 0.2:
        args += ["--block-q", str(_pick(rng, [8, 16, 32, 64])),
                 "--block-kv", str(_pick(rng, [16, 32, 64, 128]))]
    if rng.random() < 0.1:
        args += ["--reg-block", str(_pick(rng, [2, 3, 4, 6])),
                 "--row-vectors", str(_pick(rng, [1, 2, 3]))]
    if rng.random() < 0.1:
        args += ["--prefetch-spread", str(_pick(rng, [1, 2, 8]))]
    take = rng.random() < 0.15
    path = _pick(rng, list(host_kernels))
    fp16 = _pick(rng, ["true", "false"])
    if kernels is not None:
        take, path = True, kernels
    if take:
        args += kernel_args(path, fp16)
    return spec, args, grad


def kernel_args(path, amx_fp16="false"):
    """attn-run's arguments for a --kernels path of host_kernels():
    amx-emulated is the amx kernels with their tiles emulated
    (--emulate-amx), on AMX-FP16 tiles or not (`amx_fp16`)."""
    if path == "amx-emulated":
        return ["--kernels", "amx", "--emulate-amx", "true",
                "--amx-fp16", amx_fp16]
    return ["--kernels", path]


def spec_text(spec):
    return ",".join(f"{k}={v}" for k, v in spec.items())


def host_kernels(attn_run=None):
    """The --kernels paths of attn-run that this CPU can run: avx2, and each
    of avx512, avx512-bf16 and amx that a one-row run of attn_run takes
    (exit 0; attn-run refuses a path the CPU or the OS cannot run, exit 2:
    docs/attn-run.md); where amx is refused, amx-emulated if its emulated
    tiles run. Without attn_run, avx2 alone."""
    kernels = ["avx2"]
    for path in ("avx512", "avx512-bf16", "amx", "amx-emulated") \
            if attn_run else ():
        if path == "amx-emulated" and "amx" in kernels:
            continue
        r = subprocess.run([attn_run, "--sdpa", "hq=1,lq=1,lk=16,d=32",
                            "--threads", "1"] + kernel_args(path),
                           capture_output=True)
        if r.returncode == 0:
            kernels.append(path)
    return tuple(kernels)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--cases", type=int, default=None)
    p.add_argument("--seconds", type=float, default=None)
    build = os.environ.get("ATTN_BUILD_DIR", os.path.join(ROOT, "build"))
    p.add_argument("--attn-run", default=os.environ.get(
        "ATTN_RUN", os.path.join(build, "bin", "attn-run")),
        help="default: $ATTN_RUN, else $ATTN_BUILD_DIR/bin/attn-run, else "
             "build/bin/attn-run")
    p.add_argument("--kernels", default=None,
                   help="every case on this --kernels path (one of the "
                        "host's; amx: the tiles emulated where the CPU "
                        "has no AMX)")
    p.add_argument("--keep-going", action="store_true",
                   help="run every case (default: stop at the first failure)")
    a = p.parse_args(argv)
    if a.cases is None and a.seconds is None:
        a.cases = 50
    seed = a.seed if a.seed is not None else int(time.time())
    print(f"sweep: seed {seed}, attn-run {a.attn_run}", flush=True)
    kernels = host_kernels(a.attn_run)
    print(f"sweep: --kernels paths {', '.join(kernels)}", flush=True)
    forced = a.kernels
    if forced == "amx" and "amx" not in kernels:
        forced = "amx-emulated"
    if forced is not None and forced not in kernels:
        print(f"sweep: --kernels {a.kernels} is not among this host's paths")
        return 3
    if forced is not None:
        print(f"sweep: every case on {forced}", flush=True)
    passed = failed = 0
    start = time.monotonic()
    index = 0
    while True:
        if a.cases is not None and index >= a.cases:
            break
        if a.seconds is not None and time.monotonic() - start >= a.seconds:
            break
        spec, args, _ = draw_case(seed, index, kernels, forced)
        cmd = [a.attn_run, "--sdpa", spec_text(spec)] + args
        try:
            r = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=600)
            rc, out = r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired:
            rc, out = "timeout", ""
        if rc == 0:
            passed += 1
        else:
            failed += 1
            print(f"FAIL case {index} (exit {rc}): "
                  + " ".join(shlex.quote(c) for c in cmd))
            for line in out.splitlines():
                if "FAIL" in line or "error" in line.lower():
                    print("    " + line.strip())
            if not a.keep_going:
                index += 1
                break
        index += 1
    print(f"sweep: {passed} passed, {failed} failed "
          f"({index} cases of seed {seed}, {time.monotonic() - start:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
