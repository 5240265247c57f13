// RUN: not attn-opt %s --convert-attn-grad-to-linalg 2>&1 | FileCheck %s

// 2^32 x 2^32 f32 probabilities: 2^66 bytes, whose allocation size would
// wrap.
// CHECK: error: 'attn.sdpa_grad' op expected the f32 probability table [1, 1, 4294967296, 4294967296] to fit in 2^63 bytes
func.func @huge(%q: tensor<1x1x4294967296x8xf32>, %lse: tensor<1x1x4294967296xf32>)
    -> (tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %lse, %q
      : tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>,
        tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>,
        tensor<1x1x4294967296xf32>, tensor<1x1x4294967296x8xf32>
      -> tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>
  return %dq, %dk, %dv : tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>, tensor<1x1x4294967296x8xf32>
}
