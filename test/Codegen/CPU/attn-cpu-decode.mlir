// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16" | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=0 kv-splits=1" --attn-cpu-decode="decode-width=16" | FileCheck %s --check-prefix=OFF

// The decode kernel (decode-rows): a query block of few rows streams K and
// V once with vectors along D. Grouped-query attention, Lq = 1: the block
// holds the 4 query heads of a group (4 rows); each K row is read once per
// block of 16 keys (16 lanes of D at a time), its dot products folded by
// shuffles, the softmax runs along the keys, and V rows are read once into
// the accumulators. No score tile op is left; bf16 K and V are read as bf16
// and widened in registers: 32 at a time, even columns shifted, odd ones
// masked (the query rows and the accumulators in the same order, put back
// in order at the end). The first block's scores are taken before the key
// loop; then each block's P.V loop also takes the next block's dot products
// (key j with value row j; the 4 rows' sums folded into one vector by
// shuffles, 4 lanes a row, one store per key into a [16 keys, 1, 16 lanes]
// buffer, folded into scores after them; the probabilities go through a [4 rows, 16 keys]
// buffer: scratch buffers are not loop-carried tensors, whose many reads and
// writes would make bufferization slow), and prefetches into L2 the V rows
// of the blocks that cover 8 KiB ahead (here 1 KiB blocks: 8, 128 keys
// ahead) and the K rows one block further (144 keys), clamped to the last
// full block (arith.minsi), every cache line once: one line per bf16 row of
// 32. The tail block prefetches nothing.
// CHECK-LABEL: func.func @gqa_bf16
// CHECK-SAME: (%{{.*}}: tensor<1x8x1x32xbf16>, %[[K:.*]]: tensor<1x2x100x32xbf16>, %[[V:.*]]: tensor<1x2x100x32xbf16>)
// CHECK: scf.forall ({{.*}}) in ({{.*}}, 2, 1)
// CHECK: vector.transfer_read %{{.*}} : tensor<1x8x1x32xbf16>, vector<32xbf16>
// CHECK: %[[PROBS:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only : tensor<1x2x100x32xbf16> to memref<1x2x100x32xbf16, strided<[?, ?, ?, ?], offset: ?>>
// CHECK: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: scf.if
// CHECK-NOT: memref.prefetch
// CHECK:   vector.transfer_read %[[K]]{{.*}} : tensor<1x2x100x32xbf16>, vector<32xbf16>
// CHECK:   vector.bitcast %{{.*}} : vector<32xbf16> to vector<16xi32>
// CHECK:   arith.shli
// CHECK:   arith.andi
// CHECK:   vector.fma
// CHECK-NOT: memref.prefetch
// CHECK:   vector.shuffle
// CHECK: %[[TILE:.*]] = memref.alloc() : memref<16x1x16xf32>
// CHECK-NOT: tensor<16x1x16xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> ({{.*}}) {
// CHECK:   %[[C128:.*]] = arith.constant 128 : index
// CHECK:   %[[VAHEAD:.*]] = arith.addi %{{.*}}, %[[C128]] : index
// CHECK:   %[[PF:.*]] = arith.minsi %[[VAHEAD]], %{{.*}} : index
// CHECK:   %[[C144:.*]] = arith.constant 144 : index
// CHECK:   %[[KAHEAD:.*]] = arith.addi %{{.*}}, %[[C144]] : index
// CHECK:   %[[KPF:.*]] = arith.minsi %[[KAHEAD]], %{{.*}} : index
// 16-bit K and V: one element of each loaded 8 KiB (128 rows of 64 bytes)
// past the prefetched rows (decode-page-touch).
// CHECK:   arith.addi %[[PF]], %{{.*}} : index
// CHECK:   memref.load %[[VB]]
// CHECK:   llvm.inline_asm has_side_effects "", "r"
// CHECK:   arith.addi %[[KPF]], %{{.*}} : index
// CHECK:   memref.load %[[KB]]
// CHECK:   llvm.inline_asm has_side_effects "", "r"
// CHECK:   %[[NEXT:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK-NOT: memref.prefetch
// CHECK:   arith.cmpf ogt
// CHECK:   vector.store %{{.*}}, %[[PROBS]][%{{.*}}, %{{.*}}] : memref<4x16xf32>, vector<16xf32>
// CHECK:   scf.for %[[J:[^ ]*]] = {{.*}} iter_args({{.*}}) -> ({{.*}}) {
// CHECK:     %[[VROW:.*]] = arith.addi %[[PF]], %[[J]] : index
// CHECK:     memref.prefetch %[[VB]][%{{.*}}, %{{.*}}, %[[VROW]], %{{.*}}], read, locality<2>, data
// CHECK:     %[[KROW:.*]] = arith.addi %[[KPF]], %[[J]] : index
// CHECK:     memref.prefetch %[[KB]][%{{.*}}, %{{.*}}, %[[KROW]], %{{.*}}], read, locality<2>, data
// CHECK-NOT:   memref.prefetch
// CHECK:     memref.load %[[PROBS]][%{{.*}}, %[[J]]] : memref<4x16xf32>
// CHECK:     vector.transfer_read %[[V]]{{.*}} : tensor<1x2x100x32xbf16>, vector<32xbf16>
// CHECK:     %[[NROW:.*]] = arith.addi %[[NEXT]], %[[J]] : index
// CHECK:     vector.transfer_read %[[K]][%{{.*}}, %{{.*}}, %[[NROW]], %{{.*}}]{{.*}} : tensor<1x2x100x32xbf16>, vector<32xbf16>
// CHECK-NOT: vector.store
// CHECK:     vector.shuffle
// CHECK:     arith.addf
// CHECK-NOT: vector.store
// CHECK:     vector.store %{{.*}}, %[[TILE]][%[[J]], %{{.*}}, %{{.*}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NOT: vector.store
// CHECK:   scf.yield
// CHECK:   }
// CHECK:   vector.load %[[TILE]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK:   vector.shuffle
// The last 4 keys (100 = 6 x 16 + 4): lanes past the end are -inf.
// CHECK: scf.if
// CHECK-NOT: memref.prefetch
// CHECK:   arith.minsi
// CHECK:   vector.create_mask %{{.*}} : vector<16xi1>
// CHECK-NOT: memref.prefetch
// The accumulators' rows (here in registers) in V's column order into a
// buffer, taken as a tensor.
// CHECK: %[[ROWS:.*]] = memref.alloc() : memref<4x32xf32>
// CHECK: %[[PAIR:.*]] = vector.shuffle {{.*}} [0, 16, 1, 17,
// CHECK: vector.store %[[PAIR]], %[[ROWS]][%{{.*}}, %{{.*}}] : memref<4x32xf32>, vector<32xf32>
// CHECK: %[[ROWST:.*]] = bufferization.to_tensor %[[ROWS]] restrict : memref<4x32xf32> to tensor<4x32xf32>
// CHECK: linalg.transpose ins(%[[ROWST]]
// CHECK: tensor.parallel_insert_slice {{.*}} [1, 4, 1, 32]
// CHECK-NOT: attn.tile<scores>
// OFF-LABEL: func.func @gqa_bf16
// OFF: attn.tile<scores>
// OFF-NOT: vector.shuffle
func.func @gqa_bf16(%q: tensor<1x8x1x32xbf16>, %k: tensor<1x2x100x32xbf16>, %v: tensor<1x2x100x32xbf16>) -> tensor<1x8x1x32xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x32xbf16>, tensor<1x2x100x32xbf16>, tensor<1x2x100x32xbf16> -> tensor<1x8x1x32xbf16>
  return %o : tensor<1x8x1x32xbf16>
}

