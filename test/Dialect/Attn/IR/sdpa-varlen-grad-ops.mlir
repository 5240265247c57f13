// attn.sdpa_varlen_grad round-trips through the printer and the parser,
// plain and with its attributes.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @plain
// CHECK: attn.sdpa_varlen_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
func.func @plain(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %o: tensor<?x4x12xf32>, %lse: tensor<4x?xf32>, %do: tensor<?x4x12xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>) -> (tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>) {
  %dq, %dk, %dv = attn.sdpa_varlen_grad %q, %k, %v, %o, %lse, %do, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return %dq, %dk, %dv : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
}

// CHECK-LABEL: func.func @attributes
// CHECK: attn.sdpa_varlen_grad
// CHECK-SAME: causal = #attn.causal<bottom_right>
// CHECK-SAME: scale = 1.250000e-01 : f32
// CHECK-SAME: : tensor<23x4x16xbf16>, tensor<30x4x16xbf16>, tensor<30x4x16xbf16>, tensor<23x4x16xbf16>, tensor<4x23xf32>, tensor<23x4x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<23x4x16xbf16>, tensor<30x4x16xbf16>, tensor<30x4x16xbf16>
func.func @attributes(%q: tensor<23x4x16xbf16>, %k: tensor<30x4x16xbf16>, %v: tensor<30x4x16xbf16>, %o: tensor<23x4x16xbf16>, %lse: tensor<4x23xf32>, %do: tensor<23x4x16xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<23x4x16xbf16>, tensor<30x4x16xbf16>, tensor<30x4x16xbf16>) {
  %dq, %dk, %dv = attn.sdpa_varlen_grad %q, %k, %v, %o, %lse, %do, %cq, %ck {causal = #attn.causal<bottom_right>, scale = 0.125 : f32} : tensor<23x4x16xbf16>, tensor<30x4x16xbf16>, tensor<30x4x16xbf16>, tensor<23x4x16xbf16>, tensor<4x23xf32>, tensor<23x4x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<23x4x16xbf16>, tensor<30x4x16xbf16>, tensor<30x4x16xbf16>
  return %dq, %dk, %dv : tensor<23x4x16xbf16>, tensor<30x4x16xbf16>, tensor<30x4x16xbf16>
}
