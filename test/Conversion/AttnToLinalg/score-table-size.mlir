// RUN: not attn-opt %s --convert-attn-to-linalg 2>&1 | FileCheck %s

// 2^32 x 2^32 f32 scores: 2^66 bytes, whose allocation size would wrap.
// CHECK: error: 'attn.sdpa' op expected the f32 score table [1, 1, 4294967296, 4294967296] to fit in 2^63 bytes
func.func @huge_table(%q: tensor<1x1x4294967296x8xf32>)
    -> tensor<1x1x4294967296x8xf32> {
  %o = attn.sdpa %q, %q, %q
      : tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>,
        tensor<1x1x4294967296x8xf32> -> tensor<1x1x4294967296x8xf32>
  return %o : tensor<1x1x4294967296x8xf32>
}
