// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=64 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=4 row-vectors=1 prefetch-spread=8" -canonicalize -cse | FileCheck %s
// Few register blocks (8 keys by 4 row vectors: 4 of them per tile): the
// spread is cut to what still reaches every line.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=64 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=4 prefetch-spread=8" -canonicalize -cse | FileCheck %s --check-prefix=FEW
// The causal diagonal's P.V ends its reduction at a dynamic key.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=4 row-vectors=1 prefetch-spread=8" -canonicalize -cse | FileCheck %s --check-prefix=DIAG
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=8 reg-block=2 row-vectors=1 prefetch-spread=16" -canonicalize -cse | FileCheck %s --check-prefix=ODD
// A spread larger than any reduction is cut to it (no overflow on the way).
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=64 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=4 row-vectors=1 prefetch-spread=65536" -canonicalize -cse | FileCheck %s --check-prefix=HUGE
// HUGE-LABEL: func.func @one_block
// HUGE: scf.for %{{.*}} = %c0 to %c32 step %c8 iter_args(
// attn-lower-cpu sets the spread on the avx2 kernels only.
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx2" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx2 prefetch-spread=2" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASKED

// AVX2: attn-cpu-microkernels{{.*}} prefetch-spread=8
// AVX512: attn-cpu-microkernels{{.*}} prefetch-spread=1
// ASKED: attn-cpu-microkernels{{.*}} prefetch-spread=2

// prefetch-spread=8: the f32 products take the largest power of two up to
// 8 that divides their reduction (here 32 steps) and whose steps still
// reach every line of their streams, and prefetch once per that many steps.
// One query block per head (Lq = 48): two streams in each product, the K
// (V) tile after this one (32 x 32 f32: 64 lines) and the next query
// block's query (output) rows (48 x 32: 96 lines). 8 key (value column)
// blocks of 4 times 3 row groups: 24 register blocks of 32 steps, 24 * 32 /
// 8 = 96 lines: a spread of 8. Register block b = (c0 / 4) * 3 + i0 / 16,
// for both streams, starts at line b * 4; its reduction loop takes 8 steps
// per iteration and prefetches line b * 4 + t / 8 of each stream (clamped
// to its last) in the first of them, and in no other.

// CHECK-LABEL: func.func @one_block
// The scores kernel.
// CHECK: scf.for %[[C0:.*]] = %c0 to %c32 step %c4 {
// CHECK:   scf.for %[[I0:.*]] = %c0 to %c48 step %c16 {
// CHECK:     %[[CB:.*]] = arith.divui %[[C0]], %c4 : index
// CHECK:     %[[RG:.*]] = arith.divui %[[I0]], %c16 : index
// CHECK:     %[[CB3:.*]] = arith.muli %[[CB]], %c3 : index
// CHECK:     %[[B:.*]] = arith.addi %[[CB3]], %[[RG]] : index
// CHECK:     %[[FIRST:.*]] = arith.muli %[[B]], %c4 : index
// CHECK:     scf.for %[[T:.*]] = %c0 to %c32 step %c8 iter_args(
// CHECK:       %[[STEP:.*]] = arith.divui %[[T]], %c8 : index
// CHECK:       %[[LINE:.*]] = arith.addi %[[FIRST]], %[[STEP]] : index
// CHECK:       arith.minui %[[LINE]], %c63 : index
// CHECK:       "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK:       arith.minui %[[LINE]], %c95 : index
// CHECK:       "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// Each of the 8 steps: 4 FMAs, no prefetch after the first step's.
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK:       scf.yield
// The P.V kernel: the V tile after this one, the output rows for write.
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c8 iter_args(
// CHECK:   arith.minui %{{.*}}, %c63 : index
// CHECK:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK:   arith.minui %{{.*}}, %c95 : index
// CHECK:   "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 1 : i32}>
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: llvm.intr.prefetch
// CHECK:   scf.yield

// 8 keys by 3 row vectors (48 rows): 4 register blocks of 32 steps over 96 lines of
// query rows: 4 * 32 / 2 = 64 < 96, so no spread at all: one step per
// iteration, one line per step, as without the option.
// FEW-LABEL: func.func @one_block
// FEW: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(
// FEW:   "llvm.intr.prefetch"
// FEW:   "llvm.intr.prefetch"
// FEW-COUNT-24: vector.fma
// FEW: scf.yield

// DIAG-LABEL: func.func @one_block
// ODD-LABEL: func.func @one_block

func.func @one_block(%q: tensor<1x2x48x32xf32>, %k: tensor<1x2x64x32xf32>,
                     %v: tensor<1x2x64x32xf32>) -> tensor<1x2x48x32xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x48x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x2x64x32xf32> -> tensor<1x2x48x32xf32>
  return %o : tensor<1x2x48x32xf32>
}

