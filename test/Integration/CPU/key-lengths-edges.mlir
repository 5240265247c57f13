// Key lengths at their edges: 0 (nothing visible: out = 0, lse = -inf),
// Lk, above Lk and negative (clamped to [0, Lk]: Lk and 0), and one inside,
// with bottom-right causality (the diagonal sits at the clamped length).
// attn-run checks the fused lowering against the naive one, on random
// inputs, and both against the printed facts below.
// RUN: attn-run %s --entry edges --block-q=16 --block-kv=32 | FileCheck %s
// RUN: attn-run %s --entry edges --dump %t.dir --check naive >/dev/null && \
// RUN:   %attn_python %S/key_lengths_edges.py %t.dir | FileCheck %s --check-prefix=FACTS
// CHECK: result0 naive {{.*}} PASS
// CHECK: result1 naive {{.*}} PASS
// CHECK-NOT: FAIL
// CHECK: {{^PASS$}}
// FACTS: batch 0 lse all -inf, out all 0: True
// FACTS: batch 3 lse all -inf, out all 0: True
// FACTS: batch 1 lse finite rows: 50
// FACTS: batch 2 lse finite rows: 50
// FACTS: batch 4 lse finite rows: 23

func.func @edges(%q: tensor<5x2x50x32xf32>, %k: tensor<5x2x77x32xf32>,
                 %v: tensor<5x2x77x32xf32>) -> (tensor<5x2x50x32xf32>, tensor<5x2x50xf32>) {
  %kl = arith.constant dense<[0, 77, 1000, -5, 23]> : tensor<5xi32>
  %o, %lse = attn.sdpa %q, %k, %v key_lengths(%kl : tensor<5xi32>)
      {causal = #attn.causal<bottom_right>}
      : tensor<5x2x50x32xf32>, tensor<5x2x77x32xf32>, tensor<5x2x77x32xf32>
      -> tensor<5x2x50x32xf32>, tensor<5x2x50xf32>
  return %o, %lse : tensor<5x2x50x32xf32>, tensor<5x2x50xf32>
}
