// RUN: not attn-opt %s --attn-tile-online-softmax="block-q=0" 2>&1 | FileCheck %s

// CHECK: error: attn-tile-online-softmax: block-q (0) must be positive
func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}