// -----

// Multi-head attention with Lq = 3, lse, key lengths and a dynamic key
// count: one block of 3 rows per head.
// CHECK-LABEL: func.func @mha_lse_key_lengths
// CHECK: vector.shuffle
// CHECK: math.log2
// CHECK-NOT: attn.tile<scores>
func.func @mha_lse_key_lengths(%q: tensor<2x2x3x16xf32>, %k: tensor<2x2x?x16xf32>, %kl: tensor<2xi32>) -> (tensor<2x2x3x16xf32>, tensor<2x2x3xf32>) {
  %o, %lse = attn.sdpa %q, %k, %k key_lengths(%kl : tensor<2xi32>) : tensor<2x2x3x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<2x2x3x16xf32>, tensor<2x2x3xf32>
  return %o, %lse : tensor<2x2x3x16xf32>, tensor<2x2x3xf32>
}

// -----

// Lq = 1 with a causal band (either alignment) or a window: one key range
// for the whole block.
// CHECK-LABEL: func.func @causal_one_row
// CHECK: vector.shuffle
// CHECK-NOT: attn.tile<scores>
func.func @causal_one_row(%q: tensor<1x4x1x16xf32>, %k: tensor<1x1x50x16xf32>) -> tensor<1x4x1x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>, window = array<i64: 8, 0>} : tensor<1x4x1x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x16xf32> -> tensor<1x4x1x16xf32>
  return %o : tensor<1x4x1x16xf32>
}

