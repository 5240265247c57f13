// REQUIRES: cuda-toolkit
//
// convert-attn-to-gpu's fold-scale, on by default (the H200 device check
// measured it 1.02-1.07x faster than the scaled path): the tensor-core kernel
// keeps the scores and the row max unscaled and computes P = exp2(fma(s, c,
// -m c)), one FMA per score where fold-scale=false multiplies each score by
// c, subtracts the max and tests for -inf (mul, sub, setp, selp). Counted per
// kernel in the PTX for sm_90 (f16 D = 64, block-kv 64: 32 scores per thread
// per tile, the key loop's body emitted once): 32 fma.rn.f32 and 2
// sub.rn.f32 (the two rows' rescale factors) by default, 0 and 34 with
// fold-scale=false. Softcap and a float mask need the scaled score: those
// kernels keep the scaled path. Every kernel assembles without spills. The
// numerics of the folded form (empty rows, both causal alignments, lse) are
// checked by the lane-level model (flash-fragment-model.test) and, on an
// H200, by the device check (docs/gpu-check.md).
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 decode-rows=0" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.fold.mlir
// RUN: %ptx --print < %t.fold.mlir > %t.fold.ptx
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.fold.mlir | FileCheck %s --check-prefix=PTXAS
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 decode-rows=0 fold-scale=false" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.base.mlir
// RUN: %ptx --print < %t.base.mlir > %t.base.ptx
//
// Per kernel: "<kernel> folded|scaled <fma.rn.f32> <sub.rn.f32>", folded
// meaning at least one FMA per score of a 16-key tile and no more than the
// two rescale subtractions.
// RUN: awk '/^\.visible \.entry/ { k = $3; n[k] = 1 } /fma\.rn\.f32/ { f[k]++ } /sub\.rn\.f32/ { s[k]++ } END { for (k in n) print k, (f[k] >= 16 && s[k] <= 2 ? "folded" : "scaled"), f[k] + 0, s[k] + 0 }' %t.fold.ptx | sort | FileCheck %s --check-prefix=FOLD
// RUN: awk '/^\.visible \.entry/ { k = $3; n[k] = 1 } /fma\.rn\.f32/ { f[k]++ } /sub\.rn\.f32/ { s[k]++ } END { for (k in n) print k, (f[k] >= 16 && s[k] <= 2 ? "folded" : "scaled"), f[k] + 0, s[k] + 0 }' %t.base.ptx | sort | FileCheck %s --check-prefix=BASE

// FOLD: bf16_d128_causal_br_lse_kernel( folded
// FOLD: f16_d64_bool_mask_kernel( folded 32 2
// FOLD: f16_d64_float_mask_kernel( scaled 0 34
// FOLD: f16_d64_kernel( folded 32 2
// FOLD: f16_d64_softcap_kernel( scaled
// BASE: bf16_d128_causal_br_lse_kernel( scaled
// BASE: f16_d64_bool_mask_kernel( scaled 0 34
// BASE: f16_d64_float_mask_kernel( scaled 0 34
// BASE: f16_d64_kernel( scaled 0 34
// BASE: f16_d64_softcap_kernel( scaled

// PTXAS-DAG: @f16_d64_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-DAG: @bf16_d128_causal_br_lse_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-DAG: @f16_d64_bool_mask_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
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

func.func @f16_d64_bool_mask(%q: tensor<1x4x100x64xf16>, %k: tensor<1x4x77x64xf16>, %v: tensor<1x4x77x64xf16>, %m: tensor<1x1x100x77xi1>)
    -> tensor<1x4x100x64xf16> {
  %o = attn.sdpa %q, %k, %v mask(%m)
      : tensor<1x4x100x64xf16>, tensor<1x4x77x64xf16>, tensor<1x4x77x64xf16>, tensor<1x1x100x77xi1> -> tensor<1x4x100x64xf16>
  return %o : tensor<1x4x100x64xf16>
}

func.func @f16_d64_float_mask(%q: tensor<1x4x100x64xf16>, %k: tensor<1x4x77x64xf16>, %v: tensor<1x4x77x64xf16>, %m: tensor<1x1x100x77xf16>)
    -> tensor<1x4x100x64xf16> {
  %o = attn.sdpa %q, %k, %v mask(%m)
      : tensor<1x4x100x64xf16>, tensor<1x4x77x64xf16>, tensor<1x4x77x64xf16>, tensor<1x1x100x77xf16> -> tensor<1x4x100x64xf16>
  return %o : tensor<1x4x100x64xf16>
}

func.func @f16_d64_softcap(%q: tensor<1x8x256x64xf16>, %k: tensor<1x8x256x64xf16>, %v: tensor<1x8x256x64xf16>)
    -> tensor<1x8x256x64xf16> {
  %o = attn.sdpa %q, %k, %v {softcap = 30.0 : f32}
      : tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16> -> tensor<1x8x256x64xf16>
  return %o : tensor<1x8x256x64xf16>
}
