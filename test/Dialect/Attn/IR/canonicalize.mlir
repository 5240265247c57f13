// RUN: attn-opt %s -canonicalize -split-input-file | FileCheck %s

// An all-true constant i1 mask hides nothing: it is dropped.
// CHECK-LABEL: func.func @all_true_mask
// CHECK-NOT: arith.constant
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK-NOT: mask
func.func @all_true_mask(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %m = arith.constant dense<true> : tensor<1x1x8x8xi1>
  %o = attn.sdpa %q, %q, %q mask(%m) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x8xi1> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// An all-zero additive mask adds nothing: it is dropped.
// CHECK-LABEL: func.func @zero_float_mask
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK-NOT: mask
func.func @zero_float_mask(%q: tensor<1x2x8x16xf16>) -> tensor<1x2x8x16xf16> {
  %m = arith.constant dense<0.0> : tensor<1x1x1x8xf32>
  %o = attn.sdpa %q, %q, %q mask(%m) : tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x1x1x8xf32> -> tensor<1x2x8x16xf16>
  return %o : tensor<1x2x8x16xf16>
}

// -----

// A mask that hides something stays, constant or not.
// CHECK-LABEL: func.func @mask_kept
// CHECK: %[[M:.*]] = arith.constant dense<{{\[}}[{{\[}}[true, false]]]]> : tensor<1x1x1x2xi1>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%[[M]])
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}})
func.func @mask_kept(%q: tensor<1x1x2x4xf32>, %m2: tensor<1x1x2x2xi1>) -> (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) {
  %m = arith.constant dense<[[[[true, false]]]]> : tensor<1x1x1x2xi1>
  %a = attn.sdpa %q, %q, %q mask(%m) : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x1x2xi1> -> tensor<1x1x2x4xf32>
  %b = attn.sdpa %q, %q, %q mask(%m2) : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x2xi1> -> tensor<1x1x2x4xf32>
  return %a, %b : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>
}

// -----

// An explicit scale equal to the default 1/sqrt(D) is dropped; another stays.
// CHECK-LABEL: func.func @default_scale
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1x2x64xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f32} : tensor<1x1x2x64xf32>
func.func @default_scale(%q: tensor<1x1x2x64xf32>) -> (tensor<1x1x2x64xf32>, tensor<1x1x2x64xf32>) {
  %a = attn.sdpa %q, %q, %q {scale = 0.125 : f32} : tensor<1x1x2x64xf32>, tensor<1x1x2x64xf32>, tensor<1x1x2x64xf32> -> tensor<1x1x2x64xf32>
  %b = attn.sdpa %q, %q, %q {scale = 0.25 : f32} : tensor<1x1x2x64xf32>, tensor<1x1x2x64xf32>, tensor<1x1x2x64xf32> -> tensor<1x1x2x64xf32>
  return %a, %b : tensor<1x1x2x64xf32>, tensor<1x1x2x64xf32>
}

// -----

// The op is pure: an unused one is erased.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: attn.sdpa
func.func @dead(%q: tensor<1x1x2x64xf32>) {
  %a = attn.sdpa %q, %q, %q : tensor<1x1x2x64xf32>, tensor<1x1x2x64xf32>, tensor<1x1x2x64xf32> -> tensor<1x1x2x64xf32>
  return
}

// -----

// A window unbounded on both sides hides nothing: it is dropped.
// CHECK-LABEL: func.func @unbounded_window
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK-NOT: window
func.func @unbounded_window(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q {window = array<i64: -1, -1>} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Under causal, the window's right side hides nothing more than the causal
// diagonal: it becomes -1, and a window left with no bound is dropped.
// CHECK-LABEL: func.func @causal_window
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<bottom_right>, window = array<i64: 4, -1>} :
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>} :
func.func @causal_window(%q: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %a = attn.sdpa %q, %q, %q {causal = #attn.causal<bottom_right>, window = array<i64: 4, 2>} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %b = attn.sdpa %q, %q, %q {causal = #attn.causal<top_left>, window = array<i64: -1, 0>} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %a, %b : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// A window that bounds both sides without causal stays.
// CHECK-LABEL: func.func @window_kept
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {window = array<i64: 4, 2>} :
func.func @window_kept(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %q, %q {window = array<i64: 4, 2>} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Constant key lengths that are all at least Lk hide nothing: dropped.
// CHECK-LABEL: func.func @full_key_lengths
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<bottom_right>} :
func.func @full_key_lengths(%q: tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> {
  %kl = arith.constant dense<[8, 12]> : tensor<2xi32>
  %o = attn.sdpa %q, %q, %q key_lengths(%kl : tensor<2xi32>) {causal = #attn.causal<bottom_right>} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

// A key length below Lk hides keys: kept.
// CHECK-LABEL: func.func @short_key_lengths
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} key_lengths(%{{.*}} : tensor<2xi32>) :
func.func @short_key_lengths(%q: tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> {
  %kl = arith.constant dense<[8, 7]> : tensor<2xi32>
  %o = attn.sdpa %q, %q, %q key_lengths(%kl : tensor<2xi32>) : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

// ALiBi slopes that are all 0 add nothing: dropped.
// CHECK-LABEL: func.func @zero_alibi
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK-NOT: alibi_slopes
func.func @zero_alibi(%q: tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> {
  %s = arith.constant dense<0.0> : tensor<2xf32>
  %o = attn.sdpa %q, %q, %q alibi_slopes(%s : tensor<2xf32>) : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}