// -----

// Four rows (a group of 4 query heads, Lq = 1), D = 32: the products of 4
// keys at a time (4 rows x 4 keys = 16 partial sums), the 4 key rows read
// first and then chunk by chunk, each query chunk used by the 4 keys in
// turn. Then each key's 4 dot products are folded together first (rows 0
// and 1, rows 2 and 3, then the pairs: 4 lanes per row); after 4 keys one
// vector holds 16 scores, lane 4 * key + row. At the end each row's 16
// scores are gathered from the four such vectors by 3 shuffles. Checked on
// the first block's scores, taken before the key loop.
// CHECK-LABEL: func.func @rows_first
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x1x64x32xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.if {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: %[[K0:.*]] = vector.transfer_read %[[K]]{{.*}} : tensor<1x1x64x32xf32>, vector<16xf32>
// CHECK-COUNT-7: vector.transfer_read %[[K]]
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK: %[[D0:.*]] = arith.mulf %[[K0]], %[[Q0:.*]] : vector<16xf32>
// CHECK-NEXT: arith.mulf %{{.*}}, %[[Q0]] : vector<16xf32>
// CHECK-NEXT: arith.mulf %{{.*}}, %[[Q0]] : vector<16xf32>
// CHECK-NEXT: arith.mulf %{{.*}}, %[[Q0]] : vector<16xf32>
// CHECK-NEXT: %[[D1:.*]] = arith.mulf %[[K0]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-11: arith.mulf
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK: %[[S0:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[D0]] : vector<16xf32>
// CHECK: %[[S1:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[D1]] : vector<16xf32>
// CHECK-COUNT-11: vector.fma
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK: vector.shuffle %[[S0]], %[[S1]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]
// CHECK: vector.transfer_read %[[K]]
// Row 0: keys 0-7 from the first two vectors, 8-15 from the last two.
// CHECK: %[[LO:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK: %[[HI:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 8, 12, 16, 20, 24, 28]
// CHECK: vector.shuffle %[[LO]], %[[HI]] [0, 1, 2, 3, 4, 5, 6, 7, 24, 25, 26, 27, 28, 29, 30, 31]
func.func @rows_first(%q: tensor<1x4x1x32xf32>, %k: tensor<1x1x64x32xf32>) -> tensor<1x4x1x32xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x4x1x32xf32>, tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32> -> tensor<1x4x1x32xf32>
  return %o : tensor<1x4x1x32xf32>
}

// -----

// Eight rows keep one binary counter per row (folding them first would
// take 56 shuffles per block at the end): row 0's first fold waits for the
// second key row.
// CHECK-LABEL: func.func @eight_rows
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x1x64x16xf32>
// CHECK: scf.for
// CHECK: vector.transfer_read %[[K]]
// CHECK-NOT: vector.shuffle
// CHECK: vector.transfer_read %[[K]]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
func.func @eight_rows(%q: tensor<1x8x1x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x8x1x16xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x8x1x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x8x1x16xf32>
  return %o : tensor<1x8x1x16xf32>
}

// -----

// 4 rows of Dv = 64: 16 accumulators, half the vector registers. They live
// in a [4, 64] f32 buffer (zeroed first; not a tensor carried by the key
// loop, whose rows * Dv / W reads and writes per block made bufferization
// cubic: 58 s for 8 rows of Dv = 128 on 8 lanes), each read (times the
// rescale factor) before P.V and written after it, rather than in 16
// loop-carried vectors that LLVM would keep through the scores and spill
// around them. The rows go out from the same buffer. Fewer (the 4 of
// @rows_first) stay vectors.
// CHECK-LABEL: func.func @acc_in_memory
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<4x64xf32>
// CHECK: vector.store %{{.*}}, %[[ACC]][%{{.*}}, %{{.*}}] : memref<4x64xf32>, vector<16xf32>
// CHECK-NOT: tensor<4x64xf32>
// CHECK: scf.for {{.*}} iter_args(
// CHECK: %[[A0:.*]] = vector.load %[[ACC]][%{{.*}}, %{{.*}}] : memref<4x64xf32>, vector<16xf32>
// CHECK: arith.mulf %[[A0]], %{{.*}} : vector<16xf32>
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: vector.store %{{.*}}, %[[ACC]][%{{.*}}, %{{.*}}] : memref<4x64xf32>, vector<16xf32>
// CHECK: bufferization.to_tensor %[[ACC]] restrict : memref<4x64xf32> to tensor<4x64xf32>
func.func @acc_in_memory(%q: tensor<1x8x1x64xf32>, %k: tensor<1x2x64x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x8x1x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}

// -----

// Split-K composes: the chunks of the keys are forall iterations, each
// running the decode kernel from its chunk's first key.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=3" --attn-cpu-decode="decode-width=16" | FileCheck %s --check-prefix=SPLIT
// SPLIT-LABEL: func.func @split
// SPLIT: scf.forall ({{.*}}) in ({{.*}}, 1, 3)
// SPLIT: arith.maxsi
// SPLIT: vector.shuffle
// SPLIT-NOT: attn.tile<scores>
// SPLIT: math.log %
func.func @split(%q: tensor<1x4x1x16xf32>, %k: tensor<1x1x500x16xf32>) -> tensor<1x4x1x16xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x4x1x16xf32>, tensor<1x1x500x16xf32>, tensor<1x1x500x16xf32> -> tensor<1x4x1x16xf32>
  return %o : tensor<1x4x1x16xf32>
}

