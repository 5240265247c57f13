#!/usr/bin/env python3
"""A Hugging Face transformers model on the CPU with attn_implementation="attn"
(attn.transformers) against "sdpa" (PyTorch's SDPA), paired.

The model is built from a config with random weights (nothing downloaded):
Llama's architecture, --layers layers of --hidden width, --heads query heads
and --kv-heads key/value heads (GQA). Two phases, each timed by the wall
clock with both implementations on the same weights and inputs, alternating
A B, B A, ... for --pairs pairs (a pair's ratio is taken while the machine is
in one state; the median of the ratios is the figure to quote on a shared
machine):

  prefill  one forward pass over --prefill tokens (batch --batch, causal)
  decode   --decode greedy steps after that prefill, one token each, through
           the KV cache (the prefill itself untimed)

Prints per phase the median time of each side, the median and range of the
pairs' attn/sdpa ratios, and how far attn's logits are from sdpa's (rel_l2)
and whether the greedy tokens are equal. Each side runs once untimed first
(attn compiles its kernels then: one library per phase, for every length).
Threads: --threads (torch.set_num_threads; attn uses torch's setting).

e.g. python3 bench/hf_models.py --prefill 2048 --decode 128 --pairs 5
"""
import argparse
import copy
import os
import platform
import statistics
import sys
import time

# This file's name is the package's: keep bench/ off the import path so that
# `import transformers` finds Hugging Face's.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]


def parse_args():
    p = argparse.ArgumentParser(
        prog="bench/hf_models.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--intermediate", type=int, default=1376)
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prefill", type=int, default=2048)
    p.add_argument("--decode", type=int, default=128)
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--dtype", choices=("f32", "bf16"), default="f32")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    import torch
    import transformers
    import attn.transformers

    torch.set_num_threads(args.threads)
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    name = attn.transformers.register()
    config = transformers.LlamaConfig(
        vocab_size=args.vocab, hidden_size=args.hidden,
        intermediate_size=args.intermediate, num_hidden_layers=args.layers,
        num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
        max_position_embeddings=args.prefill + args.decode)
    torch.manual_seed(args.seed)
    model = transformers.AutoModelForCausalLM.from_config(
        config, attn_implementation=name, dtype=dtype).eval()
    other = copy.deepcopy(model)
    other.set_attn_implementation("sdpa")
    sides = {"attn": model, "sdpa": other}
    ids = torch.randint(0, args.vocab, (args.batch, args.prefill),
                        generator=torch.Generator().manual_seed(args.seed))

    def prefill(m):
        t0 = time.perf_counter()
        out = m(input_ids=ids, use_cache=True)
        return time.perf_counter() - t0, out

    def decode(m):
        out = m(input_ids=ids, use_cache=True)   # untimed
        cache, tokens = out.cache, []
        token = out.logits[:, -1:].argmax(-1)
        t0 = time.perf_counter()
        for _ in range(args.decode):
            tokens.append(token)
            out = m(input_ids=token, cache=cache, use_cache=True)
            cache, token = out.cache, out.logits[:, -1:].argmax(-1)
        return time.perf_counter() - t0, torch.cat(tokens, 1)

    print(f"bench/hf_models.py: Llama config hidden={args.hidden} "
          f"layers={args.layers} heads={args.heads}/{args.kv_heads} "
          f"(d={args.hidden // args.heads}) intermediate={args.intermediate} "
          f"vocab={args.vocab} {args.dtype}; batch {args.batch}, prefill "
          f"{args.prefill}, decode {args.decode} steps; {args.threads} "
          f"thread(s); torch {torch.__version__}, transformers "
          f"{transformers.__version__}; {platform.processor() or platform.machine()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    with torch.no_grad():
        for phase, run in (("prefill", prefill), ("decode", decode)):
            results = {s: run(m) for s, m in sides.items()}  # warm-up
            if phase == "prefill":
                a, b = (results[s][1].logits.double() for s in ("attn", "sdpa"))
                agree = f"logits rel_l2 vs sdpa {float((a - b).norm() / b.norm()):.1e}"
            else:
                agree = "greedy tokens " + ("equal" if torch.equal(
                    results["attn"][1], results["sdpa"][1]) else "DIFFER")
            times = {s: [] for s in sides}
            ratios = []
            for i in range(args.pairs):
                order = ("attn", "sdpa") if i % 2 == 0 else ("sdpa", "attn")
                pair = {s: run(sides[s])[0] for s in order}
                for s in sides:
                    times[s].append(pair[s])
                ratios.append(pair["attn"] / pair["sdpa"])
            med = {s: statistics.median(v) for s, v in times.items()}
            unit = 1e3 / (args.decode if phase == "decode" else 1)
            what = "ms/step" if phase == "decode" else "ms"
            print(f"{phase:8s} attn {med['attn'] * unit:9.2f} {what}   sdpa "
                  f"{med['sdpa'] * unit:9.2f} {what}   attn/sdpa paired median "
                  f"{statistics.median(ratios):.3f} (range {min(ratios):.3f}-"
                  f"{max(ratios):.3f}, {args.pairs} pairs)   {agree}")
    print(f"attn calls {attn.transformers.stats()}")


if __name__ == "__main__":
    main()
