// RUN: attn-opt %s --attn-raise-sdpa --split-input-file | FileCheck %s

// attn-raise-sdpa first rewrites a tensor.reshape whose shape elements are
// provably the source's sizes (through index_cast and a select on
// `size < 0`, never true for a size) into an expand_shape / collapse_shape.

// CHECK-LABEL: func.func @expand(
// CHECK-SAME: %[[X:.*]]: tensor<2x?x?xf32>
// CHECK-NOT: tensor.reshape
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[X]], %c1
// CHECK-DAG: %[[D2:.*]] = tensor.dim %[[X]], %c2
// CHECK: tensor.expand_shape %[[X]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 2, %{{.*}}, %{{.*}}] : tensor<2x?x?xf32> into tensor<1x2x?x?xf32>
// CHECK-NOT: tensor.reshape
func.func @expand(%x: tensor<2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c2_i64 = arith.constant 2 : i64
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d1 = tensor.dim %x, %c1 : tensor<2x?x?xf32>
  %d2 = tensor.dim %x, %c2 : tensor<2x?x?xf32>
  %i1 = arith.index_cast %d1 : index to i64
  %i2 = arith.index_cast %d2 : index to i64
  %neg = arith.cmpi slt, %i1, %c0_i64 : i64
  %s1 = arith.select %neg, %c2_i64, %i1 : i64
  %shape = tensor.from_elements %c1_i64, %c2_i64, %s1, %i2 : tensor<4xi64>
  %r = tensor.reshape %x(%shape) : (tensor<2x?x?xf32>, tensor<4xi64>) -> tensor<1x2x?x?xf32>
  return %r : tensor<1x2x?x?xf32>
}

// -----

// A size read through an empty tensor and a linalg op's init.
// CHECK-LABEL: func.func @collapse(
// CHECK-NOT: tensor.reshape
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<1x2x?x?xf32> into tensor<2x?x?xf32>
// CHECK-NOT: tensor.reshape
func.func @collapse(%x: tensor<1x2x?x?xf32>, %n: index) -> tensor<2x?x?xf32> {
  %c2_i64 = arith.constant 2 : i64
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%n, %n) : tensor<1x2x?x?xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  %i = arith.index_cast %n : index to i64
  %shape = tensor.from_elements %c2_i64, %i, %i : tensor<3xi64>
  %r = tensor.reshape %f(%shape) : (tensor<1x2x?x?xf32>, tensor<3xi64>) -> tensor<2x?x?xf32>
  return %r : tensor<2x?x?xf32>
}

// -----

// Not provable: a size from an argument, the sizes swapped, a select whose
// condition is not known. The reshapes stay.
// CHECK-LABEL: func.func @unknown(
// CHECK-COUNT-3: tensor.reshape
// CHECK-NOT: expand_shape
func.func @unknown(%x: tensor<2x?x?xf32>, %m: i64, %c: i1) -> (tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>) {
  %c1_i64 = arith.constant 1 : i64
  %c2_i64 = arith.constant 2 : i64
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d1 = tensor.dim %x, %c1 : tensor<2x?x?xf32>
  %d2 = tensor.dim %x, %c2 : tensor<2x?x?xf32>
  %i1 = arith.index_cast %d1 : index to i64
  %i2 = arith.index_cast %d2 : index to i64
  %s0 = tensor.from_elements %c1_i64, %c2_i64, %m, %i2 : tensor<4xi64>
  %r0 = tensor.reshape %x(%s0) : (tensor<2x?x?xf32>, tensor<4xi64>) -> tensor<1x2x?x?xf32>
  %s1 = tensor.from_elements %c1_i64, %c2_i64, %i2, %i1 : tensor<4xi64>
  %r1 = tensor.reshape %x(%s1) : (tensor<2x?x?xf32>, tensor<4xi64>) -> tensor<1x2x?x?xf32>
  %sel = arith.select %c, %c2_i64, %i1 : i64
  %s2 = tensor.from_elements %c1_i64, %c2_i64, %sel, %i2 : tensor<4xi64>
  %r2 = tensor.reshape %x(%s2) : (tensor<2x?x?xf32>, tensor<4xi64>) -> tensor<1x2x?x?xf32>
  return %r0, %r1, %r2 : tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>
}

