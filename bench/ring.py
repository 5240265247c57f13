#!/usr/bin/env python3
"""Ring attention (attn.distributed.ring_sdpa) at a fixed total length over
1, 2 and 4 gloo ranks of this machine, forward and backward: per rank, the
seconds in attn's calls and merges (compute) and the seconds blocked on the
ring's transfers (wait), the time of the same transfers alone (no compute),
and the bytes each rank sent per step against the ring's formula. On a
2-core machine the ranks share the cores, so these are per-rank costs, not a
speed-up. Each world size also tries PyTorch's own context parallel
(torch.distributed.tensor.experimental.context_parallel) on the same inputs
and records its time or its exact error.

    python3 bench/ring.py [--length 4096] [--heads 8] [--kv-heads 8] [--d 64]
        [--worlds 1,2,4] [--runs 3] [--causal top_left] [--out bench/out/ring]

It runs `python3 -m torch.distributed.run --nproc-per-node N bench/ring.py
--worker ...` for each N (torchrun, 127.0.0.1, a free port); one thread per
rank. Writes OUT/ring.json and prints a Markdown table.
"""

import argparse
import contextlib
import datetime
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path


def parse():
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--length", type=int, default=4096,
                   help="total sequence length L (queries and keys)")
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=None,
                   help="key/value heads (default: --heads)")
    p.add_argument("--d", type=int, default=64, help="head dim")
    p.add_argument("--worlds", default="1,2,4")
    p.add_argument("--runs", type=int, default=3,
                   help="timed forward+backward passes (after one warm-up)")
    p.add_argument("--causal", default="top_left",
                   choices=["none", "top_left", "bottom_right"])
    p.add_argument("--layout", default="zigzag",
                   choices=["zigzag", "contiguous"])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent
                                        / "out" / "ring"))
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args()


