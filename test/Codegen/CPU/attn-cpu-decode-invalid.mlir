// attn-cpu-decode's options, checked before any op is visited, and an
// attn.decode_keys whose head dims the kernel's vectors do not divide.
// RUN: not attn-opt %s --attn-cpu-decode="decode-width=12" 2>&1 | FileCheck %s --check-prefix=WIDTH
// RUN: not attn-opt %s --attn-cpu-decode="decode-prefetch-locality=4" 2>&1 | FileCheck %s --check-prefix=LOCALITY
// RUN: not attn-opt %s --attn-lower-cpu="decode-prefetch-locality=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attn-opt %s --attn-cpu-decode="decode-page-touch=-1" 2>&1 | FileCheck %s --check-prefix=TOUCH
// RUN: not attn-opt %s --attn-cpu-decode="decode-prefetch=some" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not attn-opt %s --attn-lower-cpu="decode-prefetch=All" 2>&1 | FileCheck %s --check-prefix=PREFETCHCASE
// RUN: attn-opt %s --attn-cpu-decode="decode-width=32" -verify-diagnostics

// WIDTH: error: attn-cpu-decode: decode-width (12) must be a power of two
// LOCALITY: error: attn-cpu-decode: decode-prefetch-locality (4) must be 0, 1, 2 or 3
// NEGATIVE: error: attn-cpu-decode: decode-prefetch-locality (-1) must be >= 0
// TOUCH: error: attn-cpu-decode: decode-page-touch (-1) must be >= 0
// PREFETCH: error: attn-cpu-decode: decode-prefetch ('some') must be auto, all or none
// PREFETCHCASE: error: attn-cpu-decode: decode-prefetch ('All') must be auto, all or none
func.func @f(%q: tensor<1x4x1x16xf32>, %k: tensor<1x1x50x16xf32>, %i: index) -> tensor<16x4xf32> {
  // expected-error @+1 {{expected D (16) and Dv (16) to be multiples of decode-width (32)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i)
      {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 1.0 : f32}
      : tensor<1x4x1x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32>
      -> tensor<4xf32>, tensor<4xf32>, tensor<16x4xf32>
  return %acc : tensor<16x4xf32>
}
