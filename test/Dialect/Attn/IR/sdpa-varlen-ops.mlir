// attn.sdpa_varlen round-trips through the printer and the parser, plain and
// with its lse and every attribute.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @plain
// CHECK: attn.sdpa_varlen %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x4x12xf32>
func.func @plain(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>) -> tensor<?x4x12xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x4x12xf32>
  return %o : tensor<?x4x12xf32>
}

// CHECK-LABEL: func.func @everything
// CHECK: attn.sdpa_varlen
// CHECK-SAME: causal = #attn.causal<bottom_right>
// CHECK-SAME: scale = 1.250000e-01 : f32
// CHECK-SAME: softcap = 3.000000e+01 : f32
// CHECK-SAME: window = array<i64: 8, -1>
// CHECK-SAME: : tensor<23x4x16xbf16>, tensor<30x4x16xbf16>, tensor<30x4x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<23x4x16xbf16>, tensor<4x23xf32>
func.func @everything(%q: tensor<23x4x16xbf16>, %k: tensor<30x4x16xbf16>, %v: tensor<30x4x16xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<23x4x16xbf16>, tensor<4x23xf32>) {
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<bottom_right>, scale = 0.125 : f32, softcap = 30.0 : f32, window = array<i64: 8, -1>} : tensor<23x4x16xbf16>, tensor<30x4x16xbf16>, tensor<30x4x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<23x4x16xbf16>, tensor<4x23xf32>
  return %o, %lse : tensor<23x4x16xbf16>, tensor<4x23xf32>
}

// ALiBi slopes per head ([Hq]) and per sequence and head ([B, Hq]).
// CHECK-LABEL: func.func @alibi
// CHECK: attn.sdpa_varlen %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%{{.*}} : tensor<4xf32>) : tensor<?x4x16xf32>
// CHECK: attn.sdpa_varlen %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%{{.*}} : tensor<3x4xf32>) {causal = #attn.causal<top_left>} : tensor<?x4x16xf32>
func.func @alibi(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>, %h: tensor<4xf32>, %bh: tensor<3x4xf32>) -> (tensor<?x4x12xf32>, tensor<?x4x12xf32>) {
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck alibi_slopes(%h : tensor<4xf32>) : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x4x12xf32>
  %p = attn.sdpa_varlen %q, %k, %v, %cq, %ck alibi_slopes(%bh : tensor<3x4xf32>) {causal = #attn.causal<top_left>} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x4x12xf32>
  return %o, %p : tensor<?x4x12xf32>, tensor<?x4x12xf32>
}
