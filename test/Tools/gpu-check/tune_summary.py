"""tune_summary of scripts/gpu_check.py on made-up speed rows: each tune row
against the default kernel's row on the same spec (or bf16-decode, same b),
rows without a baseline left out."""
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("gpu_check", sys.argv[1])
gc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gc)


def row(case, ms, b=4, lq=4096, lk=4096):
    return {"case": case, "b": b, "lq": lq, "lk": lk, "attn_ms": ms}


rows = [row("tune-bf16-d64-none-default", 2.0),
        row("tune-bf16-d64-none-fold", 1.6),
        row("tune-bf16-d64-none-fold-lazy-q64-kv64-smem", 2.5),
        row("tune-bf16-d128-bottom_right-q64-kv64", 3.0),  # no baseline row
        row("bf16-decode", 0.5, b=1, lq=1, lk=32768),
        row("tune-decode-kv-splits-64", 0.25, b=1, lq=1, lk=32768),
        row("tune-decode-kv-splits-64", 0.9, b=8, lq=1, lk=32768)]
print("\n".join(gc.tune_summary(rows)))
