// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=64" -canonicalize -cse -split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-tile-online-softmax -split-input-file | FileCheck %s --check-prefix=NOSCORES
// RUN: attn-opt %s --attn-tile-online-softmax -split-input-file | FileCheck %s --check-prefix=ROLES
// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=64" -split-input-file | FileCheck %s --check-prefix=HOIST

// The score table never exists: no tensor has an Lq x Lk shape.
// NOSCORES-NOT: tensor<{{[0-9]+}}x{{[0-9]+}}x{{[0-9]+}}x130xf32>
// NOSCORES-NOT: attn.sdpa

// GQA with bottom-right causality and lse: a forall over (head, query
// block) (batch 1 folds away), three key loops (free blocks, diagonal
// blocks, padded tail), then the normalized tile and lse written back.
// CHECK-LABEL: func.func @causal_gqa_lse
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x100x16xf32>, %[[K:.*]]: tensor<1x2x130x16xf32>, %[[V:.*]]: tensor<1x2x130x8xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[QSCALE:.*]] = arith.constant 0.360673755 : f32
// CHECK: %[[R:.*]]:2 = scf.forall (%[[H:.*]], %[[QB:.*]]) in (4, 4) shared_outs(%[[O:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}) -> (tensor<1x4x100x8xf32>, tensor<1x4x100xf32>)
// CHECK:   %[[HKV:.*]] = arith.divui %[[H]], %[[C2]] : index
// CHECK:   %[[QROWS:.*]] = tensor.extract_slice %[[Q]][0, %[[H]], %{{.*}}, 0] [1, 1, %{{.*}}, 16] [1, 1, 1, 1] : tensor<1x4x100x16xf32> to tensor<?x16xf32>
// CHECK:   linalg.generic {{.*}} ins(%[[QROWS]] : tensor<?x16xf32>)
// CHECK:     arith.mulf %{{.*}}, %[[QSCALE]] : f32
// CHECK:   %[[QT:.*]] = tensor.insert_slice %{{.*}} : tensor<16x?xf32> into tensor<16x32xf32>
// CHECK:   %[[NFULL:.*]] = arith.divui %{{.*}}, %[[C64]] : index
// CHECK:   arith.floordivsi %{{.*}}, %[[C64]] : index
// CHECK:   %[[NFREE:.*]] = arith.minsi %{{.*}}, %[[NFULL]] : index
// Fully visible blocks: views of K and V, no element mask.
// CHECK:   %[[S1:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[NFREE]] step %{{.*}} iter_args({{.*}}) -> (tensor<32xf32>, tensor<32xf32>, tensor<8x32xf32>)
// CHECK:     %[[KT:.*]] = tensor.extract_slice %[[K]][0, %[[HKV]], %{{.*}}, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x2x130x16xf32> to tensor<64x16xf32>
// CHECK:     %[[VT:.*]] = tensor.extract_slice %[[V]][0, %[[HKV]], %{{.*}}, 0] [1, 1, 64, 8] [1, 1, 1, 1] : tensor<1x2x130x8xf32> to tensor<64x8xf32>
// CHECK:     linalg.generic {{.*}} ins(%[[QT]], %[[KT]] : tensor<16x32xf32>, tensor<64x16xf32>) outs(%{{.*}} : tensor<64x32xf32>)
// CHECK-NOT: linalg.index
// CHECK:     math.exp2
// CHECK:     math.exp2
// CHECK:     linalg.generic {{.*}} ins(%{{.*}}, %[[VT]] : tensor<64x32xf32>, tensor<64x8xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK:     scf.yield
// Blocks on the diagonal: the causal element mask.
// CHECK:   %[[S2:.*]]:3 = scf.for %{{.*}} = %[[NFREE]] to %[[NFULL]] step %{{.*}} iter_args(%{{.*}} = %[[S1]]#0, %{{.*}} = %[[S1]]#1, %{{.*}} = %[[S1]]#2)
// CHECK:     linalg.index 0
// CHECK:     linalg.index 1
// CHECK:     arith.cmpi sle
// CHECK:     scf.yield
// The tail block: zero-padded K and V tiles.
// CHECK:   %[[S3:.*]]:3 = scf.if %{{.*}} -> (tensor<32xf32>, tensor<32xf32>, tensor<8x32xf32>)
// CHECK:     tensor.pad %{{.*}} low[0, 0] high[%{{.*}}, 0]
// CHECK:     tensor.pad %{{.*}} low[0, 0] high[%{{.*}}, 0]
// CHECK:     arith.cmpi slt
// CHECK:   } else {
// CHECK:     scf.yield %[[S2]]#0, %[[S2]]#1, %[[S2]]#2
// CHECK:   arith.divf
// CHECK:   math.log2
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %{{.*}} into %[[O]][0, %[[H]], %{{.*}}, 0] [1, 1, %{{.*}}, 8] [1, 1, 1, 1] : tensor<?x8xf32> into tensor<1x4x100x8xf32>
// CHECK:     tensor.parallel_insert_slice %{{.*}} into %[[L]][0, %[[H]], %{{.*}}] [1, 1, %{{.*}}] [1, 1, 1] : tensor<?xf32> into tensor<1x4x100xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @causal_gqa_lse(%q: tensor<1x4x100x16xf32>, %k: tensor<1x2x130x16xf32>, %v: tensor<1x2x130x8xf32>) -> (tensor<1x4x100x8xf32>, tensor<1x4x100xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<1x4x100x16xf32>, tensor<1x2x130x16xf32>, tensor<1x2x130x8xf32> -> tensor<1x4x100x8xf32>, tensor<1x4x100xf32>
  return %o, %l : tensor<1x4x100x8xf32>, tensor<1x4x100xf32>
}

