// Hostile IR the verifiers refuse (issue 60): a scale or softcap whose
// product with log2(e) is no finite f32 (the lowerings' factor; the largest
// f32 accepted, 2.35865744e38, verifies), a tensor with an encoding (a
// sparse tensor is not the dense array the ops read), and the forward's
// window or softcap on attn.sdpa_grad (the backward implements neither).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @softcap_largest(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q {softcap = 2.35865744e38 : f32} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @softcap_overflows(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected softcap to be at most 2.358657e+38 (FLT_MAX / log2(e)), but got 2.35865764E+38 : f32}}
  %o = attn.sdpa %q, %q, %q {softcap = 2.35865764e38 : f32} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @scale_overflows(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected |scale| to be at most 2.358657e+38 (FLT_MAX / log2(e)), but got -3.000000e+38 : f32}}
  %o = attn.sdpa %q, %q, %q {scale = -3.0e38 : f32} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @varlen_softcap_overflows(%q: tensor<8x2x16xf32>, %cu: tensor<3xi32>) -> tensor<8x2x16xf32> {
  // expected-error @+1 {{'attn.sdpa_varlen' op expected softcap to be at most}}
  %o = attn.sdpa_varlen %q, %q, %q, %cu, %cu {softcap = 3.0e38 : f32} : tensor<8x2x16xf32>, tensor<8x2x16xf32>, tensor<8x2x16xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<8x2x16xf32>
  return %o : tensor<8x2x16xf32>
}

// -----

#sparse = #sparse_tensor.encoding<{map = (d0, d1, d2, d3) -> (d0 : dense, d1 : dense, d2 : dense, d3 : compressed)}>
func.func @sparse_key(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32, #sparse>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.sdpa' op expected operand 1 to be a dense tensor (no encoding), but got 'tensor<1x2x8x16xf32, #sparse_tensor.encoding}}
  %o = attn.sdpa %q, %k, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32, #sparse>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @encoded_result(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32, "rows"> {
  // expected-error @+1 {{'attn.sdpa' op expected result 0 to be a dense tensor (no encoding), but got 'tensor<1x2x8x16xf32, "rows">'}}
  %o = attn.sdpa %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32, "rows">
  return %o : tensor<1x2x8x16xf32, "rows">
}

// -----

func.func @grad_window(%q: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'attn.sdpa_grad' op expected no 'window' attribute: the backward implements no window (attn.sdpa's)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %lse, %q {window = array<i64: 2, 0>} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}

// -----

func.func @grad_softcap(%q: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'attn.sdpa_grad' op expected no 'softcap' attribute: the backward implements no softcap (attn.sdpa's)}}
  %dq, %dk, %dv = attn.sdpa_grad %q, %q, %q, %q, %lse, %q {softcap = 5.0 : f32} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return
}
