// Every diagnostic of the attn.decode_keys verifier, once.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<8x1x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected query to have rank 4, but got rank 3}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<8x1x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @acc_rank(%q: tensor<1x8x4x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected acc to have rank 2, but got rank 1}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<128xf32>
  return
}

// -----

func.func @element_type(%q: tensor<1x8x4x32xf64>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected query element type to be f32, f16 or bf16, but got 'f64'}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf64>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @result_type(%q: tensor<1x8x4x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float values, but got 'tensor<4xf16>'}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<4xf16>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @dynamic_head_dim(%q: tensor<1x8x4x?xf32>, %k: tensor<1x2x100x?xf32>, %i: index) {
  // expected-error @+1 {{expected query dim 3 (head dim) to be static}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x?xf32>, tensor<1x2x100x?xf32>, tensor<1x2x100x?xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<1x8x4x0xf32>, %k: tensor<1x2x100x0xf32>, %i: index) {
  // expected-error @+1 {{expected positive head dims, but got query dim 3 (0) and value dim 3 (0)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x0xf32>, tensor<1x2x100x0xf32>, tensor<1x2x100x0xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<0x4xf32>
  return
}

// -----

func.func @key_head_dim(%q: tensor<1x8x4x32xf32>, %k: tensor<1x2x100x16xf32>, %v: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected key dim 3 (16) to equal query dim 3 (32)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %v at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @value_keys(%q: tensor<1x8x4x32xf32>, %k: tensor<1x2x100x32xf32>, %v: tensor<1x2x90x32xf32>, %i: index) {
  // expected-error @+1 {{expected value dim 2 (90) to equal key dim 2 (100)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %v at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x90x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @acc_dv(%q: tensor<1x8x4x32xf32>, %k: tensor<1x2x100x32xf32>, %v: tensor<1x2x100x16xf32>, %i: index) {
  // expected-error @+1 {{expected acc dim 0 (32) to equal value dim 3 (16)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %v at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x16xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @rows_positive(%q: tensor<1x8x4x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{attribute 'rows' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 0 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<0xf32>, tensor<0xf32>, tensor<32x0xf32>
  return
}

// -----

func.func @m_rows(%q: tensor<1x8x4x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected m dim 0 (3) to equal rows (4)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<3xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @acc_rows(%q: tensor<1x8x4x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected acc dim 1 (8) to equal rows (4)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x4x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x8xf32>
  return
}

// -----

func.func @rows_past_lq(%q: tensor<1x8x3x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected rows (4) to be at most query dim 2 (3)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x3x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @rows_per_head_multiple(%q: tensor<1x8x2x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected rows (5) to be a multiple of rows_per_head (2)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 5 : i64, rows_per_head = 2 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x2x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<5xf32>, tensor<5xf32>, tensor<32x5xf32>
  return
}

// -----

func.func @rows_per_head_lq(%q: tensor<1x8x2x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected rows_per_head (1) to equal query dim 2 (2)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 1.0 : f32}
      : tensor<1x8x2x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}

// -----

func.func @rows_per_head_heads(%q: tensor<1x2x1x32xf32>, %k: tensor<1x2x100x32xf32>, %i: index) {
  // expected-error @+1 {{expected the rows' 4 heads to be at most query dim 1 (2)}}
  %m, %l, %acc = attn.decode_keys %q, %k, %k at (%i, %i, %i, %i) keys (%i to %i) {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 1.0 : f32}
      : tensor<1x2x1x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return
}
