// The decode kernel's software prefetches of the K and V rows ahead:
// decode-prefetch-locality sets their locality (default 2, into the L2 cache,
// prefetcht1; 3 into the L1 cache, prefetcht0), for every element type; V is
// prefetched the whole blocks ahead that cover 8 KiB of its rows (at least
// one), K one block further.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16" | FileCheck %s --check-prefix=L2
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16" | FileCheck %s --check-prefix=AHEAD
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-prefetch-locality=3" | FileCheck %s --check-prefix=L1
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-prefetch-locality=0" | FileCheck %s --check-prefix=NTA
// The CPU pipeline hands its decode-prefetch-locality on, default 2 on every
// path.
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512 kv-splits=1" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=L2
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx2 kv-splits=1" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=L2
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512 kv-splits=1 decode-prefetch-locality=3" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=L1

// f32 K and V, d=128 at 16 lanes: a block of V rows is 8 KiB, V one block
// (16 keys) ahead and K two (32), both clamped to the last full block.
// AHEAD-LABEL: func.func @decode_f32
// AHEAD: %[[V:.*]] = arith.addi %[[J0:.*]], %c16{{.*}} : index
// AHEAD-NEXT: arith.minsi %[[V]], %[[LAST:.*]] : index
// AHEAD: %[[K:.*]] = arith.addi %[[J0]], %c32{{.*}} : index
// AHEAD-NEXT: arith.minsi %[[K]], %[[LAST]] : index
// L2-LABEL: func.func @decode_f32
// L2-NOT: locality<3>
// L2: memref.prefetch {{.*}}, read, locality<2>, data : memref<1x2x256x128xf32
// L2-NOT: locality<3>
// L2: return
// L1-LABEL: func.func @decode_f32
// L1-NOT: locality<2>
// L1: memref.prefetch {{.*}}, read, locality<3>, data : memref<1x2x256x128xf32
// L1-NOT: locality<2>
// L1: return
// NTA-LABEL: func.func @decode_f32
// NTA: memref.prefetch {{.*}}, read, locality<0>, data : memref<1x2x256x128xf32
func.func @decode_f32(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x256x128xf32>,
                      %v: tensor<1x2x256x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf32>, tensor<1x2x256x128xf32>,
      tensor<1x2x256x128xf32> -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// -----

// bf16 K and V: 4 KiB blocks of V rows, V two blocks (32 keys) ahead, K
// three (48).
// AHEAD-LABEL: func.func @decode_bf16
// AHEAD: %[[V:.*]] = arith.addi %[[J0:.*]], %c32{{.*}} : index
// AHEAD-NEXT: arith.minsi %[[V]], %[[LAST:.*]] : index
// AHEAD: %[[K:.*]] = arith.addi %[[J0]], %c48{{.*}} : index
// AHEAD-NEXT: arith.minsi %[[K]], %[[LAST]] : index
// L2-LABEL: func.func @decode_bf16
// L2-NOT: locality<3>
// L2: memref.prefetch {{.*}}, read, locality<2>, data : memref<1x2x256x128xbf16
// L2-NOT: locality<3>
// L2: return
// L1-LABEL: func.func @decode_bf16
// L1-NOT: locality<2>
// L1: memref.prefetch {{.*}}, read, locality<3>, data : memref<1x2x256x128xbf16
// L1-NOT: locality<2>
// L1: return
func.func @decode_bf16(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x2x256x128xbf16>,
                       %v: tensor<1x2x256x128xbf16>) -> tensor<1x8x1x128xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xbf16>, tensor<1x2x256x128xbf16>,
      tensor<1x2x256x128xbf16> -> tensor<1x8x1x128xbf16>
  return %o : tensor<1x8x1x128xbf16>
}
