// narrow-block-q: ops whose D and Dv are at most 64 and that have no causal
// or window band get query blocks of this many rows instead of block-q; a
// short static sequence is cut down to one block as with block-q.
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="narrow-block-q=128" --attn-tile-online-softmax="row-multiple=16" -canonicalize | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="row-multiple=16" -canonicalize | FileCheck %s --check-prefix=OFF
// The CPU pipeline sets narrow-block-q=128 unless block-q is given, or the
// kernels are avx2: off there, block-q's 64 rows for every op (CPU-BQ).
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx2" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=CPU-BQ
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx2 narrow-block-q=128" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="block-q=64" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=CPU-BQ
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="block-q=64 narrow-block-q=128" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=CPU
// RUN: not attn-opt %s -split-input-file --attn-cpu-plan-tiling="narrow-block-q=-1" --attn-tile-online-softmax 2>&1 | FileCheck %s --check-prefix=NEG

// NEG: error: attn-cpu-plan-tiling: narrow-block-q (-1) must be >= 0

// BERT-base: 128 rows of d=64, one block of 128 (the transposed query tile
// has 128 columns); off: two blocks of 64.
// CHECK-LABEL: func.func @bert
// CHECK: scf.forall ({{.*}}) in (2, 12) shared_outs
// CHECK: outs(%{{.*}} : tensor<64x128xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
// CHECK: tensor.parallel_insert_slice {{.*}} [1, 1, 128, 64]
// OFF-LABEL: func.func @bert
// OFF: scf.forall ({{.*}}) in (2, 12, 2) shared_outs
// CPU-LABEL: func.func @bert
// CPU: %[[N:.*]] = arith.ceildivui %c128, %c128
// CPU: scf.forall ({{.*}}) in (%c2, 12, %[[N]])
// CPU-BQ-LABEL: func.func @bert
// CPU-BQ: %[[N:.*]] = arith.ceildivui %c128, %c64
// CPU-BQ: scf.forall ({{.*}}) in (%c2, 12, %[[N]])
func.func @bert(%q: tensor<2x12x128x64xf32>, %k: tensor<2x12x128x64xf32>,
                %v: tensor<2x12x128x64xf32>) -> tensor<2x12x128x64xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<2x12x128x64xf32>, tensor<2x12x128x64xf32>,
        tensor<2x12x128x64xf32> -> tensor<2x12x128x64xf32>
  return %o : tensor<2x12x128x64xf32>
}

// -----

// 300 rows: three blocks of 128, the last one partial; off: five of 64.
// CHECK-LABEL: func.func @longer
// CHECK: scf.forall ({{.*}}) in (2, 3) shared_outs
// OFF-LABEL: func.func @longer
// OFF: scf.forall ({{.*}}) in (2, 5) shared_outs
func.func @longer(%q: tensor<1x2x300x32xf32>, %k: tensor<1x2x77x32xf32>,
                  %v: tensor<1x2x77x32xf32>) -> tensor<1x2x300x32xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x300x32xf32>, tensor<1x2x77x32xf32>,
        tensor<1x2x77x32xf32> -> tensor<1x2x300x32xf32>
  return %o : tensor<1x2x300x32xf32>
}

// -----

// Dv = 80: not narrow, blocks of 64.
// CHECK-LABEL: func.func @wide_v
// CHECK: scf.forall ({{.*}}) in (2, 2) shared_outs
func.func @wide_v(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                  %v: tensor<1x2x128x80xf32>) -> tensor<1x2x128x80xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>,
        tensor<1x2x128x80xf32> -> tensor<1x2x128x80xf32>
  return %o : tensor<1x2x128x80xf32>
}

// -----

// Causal: the blocks above the diagonal are skipped per block of 64 rows,
// which blocks of 128 would do less of.
// CHECK-LABEL: func.func @causal
// CHECK: scf.forall ({{.*}}) in (2, 2) shared_outs
func.func @causal(%q: tensor<1x2x128x32xf32>, %k: tensor<1x2x128x32xf32>,
                  %v: tensor<1x2x128x32xf32>) -> tensor<1x2x128x32xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>,
        tensor<1x2x128x32xf32> -> tensor<1x2x128x32xf32>
  return %o : tensor<1x2x128x32xf32>
}

// -----

// Dynamic Lq: blocks of 128.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.*]] = arith.ceildivui %{{.*}}, %c128
// CHECK: scf.forall ({{.*}}) in (2, %[[N]]) shared_outs
// OFF-LABEL: func.func @dynamic
// OFF: arith.ceildivui %{{.*}}, %c64
func.func @dynamic(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                   %v: tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>
        -> tensor<1x2x?x32xf32>
  return %o : tensor<1x2x?x32xf32>
}

// -----

// Grouped-query attention, 4 query heads per key/value head and 32 rows:
// 128 rows fit one block of 128, so each key/value head's group is one block
// (K and V read once per group); off: 128 > 64, one block per query head.
// CHECK-LABEL: func.func @gqa
// CHECK: scf.forall ({{.*}}) in (2) shared_outs
// OFF-LABEL: func.func @gqa
// OFF: scf.forall ({{.*}}) in (8) shared_outs
func.func @gqa(%q: tensor<1x8x32x64xf32>, %k: tensor<1x2x500x64xf32>,
               %v: tensor<1x2x500x64xf32>) -> tensor<1x8x32x64xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x8x32x64xf32>, tensor<1x2x500x64xf32>,
        tensor<1x2x500x64xf32> -> tensor<1x8x32x64xf32>
  return %o : tensor<1x8x32x64xf32>
}

// -----

// The same grouped heads with a full mask keep block-q: grouping their rows
// would put the mask tile on a path the CPU kernels do not take.
// CHECK-LABEL: func.func @gqa_masked
// CHECK: scf.forall ({{.*}}) in (8) shared_outs
func.func @gqa_masked(%q: tensor<1x8x32x64xf32>, %k: tensor<1x2x500x64xf32>,
                      %v: tensor<1x2x500x64xf32>, %m: tensor<1x8x32x500xi1>)
    -> tensor<1x8x32x64xf32> {
  %o = attn.sdpa %q, %k, %v mask(%m)
      : tensor<1x8x32x64xf32>, tensor<1x2x500x64xf32>,
        tensor<1x2x500x64xf32>, tensor<1x8x32x500xi1> -> tensor<1x8x32x64xf32>
  return %o : tensor<1x8x32x64xf32>
}
