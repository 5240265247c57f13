// Options attn-cpu-sdpa-grad cannot tile with are diagnostics on the op.
// RUN: not attn-opt %s --attn-cpu-sdpa-grad="block-q=24" 2>&1 | FileCheck %s --check-prefix=MULTIPLE
// RUN: not attn-opt %s --attn-cpu-sdpa-grad="block-kv=0 vector-width=-8" 2>&1 | FileCheck %s --check-prefix=POSITIVE

// MULTIPLE: error: 'attn.sdpa_grad' op attn-cpu-sdpa-grad: expected block-q (24) to be a multiple of vector-width (16)
// POSITIVE: error: attn-cpu-sdpa-grad: block-q (64), block-kv (0) and vector-width (-8) must be positive
func.func @grad(%q: tensor<1x2x8x16xf32>, %o: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %o, %lse, %o : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %dq, %dk, %dv : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}
