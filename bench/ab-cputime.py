#!/usr/bin/env python3
"""Two attn-run builds compared by CPU time per fused run, for a machine that
other jobs share: per build, the process's user+sys CPU time
(getrusage(RUSAGE_CHILDREN)) of `--bench N+1` minus that of `--bench 1`
(same compile, one run more than N), over N; the builds alternate, the order
flipped every pair. Prints each pair and the median of each build, B/A and
every pair's ratio.

  python3 bench/ab-cputime.py SPEC N PAIRS ATTN_RUN_A ATTN_RUN_B [attn-run args]
e.g. python3 bench/ab-cputime.py hq=8,lq=4096,d=64,dtype=bf16 16 4 old/attn-run build/bin/attn-run
"""
import resource
import statistics
import subprocess
import sys


def cpu_seconds(binary, spec, bench, extra):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, "--sdpa", spec, "--threads", "1", "--bench",
                    str(bench), "--check", "none"] + extra, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv):
    if len(argv) < 6:
        sys.exit(__doc__)
    spec, n, pairs, a, b = argv[1], int(argv[2]), int(argv[3]), argv[4], argv[5]
    extra = argv[6:]
    times = {"A": [], "B": []}
    for p in range(pairs):
        order = [("A", a), ("B", b)] if p % 2 == 0 else [("B", b), ("A", a)]
        for name, binary in order:
            times[name].append((cpu_seconds(binary, spec, n + 1, extra) -
                                cpu_seconds(binary, spec, 1, extra)) / n)
        print(f"pair {p}: A {times['A'][-1] * 1e3:.2f} ms  "
              f"B {times['B'][-1] * 1e3:.2f} ms  "
              f"B/A {times['B'][-1] / times['A'][-1]:.4f}", flush=True)
    ma, mb = statistics.median(times["A"]), statistics.median(times["B"])
    ratios = " ".join(f"{y / x:.4f}" for x, y in zip(times["A"], times["B"]))
    print(f"{spec}: median A {ma * 1e3:.2f} ms, B {mb * 1e3:.2f} ms, "
          f"B/A {mb / ma:.4f}; pair ratios {ratios}")


if __name__ == "__main__":
    main(sys.argv)