// -----

// Two query blocks (Lq = 80): the query and output views are dynamic, so
// each product prefetches only the K (V) tile after its own (64 lines).
// With 4 row vectors the 64-row block is one row group: 4 register blocks
// of 32 steps, 4 * 32 / 2 = 64 lines: a spread of 2 (4 would reach 32).
// FEW-LABEL: func.func @blocks
// FEW: scf.for %[[T:.*]] = %c0 to %c32 step %c2 iter_args(
// FEW:   arith.divui %[[T]], %c2 : index
// FEW:   arith.minui %{{.*}}, %c63 : index
// FEW:   "llvm.intr.prefetch"
// FEW-COUNT-32: vector.fma
// FEW-NOT: llvm.intr.prefetch
// FEW-COUNT-32: vector.fma
// FEW-NOT: llvm.intr.prefetch
// FEW: scf.yield

// CHECK-LABEL: func.func @blocks
// DIAG-LABEL: func.func @blocks
// ODD-LABEL: func.func @blocks

func.func @blocks(%q: tensor<1x1x80x32xf32>, %k: tensor<1x1x64x32xf32>,
                  %v: tensor<1x1x64x32xf32>) -> tensor<1x1x80x32xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x1x80x32xf32>, tensor<1x1x64x32xf32>,
        tensor<1x1x64x32xf32> -> tensor<1x1x80x32xf32>
  return %o : tensor<1x1x80x32xf32>
}

// -----

// The causal diagonal (block-q = block-kv = 32, tagged attn.hidden_above =
// 0): P.V ends its reduction at e = min(i0 + rowStep, 32). With 16 rows per
// register block and a spread of 8, e is a multiple of 8: one loop, 8
// steps per iteration, up to e, and no remainder.
// DIAG-LABEL: func.func @top_left
// DIAG: %[[E:.*]] = arith.addi %arg{{[0-9]+}}, %c16 : index
// DIAG-NEXT: %[[END:.*]] = arith.minsi %[[E]], %c32 : index
// DIAG-NEXT: %{{.*}}:4 = scf.for %{{.*}} = %c0 to %[[END]] step %c8 iter_args(
// DIAG: "llvm.intr.prefetch"
// DIAG-COUNT-4: vector.fma
// DIAG-NOT: llvm.intr.prefetch
// DIAG-COUNT-4: vector.fma
// DIAG-NOT: llvm.intr.prefetch
// DIAG-COUNT-4: vector.fma
// DIAG-NOT: llvm.intr.prefetch
// DIAG-COUNT-4: vector.fma
// DIAG-NOT: llvm.intr.prefetch
// DIAG-COUNT-4: vector.fma
// DIAG-NOT: llvm.intr.prefetch
// DIAG-COUNT-4: vector.fma
// DIAG-NOT: llvm.intr.prefetch
// DIAG-COUNT-4: vector.fma
// DIAG-NOT: llvm.intr.prefetch
// DIAG-COUNT-4: vector.fma
// DIAG-NOT: llvm.intr.prefetch
// DIAG: scf.yield
// DIAG-NOT: scf.for %{{.*}} = %{{.*}} to %[[END]] step %c1

// With 8 rows per register block (vector-width 8, one row vector) and a
// spread of 16 (32 steps, 32 register blocks of V's 64 lines: 32 * 2 >=
// 64), e = min(i0 + 8, 32) need not be a multiple of 16: 16 steps per
// iteration up to e rounded down to 16, then one per iteration up to e,
// without a prefetch.
// ODD-LABEL: func.func @top_left
// ODD: %[[GROUPS:.*]] = arith.divui %[[END:[0-9]+]], %c16 : index
// ODD-NEXT: %[[MAIN:.*]] = arith.muli %[[GROUPS]], %c16 : index
// ODD-NEXT: %[[R:.*]]:2 = scf.for %{{.*}} = %c0 to %[[MAIN]] step %c16 iter_args(
// ODD: "llvm.intr.prefetch"
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD: scf.for %{{.*}} = %[[MAIN]] to %[[END]] step %c1 iter_args(%{{.*}} = %[[R]]#0, %{{.*}} = %[[R]]#1)
// ODD-NOT: llvm.intr.prefetch
// ODD-COUNT-2: vector.fma
// ODD-NOT: llvm.intr.prefetch
// ODD: scf.yield

// CHECK-LABEL: func.func @top_left
// FEW-LABEL: func.func @top_left

func.func @top_left(%q: tensor<1x1x64x32xf32>, %k: tensor<1x1x64x32xf32>,
                    %v: tensor<1x1x64x32xf32>) -> tensor<1x1x64x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>,
        tensor<1x1x64x32xf32> -> tensor<1x1x64x32xf32>
  return %o : tensor<1x1x64x32xf32>
}