// -----

// torch-mlir's [B*H] split into [B, H] with B > 1 (the scores of
// Inputs/torch_dynamic_causal.mlir) and merged back: static dims whose
// product is the static dim.
// CHECK-LABEL: func.func @split_batch_heads(
// CHECK-NOT: tensor.reshape
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [2, 2, %{{.*}}, %{{.*}}] : tensor<4x?x?xf32> into tensor<2x2x?x?xf32>
// CHECK: tensor.collapse_shape %[[E]] {{\[\[}}0, 1], [2], [3]] : tensor<2x2x?x?xf32> into tensor<4x?x?xf32>
// CHECK-NOT: tensor.reshape
func.func @split_batch_heads(%x: tensor<4x?x?xf32>) -> tensor<4x?x?xf32> {
  %c2_i64 = arith.constant 2 : i64
  %c4_i64 = arith.constant 4 : i64
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d1 = tensor.dim %x, %c1 : tensor<4x?x?xf32>
  %d2 = tensor.dim %x, %c2 : tensor<4x?x?xf32>
  %i1 = arith.index_cast %d1 : index to i64
  %i2 = arith.index_cast %d2 : index to i64
  %s = tensor.from_elements %c2_i64, %c2_i64, %i1, %i2 : tensor<4xi64>
  %r = tensor.reshape %x(%s) : (tensor<4x?x?xf32>, tensor<4xi64>) -> tensor<2x2x?x?xf32>
  %t = tensor.from_elements %c4_i64, %i1, %i2 : tensor<3xi64>
  %u = tensor.reshape %r(%t) : (tensor<2x2x?x?xf32>, tensor<3xi64>) -> tensor<4x?x?xf32>
  return %u : tensor<4x?x?xf32>
}

// -----

// Splits the rewrite cannot prove: a static dim split into a dynamic one
// (2 * ?), a dynamic dim split (? into 2 * ?). They stay; a static dim
// split into static ones (8 into 2 * 4) is rewritten.
// CHECK-LABEL: func.func @split_unprovable(
// CHECK-COUNT-2: tensor.reshape
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
// CHECK-NOT: tensor.reshape
func.func @split_unprovable(%x: tensor<4x?xf32>, %y: tensor<?x8xf32>, %z: tensor<?xf32>) -> (tensor<2x?x?xf32>, tensor<2x?xf32>, tensor<?x2x4xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c2_i64 = arith.constant 2 : i64
  %c4_i64 = arith.constant 4 : i64
  %d1 = tensor.dim %x, %c1 : tensor<4x?xf32>
  %i1 = arith.index_cast %d1 : index to i64
  %s0 = tensor.from_elements %c2_i64, %c2_i64, %i1 : tensor<3xi64>
  %r0 = tensor.reshape %x(%s0) : (tensor<4x?xf32>, tensor<3xi64>) -> tensor<2x?x?xf32>
  %dz = tensor.dim %z, %c0 : tensor<?xf32>
  %iz = arith.index_cast %dz : index to i64
  %s2 = tensor.from_elements %c2_i64, %iz : tensor<2xi64>
  %r2 = tensor.reshape %z(%s2) : (tensor<?xf32>, tensor<2xi64>) -> tensor<2x?xf32>
  %d0 = tensor.dim %y, %c0 : tensor<?x8xf32>
  %i0 = arith.index_cast %d0 : index to i64
  %s1 = tensor.from_elements %i0, %c2_i64, %c4_i64 : tensor<3xi64>
  %r1 = tensor.reshape %y(%s1) : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  return %r0, %r2, %r1 : tensor<2x?x?xf32>, tensor<2x?xf32>, tensor<?x2x4xf32>
}
