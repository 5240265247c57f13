// attn.decode_keys (what attn-tile-online-softmax leaves where a query block
// is a decode group) round-trips through the printer and the parser, with
// and without rows_per_head.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x8x1x32xbf16>, %[[K:[^:]*]]: tensor<1x2x100x32xbf16>, %[[V:[^:]*]]: tensor<1x2x100x32xbf16>, %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[HKV:[^:]*]]: index, %[[Q0:[^:]*]]: index, %[[BEGIN:[^:]*]]: index, %[[END:[^:]*]]: index)
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = attn.decode_keys %[[Q]], %[[K]], %[[V]] at (%[[B]], %[[H]], %[[HKV]], %[[Q0]]) keys (%[[BEGIN]] to %[[END]]) {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 2.550000e-01 : f32} : tensor<1x8x1x32xbf16>, tensor<1x2x100x32xbf16>, tensor<1x2x100x32xbf16> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
func.func @grouped(%q: tensor<1x8x1x32xbf16>, %k: tensor<1x2x100x32xbf16>, %v: tensor<1x2x100x32xbf16>, %b: index, %h: index, %hkv: index, %q0: index, %begin: index, %end: index) -> (tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>) {
  %m, %l, %acc = attn.decode_keys %q, %k, %v at (%b, %h, %hkv, %q0) keys (%begin to %end)
      {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 0.255 : f32}
      : tensor<1x8x1x32xbf16>, tensor<1x2x100x32xbf16>, tensor<1x2x100x32xbf16>
      -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
  return %m, %l, %acc : tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
}

// Rows of one head (Lq = 3), a dynamic key count and Dv != D.
// CHECK-LABEL: func.func @one_head
// CHECK: attn.decode_keys %{{.*}}, %{{.*}}, %{{.*}} at (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) keys (%{{.*}} to %{{.*}}) {rows = 3 : i64, score_scale = 1.000000e+00 : f32} : tensor<2x2x3x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf16> -> tensor<3xf32>, tensor<3xf32>, tensor<32x3xf32>
func.func @one_head(%q: tensor<2x2x3x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x32xf16>, %i: index) -> tensor<32x3xf32> {
  %m, %l, %acc = attn.decode_keys %q, %k, %v at (%i, %i, %i, %i) keys (%i to %i)
      {rows = 3 : i64, score_scale = 1.0 : f32}
      : tensor<2x2x3x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf16>
      -> tensor<3xf32>, tensor<3xf32>, tensor<32x3xf32>
  return %acc : tensor<32x3xf32>
}
