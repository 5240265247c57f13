// attn.sdpa_grad has no GPU lowering: both GPU pipelines reject it on the op,
// naming the CPU pipelines that lower it, before anything else runs.
// RUN: not attn-opt %s --attn-lower-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-lower-naive-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-reject-sdpa-grad 2>&1 | FileCheck %s

// CHECK: error: 'attn.sdpa_grad' op has no GPU lowering: the backward pass runs on the CPU pipelines (attn-lower-cpu, attn-lower-naive-cpu)
func.func @grad(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf16>, %o: tensor<1x2x8x16xf16>, %lse: tensor<1x2x8xf32>, %do: tensor<1x2x8x16xf16>) -> (tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8xf32>, tensor<1x2x8x16xf16> -> tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>
  return %dq, %dk, %dv : tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>
}
