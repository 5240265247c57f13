"""Checks scripts/gpu_check.py's f64 reference against attn's own fused
result, dumped by `attn-run --dump DIR`: prints one verdict line per result."""
import importlib.util
import sys

import numpy as np

spec_text, harness, dump = sys.argv[1], sys.argv[2], sys.argv[3]
loader = importlib.util.spec_from_file_location("gpu_check", harness)
g = importlib.util.module_from_spec(loader)
loader.loader.exec_module(g)

s = g.parse_spec(spec_text)
n = ((4 if s["mask"] != "none" else 3) + s["key_lengths"] +
     (s["alibi"] != "none"))
args = [np.load(f"{dump}/arg{i}.npy") for i in range(n)]
dt = s["dtype"]
q, k, v = (g.values(a, dt) for a in args[:3])
mask = None
if s["mask"] == "bool":
    mask = args[3]
elif s["mask"] == "float":
    mask = g.values(args[3], dt)
aux = g.aux_inputs(s, args)
ref_out, ref_lse = g.reference(s, q, k, v, mask, aux=aux)
sens = g.sensitivity(s, q, k, v, mask, ref_out, ref_lse, 0, aux=aux)
results = [("out", g.values(np.load(f"{dump}/fused.npy"), dt), ref_out,
            sens[0:2])]
if s["lse"]:
    results.append(("lse", np.load(f"{dump}/fused_lse.npy").astype(np.float64),
                    ref_lse, sens[2:4]))
for name, got, ref, sn in results:
    max_abs, rel = g.errors(got, ref)
    finite = ref[np.isfinite(ref)]
    ok, rule = g.judge(dt, name == "out", max_abs, rel,
                       float(np.abs(finite).max()) if finite.size else 0.0,
                       None, sn)
    print(f"{name} {'PASS' if ok else 'FAIL'} rel_l2 {rel:.3e} ({rule})")
