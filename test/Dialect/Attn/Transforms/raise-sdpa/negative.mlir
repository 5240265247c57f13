// Attention-like programs that attn-raise-sdpa must leave as they are; each
// is torch-mlir's decomposition (Inputs/torch_plain.mlir) with one change.
// RUN: attn-opt %s --attn-raise-sdpa -split-input-file | FileCheck %s

// The scores have another user (returned): not raised.
// CHECK-LABEL: func.func @scores_other_user
// CHECK-NOT: attn.sdpa
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#mapq = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
module {
  func.func @scores_other_user(%arg0: tensor<1x2x16x32xf32>, %arg1: tensor<1x2x24x32xf32>, %arg2: tensor<1x2x24x32xf32>) -> (tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x24xf32>
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %cst_3 = arith.constant 0.42044820762685725 : f64
    %0 = tensor.empty() : tensor<1x2x16x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x16x32xf32>) outs(%0 : tensor<1x2x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x16x32xf32>
    %2 = tensor.empty() : tensor<1x2x32x24xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x24x32xf32>) outs(%2 : tensor<1x2x32x24xf32>) permutation = [0, 1, 3, 2] 
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x2x32x24xf32>) outs(%2 : tensor<1x2x32x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x32x24xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x2x16x32xf32> into tensor<2x16x32xf32>
    %collapsed_4 = tensor.collapse_shape %3 [[0, 1], [2], [3]] : tensor<1x2x32x24xf32> into tensor<2x32x24xf32>
    %4 = tensor.empty() : tensor<2x16x24xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<2x16x32xf32>, tensor<2x32x24xf32>) outs(%5 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2], [3]] output_shape [1, 2, 16, 24] : tensor<2x16x24xf32> into tensor<1x2x16x24xf32>
    %7 = tensor.empty() : tensor<1x2x16xi64>
    %8 = linalg.fill ins(%c0_i64 : i64) outs(%7 : tensor<1x2x16xi64>) -> tensor<1x2x16xi64>
    %9 = tensor.empty() : tensor<1x2x16xf32>
    %10 = linalg.fill ins(%cst_0 : f32) outs(%9 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %11:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%10, %8 : tensor<1x2x16xf32>, tensor<1x2x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %28 = linalg.index 3 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = arith.maximumf %in, %out : f32
      %31 = arith.cmpf ogt, %in, %out : f32
      %32 = arith.select %31, %29, %out_9 : i64
      linalg.yield %30, %32 : f32, i64
    } -> (tensor<1x2x16xf32>, tensor<1x2x16xi64>)
    %expanded_5 = tensor.expand_shape %11#0 [[0], [1], [2, 3]] output_shape [1, 2, 16, 1] : tensor<1x2x16xf32> into tensor<1x2x16x1xf32>
    %12 = tensor.empty() : tensor<1x2x16x24xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded_5 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.subf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = math.exp %in : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %15 = tensor.empty() : tensor<1x2x16x1xf32>
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<1x2x16x1xf32>) -> tensor<1x2x16x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%14 : tensor<1x2x16x24xf32>) outs(%16 : tensor<1x2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.addf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x1xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.divf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %19 = tensor.empty() : tensor<1x2x16x24xi1>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%19 : tensor<1x2x16x24xi1>) {
    ^bb0(%in: f32, %out: i1):
      %28 = arith.extf %in : f32 to f64
      %29 = arith.cmpf oeq, %28, %cst_2 : f64
      linalg.yield %29 : i1
    } -> tensor<1x2x16x24xi1>
    %21 = tensor.empty() : tensor<1x2x16x1xi1>
    %22 = linalg.fill ins(%true : i1) outs(%21 : tensor<1x2x16x1xi1>) -> tensor<1x2x16x1xi1>
    %23 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x2x16x24xi1>) outs(%22 : tensor<1x2x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %28 = arith.andi %in, %out : i1
      linalg.yield %28 : i1
    } -> tensor<1x2x16x1xi1>
    %24 = linalg.generic {indexing_maps = [#map2, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %cst_1, %18 : tensor<1x2x16x1xi1>, tensor<1x2x16x24xf32>, tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %28 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %collapsed_6 = tensor.collapse_shape %24 [[0, 1], [2], [3]] : tensor<1x2x16x24xf32> into tensor<2x16x24xf32>
    %collapsed_7 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x24x32xf32> into tensor<2x24x32xf32>
    %25 = tensor.empty() : tensor<2x16x32xf32>
    %26 = linalg.fill ins(%cst : f32) outs(%25 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %27 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<2x16x24xf32>, tensor<2x24x32xf32>) outs(%26 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %expanded_8 = tensor.expand_shape %27 [[0, 1], [2], [3]] output_shape [1, 2, 16, 32] : tensor<2x16x32xf32> into tensor<1x2x16x32xf32>
    return %expanded_8, %expanded : tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
  }
}

// -----

// The softmax has another user (returned): not raised.
// CHECK-LABEL: func.func @softmax_other_user
// CHECK-NOT: attn.sdpa
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#mapq = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
module {
  func.func @softmax_other_user(%arg0: tensor<1x2x16x32xf32>, %arg1: tensor<1x2x24x32xf32>, %arg2: tensor<1x2x24x32xf32>) -> (tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x24xf32>
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %cst_3 = arith.constant 0.42044820762685725 : f64
    %0 = tensor.empty() : tensor<1x2x16x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x16x32xf32>) outs(%0 : tensor<1x2x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x16x32xf32>
    %2 = tensor.empty() : tensor<1x2x32x24xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x24x32xf32>) outs(%2 : tensor<1x2x32x24xf32>) permutation = [0, 1, 3, 2] 
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x2x32x24xf32>) outs(%2 : tensor<1x2x32x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x32x24xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x2x16x32xf32> into tensor<2x16x32xf32>
    %collapsed_4 = tensor.collapse_shape %3 [[0, 1], [2], [3]] : tensor<1x2x32x24xf32> into tensor<2x32x24xf32>
    %4 = tensor.empty() : tensor<2x16x24xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<2x16x32xf32>, tensor<2x32x24xf32>) outs(%5 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2], [3]] output_shape [1, 2, 16, 24] : tensor<2x16x24xf32> into tensor<1x2x16x24xf32>
    %7 = tensor.empty() : tensor<1x2x16xi64>
    %8 = linalg.fill ins(%c0_i64 : i64) outs(%7 : tensor<1x2x16xi64>) -> tensor<1x2x16xi64>
    %9 = tensor.empty() : tensor<1x2x16xf32>
    %10 = linalg.fill ins(%cst_0 : f32) outs(%9 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %11:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%10, %8 : tensor<1x2x16xf32>, tensor<1x2x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %28 = linalg.index 3 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = arith.maximumf %in, %out : f32
      %31 = arith.cmpf ogt, %in, %out : f32
      %32 = arith.select %31, %29, %out_9 : i64
      linalg.yield %30, %32 : f32, i64
    } -> (tensor<1x2x16xf32>, tensor<1x2x16xi64>)
    %expanded_5 = tensor.expand_shape %11#0 [[0], [1], [2, 3]] output_shape [1, 2, 16, 1] : tensor<1x2x16xf32> into tensor<1x2x16x1xf32>
    %12 = tensor.empty() : tensor<1x2x16x24xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded_5 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.subf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = math.exp %in : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %15 = tensor.empty() : tensor<1x2x16x1xf32>
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<1x2x16x1xf32>) -> tensor<1x2x16x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%14 : tensor<1x2x16x24xf32>) outs(%16 : tensor<1x2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.addf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x1xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.divf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %19 = tensor.empty() : tensor<1x2x16x24xi1>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%19 : tensor<1x2x16x24xi1>) {
    ^bb0(%in: f32, %out: i1):
      %28 = arith.extf %in : f32 to f64
      %29 = arith.cmpf oeq, %28, %cst_2 : f64
      linalg.yield %29 : i1
    } -> tensor<1x2x16x24xi1>
    %21 = tensor.empty() : tensor<1x2x16x1xi1>
    %22 = linalg.fill ins(%true : i1) outs(%21 : tensor<1x2x16x1xi1>) -> tensor<1x2x16x1xi1>
    %23 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x2x16x24xi1>) outs(%22 : tensor<1x2x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %28 = arith.andi %in, %out : i1
      linalg.yield %28 : i1
    } -> tensor<1x2x16x1xi1>
    %24 = linalg.generic {indexing_maps = [#map2, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %cst_1, %18 : tensor<1x2x16x1xi1>, tensor<1x2x16x24xf32>, tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %28 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %collapsed_6 = tensor.collapse_shape %24 [[0, 1], [2], [3]] : tensor<1x2x16x24xf32> into tensor<2x16x24xf32>
    %collapsed_7 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x24x32xf32> into tensor<2x24x32xf32>
    %25 = tensor.empty() : tensor<2x16x32xf32>
    %26 = linalg.fill ins(%cst : f32) outs(%25 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %27 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<2x16x24xf32>, tensor<2x24x32xf32>) outs(%26 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %expanded_8 = tensor.expand_shape %27 [[0, 1], [2], [3]] output_shape [1, 2, 16, 32] : tensor<2x16x32xf32> into tensor<1x2x16x32xf32>
    return %expanded_8, %24 : tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
  }
}

// -----

// The softmax denominator is a max, not a sum: not raised.
// CHECK-LABEL: func.func @sum_is_max
// CHECK-NOT: attn.sdpa
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#mapq = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
module {
  func.func @sum_is_max(%arg0: tensor<1x2x16x32xf32>, %arg1: tensor<1x2x24x32xf32>, %arg2: tensor<1x2x24x32xf32>) -> tensor<1x2x16x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x24xf32>
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %cst_3 = arith.constant 0.42044820762685725 : f64
    %0 = tensor.empty() : tensor<1x2x16x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x16x32xf32>) outs(%0 : tensor<1x2x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x16x32xf32>
    %2 = tensor.empty() : tensor<1x2x32x24xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x24x32xf32>) outs(%2 : tensor<1x2x32x24xf32>) permutation = [0, 1, 3, 2] 
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x2x32x24xf32>) outs(%2 : tensor<1x2x32x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x32x24xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x2x16x32xf32> into tensor<2x16x32xf32>
    %collapsed_4 = tensor.collapse_shape %3 [[0, 1], [2], [3]] : tensor<1x2x32x24xf32> into tensor<2x32x24xf32>
    %4 = tensor.empty() : tensor<2x16x24xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<2x16x32xf32>, tensor<2x32x24xf32>) outs(%5 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2], [3]] output_shape [1, 2, 16, 24] : tensor<2x16x24xf32> into tensor<1x2x16x24xf32>
    %7 = tensor.empty() : tensor<1x2x16xi64>
    %8 = linalg.fill ins(%c0_i64 : i64) outs(%7 : tensor<1x2x16xi64>) -> tensor<1x2x16xi64>
    %9 = tensor.empty() : tensor<1x2x16xf32>
    %10 = linalg.fill ins(%cst_0 : f32) outs(%9 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %11:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%10, %8 : tensor<1x2x16xf32>, tensor<1x2x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %28 = linalg.index 3 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = arith.maximumf %in, %out : f32
      %31 = arith.cmpf ogt, %in, %out : f32
      %32 = arith.select %31, %29, %out_9 : i64
      linalg.yield %30, %32 : f32, i64
    } -> (tensor<1x2x16xf32>, tensor<1x2x16xi64>)
    %expanded_5 = tensor.expand_shape %11#0 [[0], [1], [2, 3]] output_shape [1, 2, 16, 1] : tensor<1x2x16xf32> into tensor<1x2x16x1xf32>
    %12 = tensor.empty() : tensor<1x2x16x24xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded_5 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.subf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = math.exp %in : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %15 = tensor.empty() : tensor<1x2x16x1xf32>
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<1x2x16x1xf32>) -> tensor<1x2x16x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%14 : tensor<1x2x16x24xf32>) outs(%16 : tensor<1x2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.maximumf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x1xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.divf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %19 = tensor.empty() : tensor<1x2x16x24xi1>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%19 : tensor<1x2x16x24xi1>) {
    ^bb0(%in: f32, %out: i1):
      %28 = arith.extf %in : f32 to f64
      %29 = arith.cmpf oeq, %28, %cst_2 : f64
      linalg.yield %29 : i1
    } -> tensor<1x2x16x24xi1>
    %21 = tensor.empty() : tensor<1x2x16x1xi1>
    %22 = linalg.fill ins(%true : i1) outs(%21 : tensor<1x2x16x1xi1>) -> tensor<1x2x16x1xi1>
    %23 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x2x16x24xi1>) outs(%22 : tensor<1x2x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %28 = arith.andi %in, %out : i1
      linalg.yield %28 : i1
    } -> tensor<1x2x16x1xi1>
    %24 = linalg.generic {indexing_maps = [#map2, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %cst_1, %18 : tensor<1x2x16x1xi1>, tensor<1x2x16x24xf32>, tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %28 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %collapsed_6 = tensor.collapse_shape %24 [[0, 1], [2], [3]] : tensor<1x2x16x24xf32> into tensor<2x16x24xf32>
    %collapsed_7 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x24x32xf32> into tensor<2x24x32xf32>
    %25 = tensor.empty() : tensor<2x16x32xf32>
    %26 = linalg.fill ins(%cst : f32) outs(%25 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %27 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<2x16x24xf32>, tensor<2x24x32xf32>) outs(%26 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %expanded_8 = tensor.expand_shape %27 [[0, 1], [2], [3]] output_shape [1, 2, 16, 32] : tensor<2x16x32xf32> into tensor<1x2x16x32xf32>
    return %expanded_8 : tensor<1x2x16x32xf32>
  }
}

// -----

// The softmax sums over the query axis: not raised.
// CHECK-LABEL: func.func @sum_over_queries
// CHECK-NOT: attn.sdpa
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#mapq = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
module {
  func.func @sum_over_queries(%arg0: tensor<1x2x16x32xf32>, %arg1: tensor<1x2x24x32xf32>, %arg2: tensor<1x2x24x32xf32>) -> tensor<1x2x16x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x24xf32>
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %cst_3 = arith.constant 0.42044820762685725 : f64
    %0 = tensor.empty() : tensor<1x2x16x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x16x32xf32>) outs(%0 : tensor<1x2x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x16x32xf32>
    %2 = tensor.empty() : tensor<1x2x32x24xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x24x32xf32>) outs(%2 : tensor<1x2x32x24xf32>) permutation = [0, 1, 3, 2] 
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x2x32x24xf32>) outs(%2 : tensor<1x2x32x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x32x24xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x2x16x32xf32> into tensor<2x16x32xf32>
    %collapsed_4 = tensor.collapse_shape %3 [[0, 1], [2], [3]] : tensor<1x2x32x24xf32> into tensor<2x32x24xf32>
    %4 = tensor.empty() : tensor<2x16x24xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<2x16x32xf32>, tensor<2x32x24xf32>) outs(%5 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2], [3]] output_shape [1, 2, 16, 24] : tensor<2x16x24xf32> into tensor<1x2x16x24xf32>
    %7 = tensor.empty() : tensor<1x2x16xi64>
    %8 = linalg.fill ins(%c0_i64 : i64) outs(%7 : tensor<1x2x16xi64>) -> tensor<1x2x16xi64>
    %9 = tensor.empty() : tensor<1x2x16xf32>
    %10 = linalg.fill ins(%cst_0 : f32) outs(%9 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %11:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%10, %8 : tensor<1x2x16xf32>, tensor<1x2x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %28 = linalg.index 3 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = arith.maximumf %in, %out : f32
      %31 = arith.cmpf ogt, %in, %out : f32
      %32 = arith.select %31, %29, %out_9 : i64
      linalg.yield %30, %32 : f32, i64
    } -> (tensor<1x2x16xf32>, tensor<1x2x16xi64>)
    %expanded_5 = tensor.expand_shape %11#0 [[0], [1], [2, 3]] output_shape [1, 2, 16, 1] : tensor<1x2x16xf32> into tensor<1x2x16x1xf32>
    %12 = tensor.empty() : tensor<1x2x16x24xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded_5 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.subf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = math.exp %in : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %15 = tensor.empty() : tensor<1x2x1x24xf32>
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<1x2x1x24xf32>) -> tensor<1x2x1x24xf32>
    %17 = linalg.generic {indexing_maps = [#map, #mapq], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%14 : tensor<1x2x16x24xf32>) outs(%16 : tensor<1x2x1x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.addf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x1x24xf32>
    %18 = linalg.generic {indexing_maps = [#map, #mapq, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<1x2x16x24xf32>, tensor<1x2x1x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.divf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %19 = tensor.empty() : tensor<1x2x16x24xi1>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%19 : tensor<1x2x16x24xi1>) {
    ^bb0(%in: f32, %out: i1):
      %28 = arith.extf %in : f32 to f64
      %29 = arith.cmpf oeq, %28, %cst_2 : f64
      linalg.yield %29 : i1
    } -> tensor<1x2x16x24xi1>
    %21 = tensor.empty() : tensor<1x2x16x1xi1>
    %22 = linalg.fill ins(%true : i1) outs(%21 : tensor<1x2x16x1xi1>) -> tensor<1x2x16x1xi1>
    %23 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x2x16x24xi1>) outs(%22 : tensor<1x2x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %28 = arith.andi %in, %out : i1
      linalg.yield %28 : i1
    } -> tensor<1x2x16x1xi1>
    %24 = linalg.generic {indexing_maps = [#map2, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %cst_1, %18 : tensor<1x2x16x1xi1>, tensor<1x2x16x24xf32>, tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %28 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %collapsed_6 = tensor.collapse_shape %24 [[0, 1], [2], [3]] : tensor<1x2x16x24xf32> into tensor<2x16x24xf32>
    %collapsed_7 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x24x32xf32> into tensor<2x24x32xf32>
    %25 = tensor.empty() : tensor<2x16x32xf32>
    %26 = linalg.fill ins(%cst : f32) outs(%25 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %27 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<2x16x24xf32>, tensor<2x24x32xf32>) outs(%26 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %expanded_8 = tensor.expand_shape %27 [[0, 1], [2], [3]] output_shape [1, 2, 16, 32] : tensor<2x16x32xf32> into tensor<1x2x16x32xf32>
    return %expanded_8 : tensor<1x2x16x32xf32>
  }
}

// -----

// A causal rule j - i <= 3 is neither top-left (0) nor bottom-right (Lk - Lq = 8): not raised.
// CHECK-LABEL: func.func @causal_offset_3
// CHECK-NOT: attn.sdpa
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0, d1) -> (0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> ()>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @causal_offset_3(%arg0: tensor<1x2x16x32xf32>, %arg1: tensor<1x2x24x32xf32>, %arg2: tensor<1x2x24x32xf32>) -> tensor<1x2x16x32xf32> {
    %c8_i64 = arith.constant 3 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x24xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_4 = arith.constant dense<true> : tensor<16x24xi1>
    %cst_5 = arith.constant 0.42044820762685725 : f64
    %cst_6 = arith.constant 0xFFF0000000000000 : f64
    %0 = tensor.empty() : tensor<24xi64>
    %1 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%0 : tensor<24xi64>) {
    ^bb0(%out: i64):
      %40 = linalg.index 0 : index
      %41 = arith.index_cast %40 : index to i64
      linalg.yield %41 : i64
    } -> tensor<24xi64>
    %expanded = tensor.expand_shape %1 [[0, 1]] output_shape [1, 24] : tensor<24xi64> into tensor<1x24xi64>
    %2 = tensor.empty() : tensor<16xi64>
    %3 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%2 : tensor<16xi64>) {
    ^bb0(%out: i64):
      %40 = linalg.index 0 : index
      %41 = arith.index_cast %40 : index to i64
      linalg.yield %41 : i64
    } -> tensor<16xi64>
    %expanded_7 = tensor.expand_shape %3 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64>
    %4 = tensor.empty() : tensor<16x24xi64>
    %5 = linalg.generic {indexing_maps = [#map1, #map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%expanded, %expanded_7 : tensor<1x24xi64>, tensor<16x1xi64>) outs(%4 : tensor<16x24xi64>) {
    ^bb0(%in: i64, %in_14: i64, %out: i64):
      %40 = arith.subi %in, %in_14 : i64
      linalg.yield %40 : i64
    } -> tensor<16x24xi64>
    %6 = tensor.empty() : tensor<16x24xi1>
    %7 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<16x24xi64>) outs(%6 : tensor<16x24xi1>) {
    ^bb0(%in: i64, %out: i1):
      %40 = arith.cmpi sle, %in, %c8_i64 : i64
      linalg.yield %40 : i1
    } -> tensor<16x24xi1>
    %8 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%7, %cst_4 : tensor<16x24xi1>, tensor<16x24xi1>) outs(%6 : tensor<16x24xi1>) {
    ^bb0(%in: i1, %in_14: i1, %out: i1):
      %40 = arith.andi %in, %in_14 : i1
      linalg.yield %40 : i1
    } -> tensor<16x24xi1>
    %9 = tensor.empty() : tensor<16x24xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map4, #map4, #map3], iterator_types = ["parallel", "parallel"]} ins(%8, %cst_2, %cst_3 : tensor<16x24xi1>, tensor<f32>, tensor<f32>) outs(%9 : tensor<16x24xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %40 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %40 : f32
    } -> tensor<16x24xf32>
    %11 = tensor.empty() : tensor<1x2x16x32xf32>
    %12 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x16x32xf32>) outs(%11 : tensor<1x2x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = arith.truncf %cst_5 : f64 to f32
      %41 = arith.mulf %in, %40 : f32
      linalg.yield %41 : f32
    } -> tensor<1x2x16x32xf32>
    %13 = tensor.empty() : tensor<1x2x32x24xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x24x32xf32>) outs(%13 : tensor<1x2x32x24xf32>) permutation = [0, 1, 3, 2] 
    %14 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x2x32x24xf32>) outs(%13 : tensor<1x2x32x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = arith.truncf %cst_5 : f64 to f32
      %41 = arith.mulf %in, %40 : f32
      linalg.yield %41 : f32
    } -> tensor<1x2x32x24xf32>
    %collapsed = tensor.collapse_shape %12 [[0, 1], [2], [3]] : tensor<1x2x16x32xf32> into tensor<2x16x32xf32>
    %collapsed_8 = tensor.collapse_shape %14 [[0, 1], [2], [3]] : tensor<1x2x32x24xf32> into tensor<2x32x24xf32>
    %15 = tensor.empty() : tensor<2x16x24xf32>
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %17 = linalg.batch_matmul ins(%collapsed, %collapsed_8 : tensor<2x16x32xf32>, tensor<2x32x24xf32>) outs(%16 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %expanded_9 = tensor.expand_shape %17 [[0, 1], [2], [3]] output_shape [1, 2, 16, 24] : tensor<2x16x24xf32> into tensor<1x2x16x24xf32>
    %18 = tensor.empty() : tensor<1x2x16x24xf32>
    %19 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_9, %10 : tensor<1x2x16x24xf32>, tensor<16x24xf32>) outs(%18 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %40 = arith.addf %in, %in_14 : f32
      linalg.yield %40 : f32
    } -> tensor<1x2x16x24xf32>
    %20 = tensor.empty() : tensor<1x2x16xi64>
    %21 = linalg.fill ins(%c0_i64 : i64) outs(%20 : tensor<1x2x16xi64>) -> tensor<1x2x16xi64>
    %22 = tensor.empty() : tensor<1x2x16xf32>
    %23 = linalg.fill ins(%cst_0 : f32) outs(%22 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %24:2 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%19 : tensor<1x2x16x24xf32>) outs(%23, %21 : tensor<1x2x16xf32>, tensor<1x2x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_14: i64):
      %40 = linalg.index 3 : index
      %41 = arith.index_cast %40 : index to i64
      %42 = arith.maximumf %in, %out : f32
      %43 = arith.cmpf ogt, %in, %out : f32
      %44 = arith.select %43, %41, %out_14 : i64
      linalg.yield %42, %44 : f32, i64
    } -> (tensor<1x2x16xf32>, tensor<1x2x16xi64>)
    %expanded_10 = tensor.expand_shape %24#0 [[0], [1], [2, 3]] output_shape [1, 2, 16, 1] : tensor<1x2x16xf32> into tensor<1x2x16x1xf32>
    %25 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19, %expanded_10 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%18 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %40 = arith.subf %in, %in_14 : f32
      linalg.yield %40 : f32
    } -> tensor<1x2x16x24xf32>
    %26 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%25 : tensor<1x2x16x24xf32>) outs(%18 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = math.exp %in : f32
      linalg.yield %40 : f32
    } -> tensor<1x2x16x24xf32>
    %27 = tensor.empty() : tensor<1x2x16x1xf32>
    %28 = linalg.fill ins(%cst : f32) outs(%27 : tensor<1x2x16x1xf32>) -> tensor<1x2x16x1xf32>
    %29 = linalg.generic {indexing_maps = [#map5, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%26 : tensor<1x2x16x24xf32>) outs(%28 : tensor<1x2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %40 = arith.addf %in, %out : f32
      linalg.yield %40 : f32
    } -> tensor<1x2x16x1xf32>
    %30 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26, %29 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%18 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %40 = arith.divf %in, %in_14 : f32
      linalg.yield %40 : f32
    } -> tensor<1x2x16x24xf32>
    %31 = tensor.empty() : tensor<1x2x16x24xi1>
    %32 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19 : tensor<1x2x16x24xf32>) outs(%31 : tensor<1x2x16x24xi1>) {
    ^bb0(%in: f32, %out: i1):
      %40 = arith.extf %in : f32 to f64
      %41 = arith.cmpf oeq, %40, %cst_6 : f64
      linalg.yield %41 : i1
    } -> tensor<1x2x16x24xi1>
    %33 = tensor.empty() : tensor<1x2x16x1xi1>
    %34 = linalg.fill ins(%true : i1) outs(%33 : tensor<1x2x16x1xi1>) -> tensor<1x2x16x1xi1>
    %35 = linalg.generic {indexing_maps = [#map5, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%32 : tensor<1x2x16x24xi1>) outs(%34 : tensor<1x2x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %40 = arith.andi %in, %out : i1
      linalg.yield %40 : i1
    } -> tensor<1x2x16x1xi1>
    %36 = linalg.generic {indexing_maps = [#map8, #map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%35, %cst_1, %30 : tensor<1x2x16x1xi1>, tensor<1x2x16x24xf32>, tensor<1x2x16x24xf32>) outs(%18 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %40 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %40 : f32
    } -> tensor<1x2x16x24xf32>
    %collapsed_11 = tensor.collapse_shape %36 [[0, 1], [2], [3]] : tensor<1x2x16x24xf32> into tensor<2x16x24xf32>
    %collapsed_12 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x24x32xf32> into tensor<2x24x32xf32>
    %37 = tensor.empty() : tensor<2x16x32xf32>
    %38 = linalg.fill ins(%cst : f32) outs(%37 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %39 = linalg.batch_matmul ins(%collapsed_11, %collapsed_12 : tensor<2x16x24xf32>, tensor<2x24x32xf32>) outs(%38 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %expanded_13 = tensor.expand_shape %39 [[0, 1], [2], [3]] output_shape [1, 2, 16, 32] : tensor<2x16x32xf32> into tensor<1x2x16x32xf32>
    return %expanded_13 : tensor<1x2x16x32xf32>
  }
}

// -----

// The softmax denominator starts at 1, not 0: not raised.
// CHECK-LABEL: func.func @sum_starts_at_one
// CHECK-NOT: attn.sdpa
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @sum_starts_at_one(%arg0: tensor<1x2x16x32xf32>, %arg1: tensor<1x2x24x32xf32>, %arg2: tensor<1x2x24x32xf32>) -> tensor<1x2x16x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x24xf32>
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %cst_3 = arith.constant 0.42044820762685725 : f64
    %0 = tensor.empty() : tensor<1x2x16x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x16x32xf32>) outs(%0 : tensor<1x2x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x16x32xf32>
    %2 = tensor.empty() : tensor<1x2x32x24xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x24x32xf32>) outs(%2 : tensor<1x2x32x24xf32>) permutation = [0, 1, 3, 2] 
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x2x32x24xf32>) outs(%2 : tensor<1x2x32x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x32x24xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x2x16x32xf32> into tensor<2x16x32xf32>
    %collapsed_4 = tensor.collapse_shape %3 [[0, 1], [2], [3]] : tensor<1x2x32x24xf32> into tensor<2x32x24xf32>
    %4 = tensor.empty() : tensor<2x16x24xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<2x16x32xf32>, tensor<2x32x24xf32>) outs(%5 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2], [3]] output_shape [1, 2, 16, 24] : tensor<2x16x24xf32> into tensor<1x2x16x24xf32>
    %7 = tensor.empty() : tensor<1x2x16xi64>
    %8 = linalg.fill ins(%c0_i64 : i64) outs(%7 : tensor<1x2x16xi64>) -> tensor<1x2x16xi64>
    %9 = tensor.empty() : tensor<1x2x16xf32>
    %10 = linalg.fill ins(%cst_0 : f32) outs(%9 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %11:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%10, %8 : tensor<1x2x16xf32>, tensor<1x2x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %28 = linalg.index 3 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = arith.maximumf %in, %out : f32
      %31 = arith.cmpf ogt, %in, %out : f32
      %32 = arith.select %31, %29, %out_9 : i64
      linalg.yield %30, %32 : f32, i64
    } -> (tensor<1x2x16xf32>, tensor<1x2x16xi64>)
    %expanded_5 = tensor.expand_shape %11#0 [[0], [1], [2, 3]] output_shape [1, 2, 16, 1] : tensor<1x2x16xf32> into tensor<1x2x16x1xf32>
    %12 = tensor.empty() : tensor<1x2x16x24xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded_5 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.subf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = math.exp %in : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %15 = tensor.empty() : tensor<1x2x16x1xf32>
    %16 = linalg.fill ins(%one : f32) outs(%15 : tensor<1x2x16x1xf32>) -> tensor<1x2x16x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%14 : tensor<1x2x16x24xf32>) outs(%16 : tensor<1x2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.addf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x1xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.divf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %19 = tensor.empty() : tensor<1x2x16x24xi1>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%19 : tensor<1x2x16x24xi1>) {
    ^bb0(%in: f32, %out: i1):
      %28 = arith.extf %in : f32 to f64
      %29 = arith.cmpf oeq, %28, %cst_2 : f64
      linalg.yield %29 : i1
    } -> tensor<1x2x16x24xi1>
    %21 = tensor.empty() : tensor<1x2x16x1xi1>
    %22 = linalg.fill ins(%true : i1) outs(%21 : tensor<1x2x16x1xi1>) -> tensor<1x2x16x1xi1>
    %23 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x2x16x24xi1>) outs(%22 : tensor<1x2x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %28 = arith.andi %in, %out : i1
      linalg.yield %28 : i1
    } -> tensor<1x2x16x1xi1>
    %24 = linalg.generic {indexing_maps = [#map2, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %cst_1, %18 : tensor<1x2x16x1xi1>, tensor<1x2x16x24xf32>, tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %28 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %collapsed_6 = tensor.collapse_shape %24 [[0, 1], [2], [3]] : tensor<1x2x16x24xf32> into tensor<2x16x24xf32>
    %collapsed_7 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x24x32xf32> into tensor<2x24x32xf32>
    %25 = tensor.empty() : tensor<2x16x32xf32>
    %26 = linalg.fill ins(%cst : f32) outs(%25 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %27 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<2x16x24xf32>, tensor<2x24x32xf32>) outs(%26 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %expanded_8 = tensor.expand_shape %27 [[0, 1], [2], [3]] output_shape [1, 2, 16, 32] : tensor<2x16x32xf32> into tensor<1x2x16x32xf32>
    return %expanded_8 : tensor<1x2x16x32xf32>
  }
}

// -----

// The softmax uses exp2, not exp: not raised.
// CHECK-LABEL: func.func @exp2_not_exp
// CHECK-NOT: attn.sdpa
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @exp2_not_exp(%arg0: tensor<1x2x16x32xf32>, %arg1: tensor<1x2x24x32xf32>, %arg2: tensor<1x2x24x32xf32>) -> tensor<1x2x16x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x24xf32>
    %cst_2 = arith.constant 0xFFF0000000000000 : f64
    %cst_3 = arith.constant 0.42044820762685725 : f64
    %0 = tensor.empty() : tensor<1x2x16x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x16x32xf32>) outs(%0 : tensor<1x2x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x16x32xf32>
    %2 = tensor.empty() : tensor<1x2x32x24xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x24x32xf32>) outs(%2 : tensor<1x2x32x24xf32>) permutation = [0, 1, 3, 2] 
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x2x32x24xf32>) outs(%2 : tensor<1x2x32x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.truncf %cst_3 : f64 to f32
      %29 = arith.mulf %in, %28 : f32
      linalg.yield %29 : f32
    } -> tensor<1x2x32x24xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x2x16x32xf32> into tensor<2x16x32xf32>
    %collapsed_4 = tensor.collapse_shape %3 [[0, 1], [2], [3]] : tensor<1x2x32x24xf32> into tensor<2x32x24xf32>
    %4 = tensor.empty() : tensor<2x16x24xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_4 : tensor<2x16x32xf32>, tensor<2x32x24xf32>) outs(%5 : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
    %expanded = tensor.expand_shape %6 [[0, 1], [2], [3]] output_shape [1, 2, 16, 24] : tensor<2x16x24xf32> into tensor<1x2x16x24xf32>
    %7 = tensor.empty() : tensor<1x2x16xi64>
    %8 = linalg.fill ins(%c0_i64 : i64) outs(%7 : tensor<1x2x16xi64>) -> tensor<1x2x16xi64>
    %9 = tensor.empty() : tensor<1x2x16xf32>
    %10 = linalg.fill ins(%cst_0 : f32) outs(%9 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %11:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%10, %8 : tensor<1x2x16xf32>, tensor<1x2x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_9: i64):
      %28 = linalg.index 3 : index
      %29 = arith.index_cast %28 : index to i64
      %30 = arith.maximumf %in, %out : f32
      %31 = arith.cmpf ogt, %in, %out : f32
      %32 = arith.select %31, %29, %out_9 : i64
      linalg.yield %30, %32 : f32, i64
    } -> (tensor<1x2x16xf32>, tensor<1x2x16xi64>)
    %expanded_5 = tensor.expand_shape %11#0 [[0], [1], [2, 3]] output_shape [1, 2, 16, 1] : tensor<1x2x16xf32> into tensor<1x2x16x1xf32>
    %12 = tensor.empty() : tensor<1x2x16x24xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded_5 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.subf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13 : tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = math.exp2 %in : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %15 = tensor.empty() : tensor<1x2x16x1xf32>
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<1x2x16x1xf32>) -> tensor<1x2x16x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%14 : tensor<1x2x16x24xf32>) outs(%16 : tensor<1x2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.addf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x1xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<1x2x16x24xf32>, tensor<1x2x16x1xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %28 = arith.divf %in, %in_9 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %19 = tensor.empty() : tensor<1x2x16x24xi1>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x16x24xf32>) outs(%19 : tensor<1x2x16x24xi1>) {
    ^bb0(%in: f32, %out: i1):
      %28 = arith.extf %in : f32 to f64
      %29 = arith.cmpf oeq, %28, %cst_2 : f64
      linalg.yield %29 : i1
    } -> tensor<1x2x16x24xi1>
    %21 = tensor.empty() : tensor<1x2x16x1xi1>
    %22 = linalg.fill ins(%true : i1) outs(%21 : tensor<1x2x16x1xi1>) -> tensor<1x2x16x1xi1>
    %23 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x2x16x24xi1>) outs(%22 : tensor<1x2x16x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %28 = arith.andi %in, %out : i1
      linalg.yield %28 : i1
    } -> tensor<1x2x16x1xi1>
    %24 = linalg.generic {indexing_maps = [#map2, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23, %cst_1, %18 : tensor<1x2x16x1xi1>, tensor<1x2x16x24xf32>, tensor<1x2x16x24xf32>) outs(%12 : tensor<1x2x16x24xf32>) {
    ^bb0(%in: i1, %in_9: f32, %in_10: f32, %out: f32):
      %28 = arith.select %in, %in_9, %in_10 : f32
      linalg.yield %28 : f32
    } -> tensor<1x2x16x24xf32>
    %collapsed_6 = tensor.collapse_shape %24 [[0, 1], [2], [3]] : tensor<1x2x16x24xf32> into tensor<2x16x24xf32>
    %collapsed_7 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x24x32xf32> into tensor<2x24x32xf32>
    %25 = tensor.empty() : tensor<2x16x32xf32>
    %26 = linalg.fill ins(%cst : f32) outs(%25 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %27 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<2x16x24xf32>, tensor<2x24x32xf32>) outs(%26 : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %expanded_8 = tensor.expand_shape %27 [[0, 1], [2], [3]] output_shape [1, 2, 16, 32] : tensor<2x16x32xf32> into tensor<1x2x16x32xf32>
    return %expanded_8 : tensor<1x2x16x32xf32>
  }
}

// -----

// (s + mask) / 4 scales the mask too (attn.sdpa adds it unscaled): not raised.
// CHECK-LABEL: func.func @mask_scaled_with_scores
// CHECK-NOT: attn.sdpa
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: attn.sdpa
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#kt = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#ij = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
func.func @mask_scaled_with_scores(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>,
                 %v: tensor<2x2x8x16xf32>, %m: tensor<8x8xf32>) -> tensor<2x2x8x16xf32> {
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
  // (s + m) / 4: the mask is scaled with the scores.
  %e2 = tensor.empty() : tensor<2x2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #ij, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<2x2x8x8xf32>, tensor<8x8xf32>) outs(%e2 : tensor<2x2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.addf %a, %b : f32
    %r = arith.divf %d, %c4 : f32
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
