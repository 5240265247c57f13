// Hand-written attention forms that attn-raise-sdpa raises: element-wise ops
// fused into fewer generics, a scale written as a division, a rank-2 i1 mask
// selected on the scores, and tm_tensor.attention with a scale and a mask.
// RUN: attn-opt %s --allow-unregistered-dialect --attn-raise-sdpa -split-input-file | FileCheck %s
// With require-empty-row-guard, masked softmaxes without torch's empty-row
// guard (all of these) are left alone.
// RUN: attn-opt %s --allow-unregistered-dialect --attn-raise-sdpa=require-empty-row-guard=true -split-input-file | FileCheck %s --check-prefix=GUARD

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#kt = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#ij = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// GUARD-LABEL: func.func @fused(
// GUARD-NOT: attn.sdpa
// GUARD: linalg.batch_matmul
// CHECK-LABEL: func.func @fused(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x2x8x16xf32>, %[[K:[^:]*]]: tensor<2x2x8x16xf32>, %[[V:[^:]*]]: tensor<2x2x8x16xf32>, %[[M:[^:]*]]: tensor<8x8xi1>)
// CHECK-NEXT: %[[M4:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 8, 8] : tensor<8x8xi1> into tensor<1x1x8x8xi1>
// CHECK-NEXT: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] mask(%[[M4]]) {scale = 2.500000e-01 : f32} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<1x1x8x8xi1> -> tensor<2x2x8x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @fused(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>,
                 %v: tensor<2x2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c4 = arith.constant 4.0 : f32
  %e0 = tensor.empty() : tensor<2x2x16x8xf32>
  // K^T as a generic that reads K transposed.
  %kt = linalg.generic {indexing_maps = [#kt, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x2x8x16xf32>) outs(%e0 : tensor<2x2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x16x8xf32>
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x2x16x8xf32> into tensor<4x16x8xf32>
  %e1 = tensor.empty() : tensor<4x8x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s3 = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%f1 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 2, 8, 8] : tensor<4x8x8xf32> into tensor<2x2x8x8xf32>
  // select(m, s / 4, -inf) in one generic.
  %e2 = tensor.empty() : tensor<2x2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #ij, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<2x2x8x8xf32>, tensor<8x8xi1>) outs(%e2 : tensor<2x2x8x8xf32>) {
  ^bb0(%a: f32, %b: i1, %out: f32):
    %d = arith.divf %a, %c4 : f32
    %r = arith.select %b, %d, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x2x8x8xf32>
  %e3 = tensor.empty() : tensor<2x2x8xf32>
  %f3 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x2x8x8xf32>) outs(%f3 : tensor<2x2x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.maximumf %a, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x2x8xf32>
  // exp(x - max), and its row sum computing the same exp in its own body.
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %mx : tensor<2x2x8x8xf32>, tensor<2x2x8xf32>) outs(%e2 : tensor<2x2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x2x8x8xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  %l = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %mx : tensor<2x2x8x8xf32>, tensor<2x2x8xf32>) outs(%f4 : tensor<2x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    %r = arith.addf %e, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x2x8xf32>
  %pn = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %l : tensor<2x2x8x8xf32>, tensor<2x2x8xf32>) outs(%e2 : tensor<2x2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x2x8x8xf32>
  %p3 = tensor.collapse_shape %pn [[0, 1], [2], [3]] : tensor<2x2x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %e4 = tensor.empty() : tensor<4x8x16xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<4x8x8xf32>, tensor<4x8x16xf32>) outs(%f5 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 2, 8, 16] : tensor<4x8x16xf32> into tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

// tm_tensor.attention (generic form) with a scale and an additive mask.
// GUARD-LABEL: func.func @tm_tensor_mask(
// GUARD-NOT: attn.sdpa
// GUARD: "tm_tensor.attention"
// CHECK-LABEL: func.func @tm_tensor_mask(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x2x8x16xf32>, %[[K:[^:]*]]: tensor<2x2x8x16xf32>, %[[V:[^:]*]]: tensor<2x2x8x16xf32>, %[[M:[^:]*]]: tensor<2x2x8x8xf32>)
// CHECK-NEXT: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] mask(%[[M]]) {scale = 5.000000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @tm_tensor_mask(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>,
                          %v: tensor<2x2x8x16xf32>, %m: tensor<2x2x8x8xf32>) -> tensor<2x2x8x16xf32> {
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %m3 = tensor.collapse_shape %m [[0, 1], [2], [3]] : tensor<2x2x8x8xf32> into tensor<4x8x8xf32>
  %e = tensor.empty() : tensor<4x8x16xf32>
  %o3 = "tm_tensor.attention"(%q3, %k3, %v3, %m3, %e) <{operandSegmentSizes = array<i32: 4, 1>, scale = 5.000000e-01 : f64}>
      : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x8xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 2, 8, 16] : tensor<4x8x16xf32> into tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

// An unknown attribute on tm_tensor.attention (here a causal flag this pass
// does not know the meaning of) leaves it alone.
// GUARD-LABEL: func.func @tm_tensor_unknown_attr(
// CHECK-LABEL: func.func @tm_tensor_unknown_attr(
// CHECK-NOT: attn.sdpa
// CHECK: "tm_tensor.attention"
func.func @tm_tensor_unknown_attr(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>,
                                  %v: tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> {
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %e = tensor.empty() : tensor<4x8x16xf32>
  %o3 = "tm_tensor.attention"(%q3, %k3, %v3, %e) <{operandSegmentSizes = array<i32: 3, 1>}> {is_causal = true}
      : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 2, 8, 16] : tensor<4x8x16xf32> into tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}