// -----

// Every query block full (Lq = 64, two blocks of 32): the block's length is
// the constant 32, so the query and output rows are static slices, and the
// query tile starts from an empty tensor (no zero rows to fill).
// CHECK-LABEL: func.func @full_query_blocks
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK-NOT: arith.minsi
// CHECK: %[[QROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0, %{{.*}}, 0] [1, 1, 32, 16] [1, 1, 1, 1] : tensor<1x1x64x16xf32> to tensor<32x16xf32>
// CHECK: %[[QE:.*]] = tensor.empty() : tensor<16x32xf32>
// CHECK-NOT: init_query
// CHECK: linalg.generic {{.*}} ins(%[[QROWS]] : tensor<32x16xf32>) outs(%[[QE]] : tensor<16x32xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, 0, %{{.*}}, 0] [1, 1, 32, 16] [1, 1, 1, 1] : tensor<32x16xf32> into tensor<1x1x64x16xf32>
func.func @full_query_blocks(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}

// -----

// Without causality: one loop over all full blocks, then the tail; the
// blocks never exceed a static sequence length (a decode step, Lq = 1, gets
// 1-row query tiles). Lk = 1000 = 15 * 64 + 40: the tail always runs, so
// its scf.if folds away.
// CHECK-LABEL: func.func @decode
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs
// CHECK:   tensor<128x1xf32>
// CHECK:   scf.for
// CHECK-NOT: scf.for
// CHECK:   tensor.pad
// CHECK:   tensor.parallel_insert_slice
func.func @decode(%q: tensor<1x8x1x128xf16>, %k: tensor<1x8x1000x128xf16>) -> tensor<1x8x1x128xf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x8x1x128xf16>, tensor<1x8x1000x128xf16>, tensor<1x8x1000x128xf16> -> tensor<1x8x1x128xf16>
  return %o : tensor<1x8x1x128xf16>
}

// -----

