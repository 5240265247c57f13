// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=-1" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=4 decode-width=12" 2>&1 | FileCheck %s --check-prefix=WIDTH
// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=4 decode-prefetch-locality=4" 2>&1 | FileCheck %s --check-prefix=LOCALITY
// RUN: not attn-opt %s --attn-lower-cpu="decode-prefetch-locality=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=4 decode-page-touch=-1" 2>&1 | FileCheck %s --check-prefix=TOUCH
// RUN: not attn-opt %s --attn-tile-online-softmax="decode-rows=4 decode-prefetch=some" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not attn-opt %s --attn-lower-cpu="decode-prefetch=All" 2>&1 | FileCheck %s --check-prefix=PREFETCHCASE

// CHECK: error: attn-tile-online-softmax: decode-rows (-1) must not be negative
// WIDTH: error: attn-tile-online-softmax: decode-width (12) must be a power of 2 (at least 2)
// LOCALITY: error: attn-tile-online-softmax: decode-prefetch-locality (4) must be 0, 1, 2 or 3
// NEGATIVE: error: attn-tile-online-softmax: decode-prefetch-locality (-1) must be 0, 1, 2 or 3
// TOUCH: error: attn-tile-online-softmax: decode-page-touch (-1) must not be negative
// PREFETCH: error: attn-tile-online-softmax: decode-prefetch ('some') must be auto, all or none
// PREFETCHCASE: error: attn-tile-online-softmax: decode-prefetch ('All') must be auto, all or none
func.func @f(%q: tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32> -> tensor<1x1x4x16xf32>
  return %o : tensor<1x1x4x16xf32>
}
