// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-bf16-dot=true" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16" -canonicalize -cse | FileCheck %s --check-prefix=OFF
// attn-lower-cpu sets decode-bf16-dot on the avx512-bf16 path only.
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512-bf16" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=PIPE
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF

// decode-bf16-dot: the decode kernel's Q.K on vdpbf16ps. Each query row is
// read once as bf16 pairs (2 x 32 values for D = 64, not widened, not
// scaled); each K row likewise; one x86vector.avx512.dot per 32 values and
// row (K first, the query last: LLVM folds a reloaded query chunk into the
// vdpbf16ps), chained along D, 4 keys (4 key rows read first) at a time for the
// first block (before the key loop), a key at a time in the P.V loop for
// the next; the score scale (0.125 * log2 e) multiplies the folded scores of
// a block of 16 keys once per row.
// CHECK-LABEL: func.func @gqa_bf16
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<0.180336878> : vector<16xf32>
// CHECK: scf.forall
// CHECK: %[[Q0:.*]] = vector.transfer_read %arg0[%c0, %{{.*}}, %c0, %c0], %{{.*}} : tensor<1x8x1x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[Q1:.*]] = vector.transfer_read %arg0[%c0, %{{.*}}, %c0, %c32], %{{.*}} : tensor<1x8x1x64xbf16>, vector<32xbf16>
// CHECK-NOT: arith.extf
// CHECK-NOT: scf.for
// CHECK: %[[K0:.*]] = vector.transfer_read %arg1[%c0, %{{.*}}, %{{.*}}, %c0], %{{.*}} : tensor<1x2x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[K1:.*]] = vector.transfer_read %arg1[%c0, %{{.*}}, %{{.*}}, %c32], %{{.*}} : tensor<1x2x100x64xbf16>, vector<32xbf16>
// CHECK-COUNT-6: vector.transfer_read %arg1
// CHECK-NEXT: %[[D0:.*]] = x86vector.avx512.dot %[[ZERO]], %[[K0]], %[[Q0]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-15: x86vector.avx512.dot %[[ZERO]]
// CHECK-NEXT: x86vector.avx512.dot %[[D0]], %[[K1]], %[[Q1]] : vector<32xbf16> -> vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : vector<16xf32>
// In the key loop, the next block's dot products from its P.V loop: each
// row's two dots for key j, the 4 rows folded into one vector (3 folds),
// written to the tile of partial sums.
// CHECK: scf.for
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: %[[KN0:.*]] = vector.transfer_read %arg1[%c0, %{{.*}}, %{{.*}}, %c0], %{{.*}} : tensor<1x2x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[KN1:.*]] = vector.transfer_read %arg1[%c0, %{{.*}}, %{{.*}}, %c32], %{{.*}} : tensor<1x2x100x64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[E0:.*]] = x86vector.avx512.dot %[[ZERO]], %[[KN0]], %[[Q0]] : vector<32xbf16> -> vector<16xf32>
// CHECK-NEXT: %[[E1:.*]] = x86vector.avx512.dot %[[E0]], %[[KN1]], %[[Q1]] : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: vector.store
// CHECK-COUNT-3: arith.addf
// CHECK-NEXT: vector.store %{{.*}}, %{{.*}}[%[[J]], %c0, %c0] : memref<16x1x16xf32>, vector<16xf32>
// OFF-LABEL: func.func @gqa_bf16
// OFF-NOT: x86vector.avx512.dot
// PIPE-LABEL: func.func @gqa_bf16
// PIPE: x86vector.avx512.dot
func.func @gqa_bf16(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x100x64xbf16>, %v: tensor<1x2x100x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16> -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}

// -----

// f16 and D = 48 (not a multiple of 32 values) keep the f32 FMAs.
// CHECK-LABEL: func.func @f16
// CHECK-NOT: x86vector.avx512.dot
// CHECK-LABEL: func.func @d48
// CHECK-NOT: x86vector.avx512.dot
// PIPE-LABEL: func.func @f16
// PIPE-NOT: x86vector.avx512.dot
// PIPE-LABEL: func.func @d48
// PIPE-NOT: x86vector.avx512.dot
func.func @f16(%q: tensor<1x4x1x64xf16>, %k: tensor<1x4x100x64xf16>, %v: tensor<1x4x100x64xf16>) -> tensor<1x4x1x64xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x1x64xf16>, tensor<1x4x100x64xf16>, tensor<1x4x100x64xf16> -> tensor<1x4x1x64xf16>
  return %o : tensor<1x4x1x64xf16>
}
func.func @d48(%q: tensor<1x4x1x48xbf16>, %k: tensor<1x4x100x48xbf16>, %v: tensor<1x4x100x48xbf16>) -> tensor<1x4x1x48xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x1x48xbf16>, tensor<1x4x100x48xbf16>, tensor<1x4x100x48xbf16> -> tensor<1x4x1x48xbf16>
  return %o : tensor<1x4x1x48xbf16>
}

// -----

// 4 rows of bf16 K on the dot products, D = 256 (8 chunks of 32 values):
// four groups of 4 value vectors, and the next block's dot products in two
// shares of 4 chunks (f32 K of D <= 128 takes one share at 4 rows; here one
// share was slower): the first group loop stores its sums, the third loads
// and adds to them.
// PIPE-LABEL: func.func @bf16_d256_four_rows_dot_shares
// CHECK-LABEL: func.func @bf16_d256_four_rows_dot_shares
// CHECK: memref.alloc() : memref<16x1x16xf32>
// CHECK: scf.for {{.*}} to %c16
// CHECK-NOT: scf.yield
// CHECK-NOT: vector.load %{{.*}} : memref<16x1x16xf32>
// CHECK: vector.store %{{.*}} : memref<16x1x16xf32>, vector<16xf32>
// CHECK: scf.yield
// CHECK: scf.for {{.*}} to %c16
// CHECK-NOT: memref<16x1x16xf32>
// CHECK: scf.yield
// CHECK: scf.for {{.*}} to %c16
// CHECK-NOT: scf.yield
// CHECK: vector.load %{{.*}} : memref<16x1x16xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<16x1x16xf32>, vector<16xf32>
// CHECK: scf.yield
func.func @bf16_d256_four_rows_dot_shares(%q: tensor<1x4x1x256xbf16>, %k: tensor<1x1x40x256xbf16>, %v: tensor<1x1x40x256xbf16>) -> tensor<1x4x1x256xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x1x256xbf16>, tensor<1x1x40x256xbf16>, tensor<1x1x40x256xbf16> -> tensor<1x4x1x256xbf16>
  return %o : tensor<1x4x1x256xbf16>
}