// A broadcast i1 mask: each key block reads a view of its part of the mask
// (a broadcast dim is a view of one element; nothing is copied) in a tile op
// of its own, with indices clamped to the view (padded rows and keys never
// read out of bounds).
// CHECK-LABEL: func.func @bool_mask
// CHECK-SAME: %[[M:[a-z0-9]*]]: tensor<1x1x50x200xi1>
// CHECK: scf.forall
// CHECK:   scf.for
// CHECK:     %[[VIEW:.*]] = tensor.extract_slice %[[M]][0, 0, %{{.*}}, %{{.*}}] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<1x1x50x200xi1> to tensor<1x1x?x?xi1>
// CHECK:     linalg.index 0
// CHECK:     linalg.index 1
// CHECK:     arith.minsi
// CHECK:     arith.minsi
// CHECK:     %[[BIT:.*]] = tensor.extract %[[VIEW]][%c0, %c0, %{{.*}}, %{{.*}}] : tensor<1x1x?x?xi1>
// CHECK:     arith.select %[[BIT]]
// CHECK:     attn.tile = #attn.tile<user_mask>
// The view's last row and key are computed once per block, outside the tile
// op: its body (before any canonicalization) only clamps with them.
// HOIST-LABEL: func.func @bool_mask
// HOIST: %[[VIEW:.*]] = tensor.extract_slice {{.*}} : tensor<1x1x50x200xi1> to tensor<1x1x?x?xi1>
// HOIST: %[[ROWS:.*]] = tensor.dim %[[VIEW]], %{{.*}} : tensor<1x1x?x?xi1>
// HOIST: %[[LASTROW:.*]] = arith.subi %[[ROWS]], %{{.*}} : index
// HOIST: %[[KEYS:.*]] = tensor.dim %[[VIEW]], %{{.*}} : tensor<1x1x?x?xi1>
// HOIST: %[[LASTKEY:.*]] = arith.subi %[[KEYS]], %{{.*}} : index
// HOIST: linalg.generic
// HOIST-NEXT: ^bb0
// HOIST-NEXT: %[[J:.*]] = linalg.index 0 : index
// HOIST-NEXT: %[[I:.*]] = linalg.index 1 : index
// HOIST-NEXT: %[[R:.*]] = arith.minsi %[[I]], %[[LASTROW]] : index
// HOIST-NEXT: %[[K:.*]] = arith.minsi %[[J]], %[[LASTKEY]] : index
// HOIST-NEXT: tensor.extract %[[VIEW]][%{{.*}}, %{{.*}}, %[[R]], %[[K]]] : tensor<1x1x?x?xi1>
// HOIST: attn.tile = #attn.tile<user_mask>
func.func @bool_mask(%q: tensor<2x3x50x32xf32>, %k: tensor<2x3x200x32xf32>, %m: tensor<1x1x50x200xi1>) -> tensor<2x3x50x32xf32> {
  %o = attn.sdpa %q, %k, %k mask(%m) : tensor<2x3x50x32xf32>, tensor<2x3x200x32xf32>, tensor<2x3x200x32xf32>, tensor<1x1x50x200xi1> -> tensor<2x3x50x32xf32>
  return %o : tensor<2x3x50x32xf32>
}

// -----

// Dynamic batch and lengths: the forall and the loops get their bounds at
// run time, the tiles stay static; a block may be short, so the query tile
// is zero-filled first (init_query).
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x?x64xf32>, %[[K:.*]]: tensor<?x2x?x64xf32>)
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[Q]], %c0
// CHECK-DAG: %[[LQ:.*]] = tensor.dim %[[Q]], %c2
// CHECK-DAG: %[[LK:.*]] = tensor.dim %[[K]], %c2
// CHECK: %[[NQB:.*]] = arith.ceildivui %[[LQ]], %c32
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%[[B]], 2, %[[NQB]])
// CHECK:   arith.minsi %{{.*}}, %c32 : index
// CHECK:   linalg.fill {attn.tile = #attn.tile<init_query>} {{.*}} -> tensor<64x32xf32>
// CHECK:   attrs = {attn.tile = #attn.tile<scale_query>}
func.func @dynamic(%q: tensor<?x2x?x64xf32>, %k: tensor<?x2x?x64xf32>) -> tensor<?x2x?x64xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x2x?x64xf32>
  return %o : tensor<?x2x?x64xf32>
}

// -----

