// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=64 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=4 row-vectors=1" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=64 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=4 row-vectors=1 bf16-dot=true" -canonicalize -cse | FileCheck %s --check-prefix=BF16

// One query block per head (Lq = 48 <= block-q: static query and output
// views). Beside the K (V) tile after its own, the products prefetch the
// next query block's rows, spread over their reduction steps: the scores
// kernel the query rows after this block's (48 x 32 f32: 96 lines, line
// ((key block * 3 row groups + row group) * 32 + t), clamped to the last),
// the P.V kernel the output rows after this block's, for write. The output
// view is made after the key loop, so P.V gets a copy of its subview, in
// front of the key loop.

// CHECK-LABEL: func.func @one_block
// CHECK: scf.forall (%[[H:.*]]) in (2)
// CHECK: %[[Q:.*]] = memref.subview %arg0[0, %[[H]], 0, 0] [1, 1, 48, 32]
// CHECK: %{{.*}}, %[[QOFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[Q]]
// CHECK: %[[QPTR:.*]] = memref.extract_aligned_pointer_as_index %[[Q]]
// CHECK: %[[QEND:.*]] = arith.addi %[[QOFF]], %c1536 : index
// CHECK: %[[QBYTES:.*]] = arith.muli %[[QEND]], %c4 : index
// CHECK: %[[QAFTER:.*]] = arith.addi %[[QPTR]], %[[QBYTES]] : index
// The copy of the output rows' subview, before the key loop.
// CHECK: %[[O:.*]] = memref.subview %[[OUT:.*]][0, %[[H]], 0, 0] [1, 1, 48, 32]
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// The scores kernel: the K stream, then the next query rows.
// CHECK: scf.for %[[C0:.*]] = %c0 to %c32 step %c4 {
// CHECK:   scf.for %[[I0:.*]] = %c0 to %c48 step %c16 {
// Each stream's first line, once per register block (not per step).
// CHECK:     %[[CB:.*]] = arith.divui %[[C0]], %c4 : index
// CHECK:     %[[KBASE:.*]] = arith.muli %[[CB]], %c32 : index
// CHECK:     %[[RG:.*]] = arith.divui %[[I0]], %c16 : index
// CHECK:     %[[CB3:.*]] = arith.muli %[[CB]], %c3 : index
// CHECK:     %[[STEP:.*]] = arith.addi %[[CB3]], %[[RG]] : index
// CHECK:     %[[BASE:.*]] = arith.muli %[[STEP]], %c32 : index
// CHECK:     scf.for %[[T:.*]] = %c0 to %c32 step %c1 iter_args(
// CHECK:       %[[KLINE:.*]] = arith.addi %[[KBASE]], %[[T]] : index
// CHECK:       arith.minui %[[KLINE]], %c63 : index
// CHECK:       "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK:       %[[LINE:.*]] = arith.addi %[[BASE]], %[[T]] : index
// CHECK:       %[[CLAMPED:.*]] = arith.minui %[[LINE]], %c95 : index
// CHECK:       %[[OFF:.*]] = arith.muli %[[CLAMPED]], %c64 : index
// CHECK:       arith.addi %[[QAFTER]], %[[OFF]] : index
// CHECK:       "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK:       vector.fma
// The P.V kernel: the V stream, then the next output rows, for write.
// CHECK: %{{.*}}, %[[OOFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[O]]
// CHECK: %[[OPTR:.*]] = memref.extract_aligned_pointer_as_index %[[O]]
// CHECK: %[[OEND:.*]] = arith.addi %[[OOFF]], %c1536 : index
// CHECK: %[[OBYTES:.*]] = arith.muli %[[OEND]], %c4 : index
// CHECK: %[[OAFTER:.*]] = arith.addi %[[OPTR]], %[[OBYTES]] : index
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(
// CHECK:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK:   arith.minui %{{.*}}, %c95 : index
// CHECK:   arith.addi %[[OAFTER]], %{{.*}} : index
// CHECK:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 1 : i32}>
// The output kernel after the key loop writes the same view (CSE keeps
// the copy in front of the loop).
// CHECK-NOT: memref.subview %[[OUT]][0, %[[H]], 0, 0] [1, 1, 48, 32]
// CHECK: vector.store %{{.*}}, %[[O]]

// bf16 on vdpbf16ps: the same two streams in each product (the K tile and
// the query rows are bf16: 32 and 48 lines).
// BF16-LABEL: func.func @one_block_bf16
// BF16: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// BF16:   arith.minui %{{.*}}, %c31 : index
// BF16:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// BF16:   arith.minui %{{.*}}, %c47 : index
// BF16:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// BF16:   x86vector.avx512.dot
// BF16: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// BF16:   arith.minui %{{.*}}, %c31 : index
// BF16:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// BF16:   arith.minui %{{.*}}, %c47 : index
// BF16:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 1 : i32}>
// BF16:   x86vector.avx512.dot

// (The widened path of the same bf16 function, default prefix: its own
// label, so that the checks above stay within @one_block.)
// CHECK-LABEL: func.func @one_block_bf16

// Several query blocks (Lq = 80, block-q 64): the query view has a dynamic
// row count (the last block is short), so the scores kernel prefetches only
// the K tile after its own.
// CHECK-LABEL: func.func @blocks
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(
// CHECK:   "llvm.intr.prefetch"
// CHECK-NOT: "llvm.intr.prefetch"
// CHECK:   vector.fma

func.func @one_block(%q: tensor<1x2x48x32xf32>, %k: tensor<1x2x64x32xf32>,
                     %v: tensor<1x2x64x32xf32>) -> tensor<1x2x48x32xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x48x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x2x64x32xf32> -> tensor<1x2x48x32xf32>
  return %o : tensor<1x2x48x32xf32>
}

// -----

func.func @one_block_bf16(%q: tensor<1x2x48x32xbf16>, %k: tensor<1x2x64x32xbf16>,
                          %v: tensor<1x2x64x32xbf16>) -> tensor<1x2x48x32xbf16> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x48x32xbf16>, tensor<1x2x64x32xbf16>,
        tensor<1x2x64x32xbf16> -> tensor<1x2x48x32xbf16>
  return %o : tensor<1x2x48x32xbf16>
}

// -----

func.func @blocks(%q: tensor<1x2x80x32xf32>, %k: tensor<1x2x64x32xf32>,
                  %v: tensor<1x2x64x32xf32>) -> tensor<1x2x80x32xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x80x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x2x64x32xf32> -> tensor<1x2x80x32xf32>
  return %o : tensor<1x2x80x32xf32>
}
