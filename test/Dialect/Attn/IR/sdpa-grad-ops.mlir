// attn.sdpa_grad round-trips through the printer and the parser, plain and
// with every operand and attribute, after the forward op that gives its lse.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x8x16xf32>, %[[K:.*]]: tensor<1x2x6x16xf32>, %[[V:.*]]: tensor<1x2x6x16xf32>, %[[DO:.*]]: tensor<1x2x8x16xf32>)
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]]
// CHECK: attn.sdpa_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]], %[[DO]] : tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>
func.func @plain(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %do: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v : tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8xf32>
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>
  return %dq, %dk, %dv : tensor<1x2x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>
}

// CHECK-LABEL: func.func @everything
// CHECK: attn.sdpa_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) {causal = #attn.causal<bottom_right>, scale = 1.250000e-01 : f32} : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x32xbf16>, tensor<?x4x?x32xbf16>, tensor<?x4x?xf32>, tensor<?x4x?x32xbf16>, tensor<1x1x?x?xi1> -> tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x32xbf16>
func.func @everything(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x32xbf16>, %o: tensor<?x4x?x32xbf16>, %lse: tensor<?x4x?xf32>, %do: tensor<?x4x?x32xbf16>, %m: tensor<1x1x?x?xi1>) -> (tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x32xbf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do mask(%m) {scale = 0.125 : f32, causal = #attn.causal<bottom_right>}
      : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x32xbf16>, tensor<?x4x?x32xbf16>, tensor<?x4x?xf32>, tensor<?x4x?x32xbf16>, tensor<1x1x?x?xi1>
      -> tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x32xbf16>
  return %dq, %dk, %dv : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x32xbf16>
}
