// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-kv=16 row-multiple=16 kv-splits=3" | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-kv=16 row-multiple=16" | FileCheck %s --check-prefix=AUTO

// Split-K: a decode step with grouped-query attention (8 query heads on one
// key/value head: one block of 8 rows) has the keys cut into 3 chunks of
// 64 keys (a multiple of block-kv); the forall runs over (batch, group,
// chunk) and writes f32 partial outputs and lse, which are merged by their
// lse after it.
// CHECK-LABEL: func.func @decode_gqa
// CHECK: %[[PO:.*]] = tensor.empty() : tensor<3x1x8x1x32xf32>
// CHECK: %[[PL:.*]] = tensor.empty() : tensor<3x1x8x1xf32>
// CHECK: %[[R:.*]]:2 = scf.forall (%[[B:.*]], %[[G:.*]], %[[S:.*]]) in (1, 1, 3) shared_outs(%{{.*}} = %[[PO]], %{{.*}} = %[[PL]])
// The chunk's first key block: S * 64 / 16.
// CHECK:   arith.muli %[[S]], %c64
// CHECK: tensor.parallel_insert_slice {{.*}}[%[[S]], %[[B]], %{{.*}}, 0, 0] [1, 1, 8, 1, 32]
// CHECK: tensor.parallel_insert_slice {{.*}}[%[[S]], %[[B]], %{{.*}}, 0] [1, 1, 8, 1]
// The merge: max lse, sum of weights, lse, weighted sum, rounding to bf16.
// CHECK: linalg.generic {{.*}} ins(%[[R]]#1 : tensor<3x1x8x1xf32>)
// CHECK:   arith.maximumf
// CHECK: linalg.generic
// CHECK:   math.exp
// CHECK: linalg.generic
// CHECK:   math.log %
// CHECK: linalg.generic {{.*}} ins(%[[R]]#0, %[[R]]#1, %{{.*}} : tensor<3x1x8x1x32xf32>, tensor<3x1x8x1xf32>, tensor<1x8x1xf32>)
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: return {{.*}} : tensor<1x8x1x32xbf16>, tensor<1x8x1xf32>
// Auto: one work item and 150 keys, fewer than 2 x 1024: no split.
// AUTO-LABEL: func.func @decode_gqa
// AUTO: scf.forall ({{.*}}) in ({{.*}}, 1, 1)
// AUTO-NOT: math.log %
func.func @decode_gqa(%q: tensor<1x8x1x32xbf16>, %k: tensor<1x1x150x32xbf16>, %v: tensor<1x1x150x32xbf16>) -> (tensor<1x8x1x32xbf16>, tensor<1x8x1xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v : tensor<1x8x1x32xbf16>, tensor<1x1x150x32xbf16>, tensor<1x1x150x32xbf16> -> tensor<1x8x1x32xbf16>, tensor<1x8x1xf32>
  return %o, %lse : tensor<1x8x1x32xbf16>, tensor<1x8x1xf32>
}

// -----

// A dynamic key length cannot be cut at compile time: no split.
// CHECK-LABEL: func.func @dynamic_keys
// CHECK: scf.forall ({{.*}}) in (%{{.*}}, 2, %{{.*}})
// CHECK-NOT: math.log %
func.func @dynamic_keys(%q: tensor<1x2x1x32xf32>, %k: tensor<1x2x?x32xf32>) -> tensor<1x2x1x32xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x2x1x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x1x32xf32>
  return %o : tensor<1x2x1x32xf32>
}
