// A producer whose scale is 0, NaN or infinite (here the scores are divided
// by inf and by NaN, and multiplied by inf): attn.sdpa's verifier takes only finite non-zero
// scales, so attn-raise-sdpa must leave the program as it is rather than
// raise it into IR that does not verify (attn-opt verifies its output). The
// mask's expand_shape that the raise builds first is taken back too.
// RUN: attn-opt %s --attn-raise-sdpa -split-input-file | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#kt = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#ij = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @divided_by_inf(
// CHECK-NOT: attn.sdpa
// CHECK-NOT: tensor.expand_shape %arg3
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
func.func @divided_by_inf(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>,
                 %v: tensor<2x2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c4 = arith.constant 0x7F800000 : f32
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

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#kt = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#ij = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @divided_by_nan(
// CHECK-NOT: attn.sdpa
// CHECK-NOT: tensor.expand_shape %arg3
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
func.func @divided_by_nan(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>,
                 %v: tensor<2x2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c4 = arith.constant 0x7FC00000 : f32
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

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#kt = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#ij = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @times_inf(
// CHECK-NOT: attn.sdpa
// CHECK-NOT: tensor.expand_shape %arg3
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
func.func @times_inf(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>,
                 %v: tensor<2x2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c4 = arith.constant 0x7F800000 : f32
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
    %d = arith.mulf %a, %c4 : f32
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
