#!/usr/bin/env python3
"""PyTorch's gather + SDPA over a paged KV cache: the baseline a user would
write, beside bench/paged.sh's attn figures (issue 56). The same shapes: hq=32
hkv=8 d=128 Lq=1, page size 16, every sequence of length L, pages scattered
by a seeded permutation; per call the pages are gathered into dense
[B, Hkv, L, D] keys and values (k_cache[page_table], then a transpose) and
torch.nn.functional.scaled_dot_product_attention (enable_gqa) runs on them.
Prints the median wall time of the gather + SDPA call and of SDPA alone on
the gathered tensors, per dtype, thread count and shape.

Usage: python3 bench/paged_torch.py [--shapes 1:4096,1:32768] [--runs 10]
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

HQ, HKV, D, PAGE = 32, 8, 128, 16


def median_ms(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="1:4096,1:32768,4:8192,16:2048")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.bfloat16):
        for threads in (int(t) for t in args.threads.split(",")):
            torch.set_num_threads(threads)
            for shape in args.shapes.split(","):
                b, length = (int(x) for x in shape.split(":"))
                pages_per_seq = -(-length // PAGE)
                num_pages = b * pages_per_seq
                kc = torch.randn(num_pages, PAGE, HKV, D, generator=gen).to(dtype)
                vc = torch.randn(num_pages, PAGE, HKV, D, generator=gen).to(dtype)
                table = torch.randperm(num_pages, generator=gen).view(
                    b, pages_per_seq)
                q = torch.randn(b, HQ, 1, D, generator=gen).to(dtype)

                def gather(cache):
                    x = cache[table].view(b, pages_per_seq * PAGE, HKV, D)
                    return x[:, :length].transpose(1, 2)

                def call():
                    return F.scaled_dot_product_attention(
                        q, gather(kc), gather(vc), enable_gqa=True)

                k, v = gather(kc), gather(vc)
                total = median_ms(call, args.runs)
                sdpa = median_ms(
                    lambda: F.scaled_dot_product_attention(
                        q, k, v, enable_gqa=True), args.runs)
                print(f"torch {str(dtype).split('.')[-1]:8s} b={b:<3d} "
                      f"l={length:<6d} threads={threads}: gather+sdpa "
                      f"{total:8.3f} ms, sdpa alone {sdpa:8.3f} ms", flush=True)


if __name__ == "__main__":
    main()
