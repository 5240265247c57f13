// Options attn-cpu-sdpa-grad cannot tile with are diagnostics on the op;
// options out of Tuning.td's bounds, one line at the op's location.
// RUN: not attn-opt %s --attn-cpu-sdpa-grad="block-q=24" 2>&1 | FileCheck %s --check-prefix=MULTIPLE
// RUN: not attn-opt %s --attn-cpu-sdpa-grad="block-kv=0 vector-width=-8" 2>&1 | FileCheck %s --check-prefix=POSITIVE
// RUN: not attn-opt %s --attn-cpu-sdpa-grad="block-q=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=HUGEQ --implicit-check-not=error
// RUN: not attn-opt %s --attn-cpu-sdpa-grad="block-kv=2305843009213693952" 2>&1 | FileCheck %s --check-prefix=HUGEKV --implicit-check-not=error
// RUN: not attn-opt %s --attn-lower-cpu="grad-block-kv=65537" 2>&1 | FileCheck %s --check-prefix=PIPELINE --implicit-check-not=error

// HUGEQ: error: attn-cpu-sdpa-grad: block-q (4611686018427387904) must be at most 65536
// HUGEKV: error: attn-cpu-sdpa-grad: block-kv (2305843009213693952) must be at most 65536
// PIPELINE: error: attn-cpu-sdpa-grad: block-kv (65537) must be at most 65536

// MULTIPLE: error: 'attn.sdpa_grad' op attn-cpu-sdpa-grad: expected block-q (24) to be a multiple of vector-width (16)
// POSITIVE: error: attn-cpu-sdpa-grad: block-kv (0) must be positive
func.func @grad(%q: tensor<1x2x8x16xf32>, %o: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %lse, %o : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %dq, %dk, %dv : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}
