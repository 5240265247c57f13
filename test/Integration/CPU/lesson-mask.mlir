// The lesson's mask example (shared/seed/attention-lesson.txt): every token
// may look only at tokens 0 and 1. With V = identity, out[i, :] is exactly the
// row of softmax weights, so the masked tokens' weights are printed.
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
  // Q[i] = 2 e_i and K[j] = e_j with the default scale 1/sqrt(4) = 0.5 give
  // scores s_ij = [i == j].
  %q = arith.constant dense<[[[[2.0, 0.0, 0.0, 0.0],
                                [0.0, 2.0, 0.0, 0.0],
                                [0.0, 0.0, 2.0, 0.0],
                                [0.0, 0.0, 0.0, 2.0]]]]> : tensor<1x1x4x4xf32>
  %k = arith.constant dense<[[[[1.0, 0.0, 0.0, 0.0],
                                [0.0, 1.0, 0.0, 0.0],
                                [0.0, 0.0, 1.0, 0.0],
                                [0.0, 0.0, 0.0, 1.0]]]]> : tensor<1x1x4x4xf32>
  %v = arith.constant dense<[[[[1.0, 0.0, 0.0, 0.0],
                                [0.0, 1.0, 0.0, 0.0],
                                [0.0, 0.0, 1.0, 0.0],
                                [0.0, 0.0, 0.0, 1.0]]]]> : tensor<1x1x4x4xf32>
  // One row of the mask, broadcast over batch, heads and query rows.
  %m = arith.constant dense<[[[[true, true, false, false]]]]> : tensor<1x1x1x4xi1>
  %o = attn.sdpa %q, %k, %v mask(%m)
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>,
        tensor<1x1x1x4xi1> -> tensor<1x1x4x4xf32>
  %u = tensor.cast %o : tensor<1x1x4x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// Row 0: softmax([1, 0]) = [e/(e+1), 1/(e+1)]; row 1 mirrored; rows 2 and 3
// see two equal scores. Tokens 2 and 3 get weight exactly 0.
// CHECK: rank = 4 offset = 0 sizes = [1, 1, 4, 4]
// CHECK-NEXT: {{\[\[\[\[}}0.731059,   0.268941,   0,   0],
// CHECK-NEXT:    [0.268941,   0.731059,   0,   0],
// CHECK-NEXT:    [0.5,   0.5,   0,   0],
// CHECK-NEXT:    [0.5,   0.5,   0,   0]]]]