def formula_bytes(b, hkv, lk, d, world, elt):
    """The ring's bytes per rank and step (equal shards): one K/V block
    forward; K/V and its f32 dK/dV backward."""
    block = b * hkv * (lk // world) * 2 * d
    return {"forward": block * elt, "backward_kv": block * elt,
            "backward_dkv": block * 4}


def worker(args):
    import torch
    import torch.distributed as dist
    import attn.distributed as ad

    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=300))
    rank, world = dist.get_rank(), dist.get_world_size()
    hkv = args.kv_heads or args.heads
    g = torch.Generator().manual_seed(0)
    full = [torch.randn((1, h, args.length, args.d), generator=g)
            for h in (args.heads, hkv, hkv, args.heads)]
    q, k, v, d_out = (ad.shard_sequence(x, world, rank, layout=args.layout)
                      for x in full)
    causal = False if args.causal == "none" else args.causal

    def one_pass():
        qq, kk, vv = (x.clone().requires_grad_() for x in (q, k, v))
        ad.ring_stats(reset=True)
        t0 = time.perf_counter()
        out = ad.ring_sdpa(qq, kk, vv, causal=causal, layout=args.layout)
        fwd = ad.ring_stats(reset=True)
        t1 = time.perf_counter()
        out.backward(d_out)
        bwd = ad.ring_stats(reset=True)
        t2 = time.perf_counter()
        fwd["seconds"], bwd["seconds"] = t1 - t0, t2 - t1
        return fwd, bwd

    one_pass()  # compiles
    dist.barrier()
    passes = [one_pass() for _ in range(args.runs)]

    # The same transfers without compute: world - 1 K/V blocks around the
    # ring (what the forward moves), timed on every rank.
    comm = []
    if world > 1:
        kv = torch.cat([k.reshape(-1), v.reshape(-1)])
        for _ in range(args.runs):
            dist.barrier()
            t0 = time.perf_counter()
            buf = kv
            for _step in range(world - 1):
                nxt = torch.empty_like(buf)
                ops = [dist.P2POp(dist.irecv, nxt, (rank - 1) % world),
                       dist.P2POp(dist.isend, buf, (rank + 1) % world)]
                for w in dist.batch_isend_irecv(ops):
                    w.wait()
                buf = nxt
            comm.append(time.perf_counter() - t0)

    # PyTorch's context parallel on the same inputs (full tensors, sharded
    # by it), torch's SDPA inside: its default backend choice, then the math
    # backend.
    torch_cp = {}
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for backend in (None, SDPBackend.MATH):
        key = "default" if backend is None else "math"
        try:
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.tensor.experimental import context_parallel
            mesh = init_device_mesh("cpu", (world,))
            qf, kf, vf = (x.clone() for x in full[:3])
            times = []
            for _ in range(args.runs + 1):
                t0 = time.perf_counter()
                with (sdpa_kernel([backend]) if backend
                      else contextlib.nullcontext()), \
                        context_parallel(mesh, buffers=[qf, kf, vf],
                                         buffer_seq_dims=[2, 2, 2]):
                    F.scaled_dot_product_attention(
                        qf, kf, vf, is_causal=causal == "top_left")
                times.append(time.perf_counter() - t0)
            torch_cp[key] = f"forward {statistics.median(times[1:]):.3f} s"
        except Exception as e:  # recorded, the benchmark goes on
            torch_cp[key] = f"{type(e).__name__}: {e}".splitlines()[0]

    mine = {"rank": rank, "passes": passes, "comm_seconds": comm,
            "torch_cp": torch_cp}
    gathered = [None] * world
    dist.all_gather_object(gathered, mine)
    if rank == 0:
        with open(os.path.join(args.out, f"world{world}.json"), "w") as f:
            json.dump(gathered, f)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = parse()
    if args.worker:
        return worker(args)
    os.makedirs(args.out, exist_ok=True)
    hkv = args.kv_heads or args.heads
    results = {"machine": os.uname().nodename, "cpus": os.cpu_count(),
               "date": datetime.datetime.now(datetime.timezone.utc)
               .strftime("%Y-%m-%d %H:%M UTC"),
               "command": " ".join([os.path.basename(sys.argv[0])]
                                   + sys.argv[1:]),
               "length": args.length, "heads": args.heads, "kv_heads": hkv,
               "d": args.d, "causal": args.causal, "layout": args.layout,
               "worlds": {}}
    rows = []
    for world in [int(w) for w in args.worlds.split(",")]:
        cmd = [sys.executable, "-m", "torch.distributed.run",
               f"--nproc-per-node={world}", "--master-addr=127.0.0.1",
               f"--master-port={free_port()}", os.path.abspath(__file__),
               "--worker"] + [a for a in sys.argv[1:]]
        env = dict(os.environ, OMP_NUM_THREADS="1")
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"ring.py: world {world} failed:\n{proc.stderr[-3000:]}")
        with open(os.path.join(args.out, f"world{world}.json")) as f:
            ranks = json.load(f)
        results["worlds"][world] = ranks
        want = formula_bytes(1, hkv, args.length, args.d, world, 4)
        for r in ranks:
            med = {}
            for i, phase in enumerate(("forward", "backward")):
                ps = [p[i] for p in r["passes"]]
                med[phase] = {k: statistics.median(p[k] for p in ps)
                              for k in ("seconds", "compute_seconds",
                                        "wait_seconds", "bytes_sent",
                                        "kernel_calls", "skipped_blocks")}
            steps = max(world - 1, 1)
            fwd_bytes = med["forward"]["bytes_sent"] / steps
            bwd_bytes = med["backward"]["bytes_sent"]
            bwd_want = (world - 1) * want["backward_kv"] + (
                world * want["backward_dkv"] if world > 1 else 0)
            rows.append((world, r["rank"], med, fwd_bytes, want["forward"]
                         if world > 1 else 0, bwd_bytes, bwd_want,
                         statistics.median(r["comm_seconds"])
                         if r["comm_seconds"] else 0.0, r["torch_cp"]))
    results["rows"] = [
        {"world": w, "rank": rk, "median": med,
         "forward_bytes_per_step": fb, "formula_forward_bytes_per_step": fw,
         "backward_bytes": bb, "formula_backward_bytes": bw,
         "transfers_alone_seconds": cs, "torch_context_parallel": cp}
        for w, rk, med, fb, fw, bb, bw, cs, cp in rows]
    with open(os.path.join(args.out, "ring.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"# ring_sdpa, L={args.length}, hq={args.heads}, hkv={hkv}, "
          f"d={args.d}, f32, causal={args.causal}, layout={args.layout}, "
          f"1 thread a rank; {results['date']}, {results['cpus']} CPUs; "
          f"medians of {args.runs}\n")
    print("| world | rank | fwd s | fwd compute s | fwd wait s | bwd s | "
          "bwd compute s | bwd wait s | attn calls fwd/bwd | K/V transfers "
          "alone s | fwd bytes/step (formula) | bwd bytes (formula) |")
    print("| --- " * 12 + "|")
    # compute: attn's calls and the lse merges; wait: blocked on the ring
    # (transfers not hidden behind compute, and waiting for a slower
    # neighbour); the rest of a pass: the preflight all-gather, packing,
    # allocation.
    for w, rk, med, fb, fw, bb, bw, cs, _ in rows:
        f, b = med["forward"], med["backward"]
        print(f"| {w} | {rk} | {f['seconds']:.3f} | "
              f"{f['compute_seconds']:.3f} | {f['wait_seconds']:.3f} | "
              f"{b['seconds']:.3f} | {b['compute_seconds']:.3f} | "
              f"{b['wait_seconds']:.3f} | {f['kernel_calls']:.0f}/"
              f"{b['kernel_calls']:.0f} | {cs:.4f} | {fb:.0f} ({fw}) | "
              f"{bb:.0f} ({bw}) |")
    print("\nPyTorch context_parallel (same inputs, torch SDPA inside):")
    for w in results["worlds"]:
        cp = results["worlds"][w][0]["torch_cp"]
        print(f"- world {w}: default backends: {cp['default']}; "
              f"SDPBackend.MATH: {cp['math']}")


if __name__ == "__main__":
    main()
