// Every form of attn.sdpa round-trips through the printer and the parser.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x256x64xf32>, %[[V:.*]]: tensor<2x8x256x64xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] : tensor<2x8x128x64xf32>, tensor<2x8x256x64xf32>, tensor<2x8x256x64xf32> -> tensor<2x8x128x64xf32>
func.func @plain(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x256x64xf32>, %v: tensor<2x8x256x64xf32>) -> tensor<2x8x128x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<2x8x128x64xf32>, tensor<2x8x256x64xf32>, tensor<2x8x256x64xf32> -> tensor<2x8x128x64xf32>
  return %o : tensor<2x8x128x64xf32>
}

// CHECK-LABEL: func.func @everything
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x2x256x64xf32>, %[[V:.*]]: tensor<2x2x256x32xf32>, %[[M:.*]]: tensor<1x1x128x256xi1>)
// CHECK: %{{.*}}, %{{.*}} = attn.sdpa %[[Q]], %[[K]], %[[V]] mask(%[[M]]) {causal = #attn.causal<bottom_right>, scale = 1.250000e-01 : f32} : tensor<2x8x128x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x32xf32>, tensor<1x1x128x256xi1> -> tensor<2x8x128x32xf32>, tensor<2x8x128xf32>
func.func @everything(%q: tensor<2x8x128x64xf32>, %k: tensor<2x2x256x64xf32>, %v: tensor<2x2x256x32xf32>, %m: tensor<1x1x128x256xi1>) -> (tensor<2x8x128x32xf32>, tensor<2x8x128xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v mask(%m) {scale = 0.125 : f32, causal = #attn.causal<bottom_right>}
      : tensor<2x8x128x64xf32>, tensor<2x2x256x64xf32>, tensor<2x2x256x32xf32>, tensor<1x1x128x256xi1>
      -> tensor<2x8x128x32xf32>, tensor<2x8x128xf32>
  return %o, %lse : tensor<2x8x128x32xf32>, tensor<2x8x128xf32>
}

// CHECK-LABEL: func.func @top_left_mqa
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>} : tensor<1x8x16x32xbf16>, tensor<1x1x16x32xbf16>, tensor<1x1x16x32xbf16> -> tensor<1x8x16x32xbf16>
func.func @top_left_mqa(%q: tensor<1x8x16x32xbf16>, %k: tensor<1x1x16x32xbf16>, %v: tensor<1x1x16x32xbf16>) -> tensor<1x8x16x32xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x8x16x32xbf16>, tensor<1x1x16x32xbf16>, tensor<1x1x16x32xbf16> -> tensor<1x8x16x32xbf16>
  return %o : tensor<1x8x16x32xbf16>
}

// A float mask of the query's type and one of f32 for an f16 query.
// CHECK-LABEL: func.func @float_masks
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x16xf16> -> tensor<1x2x16x32xf16>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x1x1x16xf32> -> tensor<1x2x16x32xf16>
func.func @float_masks(%q: tensor<1x2x16x32xf16>, %m16: tensor<1x2x16x16xf16>, %m32: tensor<1x1x1x16xf32>) -> (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>) {
  %a = attn.sdpa %q, %q, %q mask(%m16) : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x16xf16> -> tensor<1x2x16x32xf16>
  %b = attn.sdpa %q, %q, %q mask(%m32) : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x1x1x16xf32> -> tensor<1x2x16x32xf16>
  return %a, %b : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
}

// Dynamic batch and sequence lengths, with lse and a dynamic mask.
// CHECK-LABEL: func.func @dynamic
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) : tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x1x?x?xf16> -> tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
func.func @dynamic(%q: tensor<?x4x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>, %m: tensor<?x1x?x?xf16>) -> (tensor<?x4x?x64xf16>, tensor<?x4x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) : tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x1x?x?xf16> -> tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
}

// The tile role that attn-tile-online-softmax tags its tile ops with.
// CHECK-LABEL: func.func @tile_role
// CHECK: linalg.fill {attn.tile = #attn.tile<init_row_max>}
func.func @tile_role(%t: tensor<4xf32>, %x: f32) -> tensor<4xf32> {
  %r = linalg.fill {attn.tile = #attn.tile<init_row_max>} ins(%x : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Sliding window, alone (unbounded right side) and with causal.
// CHECK-LABEL: func.func @window
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {window = array<i64: 64, -1>} :
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>, window = array<i64: 16, 0>} :
func.func @window(%q: tensor<1x2x128x32xf32>) -> (tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>) {
  %a = attn.sdpa %q, %q, %q {window = array<i64: 64, -1>} : tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32> -> tensor<1x2x128x32xf32>
  %b = attn.sdpa %q, %q, %q {causal = #attn.causal<top_left>, window = array<i64: 16, 0>} : tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32> -> tensor<1x2x128x32xf32>
  return %a, %b : tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>
}

// Softcap.
// CHECK-LABEL: func.func @softcap
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>, softcap = 5.000000e+01 : f32} :
func.func @softcap(%q: tensor<1x2x128x32xf32>) -> tensor<1x2x128x32xf32> {
  %o = attn.sdpa %q, %q, %q {softcap = 50.0 : f32, causal = #attn.causal<top_left>} : tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32> -> tensor<1x2x128x32xf32>
  return %o : tensor<1x2x128x32xf32>
}

// Per-sequence key lengths, with a mask.
// CHECK-LABEL: func.func @key_lengths
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x1x128x128xi1>, %[[KL:.*]]: tensor<2xi32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%[[M]]) key_lengths(%[[KL]] : tensor<2xi32>) {causal = #attn.causal<bottom_right>} : tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x1x128x128xi1> -> tensor<2x2x128x32xf32>
func.func @key_lengths(%q: tensor<2x2x128x32xf32>, %m: tensor<2x1x128x128xi1>, %kl: tensor<2xi32>) -> tensor<2x2x128x32xf32> {
  %o = attn.sdpa %q, %q, %q mask(%m) key_lengths(%kl : tensor<2xi32>) {causal = #attn.causal<bottom_right>} : tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x1x128x128xi1> -> tensor<2x2x128x32xf32>
  return %o : tensor<2x2x128x32xf32>
}

// ALiBi slopes per head and per (batch, head), with key lengths.
// CHECK-LABEL: func.func @alibi
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%{{.*}} : tensor<2xf32>) :
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} key_lengths(%{{.*}} : tensor<2xi32>) alibi_slopes(%{{.*}} : tensor<2x2xf32>) {causal = #attn.causal<bottom_right>} :
func.func @alibi(%q: tensor<2x2x128x32xf32>, %s: tensor<2xf32>, %sb: tensor<2x2xf32>, %kl: tensor<2xi32>) -> (tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>) {
  %a = attn.sdpa %q, %q, %q alibi_slopes(%s : tensor<2xf32>) : tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32> -> tensor<2x2x128x32xf32>
  %b = attn.sdpa %q, %q, %q key_lengths(%kl : tensor<2xi32>) alibi_slopes(%sb : tensor<2x2xf32>) {causal = #attn.causal<bottom_right>} : tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32> -> tensor<2x2x128x32xf32>
  return %a, %b : tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>
}
