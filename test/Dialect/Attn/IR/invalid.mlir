// Every diagnostic of the attn.sdpa verifier, the dialect's attribute verifier
// and the parser's, once.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected query to have rank 4, but got rank 3}}
  %o = attn.sdpa %q, %k, %v : tensor<4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @key_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected key to have rank 4, but got rank 3}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @value_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x1x2x8x16xf32>) {
  // expected-error @+1 {{expected value to have rank 4, but got rank 5}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @out_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected result out to have rank 4, but got rank 3}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<4x8x16xf32>
  return
}

// -----

func.func @query_elt(%q: tensor<1x4x8x16xi32>, %k: tensor<1x2x8x16xi32>, %v: tensor<1x2x8x16xi32>) {
  // expected-error @+1 {{expected query element type to be f32, f16 or bf16, but got 'i32'}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xi32>, tensor<1x2x8x16xi32>, tensor<1x2x8x16xi32> -> tensor<1x4x8x16xi32>
  return
}

// -----

func.func @query_f64(%q: tensor<1x4x8x16xf64>, %k: tensor<1x2x8x16xf64>, %v: tensor<1x2x8x16xf64>) {
  // expected-error @+1 {{expected query element type to be f32, f16 or bf16, but got 'f64'}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf64>, tensor<1x2x8x16xf64>, tensor<1x2x8x16xf64> -> tensor<1x4x8x16xf64>
  return
}

// -----

func.func @key_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected key element type ('f16') to equal query element type ('f32')}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @value_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xbf16>) {
  // expected-error @+1 {{expected value element type ('bf16') to equal query element type ('f32')}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xbf16> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @out_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected result out element type ('f16') to equal query element type ('f32')}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf16>
  return
}

// -----

func.func @query_heads_dynamic(%q: tensor<1x?x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected query dim 1 (heads) to be static}}
  %o = attn.sdpa %q, %k, %v : tensor<1x?x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x?x8x16xf32>
  return
}

// -----

func.func @query_headdim_dynamic(%q: tensor<1x4x8x?xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected query dim 3 (head dim) to be static}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x?xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @key_heads_dynamic(%q: tensor<1x4x8x16xf32>, %k: tensor<1x?x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected key dim 1 (heads) to be static}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x?x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @key_headdim_dynamic(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x?xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected key dim 3 (head dim) to be static}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x?xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @value_heads_dynamic(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x?x8x16xf32>) {
  // expected-error @+1 {{expected value dim 1 (heads) to be static}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x?x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @value_headdim_dynamic(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x?xf32>) {
  // expected-error @+1 {{expected value dim 3 (head dim) to be static}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x?xf32> -> tensor<1x4x8x?xf32>
  return
}

// -----

func.func @key_batch(%q: tensor<1x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected key dim 0 (2) to equal query dim 0 (1)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @key_headdim(%q: tensor<1x4x8x80xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected key dim 3 (64) to equal query dim 3 (80)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x80xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @value_batch(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<3x2x8x16xf32>) {
  // expected-error @+1 {{expected value dim 0 (3) to equal query dim 0 (1)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<3x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @value_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{expected value dim 1 (4) to equal key dim 1 (2)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @value_len(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x9x16xf32>) {
  // expected-error @+1 {{expected value dim 2 (9) to equal key dim 2 (8)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @gqa_ratio(%q: tensor<1x6x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{expected query heads (query dim 1: 6) to be a positive multiple of key/value heads (key dim 1: 4)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x6x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x6x8x16xf32>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<1x4x8x0xf32>, %k: tensor<1x2x8x0xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected positive head dims, but got query dim 3 (0) and value dim 3 (16)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x0xf32>, tensor<1x2x8x0xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @out_batch(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected result out dim 0 (2) to equal query dim 0 (1)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @out_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected result out dim 1 (2) to equal query dim 1 (4)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @out_len(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected result out dim 2 (9) to equal query dim 2 (8)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x9x16xf32>
  return
}

// -----

func.func @out_dv(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x32xf32>) {
  // expected-error @+1 {{expected result out dim 3 (16) to equal value dim 3 (32)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @lse_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected result lse to have rank 3, but got rank 2}}
  %o, %l = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>, tensor<1x4xf32>
  return
}

// -----

func.func @lse_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected result lse element type to be f32, but got 'f16'}}
  %o, %l = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>, tensor<1x4x8xf16>
  return
}

// -----

func.func @lse_dims(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected result lse dim 2 (7) to equal query dim 2 (8)}}
  %o, %l = attn.sdpa %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>, tensor<1x4x7xf32>
  return
}

// -----

