// Every diagnostic of the attn.sdpa_grad verifier, once.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected query to have rank 4, but got rank 3}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @lse_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected lse to have rank 3, but got rank 2}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @result_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected result d_value to have rank 4, but got rank 3}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<2x6x12xf32>
  return
}

// -----

func.func @query_elt(%q: tensor<1x4x8x16xi32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected query element type to be f32, f16 or bf16, but got 'i32'}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xi32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @lse_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf16>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected lse element type to be f32, but got 'f16'}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf16>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @d_out_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf16>) {
  // expected-error @+1 {{expected d_out element type ('f16') to equal query element type ('f32')}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf16> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @dynamic_heads(%q: tensor<1x?x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected query dim 1 (heads) to be static}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x?x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @dynamic_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x?xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected value dim 3 (head dim) to be static}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x?xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @key_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected key dim 3 (8) to equal query dim 3 (16)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @out_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x9x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected out dim 2 (9) to equal query dim 2 (8)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x9x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @lse_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x7xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected lse dim 2 (7) to equal query dim 2 (8)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x7xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @d_out_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x13xf32>) {
  // expected-error @+1 {{expected d_out dim 3 (13) to equal out dim 3 (12)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x13xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @d_key_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected result d_key dim 2 (7) to equal key dim 2 (6)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x7x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @d_query_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected result d_query dim 3 (15) to equal query dim 3 (16)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x15xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @gqa(%q: tensor<1x3x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x3x8x12xf32>, %lse: tensor<1x3x8xf32>, %do: tensor<1x3x8x12xf32>) {
  // expected-error @+1 {{expected query heads (query dim 1: 3) to be a positive multiple of key/value heads (key dim 1: 2)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x3x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x3x8x12xf32>, tensor<1x3x8xf32>, tensor<1x3x8x12xf32> -> tensor<1x3x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<1x4x8x0xf32>, %k: tensor<1x2x6x0xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected positive head dims, but got query dim 3 (0) and value dim 3 (12)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x8x0xf32>, tensor<1x2x6x0xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x0xf32>, tensor<1x2x6x0xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @mask_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>, %m: tensor<4x8x6xi1>) {
  // expected-error @+1 {{expected mask to have rank 4, but got rank 3}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do mask(%m) : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32>, tensor<4x8x6xi1> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @mask_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>, %m: tensor<1x1x8x6xi8>) {
  // expected-error @+1 {{expected mask element type to be i1, f32 or the query element type ('f32'), but got 'i8'}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do mask(%m) : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32>, tensor<1x1x8x6xi8> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @mask_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>, %m: tensor<1x1x8x5xi1>) {
  // expected-error @+1 {{expected mask dim 3 (5) to be 1 or Lk (6)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do mask(%m) : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32>, tensor<1x1x8x5xi1> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}

// -----

func.func @scale(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x12xf32>, %o: tensor<1x4x8x12xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x12xf32>) {
  // expected-error @+1 {{expected scale to be finite and non-zero, but got 0.000000e+00 : f32}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do {scale = 0.0 : f32} : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>, tensor<1x4x8x12xf32>, tensor<1x4x8xf32>, tensor<1x4x8x12xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x12xf32>
  return
}
