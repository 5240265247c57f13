// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=-1" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=4 decode-width=12" 2>&1 | FileCheck %s --check-prefix=WIDTH

// CHECK: error: attn-tile-online-softmax: decode-rows (-1) must not be negative
// WIDTH: error: attn-tile-online-softmax: decode-width (12) must be a power of 2 (at least 2)
func.func @f(%q: tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32> -> tensor<1x1x4x16xf32>
  return %o : tensor<1x1x4x16xf32>
}