func.func @mask_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<8x8xi1>) {
  // expected-error @+1 {{expected mask to have rank 4, but got rank 2}}
  %o = attn.sdpa %q, %k, %v mask(%m) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8x8xi1> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @mask_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x1x8x8xi8>) {
  // expected-error @+1 {{expected mask element type to be i1, f32 or the query element type ('f32'), but got 'i8'}}
  %o = attn.sdpa %q, %k, %v mask(%m) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x8xi8> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @mask_elt_f16(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x1x8x8xf16>) {
  // expected-error @+1 {{expected mask element type to be i1, f32 or the query element type ('f32'), but got 'f16'}}
  %o = attn.sdpa %q, %k, %v mask(%m) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x8xf16> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @mask_dim_lk(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x1x8x4xi1>) {
  // expected-error @+1 {{expected mask dim 3 (4) to be 1 or Lk (8)}}
  %o = attn.sdpa %q, %k, %v mask(%m) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x4xi1> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @mask_dim_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x2x8x8xi1>) {
  // expected-error @+1 {{expected mask dim 1 (2) to be 1 or Hq (4)}}
  %o = attn.sdpa %q, %k, %v mask(%m) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xi1> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @mask_dim_lq_dynamic(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x1x5x3xi1>) {
  // expected-error @+1 {{expected mask dim 3 (3) to be 1 or Lk (8)}}
  %o = attn.sdpa %q, %k, %v mask(%m) : tensor<1x4x?x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x5x3xi1> -> tensor<1x4x?x16xf32>
  return
}

// -----

func.func @scale_inf(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected scale to be finite and non-zero, but got 0x7F800000 : f32}}
  %o = attn.sdpa %q, %k, %v {scale = 0x7F800000 : f32} : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @scale_zero(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected scale to be finite and non-zero, but got 0.000000e+00 : f32}}
  %o = attn.sdpa %q, %k, %v {scale = 0.0 : f32} : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @causal_unknown(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+2 {{expected ::mlir::attn::CausalKind to be one of: top_left, bottom_right}}
  // expected-error @+1 {{failed to parse Attn_CausalAttr parameter 'value'}}
  %o = attn.sdpa %q, %q, %q {causal = #attn.causal<diagonal>} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @scale_not_f32(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 32-bit float attribute}}
  %o = attn.sdpa %q, %q, %q {scale = 0.5 : f64} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

// The tile role attribute that attn-tile-online-softmax sets is verified by
// the dialect on any op.
func.func @tile_role_not_enum(%t: tensor<4xf32>, %x: f32) -> tensor<4xf32> {
  // expected-error @+1 {{expected 'attn.tile' to be a #attn.tile<...> role, got "scores"}}
  %r = linalg.fill {attn.tile = "scores"} ins(%x : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @tile_role_unknown(%t: tensor<4xf32>, %x: f32) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mlir::attn::TileRole to be one of: init_query, init_scores, init_row_max, init_max, init_sum, init_acc, scores, element_mask, row_max, max_update, rescale, probs, row_sum, pv, softcap, alibi}}
  // expected-error @+1 {{failed to parse Attn_TileRoleAttr parameter 'value'}}
  %r = linalg.fill {attn.tile = #attn.tile<softmax>} ins(%x : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @window_not_two(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected window to hold 2 values (left, right), but got 3}}
  %o = attn.sdpa %q, %q, %q {window = array<i64: 4, 0, 1>} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @window_negative(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected window right (-2) to be -1 (unbounded) or non-negative}}
  %o = attn.sdpa %q, %q, %q {window = array<i64: 4, -2>} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @softcap_negative(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected softcap to be finite and positive, but got -3.000000e+00 : f32}}
  %o = attn.sdpa %q, %q, %q {softcap = -3.0 : f32} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @key_lengths_type(%q: tensor<2x2x8x16xf32>, %kl: tensor<2xi64>) -> tensor<2x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected key_lengths to be a rank-1 tensor of i32, but got 'tensor<2xi64>'}}
  %o = attn.sdpa %q, %q, %q key_lengths(%kl : tensor<2xi64>) : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

func.func @key_lengths_batch(%q: tensor<2x2x8x16xf32>, %kl: tensor<3xi32>) -> tensor<2x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected key_lengths dim 0 (3) to equal query dim 0 (2)}}
  %o = attn.sdpa %q, %q, %q key_lengths(%kl : tensor<3xi32>) : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

func.func @alibi_type(%q: tensor<2x2x8x16xf32>, %s: tensor<2xf16>) -> tensor<2x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected alibi_slopes to be an f32 tensor [Hq] or [B, Hq], but got 'tensor<2xf16>'}}
  %o = attn.sdpa %q, %q, %q alibi_slopes(%s : tensor<2xf16>) : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

func.func @alibi_heads(%q: tensor<2x2x8x16xf32>, %s: tensor<2x4xf32>) -> tensor<2x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected alibi_slopes dim 1 (4) to equal query dim 1 (2)}}
  %o = attn.sdpa %q, %q, %q alibi_slopes(%s : tensor<2x4xf32>) : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

func.func @alibi_batch(%q: tensor<2x2x8x16xf32>, %s: tensor<3x2xf32>) -> tensor<2x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected alibi_slopes dim 0 (3) to equal query dim 0 (2)}}
  %o = attn.sdpa %q, %q, %q alibi_slopes(%s : tensor<3x2xf32>) : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}
