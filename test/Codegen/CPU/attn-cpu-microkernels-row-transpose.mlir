// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=8 reg-block=4 row-vectors=2" -canonicalize -cse | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="bf16-round-in-integers=false" -canonicalize -cse | FileCheck %s --check-prefix=NATIVE

// The query tile's transpose and scale (scale_query) and the output's
// normalize and transpose (output) become 16 x 16 blocks: 16 vector loads
// along the source rows, the op's body on vectors, 4 x 16 vector.shuffle and
// 16 vector stores along the destination rows. Lq = 40 with block-q 32: the
// last block has 8 rows, fewer than 16, which stay an untagged copy of the
// op on views of those rows.

// CHECK-LABEL: func.func @bf16_short_tail
// CHECK-NOT: #attn.tile<scale_query>
// CHECK: %[[QROWS:.*]] = memref.subview %{{.*}} : memref<1x2x40x32xbf16> to memref<?x32xbf16, strided<[32, 1], offset: ?>>
// CHECK: linalg.fill {attn.tile = #attn.tile<init_query>}
// CHECK: %[[QT:.*]] = memref.subview %{{.*}}[0, 0] [32, %[[N:.*]]] [1, 1] : memref<32x32xf32> to memref<32x?xf32, strided<[32, 1]>>
// CHECK: %[[G:.*]] = arith.divui %[[N]], %c16 : index
// CHECK: %[[WHOLE:.*]] = arith.muli %[[G]], %c16 : index
// CHECK: scf.for %[[I0:.*]] = %c0 to %[[WHOLE]] step %c16 {
// CHECK:   scf.for %[[D0:.*]] = %c0 to %c32 step %c16 {
// The same rows of the next query block (the bytes after this one's view)
// are prefetched into L2, one line per row.
// CHECK-COUNT-16: "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK:     %[[ROW:.*]] = vector.load %[[QROWS]][%[[I0]], %[[D0]]] : memref<?x32xbf16, strided<[32, 1], offset: ?>>, vector<16xbf16>
// CHECK:     %[[WIDE:.*]] = arith.extf %[[ROW]] : vector<16xbf16> to vector<16xf32>
// CHECK:     arith.mulf %[[WIDE]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-15: vector.load %[[QROWS]]
// CHECK-COUNT-64: vector.shuffle {{.*}} : vector<16xf32>, vector<16xf32>
// CHECK:     vector.store %{{.*}}, %[[QT]][%[[D0]], %[[I0]]] : memref<32x?xf32, strided<[32, 1]>>, vector<16xf32>
// CHECK-COUNT-15: vector.store %{{.*}}, %[[QT]][%{{.*}}, %[[I0]]]
// CHECK: %[[REST:.*]] = arith.subi %[[N]], %[[WHOLE]] : index
// CHECK: %[[QREST:.*]] = memref.subview %[[QROWS]][%[[WHOLE]], 0] [%[[REST]], 32] [1, 1]
// CHECK: %[[QTREST:.*]] = memref.subview %[[QT]][0, %[[WHOLE]]] [32, %[[REST]]] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[QREST]] : {{.*}}) outs(%[[QTREST]] : {{.*}}) {
// CHECK-NEXT: ^bb0(%{{.*}}: bf16, %{{.*}}: f32):
// CHECK-NEXT:   arith.extf
// CHECK-NEXT:   arith.mulf
// CHECK-NEXT:   linalg.yield
// CHECK-NEXT: }{{$}}
// The scores kernel prefetches the K tile after its own (32 x 32 bf16: 32
// lines), one line per reduction step, the line index clamped to the last.
// CHECK: %[[KMETA:.*]], %[[KOFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[KV:.*]] : memref<32x32xbf16, strided<[32, 1], offset: ?>>
// CHECK: %[[KPTR:.*]] = memref.extract_aligned_pointer_as_index %[[KV]]
// CHECK: %[[KEND:.*]] = arith.addi %[[KOFF]], %c1024 : index
// CHECK: %[[KBYTES:.*]] = arith.muli %[[KEND]], %c2 : index
// CHECK: %[[AFTER:.*]] = arith.addi %[[KPTR]], %[[KBYTES]] : index
// CHECK: scf.for %[[T:.*]] = %c0 to %c32 step %c1 iter_args(
// CHECK:   %[[LINE:.*]] = arith.addi %{{.*}}, %[[T]] : index
// CHECK:   %[[CLAMPED:.*]] = arith.minui %[[LINE]], %c31 : index
// CHECK:   %[[OFF:.*]] = arith.muli %[[CLAMPED]], %c64 : index
// CHECK:   arith.addi %[[AFTER]], %[[OFF]] : index
// CHECK:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK:   vector.fma
// The output: acct read along the rows and transposed as f32 (a bf16
// output rounded in integer code, as without bf16-dot, takes the op's body
// after the transpose: the rounding then runs on whole f32 rows, which
// attn-expand-bf16-truncf expands later), each row scaled by its 1/l,
// broadcast, and rounded, stored along Dv.
// CHECK-NOT: #attn.tile<output>
// CHECK: %[[ACC:.*]] = memref.subview %{{.*}}[0, 0] [32, %[[N]]] [1, 1] : memref<32x32xf32> to memref<32x?xf32, strided<[32, 1]>>
// CHECK: %[[INV:.*]] = memref.subview %{{.*}}[0] [%[[N]]] [1] : memref<32xf32> to memref<?xf32, strided<[1]>>
// CHECK: scf.for %[[J0:.*]] = %c0 to %[[WHOLE]] step %c16 {
// CHECK-NEXT:   scf.for %[[E0:.*]] = %c0 to %c32 step %c16 {
// CHECK-COUNT-16: "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 1 : i32}>
// CHECK:     vector.load %[[ACC]][%[[E0]], %[[J0]]] : memref<32x?xf32, strided<[32, 1]>>, vector<16xf32>
// CHECK-COUNT-15: vector.load %[[ACC]]
// CHECK-COUNT-64: vector.shuffle {{.*}} : vector<16xf32>, vector<16xf32>
// CHECK:     %[[INVS:.*]] = memref.load %[[INV]][%[[J0]]] : memref<?xf32, strided<[1]>>
// CHECK:     %[[INVV:.*]] = vector.broadcast %[[INVS]] : f32 to vector<16xf32>
// CHECK:     %[[EMPTY:.*]] = arith.cmpf oeq, %[[INVV]], %{{.*}} : vector<16xf32>
// CHECK:     %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[INVV]] : vector<16xf32>
// CHECK:     %[[SEL:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[SCALED]] : vector<16xi1>, vector<16xf32>
// CHECK:     %[[B:.*]] = arith.truncf %[[SEL]] : vector<16xf32> to vector<16xbf16>
// CHECK-NOT: vector.shuffle
// CHECK:     vector.store %[[B]], %[[OUT:.*]][%[[J0]], %[[E0]]] : memref<?x32xbf16, strided<[32, 1], offset: ?>>, vector<16xbf16>
// CHECK-COUNT-15: vector.store %{{.*}}, %[[OUT]][%{{.*}}, %[[E0]]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<?x32xbf16, strided<[32, 1], offset: ?>>) {
// CHECK-NOT: attn.tile
// CHECK: return
// bf16-round-in-integers=false (attn-lower-cpu's on the avx512-bf16 and
// amx kernels): the body first, arith.truncf left to the target, then the
// transpose of bf16 vectors.
// NATIVE-LABEL: func.func @bf16_short_tail
// NATIVE-NOT: #attn.tile<output>
// NATIVE: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// NATIVE-COUNT-64: vector.shuffle {{.*}} : vector<16xbf16>, vector<16xbf16>
// NATIVE-NOT: arith.trunci
// NATIVE: return
// 8 lanes: 8 x 8 blocks, 3 x 8 shuffles each.
// AVX2-LABEL: func.func @bf16_short_tail
// AVX2-NOT: #attn.tile<scale_query>
// AVX2: arith.divui %{{.*}}, %c8 : index
// AVX2: vector.load {{.*}} : memref<?x32xbf16, strided<[32, 1], offset: ?>>, vector<8xbf16>
// AVX2-COUNT-24: vector.shuffle {{.*}} : vector<8xf32>, vector<8xf32>
// AVX2-NOT: #attn.tile<output>
// AVX2-COUNT-24: vector.shuffle {{.*}} : vector<8xf32>, vector<8xf32>
// AVX2-NOT: vector.shuffle {{.*}} : vector<8xbf16>
// AVX2: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
func.func @bf16_short_tail(%q: tensor<1x2x40x32xbf16>, %k: tensor<1x2x64x32xbf16>) -> tensor<1x2x40x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x2x40x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16> -> tensor<1x2x40x32xbf16>
  return %o : tensor<1x2x40x32xbf16>
}

