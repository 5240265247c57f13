// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-bf16-dot=true decode-bf16-value-dot=true" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-bf16-dot=true" -canonicalize -cse | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=8 kv-splits=1" --attn-cpu-decode="decode-width=8 decode-bf16-value-dot=true" -canonicalize -cse | FileCheck %s --check-prefix=OFF
// attn-lower-cpu sets decode-bf16-value-dot on the avx512-bf16 path only.
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512-bf16" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=PIPE
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF

// decode-bf16-value-dot: the decode kernel's P.V on vdpbf16ps. Each row's
// block of probabilities is rounded to bf16 and stored as 8 words of two
// keys each; the P.V loop takes two keys per iteration: each row's word of
// the two keys broadcast, the two V rows read 32 values at a time and
// interleaved by words within each 128-bit lane (low and high halves), one
// x86vector.avx512.dot per half and row into the accumulators; then the
// next block's dot products of both keys (keys j and j + 1). At the end
// each pair of accumulators goes back to V's column order.
// CHECK-LABEL: func.func @gqa_bf16
// CHECK: %[[PROBS:.*]] = memref.alloc() : memref<4x8xi32>
// CHECK: scf.for
// CHECK: %[[P0:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT: %[[W0:.*]] = vector.bitcast %[[P0]] : vector<16xbf16> to vector<8xi32>
// CHECK-NEXT: vector.store %[[W0]], %[[PROBS]][%c0, %c0] : memref<4x8xi32>, vector<8xi32>
// CHECK-COUNT-3: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: scf.for %[[J:[^ ]*]] = %c0 to %c16 step %c2
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[J]], %c1 : index
// Both keys' V rows, then their V and K lines ahead (two lines per row
// each).
// CHECK-NEXT: %[[ROW0:.*]] = arith.addi %[[J0:.*]], %[[J]] : index
// CHECK-NEXT: %[[ROW1:.*]] = arith.addi %[[J0]], %[[J1]] : index
// CHECK-COUNT-8: memref.prefetch
// CHECK-NEXT: %[[HALF:.*]] = arith.divui %[[J]], %c2 : index
// CHECK-NEXT: %[[WORD:.*]] = memref.load %[[PROBS]][%c0, %[[HALF]]] : memref<4x8xi32>
// CHECK-NEXT: %[[SPLAT:.*]] = vector.broadcast %[[WORD]] : i32 to vector<16xi32>
// CHECK-NEXT: %[[PAIR:.*]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-3: memref.load %[[PROBS]]
// CHECK: %[[V0:.*]] = vector.transfer_read %arg2[%c0, %{{.*}}, %[[ROW0]], %c0], %{{.*}} : tensor<1x2x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[V1:.*]] = vector.transfer_read %arg2[%c0, %{{.*}}, %[[ROW1]], %c0], %{{.*}} : tensor<1x2x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[LO:.*]] = vector.shuffle %[[V0]], %[[V1]] [0, 32, 1, 33, 2, 34, 3, 35, 8, 40, 9, 41, 10, 42, 11, 43, 16, 48, 17, 49, 18, 50, 19, 51, 24, 56, 25, 57, 26, 58, 27, 59] : vector<32xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[HI:.*]] = vector.shuffle %[[V0]], %[[V1]] [4, 36, 5, 37, 6, 38, 7, 39, 12, 44, 13, 45, 14, 46, 15, 47, 20, 52, 21, 53, 22, 54, 23, 55, 28, 60, 29, 61, 30, 62, 31, 63] : vector<32xbf16>, vector<32xbf16>
// CHECK-NEXT: x86vector.avx512.dot %{{.*}}, %[[PAIR]], %[[LO]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-3: x86vector.avx512.dot %{{.*}}, %{{.*}}, %[[LO]]
// CHECK-NEXT: x86vector.avx512.dot %{{.*}}, %[[PAIR]], %[[HI]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-3: x86vector.avx512.dot %{{.*}}, %{{.*}}, %[[HI]]
// CHECK-NEXT: vector.transfer_read %arg2[%c0, %{{.*}}, %[[ROW0]], %c32]
// CHECK-NEXT: vector.transfer_read %arg2[%c0, %{{.*}}, %[[ROW1]], %c32]
// CHECK-COUNT-2: vector.shuffle
// CHECK-COUNT-8: x86vector.avx512.dot
// The next block's K rows of both keys.
// CHECK-NEXT: %[[K0:.*]] = arith.addi %[[NEXT:.*]], %[[J]] : index
// CHECK-NEXT: vector.transfer_read %arg1[%c0, %{{.*}}, %[[K0]], %c0]
// CHECK: %[[K1:.*]] = arith.addi %[[NEXT]], %[[J1]] : index
// CHECK-NEXT: vector.transfer_read %arg1[%c0, %{{.*}}, %[[K1]], %c0]
// CHECK: scf.yield
// The tail block takes the same steps, its rows clamped to the last key.
// CHECK: scf.for %[[T:.*]] = %c0 to %c16 step %c2
// CHECK-NEXT: %[[T0:.*]] = arith.addi %[[T]], %c96 : index
// CHECK-NEXT: %[[TROW0:.*]] = arith.minsi %[[T0]], %c99 : index
// CHECK-NEXT: %[[T1:.*]] = arith.addi %[[T]], %c97 : index
// CHECK-NEXT: %[[TROW1:.*]] = arith.minsi %[[T1]], %c99 : index
// CHECK: %[[TV0:.*]] = vector.transfer_read %arg2[%c0, %{{.*}}, %[[TROW0]], %c0]
// CHECK-NEXT: %[[TV1:.*]] = vector.transfer_read %arg2[%c0, %{{.*}}, %[[TROW1]], %c0]
// CHECK-NEXT: vector.shuffle %[[TV0]], %[[TV1]] [0, 32, 1, 33
// CHECK-NEXT: vector.shuffle %[[TV0]], %[[TV1]] [4, 36, 5, 37
// CHECK-NEXT: x86vector.avx512.dot
// The accumulators of columns [0, 32) back in order: lanes 0-3 of the low
// one, 0-3 of the high one, 4-7 of the low one, ...
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: vector.store %{{.*}}, %{{.*}}[%c0, %c0] : memref<4x64xf32>, vector<32xf32>
// OFF-LABEL: func.func @gqa_bf16
// OFF-NOT: memref<{{[0-9]+}}x{{[0-9]+}}xi32>
// OFF-NOT: step %c2
// OFF: scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c{{(8|16)(_[0-9]+)?}} step %c1
// OFF-NOT: step %c2
// OFF: return
// PIPE-LABEL: func.func @gqa_bf16
// PIPE: memref<4x8xi32>
// PIPE: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
func.func @gqa_bf16(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x100x64xbf16>, %v: tensor<1x2x100x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16> -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}

