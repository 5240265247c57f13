// attn-lower's example: with Q = 0 every key gets the same weight, so each
// output row is the mean of V's rows, [2, 3].
//
//   attn-lower example.mlir | mlir-runner -e main -entry-point-result=void \
//     -shared-libs=libmlir_runner_utils.so,libmlir_c_runner_utils.so,libomp.so,libattn_runner_utils.so
func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<0.0> : tensor<1x1x2x2xf32>
  %k = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0]]]]> : tensor<1x1x2x2xf32>
  %v = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %o = attn.sdpa %q, %k, %v : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>,
      tensor<1x1x2x2xf32> -> tensor<1x1x2x2xf32>
  %u = tensor.cast %o : tensor<1x1x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
