// Every diagnostic of the attn.sdpa_varlen_grad verifier, once.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%a0: tensor<1x?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected query to have rank 3, but got rank 4}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<1x?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @lse_rank(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<1x4x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected lse to have rank 2, but got rank 3}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<1x4x?xf32>, tensor<?x4x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @lse_type(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf16>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected lse element type to be f32, but got 'f16'}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf16>, tensor<?x4x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @offsets_type(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi64>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected cu_seqlens_q element type to be i32, but got 'i64'}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<3xi64>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @d_out_rank(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12x1xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected d_out to have rank 3, but got rank 4}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12x1xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @d_out_type(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12xf16>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected d_out element type ('f16') to equal query element type ('f32')}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf16>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @d_key_type(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected result d_key element type ('bf16') to equal query element type ('f32')}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xbf16>, tensor<?x2x12xf32>
  return
}

// -----

func.func @d_value_dims(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected result d_value dim 2 (16) to equal value dim 2 (12)}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>
  return
}

// -----

func.func @d_out_heads(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x2x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected d_out dim 1 (2) to equal out dim 1 (4)}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @lse_heads(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<2x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected lse dim 0 (2) to equal query dim 1 (4)}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<2x?xf32>, tensor<?x4x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @offsets_count(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi32>, %a7: tensor<4xi32>) {
  // expected-error @+1 {{expected cu_seqlens_k dim 0 (4) to equal cu_seqlens_q dim 0 (3)}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<3xi32>, tensor<4xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @no_offsets(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<0xi32>, %a7: tensor<0xi32>) {
  // expected-error @+1 {{expected cu_seqlens_q to hold B + 1 >= 1 offsets, but got 0}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<0xi32>, tensor<0xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @heads(%a0: tensor<?x3x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x3x12xf32>, %a4: tensor<3x?xf32>, %a5: tensor<?x3x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected query heads (query dim 1: 3) to be a positive multiple of key/value heads (key dim 1: 2)}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : tensor<?x3x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x3x12xf32>, tensor<3x?xf32>, tensor<?x3x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x3x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}

// -----

func.func @scale(%a0: tensor<?x4x16xf32>, %a1: tensor<?x2x16xf32>, %a2: tensor<?x2x12xf32>, %a3: tensor<?x4x12xf32>, %a4: tensor<4x?xf32>, %a5: tensor<?x4x12xf32>, %a6: tensor<3xi32>, %a7: tensor<3xi32>) {
  // expected-error @+1 {{expected scale to be finite and non-zero, but got 0.000000e+00 : f32}}
  %dq, %dk, %dv = attn.sdpa_varlen_grad %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 {scale = 0.0 : f32} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return
}
