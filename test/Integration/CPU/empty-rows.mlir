// Rows with nothing visible give out = 0 and lse = -inf, never NaN: once
// through a fully false i1 mask row, once through bottom-right causality with
// Lq > Lk. K = 0 makes every score 0, so a row's output is the plain mean of
// its visible V rows and its lse is log(#visible).
//
// Both lowerings print the same numbers.
// RUN: attn-opt %s --attn-lower-naive-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%attn_runner_utils \
// RUN: | FileCheck %s
// RUN: attn-opt %s --attn-lower-cpu="block-q=2 block-kv=2" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%attn_runner_utils,%libomp \
// RUN: | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<[[[[0.3, -1.2], [2.0, 0.5], [-0.7, 0.1]]]]> : tensor<1x1x3x2xf32>
  %k3 = arith.constant dense<0.0> : tensor<1x1x3x2xf32>
  %v3 = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]]> : tensor<1x1x3x2xf32>
  %m = arith.constant dense<[[[[true, true, false],
                                [false, false, false],
                                [true, true, true]]]]> : tensor<1x1x3x3xi1>
  %o, %lse = attn.sdpa %q, %k3, %v3 mask(%m)
      : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>,
        tensor<1x1x3x3xi1> -> tensor<1x1x3x2xf32>, tensor<1x1x3xf32>
  %uo = tensor.cast %o : tensor<1x1x3x2xf32> to tensor<*xf32>
  %ul = tensor.cast %lse : tensor<1x1x3xf32> to tensor<*xf32>
  call @printMemrefF32(%uo) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%ul) : (tensor<*xf32>) -> ()

  // Bottom-right causal with Lq = 3 > Lk = 2: key j is visible to query i
  // iff j <= i - 1, so query 0 sees nothing.
  %k2 = arith.constant dense<0.0> : tensor<1x1x2x2xf32>
  %v2 = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %o2, %lse2 = attn.sdpa %q, %k2, %v2 {causal = #attn.causal<bottom_right>}
      : tensor<1x1x3x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
        -> tensor<1x1x3x2xf32>, tensor<1x1x3xf32>
  %uo2 = tensor.cast %o2 : tensor<1x1x3x2xf32> to tensor<*xf32>
  %ul2 = tensor.cast %lse2 : tensor<1x1x3xf32> to tensor<*xf32>
  call @printMemrefF32(%uo2) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%ul2) : (tensor<*xf32>) -> ()
  return
}

// CHECK: sizes = [1, 1, 3, 2]
// CHECK-NEXT: {{\[\[\[\[}}2, 3],
// CHECK-NEXT:    [0, 0],
// CHECK-NEXT:    [3, 4]]]]
// CHECK: sizes = [1, 1, 3]
// CHECK-NEXT: {{\[\[\[}}0.693147, -inf, 1.09861]]]
// CHECK: sizes = [1, 1, 3, 2]
// CHECK-NEXT: {{\[\[\[\[}}0, 0],
// CHECK-NEXT:    [1, 2],
// CHECK-NEXT:    [2, 3]]]]
// CHECK: sizes = [1, 1, 3]
// CHECK-NEXT: {{\[\[\[}}-inf, 0, 0.693147]]]
// CHECK-NOT: nan