// -----

// f16 V and Dv = 48 (not a multiple of 32 values) keep the FMAs.
// CHECK-LABEL: func.func @f16
// CHECK-NOT: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK-LABEL: func.func @dv48
// CHECK-NOT: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: return
// PIPE-LABEL: func.func @f16
// PIPE-NOT: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// PIPE-LABEL: func.func @dv48
// PIPE-NOT: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
func.func @f16(%q: tensor<1x8x1x64xf16>, %k: tensor<1x2x100x64xf16>, %v: tensor<1x2x100x64xf16>) -> tensor<1x8x1x64xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xf16>, tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16> -> tensor<1x8x1x64xf16>
  return %o : tensor<1x8x1x64xf16>
}
func.func @dv48(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x100x64xbf16>, %v: tensor<1x2x100x48xbf16>) -> tensor<1x8x1x48xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x2x100x64xbf16>, tensor<1x2x100x48xbf16> -> tensor<1x8x1x48xbf16>
  return %o : tensor<1x8x1x48xbf16>
}

// -----

// 8 rows (W = 16): each P.V iteration's two keys take the next block's dot
// products together. Each query chunk's low and high 16 values are repeated
// into both halves once, before the blocks; per K chunk the two keys' low
// halves go side by side (key j in elements 0-15, key j + 1 in 16-31) and
// so do their high halves, and each row's two x86vector.avx512.dot sum key j
// in lanes 0-7 and key j + 1 in lanes 8-15 (one accumulator per row for
// both keys). The 8 rows' sums are folded from groups of 8 lanes (7 folds
// for the pair) into one vector stored at tile row j; the block's scores
// are gathered from the 8 even tile rows.
// CHECK-LABEL: func.func @mqa8_paired_dots
// CHECK: %[[Q0:.*]] = vector.transfer_read %arg0
// CHECK-NEXT: vector.shuffle %[[Q0]], %[[Q0]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xbf16>, vector<32xbf16>
// CHECK-NEXT: vector.shuffle %[[Q0]], %[[Q0]] [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<32xbf16>, vector<32xbf16>
// CHECK: scf.for %[[J:[^ ]*]] = %c0 to %c16 step %c2
// CHECK: %[[A0:.*]] = vector.transfer_read %arg1[%c0, %c0, %[[N0:[^,]*]], %c0], %{{.*}} : tensor<1x1x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[A1:.*]] = vector.transfer_read %arg1[%c0, %c0, %[[N0]], %c32], %{{.*}} : tensor<1x1x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[N1:.*]] = arith.addi %[[N0]], %c1 : index
// CHECK-NEXT: %[[B0:.*]] = vector.transfer_read %arg1[%c0, %c0, %[[N1]], %c0], %{{.*}} : tensor<1x1x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[B1:.*]] = vector.transfer_read %arg1[%c0, %c0, %[[N1]], %c32], %{{.*}} : tensor<1x1x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[LO:.*]] = vector.shuffle %[[A0]], %[[B0]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47] : vector<32xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[HI:.*]] = vector.shuffle %[[A0]], %[[B0]] [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63] : vector<32xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[D0:.*]] = x86vector.avx512.dot %{{.*}}, %[[LO]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NEXT: x86vector.avx512.dot %[[D0]], %[[HI]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-14: x86vector.avx512.dot
// CHECK-NEXT: %[[LO1:.*]] = vector.shuffle %[[A1]], %[[B1]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32,
// CHECK-NEXT: %[[HI1:.*]] = vector.shuffle %[[A1]], %[[B1]] [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 48,
// CHECK-COUNT-16: x86vector.avx512.dot
// CHECK-NEXT: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: vector.shuffle %{{.*}}, %{{.*}} [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31] : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-7: arith.addf
// CHECK-NOT: memref<16x1x16xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[J]], %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NOT: memref<16x1x16xf32>
// CHECK: scf.yield
// CHECK-NOT: memref<16x1x16xf32>
// CHECK: vector.load %{{.*}}[%c0, %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: vector.load %{{.*}}[%c2, %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: vector.load %{{.*}}[%c4, %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: vector.load %{{.*}}[%c6, %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: vector.load %{{.*}}[%c8, %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: vector.load %{{.*}}[%c10, %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: vector.load %{{.*}}[%c12, %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// CHECK-NEXT: vector.load %{{.*}}[%c14, %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// Without decode-bf16-value-dot (one key per P.V iteration) the keys take
// their dot products one at a time.
// OFF-LABEL: func.func @mqa8_paired_dots
// OFF-NOT: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32,
// OFF: return
// attn-lower-cpu's avx512-bf16 kernels take them so.
// PIPE-LABEL: func.func @mqa8_paired_dots
// PIPE: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32,
func.func @mqa8_paired_dots(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x1x100x64xbf16>, %v: tensor<1x1x100x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x1x100x64xbf16>, tensor<1x1x100x64xbf16> -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}
