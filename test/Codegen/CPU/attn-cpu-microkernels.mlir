// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2" -canonicalize -cse | FileCheck %s

// 32 query rows = two vector<16xf32> per register block; 16 keys = two
// blocks of 8. Every tagged tile op becomes vector code, and neighbours fuse:
// the row max into the scores kernel, the row sum into the probabilities,
// the rescale of the accumulator into P.V.
// CHECK-LABEL: func.func @f32_tiles
// CHECK-NOT: attn.tile = #attn.tile<scores>
// CHECK-NOT: attn.tile = #attn.tile<pv>
// CHECK: scf.forall
// The key-block loop.
// CHECK: scf.for
// CHECK:   linalg.fill {attn.tile = #attn.tile<init_row_max>} ins(%{{.*}} : f32) outs(%[[RMAX:.*]] : memref<32xf32>)
// scores: 8 keys x 2 row vectors of accumulators carried through D, starting
// from zero (the tile's zero fill is folded in), one broadcast per key.
// CHECK:   scf.for %{{.*}} = %c0 to %c16 step %c8
// CHECK:     %[[S:.*]]:16 = scf.for %[[D:.*]] = %c0 to %c16 step %c1 iter_args(%{{.*}} = %[[ZERO:cst[_0-9]*]], {{.*}}) -> (vector<16xf32>,
// CHECK:       %[[Q0:.*]] = vector.load %{{.*}}[%[[D]], %c0] : memref<16x32xf32>, vector<16xf32>
// CHECK:       %[[Q1:.*]] = vector.load %{{.*}}[%[[D]], %c16] : memref<16x32xf32>, vector<16xf32>
// The block's keys and scores are windows at its first key: constant
// indices inside it.
// CHECK:       %[[K0:.*]] = memref.load %{{.*}}[%c0, %[[D]]] : memref<8x16xf32, strided<[16, 1], offset: ?>>
// CHECK:       %[[B0:.*]] = vector.broadcast %[[K0]] : f32 to vector<16xf32>
// CHECK:       vector.fma %[[B0]], %[[Q0]], %{{.*}} : vector<16xf32>
// CHECK:       vector.fma %[[B0]], %[[Q1]], %{{.*}} : vector<16xf32>
// CHECK:       scf.yield
// CHECK:     vector.store %[[S]]#0, %{{.*}}[%c0, %c0] : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<16xf32>
// The row max, from the accumulators still in registers.
// CHECK:     %[[M0:.*]] = vector.load %[[RMAX]][%c0] : memref<32xf32>, vector<16xf32>
// CHECK:     %[[GT:.*]] = arith.cmpf ogt, %[[M0]], %[[S]]#0 : vector<16xf32>
// CHECK:     arith.select %[[GT]], %[[M0]], %[[S]]#0 : vector<16xi1>, vector<16xf32>
// CHECK:     vector.store %{{.*}}, %[[RMAX]][%c0] : memref<32xf32>, vector<16xf32>
// CHECK-NOT: attn.tile = #attn.tile<row_max>
// maxupdate: exp2 by polynomial and exponent bits.
// CHECK:   math.roundeven %{{.*}} : vector<16xf32>
// CHECK:   arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:   arith.shli
// CHECK:   arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// probs with the row sum: the row max with -inf (a row that has seen no
// visible key) replaced by 0, once per row vector; then exp2(s - m) with
// four partial sums per row vector and no compare per key.
// CHECK:   %[[MROW:.*]] = vector.load %{{.*}} : memref<32xf32>, vector<16xf32>
// CHECK:   %[[EMPTY:.*]] = arith.cmpf oeq, %[[MROW]], %{{.*}} : vector<16xf32>
// CHECK:   %[[MSAFE:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[MROW]] : vector<16xi1>, vector<16xf32>
// CHECK:   scf.for %{{.*}} = %c0 to %c16 step %c4 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:     arith.subf %{{.*}}, %[[MSAFE]] : vector<16xf32>
// CHECK-NOT: arith.cmpf oeq
// CHECK:     math.roundeven %{{.*}} : vector<16xf32>
// CHECK-NOT: arith.cmpf oeq
// 2^n applied by adding n << 23 to the polynomial's bits, no multiply.
// CHECK:     %[[NBITS:.*]] = arith.shli %{{.*}} : vector<16xi32>
// CHECK-NOT: arith.mulf
// CHECK:     %[[PBITS:.*]] = arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK-NEXT: %[[EBITS:.*]] = arith.addi %[[PBITS]], %[[NBITS]] : vector<16xi32>
// CHECK-NEXT: arith.bitcast %[[EBITS]] : vector<16xi32> to vector<16xf32>
// CHECK-NOT: arith.cmpf oeq
// CHECK:     arith.addf {{.*}} : vector<16xf32>
// CHECK-NOT: arith.cmpf oeq
// CHECK:     scf.yield
// CHECK-NOT: attn.tile = #attn.tile<row_sum>
// pv: 8 value columns x 2 row vectors, rescaled by alpha as they are
// loaded, carried through the 16 keys.
// CHECK:   arith.mulf {{.*}} : vector<16xf32>
// CHECK:   %[[P:.*]]:16 = scf.for %[[J:.*]] = %c0 to %c16 step %c1 iter_args({{.*}}) -> (vector<16xf32>,
// CHECK:     vector.load %{{.*}}[%[[J]], %c0] : memref<16x32xf32>, vector<16xf32>
// CHECK:     memref.load %{{.*}}[%[[J]], %c0] : memref<16x8xf32, strided<[8, 1], offset: ?>>
// CHECK:     vector.fma
// CHECK:   vector.store %[[P]]#0, %{{.*}}[%c0, %c0] : memref<8x32xf32>, vector<16xf32>
// CHECK-NOT: attn.tile = #attn.tile<rescale>
func.func @f32_tiles(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>, %v: tensor<1x1x64x8xf32>) -> tensor<1x1x64x8xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  return %o : tensor<1x1x64x8xf32>
}

