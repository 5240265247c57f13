"""wgmma_summary and the sm_90a cases of scripts/gpu_check.py, on made-up
speed rows and without building anything: each -wgmma speed row against
the mma.sync row of the same shape and sizes (and the torch backends timed
there), the schedules' rows (-wgmma-persistent, ...) also against the
plain -wgmma row; the check grid's -wgmma cases (chip sm_90a, --kernels
wgmma) cover every prefill case, and four decoding steps (the key splits
from the SM count at launch); each schedule has its check cases; a build
for a chip other than sm_90 leaves them out."""
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("gpu_check", sys.argv[1])
gc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gc)


def row(case, ms, lq=4096, **extra):
    r = {"case": case, "b": 16384 // lq, "lq": lq, "lk": lq, "attn_ms": ms,
         "attn_tflops": 100.0 / ms}
    r.update(extra)
    return r


rows = [row("bf16-d128-none", 2.0, flash_ms=1.5, cudnn_ms=1.0),
        row("bf16-d128-none-wgmma", 1.0),
        row("bf16-d64-bottom_right", 1.0, lq=1024, flash_ms=0.8),
        row("bf16-d64-bottom_right-wgmma", 1.25, lq=1024),
        row("bf16-d128-none-wgmma-persistent", 0.8),
        row("bf16-d128-none-wgmma-bogus", 0.5),  # not a schedule: left out
        row("f16-d128-none-wgmma", 1.0)]  # no mma.sync row: left out
print("\n".join(gc.wgmma_summary(rows)))

checks = gc.check_cases()
names = {c["name"] for c in checks}
prefill = [c for c in checks if not c.get("cuda_args")
           and not c["name"].startswith("decode-")]
missing = [c["name"] for c in prefill if c["name"] + "-wgmma" not in names]
wgmma = [c for c in checks if "-wgmma" in c["name"]]
print(f"check cases: {len(prefill)} prefill, {len(missing)} without a -wgmma "
      f"case, {len(wgmma)} -wgmma cases, "
      f"{sum(c['name'].startswith('decode-') for c in wgmma)} of them decode")
print("every -wgmma case on sm_90a with --kernels wgmma:",
      all(c["chip"] == "sm_90a" and c["cuda_args"][:2] == ["--kernels", "wgmma"]
          for c in wgmma))
for schedule, options in gc.WGMMA_SCHEDULES.items():
    own = [c for c in wgmma if c["name"].endswith("-wgmma-" + schedule)]
    print(f"schedule {schedule}: {len(own)} check cases, all with "
          f"{' '.join(options)}:",
          all(c["cuda_args"][2:] == options for c in own))
speed = [c for c in gc.speed_cases() if "-wgmma" in c["name"]]
print(f"speed cases: {sum(c['name'].endswith('-wgmma') for c in speed)} "
      f"-wgmma, {sum('-wgmma-' in c['name'] for c in speed)} with a "
      "schedule, torch timed on none of them:",
      not any(c.get("torch", True) for c in speed))
