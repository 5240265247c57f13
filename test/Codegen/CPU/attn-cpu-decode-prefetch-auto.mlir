// decode-prefetch: which decode kernels prefetch their K and V rows ahead.
// auto (the default) leaves them out where K and V are f32 and the P.V takes
// one group of accumulators (rows times Dv at most 16 vectors of 16 lanes):
// 2 rows of d=128, 4 of d=64, one of d=256. Several groups (4 rows of d=128)
// and 16-bit K and V keep them; all gives every kernel its prefetches and
// none takes them from every one (and the page touches of 16-bit K and V
// with them).
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16" | FileCheck %s --check-prefixes=AUTO,ANY
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-prefetch=auto" | FileCheck %s --check-prefixes=AUTO,ANY
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-prefetch=all" | FileCheck %s --check-prefixes=ALL,ANY
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-prefetch=none" | FileCheck %s --check-prefixes=NONE,ANY
// The CPU pipeline: auto on the avx512 and avx512-bf16 kernels (measured on
// a Zen 4), all on the amx and avx2 kernels; its decode-prefetch wins.
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512 kv-splits=1 decode-rows=16" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefixes=AUTO,ANY
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512-bf16 kv-splits=1 decode-rows=16" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefixes=AUTO,ANY
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=amx kv-splits=1 decode-rows=16" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefixes=ALL,ANY
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512 kv-splits=1 decode-rows=16 decode-prefetch=all" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefixes=ALL,ANY
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512 kv-splits=1 decode-rows=16 decode-prefetch=none" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefixes=NONE,ANY

// Two rows of f32 d=128: 2 x 8 accumulators, one group.
// ANY-LABEL: func.func @f32_two_rows
// AUTO-NOT: memref.prefetch
// NONE-NOT: memref.prefetch
// ALL: memref.prefetch {{.*}} : memref<1x2x256x128xf32
// ANY: return
func.func @f32_two_rows(%q: tensor<1x4x1x128xf32>, %k: tensor<1x2x256x128xf32>,
                        %v: tensor<1x2x256x128xf32>) -> tensor<1x4x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x1x128xf32>, tensor<1x2x256x128xf32>,
      tensor<1x2x256x128xf32> -> tensor<1x4x1x128xf32>
  return %o : tensor<1x4x1x128xf32>
}

// -----

// Four rows of f32 d=64: 4 x 4 accumulators, one group.
// ANY-LABEL: func.func @f32_d64_four_rows
// AUTO-NOT: memref.prefetch
// NONE-NOT: memref.prefetch
// ALL: memref.prefetch {{.*}} : memref<1x2x256x64xf32
// ANY: return
func.func @f32_d64_four_rows(%q: tensor<1x8x1x64xf32>, %k: tensor<1x2x256x64xf32>,
                             %v: tensor<1x2x256x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xf32>, tensor<1x2x256x64xf32>,
      tensor<1x2x256x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}

// -----

// Four rows of f32 d=128: two groups of 4 x 4 accumulators, each its own pass
// over the block's V rows: prefetched under auto.
// ANY-LABEL: func.func @f32_four_rows
// AUTO: memref.prefetch {{.*}} : memref<1x2x256x128xf32
// ALL: memref.prefetch {{.*}} : memref<1x2x256x128xf32
// NONE-NOT: memref.prefetch
// ANY: return
func.func @f32_four_rows(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x256x128xf32>,
                         %v: tensor<1x2x256x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf32>, tensor<1x2x256x128xf32>,
      tensor<1x2x256x128xf32> -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// -----

// One row of bf16 d=128: one group, but 16-bit K and V keep the prefetches
// and the page touches (a load kept by an empty asm) under auto.
// ANY-LABEL: func.func @bf16_one_row
// AUTO: llvm.inline_asm
// AUTO: memref.prefetch {{.*}} : memref<1x2x256x128xbf16
// ALL: memref.prefetch {{.*}} : memref<1x2x256x128xbf16
// NONE-NOT: memref.prefetch
// NONE-NOT: llvm.inline_asm
// ANY: return
func.func @bf16_one_row(%q: tensor<1x2x1x128xbf16>, %k: tensor<1x2x256x128xbf16>,
                        %v: tensor<1x2x256x128xbf16>) -> tensor<1x2x1x128xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x1x128xbf16>, tensor<1x2x256x128xbf16>,
      tensor<1x2x256x128xbf16> -> tensor<1x2x1x128xbf16>
  return %o : tensor<1x2x1x128xbf16>
}
