// RUN: attn-opt %s --resolve-ranked-shaped-type-result-dims | FileCheck %s

// Shape reification: tensor.dim of a dynamic result folds to the operands.
// CHECK-LABEL: func.func @reify
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x64xf32>, %[[K:.*]]: tensor<?x2x?x64xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG: %[[L:.*]] = tensor.dim %[[Q]], %[[C2]]
// CHECK-NOT: attn.sdpa
// CHECK: return %[[B]], %[[L]]
func.func @reify(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %o = attn.sdpa %q, %k, %k : tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x4x?x64xf32>
  %d0 = tensor.dim %o, %c0 : tensor<?x4x?x64xf32>
  %d2 = tensor.dim %o, %c2 : tensor<?x4x?x64xf32>
  return %d0, %d2 : index, index
}