// -----

// What the decode kernel does not take goes to the tile ops: a user mask,
// a softcap, ALiBi, a causal band with Lq > 1, more rows than decode-rows
// (4 heads x 5 queries), a dynamic Lq, D not a multiple of the width.
// CHECK-LABEL: func.func @routed
// CHECK-NOT: vector.shuffle
// CHECK-COUNT-7: attn.tile<scores>
// CHECK-NOT: vector.shuffle
// CHECK: return
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

// -----

// On 16 lanes half the P.V groups take the next block's dot products where
// each then takes at most 4 K chunks (as on 8 lanes: the read-modify-write
// of the dot-product buffer costs each group memory operations per key and
// row). 8 rows, D = 64: two groups of 2 value vectors; the first reads all
// 4 K chunks of the next block's key and stores the 8 rows' sums, folded
// into one vector (7 folds, 2 lanes a row), the second neither.
// CHECK-LABEL: func.func @dots_in_half_the_groups
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x1x40x64xf32>
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c0{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x64xf32>, vector<16xf32>
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c48{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x64xf32>, vector<16xf32>
// CHECK-NOT: scf.yield
// CHECK-NOT: vector.store
// CHECK-COUNT-7: arith.addf
// CHECK-NOT: vector.store
// CHECK: vector.store %{{.*}}[%{{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NOT: vector.store
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK-NOT: memref<16x1x16xf32>
// CHECK:   scf.yield
func.func @dots_in_half_the_groups(%q: tensor<1x8x1x64xf32>, %k: tensor<1x1x40x64xf32>, %v: tensor<1x1x40x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xf32>, tensor<1x1x40x64xf32>, tensor<1x1x40x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}

// -----

// 4 rows of widened K (f16), D = 128: two groups of 4 value vectors; half
// of them would leave one group 8 K chunks, so both take 4: the first
// stores the rows' sums (folded into one vector), the second folds its own
// and adds them to it.
// CHECK-LABEL: func.func @dots_in_every_group
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x1x40x128xf16>
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c48{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf16>, vector<16xf16>
// CHECK-NOT: vector.load %{{.*}} : memref<16x1x16xf32>
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK: vector.store %{{.*}}[%{{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NOT: vector.store
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c64{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf16>, vector<16xf16>
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c112{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf16>, vector<16xf16>
// CHECK-NOT: scf.yield
// CHECK-COUNT-3: arith.addf
// CHECK-NOT: scf.yield
// CHECK: vector.load %{{.*}} : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: vector.store %{{.*}}[%{{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NOT: vector.store
// CHECK:   scf.yield
func.func @dots_in_every_group(%q: tensor<1x4x1x128xf16>, %k: tensor<1x1x40x128xf16>, %v: tensor<1x1x40x128xf16>) -> tensor<1x4x1x128xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x1x128xf16>, tensor<1x1x40x128xf16>, tensor<1x1x40x128xf16> -> tensor<1x4x1x128xf16>
  return %o : tensor<1x4x1x128xf16>
}

// -----

// 4 rows of f32 K, D = 128: two groups of 4 value vectors, and the first
// takes all 8 K chunks of the next block's key (folded into one vector by 3
// folds and stored), the second none.
// CHECK-LABEL: func.func @four_rows_dots_in_one_group
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x1x40x128xf32>
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c0{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf32>, vector<16xf32>
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c112{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf32>, vector<16xf32>
// CHECK-NOT: scf.yield
// CHECK-COUNT-3: arith.addf
// CHECK-NOT: vector.load %{{.*}} : memref<16x1x16xf32>
// CHECK-NOT: scf.yield
// CHECK: vector.store %{{.*}}[%{{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NOT: vector.store
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK-NOT: memref<16x1x16xf32>
// CHECK:   scf.yield
func.func @four_rows_dots_in_one_group(%q: tensor<1x4x1x128xf32>, %k: tensor<1x1x40x128xf32>, %v: tensor<1x1x40x128xf32>) -> tensor<1x4x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x1x128xf32>, tensor<1x1x40x128xf32>, tensor<1x1x40x128xf32> -> tensor<1x4x1x128xf32>
  return %o : tensor<1x4x1x128xf32>
}

// -----

// 8 rows whose K is read as it is (f32 here): one group takes all the K
// chunks of the next block's key (each share would fold the 8 rows' sums
// with 7 folds of its own), the other three none. D = 128: four groups of
// 2 value vectors.
// CHECK-LABEL: func.func @dots_in_one_group
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x1x40x128xf32>
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c0{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf32>, vector<16xf32>
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c112{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf32>, vector<16xf32>
// CHECK-NOT: scf.yield
// CHECK-COUNT-7: arith.addf
// CHECK-NOT: vector.load %{{.*}} : memref<16x1x16xf32>
// CHECK-NOT: scf.yield
// CHECK: vector.store %{{.*}}[%{{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NOT: vector.store
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK-NOT: memref<16x1x16xf32>
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK-NOT: memref<16x1x16xf32>
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK-NOT: memref<16x1x16xf32>
// CHECK:   scf.yield
func.func @dots_in_one_group(%q: tensor<1x8x1x128xf32>, %k: tensor<1x1x40x128xf32>, %v: tensor<1x1x40x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf32>, tensor<1x1x40x128xf32>, tensor<1x1x40x128xf32> -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// -----

// 8 rows of widened K (f16) keep half the groups, 4 chunks each: the first
// and third group loops read K, the third adds to the first's sums.
// CHECK-LABEL: func.func @widened_dots_in_half_the_groups
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x1x40x128xf16>
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c48{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf16>, vector<16xf16>
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK: vector.store %{{.*}}[%{{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK-NOT: memref<16x1x16xf32>
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: scf.yield
// CHECK: vector.transfer_read %[[K]][{{.*}}, %c64{{(_[0-9]+)?}}]{{.*}} : tensor<1x1x40x128xf16>, vector<16xf16>
// CHECK-NOT: scf.yield
// CHECK: vector.load %{{.*}} : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: vector.store %{{.*}}[%{{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}] : memref<16x1x16xf32>, vector<16xf32>
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} to %c16{{[_0-9]*}} {{.*}} -> ({{(vector<16xf32>, ){15}vector<16xf32>}}) {
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK-NOT: memref<16x1x16xf32>
// CHECK:   scf.yield
func.func @widened_dots_in_half_the_groups(%q: tensor<1x8x1x128xf16>, %k: tensor<1x1x40x128xf16>, %v: tensor<1x1x40x128xf16>) -> tensor<1x8x1x128xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf16>, tensor<1x1x40x128xf16>, tensor<1x1x40x128xf16> -> tensor<1x8x1x128xf16>
  return %o : tensor<1x8x1x128xf16>
}
