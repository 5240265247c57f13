// attn.sdpa_paged has no fused lowering yet: the fused CPU pipeline and both
// GPU pipelines reject it on the op, naming the naive CPU pipeline that
// lowers it (attn-gather-paged), before anything else runs.
// RUN: not attn-opt %s --attn-lower-cpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-lower-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-lower-naive-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-reject-sdpa-paged 2>&1 | FileCheck %s
// The naive CPU pipeline lowers it to LLVM.
// RUN: attn-opt %s --attn-lower-naive-cpu | FileCheck %s --check-prefix=NAIVE

// CHECK: error: 'attn.sdpa_paged' op has no fused lowering yet: attention over a paged cache runs on attn-lower-naive-cpu only
// CHECK-NOT: error

// NAIVE-LABEL: llvm.func @paged
// NAIVE-NOT: attn.
func.func @paged(%q: tensor<2x4x1x16xf16>, %kc: tensor<?x16x2x16xf16>, %vc: tensor<?x16x2x16xf16>, %pt: tensor<2x8xi32>, %len: tensor<2xi32>) -> tensor<2x4x1x16xf16> {
  %o = attn.sdpa_paged %q, %kc, %vc, %pt, %len {causal = #attn.causal<bottom_right>} : tensor<2x4x1x16xf16>, tensor<?x16x2x16xf16>, tensor<?x16x2x16xf16>, tensor<2x8xi32>, tensor<2xi32> -> tensor<2x4x1x16xf16>
  return %o : tensor<2x4x1x16xf16>
}
