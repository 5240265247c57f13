#!/usr/bin/env python3
"""Two sets of attn-run options compared on one case, for a machine that
other jobs share: the two alternate, round by round (the order flipped
every round), each an `attn-run --sdpa SPEC --threads T --bench 5 --check
none --peak` process whose paired "% of peak" (the median of the fused
calls' shares of the f32 FMA probe bursts run just before and after each:
attn-run's `paired` line; where an older attn-run has none, the fused
median against the one peak that process measured) is kept. Prints every round, the
median of each side and its best (other jobs only slow a run down, so the
best is the least disturbed).

  python3 bench/ab-options.py SPEC ROUNDS THREADS "OPTIONS A" "OPTIONS B"
e.g. python3 bench/ab-options.py hq=8,lq=4096,d=64 7 1 \\
       "--reg-block=4 --row-vectors=2" "--reg-block=6 --row-vectors=2"
ATTN_RUN overrides build/bin/attn-run.
"""
import os
import re
import shlex
import statistics
import subprocess
import sys


def percent_of_peak(attn_run, spec, threads, options):
    run = subprocess.run([attn_run, "--sdpa", spec, "--threads", threads,
                          "--bench", "5", "--check", "none", "--peak"] +
                         shlex.split(options), capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"ab-options: attn-run with [{options}] exited "
                 f"{run.returncode}:\n{run.stderr}")
    out = run.stdout
    match = (re.search(r"paired\s+([\d.]+)% of peak", out) or
             re.search(r"([\d.]+)% of peak", out))
    if not match:
        sys.exit(f"no '% of peak' in attn-run's output:\n{out}")
    return float(match.group(1))


def main(argv):
    if len(argv) != 6:
        sys.exit(__doc__)
    spec, rounds, threads, a, b = argv[1], int(argv[2]), argv[3], argv[4], argv[5]
    attn_run = os.environ.get("ATTN_RUN", "build/bin/attn-run")
    got = {"A": [], "B": []}
    for r in range(rounds):
        order = [("A", a), ("B", b)] if r % 2 == 0 else [("B", b), ("A", a)]
        for name, options in order:
            got[name].append(percent_of_peak(attn_run, spec, threads, options))
        print(f"round {r}: A {got['A'][-1]:.1f}%  B {got['B'][-1]:.1f}%",
              flush=True)
    print(f"{spec} (threads {threads}): median A {statistics.median(got['A']):.1f}%"
          f" [{a}], B {statistics.median(got['B']):.1f}% [{b}] of peak; "
          f"best A {max(got['A']):.1f}%, B {max(got['B']):.1f}%")


if __name__ == "__main__":
    main(sys.argv)
