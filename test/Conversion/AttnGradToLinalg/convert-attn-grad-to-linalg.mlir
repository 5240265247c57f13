// RUN: attn-opt %s --convert-attn-grad-to-linalg -split-input-file | FileCheck %s

// Grouped-query heads (4 query heads on 2 key/value heads), bottom-right
// causality: S = Q.K^T (K read through h floordiv 2), P recomputed from lse
// (hidden, causal and empty-row entries 0), Di = rowsum(dO o O), dP = dO.V^T,
// dS = P o (dP - Di), dQ = dS.K, and dK, dV on views of dS, Q, P, dO with the
// query heads split into (key/value head, group member), both reduced.
// CHECK-DAG: #[[$QMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG: #[[$SMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$KDQ:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-DAG: #[[$GRP_S:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2)>
// CHECK-DAG: #[[$GRP_X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d3)>
// CHECK-DAG: #[[$KV:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x8x16xf32>, %[[K:.*]]: tensor<1x2x6x16xf32>, %[[V:.*]]: tensor<1x2x6x8xf32>, %[[O:.*]]: tensor<1x4x8x8xf32>, %[[LSE:.*]]: tensor<1x4x8xf32>, %[[DO:.*]]: tensor<1x4x8x8xf32>)
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant -2 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$QMAP]], #[[$KMAP]], #[[$SMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : {{.*}}) outs(%{{.*}} : tensor<1x4x8x6xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW]], #[[$ID4]]], {{.*}} ins(%[[S]], %[[LSE]] : {{.*}})
// CHECK:   %[[SS:.*]] = arith.mulf %{{.*}}, %[[SCALE]]
// CHECK:   %[[FINITE:.*]] = arith.cmpf une, %[[SS]], %[[NEGINF]]
// CHECK:   %[[ROWSEES:.*]] = arith.cmpf une, %{{.*}}, %[[NEGINF]]
// CHECK:   %[[VIS:.*]] = arith.andi %[[FINITE]], %[[ROWSEES]]
// CHECK:   %[[I:.*]] = linalg.index 2
// CHECK:   %[[J:.*]] = linalg.index 3
// CHECK:   %[[DIAG:.*]] = arith.addi %[[I]], %[[SHIFT]]
// CHECK:   %[[CAUSAL:.*]] = arith.cmpi sle, %[[J]], %[[DIAG]]
// CHECK:   %[[ALL:.*]] = arith.andi %[[VIS]], %[[CAUSAL]]
// CHECK:   %[[EXP:.*]] = math.exp
// CHECK:   arith.select %[[ALL]], %[[EXP]], %[[ZERO]]
// CHECK: %[[DI:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]], #[[$ROW]]], {{.*}} ins(%[[DO]], %[[O]] : {{.*}}) outs(%{{.*}} : tensor<1x4x8xf32>)
// CHECK: %[[DP:.*]] = linalg.generic {indexing_maps = [#[[$QMAP]], #[[$KMAP]], #[[$SMAP]]], {{.*}} ins(%[[DO]], %[[V]] : {{.*}})
// CHECK: %[[DS:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[DP]], %[[DI]] : {{.*}})
// CHECK:   %[[DIFF:.*]] = arith.subf
// CHECK:   arith.mulf %{{.*}}, %[[DIFF]]
// CHECK: %[[DQ:.*]] = linalg.generic {indexing_maps = [#[[$QMAP]], #[[$KDQ]], #[[$SMAP]]], {{.*}} ins(%[[DS]], %[[K]] : {{.*}}) outs(%{{.*}} : tensor<1x4x8x16xf32>)
// CHECK-DAG: %[[Q5:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 16]
// CHECK-DAG: %[[DS5:.*]] = tensor.expand_shape %[[DS]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 6]
// CHECK: %[[DK:.*]] = linalg.generic {indexing_maps = [#[[$GRP_S]], #[[$GRP_X]], #[[$KV]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[DS5]], %[[Q5]] : {{.*}}) outs(%{{.*}} : tensor<1x2x6x16xf32>)
// CHECK-DAG: %[[P5:.*]] = tensor.expand_shape %[[P]]
// CHECK-DAG: %[[DO5:.*]] = tensor.expand_shape %[[DO]]
// CHECK: %[[DV:.*]] = linalg.generic {indexing_maps = [#[[$GRP_S]], #[[$GRP_X]], #[[$KV]]], {{.*}} ins(%[[P5]], %[[DO5]] : {{.*}}) outs(%{{.*}} : tensor<1x2x6x8xf32>)
// CHECK: %[[RQ:.*]] = linalg.generic {{.*}} ins(%[[DQ]] : {{.*}})
// CHECK:   arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: %[[RK:.*]] = linalg.generic {{.*}} ins(%[[DK]] : {{.*}})
// CHECK:   arith.mulf %{{.*}}, %[[SCALE]]
// CHECK: %[[RV:.*]] = linalg.generic {{.*}} ins(%[[DV]] : {{.*}})
// CHECK-NOT: arith.mulf
// CHECK: return %[[RQ]], %[[RK]], %[[RV]]
func.func @gqa(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x8xf32>, %o: tensor<1x4x8x8xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do {causal = #attn.causal<bottom_right>} : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>
  return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>
}

// -----

// bf16 with dynamic sizes and an i1 mask broadcast over batch and heads: the
// mask (read in the body: its dynamic dims may be 1 at run time) joins the
// visibility, operands are widened to f32 in the products and
// each gradient is rounded once to bf16.
// CHECK-LABEL: func.func @bf16_mask
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>)
// CHECK:   arith.extf %{{.*}} : bf16 to f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x2x?x?xf32>, tensor<?x2x?xf32>)
// CHECK:   %[[M:.*]] = tensor.extract %{{.*}} : tensor<1x1x?x?xi1>
// CHECK:   arith.andi %{{.*}}, %[[M]] : i1
// CHECK-COUNT-3: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16_mask(%q: tensor<?x2x?x32xbf16>, %k: tensor<?x2x?x32xbf16>, %v: tensor<?x2x?x32xbf16>, %o: tensor<?x2x?x32xbf16>, %lse: tensor<?x2x?xf32>, %do: tensor<?x2x?x32xbf16>, %m: tensor<1x1x?x?xi1>) -> (tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do mask(%m) : tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?xf32>, tensor<?x2x?x32xbf16>, tensor<1x1x?x?xi1> -> tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>
  return %dq, %dk, %dv : tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>
}