// Decoding with grouped-query heads: one block holds the rows of all four
// query heads that share a key/value head, so the forall runs over the
// key/value heads and K and V are read once per group. The block's 4 rows
// fill it: the query tile starts empty.
// CHECK-LABEL: func.func @decode_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x1x64xf32>
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.forall (%[[HKV:.*]]) in (2) shared_outs(%[[O:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}})
// CHECK:   %[[H0:.*]] = arith.muli %[[HKV]], %[[C4]] : index
// CHECK:   %[[G:.*]] = tensor.extract_slice %[[Q]][0, %[[H0]], 0, 0] [1, 4, 1, 64] [1, 1, 1, 1] : tensor<1x8x1x64xf32> to tensor<4x1x64xf32>
// CHECK:   %[[GQ:.*]] = tensor.collapse_shape %[[G]] {{\[\[}}0, 1], [2]] : tensor<4x1x64xf32> into tensor<4x64xf32>
// CHECK-NOT: init_query
// CHECK:   %[[QE:.*]] = tensor.empty() : tensor<64x4xf32>
// CHECK:   linalg.generic {{.*}} ins(%[[GQ]] : tensor<4x64xf32>) outs(%[[QE]] : tensor<64x4xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
// CHECK:   tensor.extract_slice %{{.*}}[0, %[[HKV]], %{{.*}}, 0] [1, 1, 64, 64]
// CHECK:   %[[OG:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [4, 1, 64] : tensor<4x64xf32> into tensor<4x1x64xf32>
// CHECK:   %[[LG:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[OG]] into %[[O]][0, %[[H0]], 0, 0] [1, 4, 1, 64] [1, 1, 1, 1] : tensor<4x1x64xf32> into tensor<1x8x1x64xf32>
// CHECK:     tensor.parallel_insert_slice %[[LG]] into %[[L]][0, %[[H0]], 0] [1, 4, 1] [1, 1, 1] : tensor<4x1xf32> into tensor<1x8x1xf32>
func.func @decode_gqa(%q: tensor<1x8x1x64xf32>, %k: tensor<1x2x640x64xf32>) -> (tensor<1x8x1x64xf32>, tensor<1x8x1xf32>) {
  %o, %l = attn.sdpa %q, %k, %k : tensor<1x8x1x64xf32>, tensor<1x2x640x64xf32>, tensor<1x2x640x64xf32> -> tensor<1x8x1x64xf32>, tensor<1x8x1xf32>
  return %o, %l : tensor<1x8x1x64xf32>, tensor<1x8x1xf32>
}

// -----

// Every tile op and every fill that starts a buffer carries its role, in
// the order a target fuses neighbours in. Lk = 100 with 64-key blocks and
// bottom-right causality: a loop of unmasked blocks, a loop of diagonal
// blocks (element mask), then the padded tail (element mask). Lq = 16
// fills its one query block: no init_query fill (@short_query_block has
// one).
// ROLES-LABEL: func.func @tile_roles
// ROLES-NOT: init_query
// ROLES: linalg.fill {attn.tile = #attn.tile<init_max>}
// ROLES: linalg.fill {attn.tile = #attn.tile<init_sum>}
// ROLES: linalg.fill {attn.tile = #attn.tile<init_acc>}
// ROLES: scf.for
// ROLES:   linalg.fill {attn.tile = #attn.tile<init_row_max>}
// ROLES:   linalg.fill {attn.tile = #attn.tile<init_scores>}
// ROLES:   attrs = {attn.score_scale = {{.*}} : f32, attn.tile = #attn.tile<scores>}
// ROLES-NOT: #attn.tile<element_mask>
// ROLES:   attrs = {attn.tile = #attn.tile<row_max>}
// ROLES:   attrs = {attn.tile = #attn.tile<max_update>}
// ROLES:   attrs = {attn.tile = #attn.tile<rescale>}
// ROLES:   attrs = {attn.tile = #attn.tile<probs>}
// ROLES:   attrs = {attn.tile = #attn.tile<row_sum>}
// ROLES:   attrs = {attn.tile = #attn.tile<rescale>}
// ROLES:   attrs = {attn.tile = #attn.tile<pv>}
// ROLES: scf.for
// ROLES:   attrs = {attn.score_scale = {{.*}} : f32, attn.tile = #attn.tile<scores>}
// ROLES:   attrs = {attn.tile = #attn.tile<element_mask>}
// ROLES:   attrs = {attn.tile = #attn.tile<row_max>}
// ROLES: scf.if
// ROLES:   attrs = {attn.score_scale = {{.*}} : f32, attn.tile = #attn.tile<scores>}
// ROLES:   attrs = {attn.tile = #attn.tile<element_mask>}
// ROLES:   attrs = {attn.tile = #attn.tile<pv>}
func.func @tile_roles(%q: tensor<1x1x16x8xf32>, %k: tensor<1x1x100x8xf32>) -> tensor<1x1x16x8xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>} : tensor<1x1x16x8xf32>, tensor<1x1x100x8xf32>, tensor<1x1x100x8xf32> -> tensor<1x1x16x8xf32>
  return %o : tensor<1x1x16x8xf32>
}