// -----

// bf16 keys and values (bf16-dot off): each tile is widened to f32 once
// (attn-cpu-microkernels-widen.mlir) and the products broadcast from the
// f32 copy; the elementwise kernels only ever see f32 tiles.
// CHECK-LABEL: func.func @bf16_tiles
// CHECK-NOT: attn.tile = #attn.tile<scores>
// CHECK: vector.load %{{.*}} : memref<16x16xbf16, strided<[16, 1], offset: ?>>, vector<16xbf16>
// CHECK: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK: memref.load %{{.*}} : memref<8x16xf32, strided<[16, 1], offset: ?>>
// CHECK: vector.broadcast %{{.*}} : f32 to vector<16xf32>
func.func @bf16_tiles(%q: tensor<1x1x64x16xbf16>, %k: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16> -> tensor<1x1x64x16xbf16>
  return %o : tensor<1x1x64x16xbf16>
}

// -----

// A decode step (one query row) has no full row vector: its tile ops stay
// linalg.generic and lower as loops.
// CHECK-LABEL: func.func @decode_left_alone
// CHECK: linalg.generic {{.*}} attrs = {attn.score_scale = {{.*}} : f32, attn.tile = #attn.tile<scores>}
// CHECK: linalg.generic {{.*}} attrs = {attn.tile = #attn.tile<pv>}
// CHECK-NOT: vector.fma
func.func @decode_left_alone(%q: tensor<1x2x1x16xf32>, %k: tensor<1x2x64x16xf32>) -> tensor<1x2x1x16xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x2x1x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x1x16xf32>
  return %o : tensor<1x2x1x16xf32>
}

// -----

// The causal diagonal's element mask is vectorized op by op: the row index
// becomes i0 + [0..15], the comparison and the select work on vectors.
// CHECK-LABEL: func.func @causal_mask
// CHECK-NOT: attn.tile = #attn.tile<element_mask>
// CHECK: %[[STEP:.*]] = vector.step : vector<16xindex>
// CHECK: %[[ROWS:.*]] = arith.addi %{{.*}}, %[[STEP]] : vector<16xindex>
// CHECK: %[[VIS:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : vector<16xindex>
// CHECK: arith.select %[[VIS]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
func.func @causal_mask(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>} : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}

// -----

// ALiBi: index arithmetic and a slope read once per query block, vectorized
// along the rows like the element mask.
// CHECK-LABEL: func.func @alibi
// CHECK: memref.load %{{.*}} : memref<2xf32>
// CHECK-NOT: #attn.tile<alibi>
// CHECK: scf.for
// CHECK: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: math.absf %{{.*}} : vector<16xf32>
// CHECK-NOT: #attn.tile<alibi>
func.func @alibi(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x100x16xf32>, %s: tensor<2xf32>) -> tensor<1x2x64x16xf32> {
  %o = attn.sdpa %q, %k, %k alibi_slopes(%s : tensor<2xf32>) : tensor<1x2x64x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}
