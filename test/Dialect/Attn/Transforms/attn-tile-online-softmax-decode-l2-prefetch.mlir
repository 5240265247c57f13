// decode-l2-prefetch-f32: the decode kernel's software prefetches of the
// next blocks' K and V rows go to L2 (locality 2: prefetcht1) rather than L1
// (locality 3: prefetcht0) where K and V are f32; 16-bit K and V keep L1.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 kv-splits=1 decode-l2-prefetch-f32=true" | FileCheck %s --check-prefix=L2
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 kv-splits=1" | FileCheck %s --check-prefix=L1
// The CPU pipeline sets it on the amx kernels (Intel Xeons) only.
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=amx kv-splits=1" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=L2
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512 kv-splits=1" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=L1

// f32 K and V.
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
func.func @decode_f32(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x256x128xf32>,
                      %v: tensor<1x2x256x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf32>, tensor<1x2x256x128xf32>,
      tensor<1x2x256x128xf32> -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// -----

// bf16 K and V: L1 either way.
// L2-LABEL: func.func @decode_bf16
// L2-NOT: locality<2>
// L2: memref.prefetch {{.*}}, read, locality<3>, data : memref<1x2x256x128xbf16
// L2-NOT: locality<2>
// L2: return
// L1-LABEL: func.func @decode_bf16
// L1: memref.prefetch {{.*}}, read, locality<3>, data : memref<1x2x256x128xbf16
func.func @decode_bf16(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x2x256x128xbf16>,
                       %v: tensor<1x2x256x128xbf16>) -> tensor<1x8x1x128xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xbf16>, tensor<1x2x256x128xbf16>,
      tensor<1x2x256x128xbf16> -> tensor<1x8x1x128xbf16>
  return %o : tensor<1x8x1x128xbf16>
}
