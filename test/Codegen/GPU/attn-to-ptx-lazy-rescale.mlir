// REQUIRES: cuda-toolkit
//
// convert-attn-to-gpu's lazy-rescale: the tensor-core kernel multiplies its
// accumulators by the rescale factor only in the tiles where one of the
// thread's two row maxima grew; where both are unchanged the factor is
// exactly 1 (it is selected as 1, whatever exp2(0) rounds to), so skipping
// it changes no result. IR: the 32 accumulator multiplies of f16 D = 64 (8
// value-column fragments x 4) are the else branch of an scf.if on "both
// maxima unchanged" (the new max compared with the loop-carried one, per
// row), whose other branch yields the accumulators as they are; with
// fold-scale too. Every kernel assembles for sm_90 without spills. Nothing
// here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 decode-rows=0 lazy-rescale=true" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 decode-rows=0 lazy-rescale=true fold-scale=true" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 decode-rows=0 lazy-rescale=true" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.mlir | FileCheck %s --check-prefix=PTXAS
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 decode-rows=0 lazy-rescale=true fold-scale=true" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.fold.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.fold.mlir | FileCheck %s --check-prefix=PTXAS

// CHECK-LABEL: func.func @f16_d64
// CHECK: %[[U0:.*]] = arith.cmpf oeq, %{{[0-9]+}}, %arg{{[0-9]+}} : f32
// CHECK: %[[U1:.*]] = arith.cmpf oeq, %{{[0-9]+}}, %arg{{[0-9]+}} : f32
// CHECK: %[[BOTH:.*]] = arith.andi %[[U0]], %[[U1]] : i1
// CHECK: scf.if %[[BOTH]] -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT: scf.yield %arg{{[0-9]+}},
// CHECK-NEXT: } else {
// CHECK-COUNT-32: arith.mulf
// CHECK-NEXT: scf.yield
// CHECK: nvgpu.mma.sync
// CHECK-LABEL: func.func @bf16_d128_causal_br_lse
// CHECK: arith.andi
// CHECK: scf.if %{{.*}} -> (f32,
// CHECK: } else {
// CHECK: arith.mulf

// PTXAS-DAG: @f16_d64_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-DAG: @bf16_d128_causal_br_lse_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
func.func @f16_d64(%q: tensor<2x8x256x64xf16>, %k: tensor<2x8x256x64xf16>, %v: tensor<2x8x256x64xf16>)
    -> tensor<2x8x256x64xf16> {
  %o = attn.sdpa %q, %k, %v
      : tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16> -> tensor<2x8x256x64xf16>
  return %o : tensor<2x8x256x64xf16>
}

func.func @bf16_d128_causal_br_lse(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>)
    -> (tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>
}
