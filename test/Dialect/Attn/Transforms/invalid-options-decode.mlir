// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=-1" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=4 decode-dim-multiple=0" 2>&1 | FileCheck %s --check-prefix=MULTIPLE

// CHECK: error: attn-tile-online-softmax: decode-rows (-1) must be >= 0
// MULTIPLE: error: attn-tile-online-softmax: decode-dim-multiple (0) must be positive
func.func @f(%q: tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32> -> tensor<1x1x4x16xf32>
  return %o : tensor<1x1x4x16xf32>
}
