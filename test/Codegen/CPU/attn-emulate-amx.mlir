// RUN: attn-opt %s --split-input-file --attn-emulate-amx --verify-diagnostics | FileCheck %s

// A tile product as the amx kernels build it: the tiles become vectors, the
// loads and stores one row each (row r at the second innermost index + r, or
// with a stride at the innermost + r * stride), the product a call of one
// function per tile shape. No amx op is left.
// CHECK-LABEL: func.func @product(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<16x32xbf16>, %[[B:[a-z0-9]+]]: memref<16x32xbf16>, %[[C:[a-z0-9]+]]: memref<16x16xf32>, %[[FLAT:[a-z0-9]+]]: memref<?xbf16>, %[[S:[a-z0-9]+]]: index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16x16xf32>
// CHECK: %[[A0:.*]] = vector.load %[[A]][%[[C0]], %[[C0]]] : memref<16x32xbf16>, vector<32xbf16>
// CHECK: vector.insert %[[A0]], %{{.*}} [0] : vector<32xbf16> into vector<16x32xbf16>
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[ROW1:.*]] = arith.addi %[[C0]], %[[ONE]] : index
// CHECK: vector.load %[[A]][%[[ROW1]], %[[C0]]]
// CHECK-COUNT-14: vector.load %[[A]]
// CHECK: %[[TA:.*]] = vector.insert %{{.*}} [15] : vector<32xbf16> into vector<16x32xbf16>
// CHECK: vector.load %[[FLAT]][%[[C0]]] : memref<?xbf16>, vector<32xbf16>
// CHECK: %[[ONE2:.*]] = arith.constant 1 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[ONE2]], %[[S]] : index
// CHECK: %[[AT:.*]] = arith.addi %[[C0]], %[[OFF]] : index
// CHECK: vector.load %[[FLAT]][%[[AT]]] : memref<?xbf16>, vector<32xbf16>
// CHECK: %[[TB:.*]] = vector.insert %{{.*}} [15] : vector<32xbf16> into vector<16x32xbf16>
// CHECK: %[[P:.*]] = call @__attn_emulated_tile_mulf_16x32bf16_16x32(%[[TA]], %[[TB]], %[[ZERO]])
// CHECK: %[[Q:.*]] = call @__attn_emulated_tile_mulf_16x32bf16_16x32(%[[TA]], %[[TB]], %[[P]])
// CHECK: %[[R0:.*]] = vector.extract %[[Q]][0] : vector<16xf32> from vector<16x16xf32>
// CHECK: vector.store %[[R0]], %[[C]][%[[C0]], %[[C0]]] : memref<16x16xf32>, vector<16xf32>
// CHECK-COUNT-15: vector.store
// CHECK-NOT: amx.
// CHECK: return

// acc[m, n] += a[m, 2k] * b[k, 2n] + a[m, 2k + 1] * b[k, 2n + 1], k in
// order, the even product then the odd, each an FMA; one function for both
// products.
// CHECK-LABEL: func.func private @__attn_emulated_tile_mulf_16x32bf16_16x32(
// CHECK-SAME: %[[FA:.*]]: vector<16x32xbf16>, %[[FB:.*]]: vector<16x32xbf16>, %[[ACC:.*]]: vector<16x16xf32>) -> vector<16x16xf32>
// CHECK: %[[B0:.*]] = vector.extract %[[FB]][0] : vector<32xbf16> from vector<16x32xbf16>
// CHECK: %[[B0F:.*]] = arith.extf %[[B0]] : vector<32xbf16> to vector<32xf32>
// CHECK: %[[EVEN0:.*]] = vector.shuffle %[[B0F]], %[[B0F]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: %[[ODD0:.*]] = vector.shuffle %[[B0F]], %[[B0F]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK: %[[B1:.*]] = vector.extract %[[FB]][1]
// CHECK: %[[B1F:.*]] = arith.extf %[[B1]]
// CHECK: %[[EVEN1:.*]] = vector.shuffle %[[B1F]], %[[B1F]] [0, 2,
// CHECK: %[[A0R:.*]] = vector.extract %[[FA]][0] : vector<32xbf16> from vector<16x32xbf16>
// CHECK: %[[A0F:.*]] = arith.extf %[[A0R]] : vector<32xbf16> to vector<32xf32>
// CHECK: %[[C0R:.*]] = vector.extract %[[ACC]][0] : vector<16xf32> from vector<16x16xf32>
// CHECK: %[[X0:.*]] = vector.extract %[[A0F]][0] : f32 from vector<32xf32>
// CHECK: %[[X0S:.*]] = vector.broadcast %[[X0]] : f32 to vector<16xf32>
// CHECK: %[[S0:.*]] = vector.fma %[[X0S]], %[[EVEN0]], %[[C0R]] : vector<16xf32>
// CHECK: %[[X1:.*]] = vector.extract %[[A0F]][1] : f32 from vector<32xf32>
// CHECK: %[[X1S:.*]] = vector.broadcast %[[X1]]
// CHECK: %[[S1:.*]] = vector.fma %[[X1S]], %[[ODD0]], %[[S0]]
// CHECK: %[[X2:.*]] = vector.extract %[[A0F]][2] : f32 from vector<32xf32>
// CHECK: %[[X2S:.*]] = vector.broadcast %[[X2]]
// CHECK: vector.fma %[[X2S]], %[[EVEN1]], %[[S1]]
// CHECK-COUNT-509: vector.fma
// CHECK-NOT: vector.fma
// CHECK: return
func.func @product(%a: memref<16x32xbf16>, %b: memref<16x32xbf16>,
                   %c: memref<16x16xf32>, %flat: memref<?xbf16>,
                   %s: index) {
  %c0 = arith.constant 0 : index
  %z = amx.tile_zero : !amx.tile<16x16xf32>
  %ta = amx.tile_load %a[%c0, %c0] : memref<16x32xbf16> into !amx.tile<16x32xbf16>
  %tb = amx.tile_load %flat[%c0], %s : memref<?xbf16> into !amx.tile<16x32xbf16>
  %p = amx.tile_mulf %ta, %tb, %z : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
  %q = amx.tile_mulf %ta, %tb, %p : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
  amx.tile_store %c[%c0, %c0], %q : memref<16x16xf32>, !amx.tile<16x16xf32>
  return
}

