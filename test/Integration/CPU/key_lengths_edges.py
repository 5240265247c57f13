"""Prints facts about key-lengths-edges.mlir's fused results (dumped by
attn-run --dump DIR): the batches whose key length clamps to 0 see nothing
(out = 0, lse = -inf), and how many query rows of the others see a key."""
import sys

import numpy as np

out = np.load(f"{sys.argv[1]}/fused.npy")
lse = np.load(f"{sys.argv[1]}/fused_1.npy")
for b in (0, 3):
    empty = bool(np.all(np.isneginf(lse[b])) and np.all(out[b] == 0))
    print(f"batch {b} lse all -inf, out all 0: {empty}")
for b in (1, 2, 4):
    # Rows seeing a key have a finite lse in every head; the rest -inf.
    finite = np.isfinite(lse[b])
    assert np.all(finite | np.isneginf(lse[b]))
    assert np.all(finite == finite[0])
    print(f"batch {b} lse finite rows: {int(finite[0].sum())}")
