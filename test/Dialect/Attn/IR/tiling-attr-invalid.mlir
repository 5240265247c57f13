// attn.tiling, a target's plan for an attn.sdpa's tiling, is verified with
// the op: every entry the tiling would read, and nothing else.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @not_a_dict(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected 'attn.tiling' to be a dictionary, got 4 : i64}}
  %o = attn.sdpa %q, %k, %v {attn.tiling = 4 : i64} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @zero_rows(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected 'attn.tiling' entry 'block_q' to be a positive i64, got 0 : i64}}
  %o = attn.sdpa %q, %k, %v {attn.tiling = {block_q = 0 : i64}} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @i32_keys(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected 'attn.tiling' entry 'block_kv' to be a positive i64, got 32 : i32}}
  %o = attn.sdpa %q, %k, %v {attn.tiling = {block_kv = 32 : i32}} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @flag_value(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{expected 'attn.tiling' entry 'transpose_values' to be a unit attribute, got false}}
  %o = attn.sdpa %q, %k, %v {attn.tiling = {transpose_values = false}} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @unknown(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{unknown 'attn.tiling' entry 'blockq' (expected block_q, block_kv, transpose_values, pair_values, split_f16, f16_tiles)}}
  %o = attn.sdpa %q, %k, %v {attn.tiling = {blockq = 32 : i64}} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @other_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'attn.tiling' plans an attn.sdpa's tiling: not expected on 'arith.addf'}}
  %b = arith.addf %a, %a {attn.tiling = {}} : tensor<4xf32>
  return %b : tensor<4xf32>
}
