// decode-page-touch: with 16-bit K and V, each block of the decode kernel
// loads one element of V and one of K that many bytes (default 8192) past
// the rows its prefetches reach, clamped to the last full block, and hands
// each to an empty asm so that the load stays: on 4 KiB pages the page the
// prefetches reach next is then walked by a load. f32 K and V, and 0, take
// none.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16" | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-page-touch=4096" | FileCheck %s --check-prefix=HALF
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16 decode-page-touch=0" | FileCheck %s --check-prefix=NONE
// The CPU pipeline hands its decode-page-touch on (default 8192).
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512-bf16 kv-splits=1" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=PIPELINE
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512-bf16 kv-splits=1 decode-page-touch=0" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=NONE

// bf16, d=128: 256-byte rows, V prefetched 32 keys ahead and K 48, so the
// loads are 32 rows (8 KiB) past those, at column 0.
// CHECK-LABEL: func.func @decode_bf16
// CHECK-DAG:   %[[KB:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK-DAG:   %[[VB:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK:       scf.for
// CHECK:         %[[LAST:.*]] = arith.subi %{{.*}}, %c16{{.*}} : index
// CHECK:         %[[VA:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK:         %[[KA:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK:         %[[VT:.*]] = arith.addi %[[VA]], %c32{{.*}} : index
// CHECK-NEXT:    %[[VROW:.*]] = arith.minsi %[[VT]], %[[LAST]] : index
// CHECK:         %[[V:.*]] = memref.load %[[VB]][%{{.*}}, %{{.*}}, %[[VROW]], %c0{{.*}}]
// CHECK-NEXT:    %[[VW:.*]] = arith.bitcast %[[V]] : bf16 to i16
// CHECK-NEXT:    llvm.inline_asm has_side_effects "", "r" %[[VW]] : (i16) -> ()
// CHECK:         %[[KT:.*]] = arith.addi %[[KA]], %c32{{.*}} : index
// CHECK-NEXT:    %[[KROW:.*]] = arith.minsi %[[KT]], %[[LAST]] : index
// CHECK:         %[[K:.*]] = memref.load %[[KB]][%{{.*}}, %{{.*}}, %[[KROW]], %c0{{.*}}]
// CHECK-NEXT:    %[[KW:.*]] = arith.bitcast %[[K]] : bf16 to i16
// CHECK-NEXT:    llvm.inline_asm has_side_effects "", "r" %[[KW]] : (i16) -> ()
// HALF-LABEL: func.func @decode_bf16
// HALF:       %[[VA:.*]] = arith.minsi
// HALF:       %[[KA:.*]] = arith.minsi
// HALF:       arith.addi %[[VA]], %c16{{.*}} : index
// HALF:       llvm.inline_asm
// HALF:       arith.addi %[[KA]], %c16{{.*}} : index
// HALF:       llvm.inline_asm
// PIPELINE-LABEL: func.func @decode_bf16
// PIPELINE:   llvm.inline_asm has_side_effects "", "r"
// NONE-LABEL: func.func @decode_bf16
// NONE-NOT:   llvm.inline_asm
func.func @decode_bf16(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x2x256x128xbf16>,
                       %v: tensor<1x2x256x128xbf16>) -> tensor<1x8x1x128xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xbf16>, tensor<1x2x256x128xbf16>,
      tensor<1x2x256x128xbf16> -> tensor<1x8x1x128xbf16>
  return %o : tensor<1x8x1x128xbf16>
}

// -----

// f32 K and V: none (their blocks take twice as long; on huge pages the
// loads cost more than they saved).
// CHECK-LABEL: func.func @decode_f32
// CHECK-NOT:   llvm.inline_asm
// PIPELINE-LABEL: func.func @decode_f32
// PIPELINE-NOT: llvm.inline_asm
func.func @decode_f32(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x256x128xf32>,
                      %v: tensor<1x2x256x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf32>, tensor<1x2x256x128xf32>,
      tensor<1x2x256x128xf32> -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}
