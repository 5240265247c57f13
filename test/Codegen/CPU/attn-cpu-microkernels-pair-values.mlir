// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="pair-values=true" --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2 bf16-dot=true" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="pair-values=true" --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2" -canonicalize -cse | FileCheck %s --check-prefix=WIDEN

// pair-values with bf16-dot: the `pair_values` ops become vector code (two
// V rows loaded, interleaved, stored as one row of key pairs) in the forall
// before the query blocks, into V's copy in key pairs [1, 1, 32, 32]; P.V
// then broadcasts its 32-bit pairs from that copy's [8, 32] windows, and no
// query block packs V again (its only pair buffers are the query's and P's,
// [8, 64]).
// CHECK-LABEL: func.func @paired
// CHECK:       %[[VP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x1x32x32xbf16>
// CHECK:       scf.forall
// CHECK:         %[[DST:.*]] = memref.subview %[[VP]][0, 0, %{{.*}}, 0] [1, 1, 8, 32] [1, 1, 1, 1]
// CHECK:         scf.for
// CHECK:           %[[R0:.*]] = vector.load %{{.*}} : memref<16x16xbf16, strided<[16, 1], offset: ?>>, vector<16xbf16>
// CHECK:           %[[R1:.*]] = vector.load %{{.*}} : memref<16x16xbf16, strided<[16, 1], offset: ?>>, vector<16xbf16>
// CHECK:           %[[PAIRS:.*]] = vector.interleave %[[R0]], %[[R1]] : vector<16xbf16> -> vector<32xbf16>
// CHECK:           vector.store %[[PAIRS]], %[[DST]][%{{.*}}, %{{.*}}] : memref<8x32xbf16, strided<[32, 1], offset: ?>>, vector<32xbf16>
// CHECK-NOT:   attn.tile = #attn.tile<pair_values>
// CHECK:       scf.forall
// CHECK-NOT:     memref<8x32xbf16>
// CHECK-NOT:     vector.interleave
// CHECK:         %[[VB:.*]] = memref.subview %[[VP]][0, 0, %{{.*}}, 0] [1, 1, 8, 32] [1, 1, 1, 1]
// CHECK-NOT:     vector.interleave
// CHECK:         vector.load %[[VB]][%{{.*}}, %{{.*}}] : memref<8x32xbf16, strided<[32, 1], offset: ?>>, vector<2xbf16>
// CHECK:         x86vector.avx512.dot
// CHECK-NOT:     vector.interleave
// CHECK-NOT:     attn.tile = #attn.tile<pv>
// CHECK:         return
// Off the dot products (here the widening kernels), a P.V that reads V in
// key pairs stays a loop nest: still right, only slow (attn-lower-cpu sets
// pair-values with bf16-dot only).
// WIDEN-LABEL: func.func @paired
// WIDEN:       attn.tile = #attn.tile<pv>
// WIDEN-NOT:   x86vector
func.func @paired(%q: tensor<1x1x128x16xbf16>, %k: tensor<1x1x64x16xbf16>) -> tensor<1x1x128x16xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x128x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16> -> tensor<1x1x128x16xbf16>
  return %o : tensor<1x1x128x16xbf16>
}
