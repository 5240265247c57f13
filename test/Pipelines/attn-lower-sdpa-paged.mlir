// attn.sdpa_paged in the pipelines. Both GPU pipelines reject it on the op,
// before anything else runs. attn-lower-cpu lowers it to LLVM where its
// query blocks are decode groups (the decode kernel reads the caches in
// place) and refuses it, with the reason, where they are not (here: chunked
// prefill, causal with 4 query rows); attn-lower-naive-cpu lowers both.
// RUN: not attn-opt %s -split-input-file --attn-lower-gpu 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: not attn-opt %s -split-input-file --attn-lower-naive-gpu 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: not attn-opt %s -split-input-file --attn-reject-sdpa-paged 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: not attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512" 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s -split-input-file --attn-lower-naive-cpu | FileCheck %s --check-prefix=NAIVE

// GPU: error: 'attn.sdpa_paged' op has no lowering in this pipeline: attention over a paged cache runs on attn-lower-cpu (decode groups) and attn-lower-naive-cpu
// GPU: error: 'attn.sdpa_paged' op has no lowering in this pipeline

// CPU: llvm.func @decode
// CPU-NOT: attn.
// CPU: error: 'attn.sdpa' op reads a paged cache (attn.sdpa_paged), which the fused CPU lowering reads through the decode kernel only, and its query blocks are not decode groups: a causal or window band with more than one query row (attn-lower-naive-cpu lowers it)

// NAIVE-LABEL: llvm.func @decode
// NAIVE-NOT: attn.
// NAIVE-LABEL: llvm.func @prefill
// NAIVE-NOT: attn.
func.func @decode(%q: tensor<2x4x1x16xf16>, %kc: tensor<?x16x2x16xf16>, %vc: tensor<?x16x2x16xf16>, %pt: tensor<2x8xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x16xf16> {
  %o = attn.sdpa_paged %q, %kc, %vc, %pt, %len {causal = #attn.causal<bottom_right>} : tensor<2x4x1x16xf16>, tensor<?x16x2x16xf16>, tensor<?x16x2x16xf16>, tensor<2x8xi32>, tensor<2xi32> -> tensor<2x4x1x16xf16>
  return %o : tensor<2x4x1x16xf16>
}

// -----

func.func @prefill(%q: tensor<2x4x4x16xf16>, %kc: tensor<?x16x2x16xf16>, %vc: tensor<?x16x2x16xf16>, %pt: tensor<2x8xi32>, %len: tensor<2xi32>) -> tensor<2x4x4x16xf16> {
  %o = attn.sdpa_paged %q, %kc, %vc, %pt, %len {causal = #attn.causal<bottom_right>} : tensor<2x4x4x16xf16>, tensor<?x16x2x16xf16>, tensor<?x16x2x16xf16>, tensor<2x8xi32>, tensor<2xi32> -> tensor<2x4x4x16xf16>
  return %o : tensor<2x4x4x16xf16>
}
