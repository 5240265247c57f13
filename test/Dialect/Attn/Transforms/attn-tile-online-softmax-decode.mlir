// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=0 kv-splits=1" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=8 kv-splits=1" | FileCheck %s --check-prefix=DIM8

// Decode groups (decode-rows): a query block of few rows becomes one
// attn.decode_keys over the keys it sees, in place of the key loops; the
// normalization and the writes of its results stay the tiling's. The
// kernel that replaces it is a target's (attn-cpu-decode:
// test/Codegen/CPU/attn-cpu-decode*.mlir). Grouped-query attention, Lq = 1:
// the group holds the 4 query heads of a key/value head (4 rows, one per
// head: rows_per_head = 1), from head hkv * 4, reading K and V at hkv; the
// keys [0, 100); the score scale 1/sqrt(32) * log2(e).
// CHECK-LABEL: func.func @gqa_bf16
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x8x1x32xbf16>, %[[K:[^:]*]]: tensor<1x2x100x32xbf16>, %[[V:[^:]*]]: tensor<1x2x100x32xbf16>)
// CHECK: %[[LK:.*]] = arith.constant 100 : index
// CHECK: scf.forall (%[[B:[^,]*]], %[[HKV:[^,]*]], %{{[^)]*}}) in (%{{.*}}, 2, 1)
// CHECK-NEXT: %[[GROUP:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[H:.*]] = arith.muli %[[HKV]], %[[GROUP]] : index
// CHECK-NEXT: %[[Q0:.*]] = arith.constant 0 : index
// CHECK-NOT: attn.tile<
// CHECK: %[[M:.*]], %[[L:.*]], %[[ACC:.*]] = attn.decode_keys %[[Q]], %[[K]], %[[V]] at (%[[B]], %[[H]], %[[HKV]], %[[Q0]]) keys (%{{.*}} to %[[LK]]) {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 0.255034864 : f32} : tensor<1x8x1x32xbf16>, tensor<1x2x100x32xbf16>, tensor<1x2x100x32xbf16> -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
// CHECK-NOT: attn.tile<scores>
// CHECK: ins(%[[L]] : tensor<4xf32>)
// CHECK: tensor.extract_slice %[[ACC]][0, 0] [32, 4] [1, 1]
// CHECK: attn.tile = #attn.tile<output>
// CHECK: tensor.parallel_insert_slice {{.*}} into %{{.*}}[%[[B]], %[[H]], 0, 0] [1, 4, 1, 32]
// OFF-LABEL: func.func @gqa_bf16
// OFF-NOT: attn.decode_keys
// OFF: attn.tile<scores>
// OFF-NOT: attn.decode_keys
func.func @gqa_bf16(%q: tensor<1x8x1x32xbf16>, %k: tensor<1x2x100x32xbf16>, %v: tensor<1x2x100x32xbf16>) -> tensor<1x8x1x32xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x32xbf16>, tensor<1x2x100x32xbf16>, tensor<1x2x100x32xbf16> -> tensor<1x8x1x32xbf16>
  return %o : tensor<1x8x1x32xbf16>
}

// -----

// Multi-head attention with Lq = 3, lse, key lengths and a dynamic key
// count: one group of 3 rows per head (no rows_per_head), from query
// 3 * block, over the batch's keys [0, key_lengths[b] clamped to Lk); the
// lse from its m and l.
// CHECK-LABEL: func.func @mha_lse_key_lengths
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x2x3x16xf32>, %[[K:[^:]*]]: tensor<2x2x?x16xf32>, %[[KL:[^:]*]]: tensor<2xi32>)
// CHECK: scf.forall (%[[B:[^,]*]], %[[H:[^,]*]], %[[QB:[^)]*]]) in
// CHECK: %[[Q0:.*]] = arith.muli %[[QB]], %{{.*}} : index
// CHECK: tensor.extract %[[KL]][%[[B]]]
// CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[M:.*]], %[[L:.*]], %[[ACC:.*]] = attn.decode_keys %[[Q]], %[[K]], %[[K]] at (%[[B]], %[[H]], %[[H]], %[[Q0]]) keys (%{{.*}} to %[[END]]) {rows = 3 : i64, score_scale = 0.360673755 : f32} : tensor<2x2x3x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<3xf32>, tensor<3xf32>, tensor<16x3xf32>
// CHECK-NOT: attn.tile<scores>
// CHECK: ins(%[[M]], %[[L]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: math.log2
func.func @mha_lse_key_lengths(%q: tensor<2x2x3x16xf32>, %k: tensor<2x2x?x16xf32>, %kl: tensor<2xi32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x3xf32>) {
  %o, %lse = attn.sdpa %q, %k, %k key_lengths(%kl : tensor<2xi32>) : tensor<2x2x3x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<2x2x3x16xf32>, tensor<2x2x3xf32>
  return %o, %lse : tensor<2x2x3x16xf32>, tensor<2x2x3xf32>
}