// -----

// A short last query block (Lq = 100 in blocks of 64): the query tile is
// filled with zeros first (init_query), its rows past Lq stay zero.
// ROLES-LABEL: func.func @short_query_block
// ROLES: arith.minsi
// ROLES: linalg.fill {attn.tile = #attn.tile<init_query>}
// ROLES: attrs = {attn.tile = #attn.tile<scale_query>}
func.func @short_query_block(%q: tensor<1x1x100x8xf32>, %k: tensor<1x1x100x8xf32>) -> tensor<1x1x100x8xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x100x8xf32>, tensor<1x1x100x8xf32>, tensor<1x1x100x8xf32> -> tensor<1x1x100x8xf32>
  return %o : tensor<1x1x100x8xf32>
}

// -----

// A sliding window: blocks on the band's lower edge (element mask), blocks
// inside it (none), blocks on its upper edge (element mask), then the tail;
// blocks outside the band are never visited.
// ROLES-LABEL: func.func @window_roles
// ROLES: scf.for
// ROLES:   attn.tile = #attn.tile<scores>}
// ROLES:   attrs = {attn.tile = #attn.tile<element_mask>}
// ROLES: scf.for
// ROLES:   attn.tile = #attn.tile<scores>}
// ROLES-NOT: #attn.tile<element_mask>
// ROLES:   attrs = {attn.tile = #attn.tile<pv>}
// ROLES: scf.for
// ROLES:   attn.tile = #attn.tile<scores>}
// ROLES:   attrs = {attn.tile = #attn.tile<element_mask>}
// ROLES: scf.if
// ROLES:   attrs = {attn.tile = #attn.tile<element_mask>}
func.func @window_roles(%q: tensor<1x1x256x8xf32>, %k: tensor<1x1x256x8xf32>) -> tensor<1x1x256x8xf32> {
  %o = attn.sdpa %q, %k, %k {window = array<i64: 100, 30>} : tensor<1x1x256x8xf32>, tensor<1x1x256x8xf32>, tensor<1x1x256x8xf32> -> tensor<1x1x256x8xf32>
  return %o : tensor<1x1x256x8xf32>
}

// -----

// Softcap: a tile op of its own right after the scores, before the user's
// mask, in every key block.
// ROLES-LABEL: func.func @softcap_roles
// ROLES: scf.for
// ROLES:   attn.tile = #attn.tile<scores>}
// ROLES:   attrs = {attn.tile = #attn.tile<softcap>}
// ROLES:   math.tanh
// ROLES:   tensor.extract
// ROLES:   attrs = {attn.tile = #attn.tile<user_mask>}
// ROLES:   attrs = {attn.tile = #attn.tile<row_max>}
// ROLES: scf.if
// ROLES:   attn.tile = #attn.tile<scores>}
// ROLES:   attrs = {attn.tile = #attn.tile<softcap>}
func.func @softcap_roles(%q: tensor<1x1x16x8xf32>, %k: tensor<1x1x100x8xf32>, %m: tensor<1x1x16x100xi1>) -> tensor<1x1x16x8xf32> {
  %o = attn.sdpa %q, %k, %k mask(%m) {softcap = 20.0 : f32} : tensor<1x1x16x8xf32>, tensor<1x1x100x8xf32>, tensor<1x1x100x8xf32>, tensor<1x1x16x100xi1> -> tensor<1x1x16x8xf32>
  return %o : tensor<1x1x16x8xf32>
}
