// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=24" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2" -canonicalize -cse | FileCheck %s --check-prefix=ODD
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=8 reg-block=4 row-vectors=2" -canonicalize -cse | FileCheck %s --check-prefix=W8 --implicit-check-not=llvm.inline_asm
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=8 reg-block=4 row-vectors=2 blend-stores=true" -canonicalize -cse | FileCheck %s --check-prefix=BLEND

// The user-mask tile op becomes vector code along the query rows (no
// scalar loop over the tile is left), and the row max after it is folded in.

// Key padding [B, 1, 1, Lk]: one i1 per key, read in place from the mask's
// view, selects between the score vector and -inf.
// CHECK-LABEL: func.func @key_padding_bool
// CHECK-NOT: #attn.tile<user_mask>
// CHECK: scf.for %[[J:.*]] = %c0 to %c32 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// CHECK:   %[[BIT:.*]] = memref.load %{{.*}}[%c0, %c0, %c0, %{{.*}}] : memref<1x1x1x?xi1, strided<[64, 64, 64, 1], offset: ?>>
// CHECK:   %[[S:.*]] = vector.load %{{.*}}[%[[J]], %{{.*}}] : memref<32x32xf32>, vector<16xf32>
// CHECK:   %[[SEL:.*]] = arith.select %[[BIT]], %[[S]], %{{.*}} : vector<16xf32>
// CHECK:   vector.store %[[SEL]], %{{.*}}[%[[J]], %{{.*}}] : memref<32x32xf32>, vector<16xf32>
// CHECK:   arith.cmpf ogt, %{{.*}}, %[[SEL]] : vector<16xf32>
// CHECK-NOT: #attn.tile<user_mask>
// CHECK-NOT: #attn.tile<row_max>
// ODD-LABEL: func.func @key_padding_bool
// ODD-NOT: #attn.tile<user_mask>
func.func @key_padding_bool(%q: tensor<2x2x64x16xf32>, %k: tensor<2x2x64x16xf32>, %m: tensor<2x1x1x64xi1>) -> tensor<2x2x64x16xf32> {
  %o = attn.sdpa %q, %k, %k mask(%m) : tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2x1x1x64xi1> -> tensor<2x2x64x16xf32>
  return %o : tensor<2x2x64x16xf32>
}

// -----

// A full float mask: 16 rows of 16 keys, transposed by 4 x 16 shuffles,
// scaled by log2 e and added to the score vectors. The blocks of 16 keys that
// lie in the view use plain loads; only the rest of the tile (the view's
// partial last block, in the last key block) uses masked loads (lanes past
// the view's last key off), and does not prefetch.
// CHECK-LABEL: func.func @full_float
// CHECK-NOT: #attn.tile<user_mask>
// (After the branch for a view of one key; the query tile's transpose before
// it also splits its rows by 16.)
// CHECK: } else {
// CHECK-NEXT: %[[NB:.*]] = arith.divui %[[KEYS:.*]], %c16 : index
// CHECK: %[[WHOLE:.*]] = arith.muli %[[NB]], %c16 : index
// CHECK: scf.for %[[JB:.*]] = %c0 to %[[WHOLE]] step %c16 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// CHECK-NOT: vector.maskedload
// CHECK:   vector.load %{{.*}}[%c0, %c0, %{{.*}}, %[[JB]]] : memref<1x1x?x?xf32, strided<[{{.*}}], offset: ?>>, vector<16xf32>
// Each row's keys of the next key block are prefetched, into L2.
// CHECK:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}> : (!llvm.ptr) -> ()
// CHECK-COUNT-15: vector.load %{{.*}}[%c0, %c0, %{{.*}}, %[[JB]]] : memref<1x1x?x?xf32, strided<[{{.*}}], offset: ?>>, vector<16xf32>
// CHECK-NOT: vector.maskedload
// CHECK-COUNT-64: vector.shuffle
// CHECK:   arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:   vector.load %{{.*}}[%[[JB]], %{{.*}}] : memref<32x32xf32>, vector<16xf32>
// CHECK:   arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: scf.for %[[JT:.*]] = %[[WHOLE]] to %c32 step %c16 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// CHECK:   %[[LEFT:.*]] = arith.subi %[[KEYS]], %[[JT]] : index
// CHECK:   %[[POS:.*]] = arith.maxsi %[[LEFT]], %c0 : index
// CHECK:   %[[LANES:.*]] = vector.create_mask %[[POS]] : vector<16xi1>
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-16: vector.maskedload %{{.*}}[%c0, %c0, %{{.*}}, %[[JT]]], %[[LANES]], %{{.*}} : memref<1x1x?x?xf32, strided<[{{.*}}], offset: ?>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-64: vector.shuffle
// CHECK-NOT: #attn.tile<user_mask>
// CHECK-NOT: #attn.tile<row_max>
// A block of 24 keys is not whole blocks of 16: the op stays a loop.
// ODD-LABEL: func.func @full_float
// ODD: #attn.tile<user_mask>
func.func @full_float(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x96x16xf32>, %m: tensor<1x2x64x96xf32>) -> tensor<1x2x64x16xf32> {
  %o = attn.sdpa %q, %k, %k mask(%m) : tensor<1x2x64x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x64x96xf32> -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}

// -----