// -----

// Lq = 1 with a causal band (either alignment) or a window: one key range
// for the whole group, from the window's first key (clamped to 0) to the
// diagonal's last, clamped to Lk.
// CHECK-LABEL: func.func @causal_one_row
// CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %c50 : index
// CHECK: %[[FROM:.*]] = arith.subi %{{.*}}, %c8 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.maxsi %[[FROM]], %{{.*}} : index
// CHECK: attn.decode_keys {{.*}} keys (%[[FIRST]] to %[[END]]) {rows = 4 : i64, rows_per_head = 1 : i64
// CHECK-NOT: attn.tile<scores>
func.func @causal_one_row(%q: tensor<1x4x1x16xf32>, %k: tensor<1x1x50x16xf32>) -> tensor<1x4x1x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>, window = array<i64: 8, 0>} : tensor<1x4x1x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32> -> tensor<1x4x1x16xf32>
  return %o : tensor<1x4x1x16xf32>
}

// -----

// Split-K composes: the chunks of the keys are forall iterations, each
// with a decode group over its chunk's keys, merged by their lse after.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=3" | FileCheck %s --check-prefix=SPLIT
// SPLIT-LABEL: func.func @split
// SPLIT: scf.forall ({{.*}}) in ({{.*}}, 1, 3)
// SPLIT: %[[FIRST:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// SPLIT: attn.decode_keys {{.*}} keys (%{{.*}} to %{{.*}}) {rows = 4 : i64
// SPLIT-NOT: attn.tile<scores>
// SPLIT: math.log %
func.func @split(%q: tensor<1x4x1x16xf32>, %k: tensor<1x1x500x16xf32>) -> tensor<1x4x1x16xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x4x1x16xf32>, tensor<1x1x500x16xf32>, tensor<1x1x500x16xf32> -> tensor<1x4x1x16xf32>
  return %o : tensor<1x4x1x16xf32>
}

// -----

// What a decode group does not take goes to the tile ops: a user mask, a
// softcap, ALiBi, a causal band with Lq > 1, more rows than decode-rows (4
// heads x 5 queries), a dynamic Lq, D not a multiple of
// decode-dim-multiple (24: the last op, a decode group with 8).
// CHECK-LABEL: func.func @routed
// CHECK-NOT: attn.decode_keys
// CHECK-COUNT-7: attn.tile<scores>
// CHECK-NOT: attn.decode_keys
// CHECK: return
// DIM8-LABEL: func.func @routed
// DIM8-NOT: attn.decode_keys
// DIM8: attn.decode_keys {{.*}} : tensor<1x4x1x24xf32>, tensor<1x1x50x24xf32>, tensor<1x1x50x24xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<24x4xf32>
// DIM8-NOT: attn.decode_keys
// DIM8: return
func.func @routed(%q: tensor<1x4x1x16xf32>, %k: tensor<1x1x50x16xf32>, %m: tensor<1x1x1x50xi1>, %s: tensor<4xf32>, %q2: tensor<1x4x2x16xf32>, %q5: tensor<1x4x5x16xf32>, %qd: tensor<1x4x?x16xf32>, %q24: tensor<1x4x1x24xf32>, %k24: tensor<1x1x50x24xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x4x1x16xf32>, tensor<1x4x1x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x5x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x1x24xf32>) {
  %a = attn.sdpa %q, %k, %k mask(%m) : tensor<1x4x1x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x1x50xi1> -> tensor<1x4x1x16xf32>
  %b = attn.sdpa %q, %k, %k {softcap = 30.0 : f32} : tensor<1x4x1x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32> -> tensor<1x4x1x16xf32>
  %c = attn.sdpa %q, %k, %k alibi_slopes(%s : tensor<4xf32>) : tensor<1x4x1x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32> -> tensor<1x4x1x16xf32>
  %d = attn.sdpa %q2, %k, %k {causal = #attn.causal<bottom_right>} : tensor<1x4x2x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32> -> tensor<1x4x2x16xf32>
  %e = attn.sdpa %q5, %k, %k : tensor<1x4x5x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32> -> tensor<1x4x5x16xf32>
  %f = attn.sdpa %qd, %k, %k : tensor<1x4x?x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32> -> tensor<1x4x?x16xf32>
  %g = attn.sdpa %q24, %k24, %k24 : tensor<1x4x1x24xf32>, tensor<1x1x50x24xf32>, tensor<1x1x50x24xf32> -> tensor<1x4x1x24xf32>
  return %a, %b, %c, %d, %e, %f, %g : tensor<1x4x1x16xf32>, tensor<1x4x1x16xf32>, tensor<1x4x1x16xf32>, tensor<1x4x2x16xf32>, tensor<1x4x5x16xf32>, tensor<1x4x?x16xf32>, tensor<1x4x1x24xf32>
}
