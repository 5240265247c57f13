"""One rank of test_distributed.py's runs: started as torchrun starts a rank
(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the environment), so
`torchrun --nproc-per-node 2 python/tests/ring_worker.py OUT` runs it too.

Runs attn.distributed.ring_sdpa on every case of CASES (inputs drawn from
the case's seed, the same on every rank and in the test that checks them),
sharded by the case's layout, and writes this rank's out, lse and gradients
to OUT/world<N>.<case>.<rank>.pt; then the bad-shape case, whose message
(or "no error") goes to OUT/world<N>.bad_shape.<rank>.txt. With 4 ranks it
runs everything again on a group of ranks 0 and 1 (N = 2)."""

import datetime
import os
import sys

import torch
import torch.distributed as dist

# (name, b, hq, hkv, lq, lk, d, dtype, causal, layout); lq/lk: total rows,
# a function of the world size. With 4 rows a chunk, zigzag's calls have the
# same shapes at 2 and 4 ranks (one compile for both).
CASES = [
    ("zigzag-top_left-gqa", 1, 4, 2, lambda w: 8 * w, lambda w: 8 * w, 16,
     "float32", "top_left", "zigzag"),
    ("contiguous-none", 2, 2, 2, lambda w: 8 * w, lambda w: 8 * w, 16,
     "float32", False, "contiguous"),
    # Rank 0 (and rank 1 of 4) holds query rows that see no key.
    ("contiguous-bottom_right-empty-rank", 1, 2, 1, lambda w: 13,
     lambda w: 5, 16, "float32", "bottom_right", "contiguous"),
    # Lengths not divisible by 2 * world (parts of 2, 1 and 0 rows), Lk > Lq:
    # blocks cut into several calls (9 call shapes at 2 and 4 ranks).
    ("zigzag-bottom_right-uneven", 1, 2, 2, lambda w: 7, lambda w: 10, 16,
     "float32", "bottom_right", "zigzag"),
    ("zigzag-top_left-bf16", 1, 2, 1, lambda w: 8 * w, lambda w: 8 * w, 16,
     "bfloat16", "top_left", "zigzag"),
]


def inputs(case, world):
    """(q, k, v, d_out) of the full sequences, from the case's seed."""
    name, b, hq, hkv, lq, lk, d, dtype, _, _ = case
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    dt = getattr(torch, dtype)
    q = torch.randn((b, hq, lq(world), d), generator=g).to(dt)
    k = torch.randn((b, hkv, lk(world), d), generator=g).to(dt)
    v = torch.randn((b, hkv, lk(world), d), generator=g).to(dt)
    d_out = torch.randn((b, hq, lq(world), d), generator=g).to(dt)
    return q, k, v, d_out


def run(out_dir, group):
    """Every case, then the bad-shape case, on the ranks of group."""
    import attn.distributed as ad

    rank, world = dist.get_rank(group), dist.get_world_size(group)
    tag = f"world{world}"
    for case in CASES:
        name, layout, causal = case[0], case[9], case[8]
        q, k, v, d_out = (ad.shard_sequence(x, world, rank, layout=layout)
                          for x in inputs(case, world))
        q, k, v = (x.requires_grad_() for x in (q, k, v))
        ad.ring_stats(reset=True)
        out, lse = ad.ring_sdpa(q, k, v, group=group, causal=causal,
                                return_lse=True, layout=layout)
        out.backward(d_out)
        torch.save({"out": out.detach(), "lse": lse.detach(),
                    "dq": q.grad, "dk": k.grad, "dv": v.grad,
                    "stats": ad.ring_stats()},
                   os.path.join(out_dir, f"{tag}.{name}.{rank}.pt"))
    # Rank 1 passes one query row too many: every rank must raise.
    q = torch.randn(1, 2, 8 + (rank == 1), 16)
    k = torch.randn(1, 2, 8, 16)
    try:
        ad.ring_sdpa(q, k, k, group=group, causal=True)
        message = "no error"
    except ValueError as e:
        message = str(e)
    with open(os.path.join(out_dir, f"{tag}.bad_shape.{rank}.txt"), "w") as f:
        f.write(message)


def main(out_dir):
    """All ranks (4) run the cases, then ranks 0 and 1 again as a group of
    2 (ring_sdpa's group argument), in one launch."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    run(out_dir, dist.group.WORLD)
    if dist.get_world_size() > 2:
        pair = dist.new_group([0, 1])
        if dist.get_rank() < 2:
            run(out_dir, pair)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