// -----

// D = 24 is not whole vectors of 16: both ops stay loops (AVX2's 8 lanes
// take them).
// CHECK-LABEL: func.func @d24
// CHECK: linalg.generic {{.*}} attrs = {attn.tile = #attn.tile<scale_query>}
// CHECK: linalg.generic {{.*}} attrs = {attn.tile = #attn.tile<output>}
// AVX2-LABEL: func.func @d24
// AVX2-NOT: #attn.tile<scale_query>
// AVX2-NOT: #attn.tile<output>
// AVX2: return
func.func @d24(%q: tensor<1x1x32x24xf32>, %k: tensor<1x1x32x24xf32>) -> tensor<1x1x32x24xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x32x24xf32>, tensor<1x1x32x24xf32>, tensor<1x1x32x24xf32> -> tensor<1x1x32x24xf32>
  return %o : tensor<1x1x32x24xf32>
}

// -----

// An f16 output keeps the body first (arith.truncf, vcvtps2ph on F16C),
// then the transpose of f16 vectors, with or without
// bf16-round-in-integers.
// CHECK-LABEL: func.func @f16_out
// CHECK-NOT: #attn.tile<output>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xf16>
// CHECK-COUNT-64: vector.shuffle {{.*}} : vector<16xf16>, vector<16xf16>
// CHECK: return
// NATIVE-LABEL: func.func @f16_out
// NATIVE: arith.truncf %{{.*}} : vector<16xf32> to vector<16xf16>
// NATIVE-COUNT-64: vector.shuffle {{.*}} : vector<16xf16>, vector<16xf16>
// AVX2-LABEL: func.func @f16_out
// AVX2: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// AVX2-COUNT-24: vector.shuffle {{.*}} : vector<8xf16>, vector<8xf16>
func.func @f16_out(%q: tensor<1x1x32x32xf16>) -> tensor<1x1x32x32xf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x32x32xf16>, tensor<1x1x32x32xf16>, tensor<1x1x32x32xf16> -> tensor<1x1x32x32xf16>
  return %o : tensor<1x1x32x32xf16>
}
