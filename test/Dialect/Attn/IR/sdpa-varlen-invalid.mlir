// Every diagnostic of the attn.sdpa_varlen verifier, once.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<1x?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected query to have rank 3, but got rank 4}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<1x?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @lse_rank(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected lse to have rank 2, but got rank 3}}
  %o, %l = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>, tensor<1x4x?xf32>
  return
}

// -----

func.func @element_type(%q: tensor<?x4x16xf64>, %k: tensor<?x2x16xf64>, %v: tensor<?x2x12xf64>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected query element type to be f32, f16 or bf16, but got 'f64'}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf64>, tensor<?x2x16xf64>, tensor<?x2x12xf64>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf64>
  return
}

// -----

func.func @key_element_type(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected key element type ('f16') to equal query element type ('f32')}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x16xf16>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @cu_seqlens_type(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi64>) {
  // expected-error @+1 {{expected cu_seqlens_k element type to be i32, but got 'i64'}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi64> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @lse_type(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected lse element type to be f32, but got 'f16'}}
  %o, %l = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>, tensor<4x?xf16>
  return
}

// -----

func.func @dynamic_heads(%q: tensor<?x4x16xf32>, %k: tensor<?x?x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected key dim 1 (heads) to be static}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x?x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @dynamic_head_dim(%q: tensor<?x4x?xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected query dim 2 (head dim) to be static}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x?xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @head_dim(%q: tensor<?x4x16xf32>, %k: tensor<?x2x8xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected key dim 2 (8) to equal query dim 2 (16)}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x8xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @lse_layout(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected lse dim 0 (5) to equal query dim 1 (4)}}
  %o, %l = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>, tensor<5x?xf32>
  return
}

// -----

func.func @empty_offsets(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<0xi32>, %ck: tensor<0xi32>) {
  // expected-error @+1 {{expected cu_seqlens_q to hold B + 1 >= 1 offsets, but got 0}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<0xi32>, tensor<0xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @gqa(%q: tensor<?x4x16xf32>, %k: tensor<?x3x16xf32>, %v: tensor<?x3x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected query heads (query dim 1: 4) to be a positive multiple of key/value heads (key dim 1: 3)}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x3x16xf32>, tensor<?x3x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @head_dims(%q: tensor<?x4x0xf32>, %k: tensor<?x2x0xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected positive head dims, but got query dim 2 (0) and value dim 2 (12)}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x0xf32>, tensor<?x2x0xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @window_size(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected window to hold 2 values (left, right), but got 1}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck {window = array<i64: 4>} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @window_side(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected window left (-2) to be -1 (unbounded) or non-negative}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck {window = array<i64: -2, 3>} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @softcap(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected softcap to be finite and positive, but got -1.000000e+00 : f32}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck {softcap = -1.0 : f32} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @scale(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{expected scale to be finite and non-zero, but got 0.000000e+00 : f32}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck {scale = 0.0 : f32} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @alibi_type(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>, %s: tensor<4xf16>) {
  // expected-error @+1 {{expected alibi_slopes to be an f32 tensor [Hq] or [B, Hq], but got 'tensor<4xf16>'}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck alibi_slopes(%s : tensor<4xf16>) : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @alibi_heads(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>, %s: tensor<2x2xf32>) {
  // expected-error @+1 {{expected alibi_slopes dim 1 (2) to equal query dim 1 (4)}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck alibi_slopes(%s : tensor<2x2xf32>) : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}

// -----

func.func @alibi_sequences(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{expected alibi_slopes dim 0 (3) to equal the number of sequences (cu_seqlens_q dim 0 - 1 = 2)}}
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck alibi_slopes(%s : tensor<3x4xf32>) : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<?x4x12xf32>
  return
}
