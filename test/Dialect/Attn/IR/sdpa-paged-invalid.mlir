// Every diagnostic of the attn.sdpa_paged verifier, once.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<2x4x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected query to have rank 4, but got rank 3}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @key_cache_rank(%q: tensor<2x4x3x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected key_cache to have rank 4, but got rank 3}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @page_table_rank(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<6xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected page_table to have rank 2, but got rank 1}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<6xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @kv_lens_rank(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2x1xi32>) {
  // expected-error @+1 {{expected kv_lens to have rank 1, but got rank 2}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2x1xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @lse_rank(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected lse to have rank 3, but got rank 2}}
  %o, %e = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @element_type(%q: tensor<2x4x3x16xf64>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected query element type to be f32, f16 or bf16, but got 'f64'}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf64>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @value_element_type(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xbf16>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected value_cache element type ('bf16') to equal query element type ('f32')}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xbf16>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @out_element_type(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected out element type ('f16') to equal query element type ('f32')}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf16>
  return
}

// -----

func.func @page_table_type(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi64>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected page_table element type to be i32, but got 'i64'}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi64>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @kv_lens_type(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xindex>) {
  // expected-error @+1 {{expected kv_lens element type to be i32, but got 'index'}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xindex> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @lse_type(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected lse element type to be f32, but got 'f16'}}
  %o, %e = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>, tensor<2x4x3xf16>
  return
}

// -----

func.func @dynamic_query_heads(%q: tensor<2x?x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected query dim 1 (heads) to be static}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x?x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x?x3x12xf32>
  return
}

// -----

func.func @dynamic_head_dim(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x?xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected key_cache dim 3 (head dim) to be static}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x?xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @dynamic_cache_heads(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x?x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected value_cache dim 2 (heads) to be static}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x?x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @hnd_dynamic_heads(%q: tensor<2x4x3x16xf32>, %k: tensor<?x?x5x16xf32>, %v: tensor<?x2x5x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected key_cache dim 1 (heads) to be static}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l {layout = #attn.kv_layout<hnd>} : tensor<2x4x3x16xf32>, tensor<?x?x5x16xf32>, tensor<?x2x5x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @key_head_dim(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x8xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected key_cache dim 3 (8) to equal query dim 3 (16)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x8xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @pages(%q: tensor<2x4x3x16xf32>, %k: tensor<6x5x2x16xf32>, %v: tensor<7x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected value_cache dim 0 (7) to equal key_cache dim 0 (6)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<6x5x2x16xf32>, tensor<7x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @page_size(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x4x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected value_cache dim 1 (4) to equal key_cache dim 1 (5)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x4x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @cache_heads(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x1x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected value_cache dim 2 (1) to equal key_cache dim 2 (2)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x1x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @hnd_page_size(%q: tensor<2x4x3x16xf32>, %k: tensor<?x2x5x16xf32>, %v: tensor<?x2x4x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected value_cache dim 2 (4) to equal key_cache dim 2 (5)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l {layout = #attn.kv_layout<hnd>} : tensor<2x4x3x16xf32>, tensor<?x2x5x16xf32>, tensor<?x2x4x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @page_table_batch(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<3x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected page_table dim 0 (3) to equal query dim 0 (2)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<3x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @kv_lens_batch(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<1xi32>) {
  // expected-error @+1 {{expected kv_lens dim 0 (1) to equal query dim 0 (2)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<1xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @out_batch(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected out dim 0 (1) to equal query dim 0 (2)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<1x4x3x12xf32>
  return
}

// -----

func.func @out_rows(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected out dim 2 (2) to equal query dim 2 (3)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x2x12xf32>
  return
}

// -----

func.func @out_value_dim(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected out dim 3 (16) to equal value_cache dim 3 (12)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x16xf32>
  return
}

// -----

func.func @lse_rows(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected lse dim 2 (4) to equal query dim 2 (3)}}
  %o, %e = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>, tensor<2x4x4xf32>
  return
}

// -----