// -----

// f16 tiles (tdpfp16ps) of a half chunk (16 reduction elements): a function
// of their own shape, 16 x 16 FMAs, from a strided window.
// CHECK-LABEL: func.func @half_chunk_f16(
// CHECK: vector.load %{{.*}} : memref<16x16xf16, strided<[64, 1], offset: ?>>, vector<16xf16>
// CHECK: call @__attn_emulated_tile_mulf_16x16f16_8x32(
// CHECK-NOT: amx.
// CHECK-LABEL: func.func private @__attn_emulated_tile_mulf_16x16f16_8x32(
// CHECK-SAME: vector<16x16xf16>, %{{.*}}: vector<8x32xf16>, %{{.*}}: vector<16x16xf32>) -> vector<16x16xf32>
// CHECK: arith.extf %{{.*}} : vector<32xf16> to vector<32xf32>
// CHECK-COUNT-256: vector.fma
// CHECK-NOT: vector.fma
// CHECK: return
func.func @half_chunk_f16(%a: memref<16x16xf16, strided<[64, 1], offset: ?>>,
                          %b: memref<8x32xf16>, %c: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %ta = amx.tile_load %a[%c0, %c0] : memref<16x16xf16, strided<[64, 1], offset: ?>> into !amx.tile<16x16xf16>
  %tb = amx.tile_load %b[%c0, %c0] : memref<8x32xf16> into !amx.tile<8x32xf16>
  %tc = amx.tile_load %c[%c0, %c0] : memref<16x16xf32> into !amx.tile<16x16xf32>
  %p = amx.tile_mulf %ta, %tb, %tc : !amx.tile<16x16xf16>, !amx.tile<8x32xf16>, !amx.tile<16x16xf32>
  amx.tile_store %c[%c0, %c0], %p : memref<16x16xf32>, !amx.tile<16x16xf32>
  return
}

// -----

// A function of the module with the product's name keeps it; the product
// takes another.
// CHECK-LABEL: func.func @__attn_emulated_tile_mulf_16x32bf16_16x32()
// CHECK-LABEL: func.func @taken(
// CHECK: call @[[NAME:__attn_emulated_tile_mulf_16x32bf16_16x32_[0-9]+]](
// CHECK: func.func private @[[NAME]](
func.func @__attn_emulated_tile_mulf_16x32bf16_16x32() {
  return
}
func.func @taken(%a: memref<16x32xbf16>, %c: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %z = amx.tile_zero : !amx.tile<16x16xf32>
  %ta = amx.tile_load %a[%c0, %c0] : memref<16x32xbf16> into !amx.tile<16x32xbf16>
  %p = amx.tile_mulf %ta, %ta, %z : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
  amx.tile_store %c[%c0, %c0], %p : memref<16x16xf32>, !amx.tile<16x16xf32>
  return
}

// -----

// int8 tiles are not emulated (attn builds none).
func.func @int8(%a: memref<16x64xi8>, %c: memref<16x16xi32>) {
  %c0 = arith.constant 0 : index
  %ta = amx.tile_load %a[%c0, %c0] : memref<16x64xi8> into !amx.tile<16x64xi8>
  %z = amx.tile_zero : !amx.tile<16x16xi32>
  // expected-error @below {{attn-emulate-amx: amx.tile_muli (int8 tiles) is not emulated}}
  %p = amx.tile_muli %ta, %ta, %z : !amx.tile<16x64xi8>, !amx.tile<16x64xi8>, !amx.tile<16x16xi32>
  amx.tile_store %c[%c0, %c0], %p : memref<16x16xi32>, !amx.tile<16x16xi32>
  return
}

// -----

// A tile carried by a loop is refused (the kernels keep tiles in a block).
func.func @carried(%c: memref<16x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = amx.tile_zero : !amx.tile<16x16xf32>
  // expected-error @below {{attn-emulate-amx: a tile value that is not an amx op's result (tiles stay within a block)}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %z) -> (!amx.tile<16x16xf32>) {
    scf.yield %t : !amx.tile<16x16xf32>
  }
  amx.tile_store %c[%c0, %c0], %r : memref<16x16xf32>, !amx.tile<16x16xf32>
  return
}
