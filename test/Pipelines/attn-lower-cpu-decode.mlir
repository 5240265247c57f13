// attn-lower-cpu runs a decode step (here Lq = 1 and 4 query heads per
// key/value head: blocks of 4 rows) on the decode kernel by default
// (decode-rows=16), with the vector width of its kernels (8 lanes for avx2);
// decode-rows=0 or microkernels=false keep the tile ops.
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=DECODE
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx2" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512 decode-rows=0" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=TILES
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512 microkernels=false" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=TILES
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512 decode-rows=3" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=TILES

// The decode kernel's prefetches of K and V (a read-only to_buffer of each)
// bufferize to a cast of the argument, not a copy, and reach LLVM (this
// one-group f32 kernel has them with decode-prefetch=all, not by default).
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512 decode-prefetch=all" --mlir-print-ir-after=one-shot-bufferize 2>&1 >/dev/null | FileCheck %s --check-prefix=BUF
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512 decode-prefetch=all" | FileCheck %s --check-prefix=LLVM

// BUF: func.func @decode(%{{.*}}: memref<1x8x1x64xf32>, %[[K:.*]]: memref<1x2x300x64xf32>, %[[V:.*]]: memref<1x2x300x64xf32>)
// BUF-NOT: memref.copy %[[K]]
// BUF-NOT: memref.copy %[[V]]
// BUF: %[[KC:.*]] = memref.cast %[[K]] : memref<1x2x300x64xf32> to memref<1x2x300x64xf32, strided<[?, ?, ?, ?], offset: ?>>
// BUF: %[[VC:.*]] = memref.cast %[[V]]
// BUF-DAG: memref.prefetch %[[KC]][{{.*}}], read, locality<2>, data
// BUF-DAG: memref.prefetch %[[VC]][{{.*}}], read, locality<2>, data
// BUF-NOT: memref.copy %[[K]]
// BUF-NOT: memref.copy %[[V]]
// LLVM: "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// DECODE: vector.transfer_read {{.*}} : tensor<1x2x300x64xf32>, vector<16xf32>
// DECODE: vector.shuffle
// DECODE-NOT: attn.tile<scores>
// AVX2: vector.transfer_read {{.*}} : tensor<1x2x300x64xf32>, vector<8xf32>
// AVX2-NOT: attn.tile<scores>
// TILES: attn.tile<scores>
// TILES-NOT: vector.shuffle
func.func @decode(%q: tensor<1x8x1x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}