// A full i1 mask [1, 1, Lq, Lk] with a key tail: i1 rows are bytes in
// memory, loaded as vector<16xi8> through the view's pointer (plain loads for
// whole blocks of 16 keys in the view, masked ones for the rest), widened,
// transposed and compared with 0. A view of one key (the mask's key dim 1 at
// run time, or a one-key tail) takes the per-row path.
// CHECK-LABEL: func.func @full_bool_tail
// CHECK-NOT: #attn.tile<user_mask>
// CHECK: memref.extract_aligned_pointer_as_index %{{.*}} : memref<1x1x?x?xi1, strided<[{{.*}}], offset: ?>> -> index
// CHECK: scf.if
// CHECK:   vector.from_elements %{{.*}} : vector<16xi1>
// CHECK: else
// CHECK:   scf.for
// CHECK-NOT: llvm.intr.masked.load
// CHECK-COUNT-16: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<16xi8>
// CHECK-NOT: llvm.intr.masked.load
// CHECK-COUNT-64: vector.shuffle
// CHECK:   arith.cmpf une, %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:   arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:   scf.for
// CHECK:   vector.create_mask
// CHECK-COUNT-16: llvm.intr.masked.load %{{.*}}, %{{.*}}, %{{.*}} {alignment = 1 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xi8>) -> vector<16xi8>
// CHECK-COUNT-64: vector.shuffle
// CHECK-NOT: #attn.tile<user_mask>
// The AVX2 kernels' 8 lanes: 8 x 8 blocks, plain 8-byte loads, 3 x 8
// shuffles.
// W8-LABEL: func.func @full_bool_tail
// W8-NOT: #attn.tile<user_mask>
// W8: else
// W8:   scf.for
// W8-COUNT-8: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<8xi8>
// W8-COUNT-24: vector.shuffle
// W8:   arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// W8:   scf.for
// W8-COUNT-8: llvm.intr.masked.load %{{.*}}, %{{.*}}, %{{.*}} {alignment = 1 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xi8>) -> vector<8xi8>
// W8-NOT: #attn.tile<user_mask>
// With blend-stores (the avx2 path's): the masked scores reach their
// stores through an empty inline asm, so that LLVM cannot turn the store of
// a select of the loaded tile into vmaskmovps: the Lk tail's element mask,
// then the user mask's 8 x 8 blocks.
// BLEND-LABEL: func.func @full_bool_tail
// BLEND: %[[S:.*]] = vector.load %[[ST:.*]][%{{.*}}, %{{.*}}] : memref<32x32xf32>, vector<8xf32>
// BLEND-NEXT: %[[SEL:.*]] = arith.select %{{.*}}, %[[S]], %{{.*}} : vector<8xi1>, vector<8xf32>
// BLEND-NEXT: %[[OPAQUE:.*]] = llvm.inline_asm "", "=v,0" %[[SEL]] : (vector<8xf32>) -> vector<8xf32>
// BLEND-NEXT: vector.store %[[OPAQUE]], %[[ST]]
// BLEND: arith.cmpf une
// BLEND-NEXT: %[[M:.*]] = vector.load %[[ST]][%{{.*}}, %{{.*}}] : memref<32x32xf32>, vector<8xf32>
// BLEND-NEXT: %[[MSEL:.*]] = arith.select %{{.*}}, %[[M]], %{{.*}} : vector<8xi1>, vector<8xf32>
// BLEND-NEXT: %[[MOPAQUE:.*]] = llvm.inline_asm "", "=v,0" %[[MSEL]] : (vector<8xf32>) -> vector<8xf32>
// BLEND-NEXT: vector.store %[[MOPAQUE]], %[[ST]]
func.func @full_bool_tail(%q: tensor<1x2x50x16xf32>, %k: tensor<1x2x77x16xf32>, %m: tensor<1x1x50x77xi1>) -> tensor<1x2x50x16xf32> {
  %o = attn.sdpa %q, %k, %k mask(%m) : tensor<1x2x50x16xf32>, tensor<1x2x77x16xf32>, tensor<1x2x77x16xf32>, tensor<1x1x50x77xi1> -> tensor<1x2x50x16xf32>
  return %o : tensor<1x2x50x16xf32>
}

// -----

// A bf16 mask broadcast along the keys [1, Hq, Lq, 1]: one vector per row
// vector, built once per tile from 16 scalars, widened to f32.
// CHECK-LABEL: func.func @per_row_bf16
// CHECK-NOT: #attn.tile<user_mask>
// CHECK: %[[ROW:.*]] = vector.from_elements %{{.*}} : vector<16xbf16>
// CHECK: arith.extf %[[ROW]] : vector<16xbf16> to vector<16xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1
// CHECK:   arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT: #attn.tile<user_mask>
func.func @per_row_bf16(%q: tensor<1x2x64x16xbf16>, %k: tensor<1x2x64x16xbf16>, %m: tensor<1x2x64x1xbf16>) -> tensor<1x2x64x16xbf16> {
  %o = attn.sdpa %q, %k, %k mask(%m) : tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x1xbf16> -> tensor<1x2x64x16xbf16>
  return %o : tensor<1x2x64x16xbf16>
}

// -----

// Grouped decode rows (several heads in a block) keep the scalar mask op,
// untagged: the mask is read element by element inside a linalg.generic.
// CHECK-LABEL: func.func @grouped_decode
// CHECK-NOT: #attn.tile<user_mask>
// CHECK: linalg.generic
// CHECK: memref.load %{{.*}}[%c0, %{{.*}}, %c0, %{{.*}}] : memref<1x8x1x64xf32>
func.func @grouped_decode(%q: tensor<1x8x1x16xf32>, %k: tensor<1x2x64x16xf32>, %m: tensor<1x8x1x64xf32>) -> tensor<1x8x1x16xf32> {
  %o = attn.sdpa %q, %k, %k mask(%m) : tensor<1x8x1x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x8x1x64xf32> -> tensor<1x8x1x16xf32>
  return %o : tensor<1x8x1x16xf32>
}