func.func @zero_page_size(%q: tensor<2x4x3x16xf32>, %k: tensor<?x0x2x16xf32>, %v: tensor<?x0x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected key_cache dim 1 (page size) to be positive, but got 0}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x0x2x16xf32>, tensor<?x0x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @gqa(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x3x16xf32>, %v: tensor<?x5x3x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected query heads (query dim 1: 4) to be a positive multiple of key/value heads (key_cache dim 2: 3)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x16xf32>, tensor<?x5x3x16xf32>, tensor<?x5x3x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @hnd_gqa(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected query heads (query dim 1: 4) to be a positive multiple of key/value heads (key_cache dim 1: 5)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l {layout = #attn.kv_layout<hnd>} : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<2x4x3x0xf32>, %k: tensor<?x5x2x0xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected positive head dims, but got query dim 3 (0) and value dim 3 (12)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l : tensor<2x4x3x0xf32>, tensor<?x5x2x0xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @slopes_type(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>, %s: tensor<4xf16>) {
  // expected-error @+1 {{expected alibi_slopes to be an f32 tensor [Hq] or [B, Hq], but got}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l alibi_slopes(%s : tensor<4xf16>) : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @slopes_heads(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{expected alibi_slopes dim 0 (3) to equal query dim 1 (4)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l alibi_slopes(%s : tensor<3xf32>) : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @slopes_batch(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>, %s: tensor<3x4xf32>) {
  // expected-error @+1 {{expected alibi_slopes dim 0 (3) to equal query dim 0 (2)}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l alibi_slopes(%s : tensor<3x4xf32>) : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @window(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected window to hold 2 values (left, right), but got 1}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l {window = array<i64: 1>} : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @softcap(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected softcap to be finite and positive, but got -1.000000e+00 : f32}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l {softcap = -1.0 : f32} : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @scale(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{expected scale to be finite and non-zero, but got 0.000000e+00 : f32}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l {scale = 0.0 : f32} : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

func.func @layout_attr(%q: tensor<2x4x3x16xf32>, %k: tensor<?x5x2x16xf32>, %v: tensor<?x5x2x12xf32>, %t: tensor<2x3xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{attribute 'layout' failed to satisfy constraint}}
  %o = attn.sdpa_paged %q, %k, %v, %t, %l {layout = #attn.causal<top_left>} : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>
  return
}

// -----

// attn.paged_view's diagnostics.
func.func @view_rank(%c: tensor<?x16x64xf32>, %t: tensor<2x3xi32>) {
  // expected-error @+1 {{expected cache and view to have rank 4, but got 3 and 4}}
  %v = attn.paged_view %c, %t : tensor<?x16x64xf32>, tensor<2x3xi32> -> tensor<2x2x48x64xf32>
  return
}

// -----

func.func @view_table(%c: tensor<?x16x2x64xf32>, %t: tensor<2x3xi64>) {
  // expected-error @+1 {{expected page_table to be a rank-2 i32 tensor, but got 'tensor<2x3xi64>'}}
  %v = attn.paged_view %c, %t : tensor<?x16x2x64xf32>, tensor<2x3xi64> -> tensor<2x2x48x64xf32>
  return
}

// -----

func.func @view_element_type(%c: tensor<?x16x2x64xf32>, %t: tensor<2x3xi32>) {
  // expected-error @+1 {{expected view element type ('bf16') to equal cache element type ('f32')}}
  %v = attn.paged_view %c, %t : tensor<?x16x2x64xf32>, tensor<2x3xi32> -> tensor<2x2x48x64xbf16>
  return
}

// -----

func.func @view_heads(%c: tensor<?x16x2x64xf32>, %t: tensor<2x3xi32>) {
  // expected-error @+1 {{expected view dim 1 (4) to equal cache dim 2 (2)}}
  %v = attn.paged_view %c, %t : tensor<?x16x2x64xf32>, tensor<2x3xi32> -> tensor<2x4x48x64xf32>
  return
}

// -----

func.func @view_keys(%c: tensor<?x2x16x64xf32>, %t: tensor<2x3xi32>) {
  // expected-error @+1 {{expected view dim 2 (32) to be page_table dim 1 times the page size (3 * 16)}}
  %v = attn.paged_view %c, %t {layout = #attn.kv_layout<hnd>} : tensor<?x2x16x64xf32>, tensor<2x3xi32> -> tensor<2x2x32x64xf32>
  return
}
