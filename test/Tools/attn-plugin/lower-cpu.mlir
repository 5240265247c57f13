// Debian's stock mlir-opt with attn loaded as a plugin runs attn's pipelines:
// the fused and the naive CPU lowering of a causal attn.sdpa, run by
// mlir-runner. Passes and pipelines a plugin registers are not options of
// the tool's command line (it is parsed before the plugin loads): they run
// under --pass-pipeline, by name. With Q = 0 every visible key weighs the same, so query row i
// gets the mean of V's rows 0..i: 1, 1.5, 2.
//
// RUN: %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN:     --load-pass-plugin=%attn_plugin %s \
// RUN:     --pass-pipeline="builtin.module(attn-lower-cpu{block-q=2 block-kv=2})" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%attn_runner_utils,%libomp \
// RUN: | FileCheck %s
// RUN: %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN:     --load-pass-plugin=%attn_plugin %s \
// RUN:     --pass-pipeline="builtin.module(attn-lower-naive-cpu)" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%attn_runner_utils \
// RUN: | FileCheck %s
//
// The passes one by one, under their own names.
// RUN: %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN:     --load-pass-plugin=%attn_plugin %s \
// RUN:     --pass-pipeline="builtin.module(convert-attn-to-linalg)" \
// RUN: | FileCheck %s --check-prefix=LINALG
// RUN: %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN:     --load-pass-plugin=%attn_plugin %s \
// RUN:     --pass-pipeline="builtin.module(attn-tile-online-softmax{block-q=2 block-kv=2})" \
// RUN: | FileCheck %s --check-prefix=TILED
//
// Every attn pass and pipeline is in the stock tool's --help all the same.
// RUN: %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN:     --load-pass-plugin=%attn_plugin --help \
// RUN: | FileCheck %s --check-prefix=HELP

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<0.0> : tensor<1x1x3x2xf32>
  %k = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]]>
      : tensor<1x1x3x2xf32>
  %v = arith.constant dense<[[[[1.0], [2.0], [3.0]]]]> : tensor<1x1x3x1xf32>
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x1xf32>
        -> tensor<1x1x3x1xf32>
  %u = tensor.cast %o : tensor<1x1x3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// CHECK: rank = 4 offset = 0 sizes = [1, 1, 3, 1]
// CHECK-NEXT: {{\[\[\[\[}}1],
// CHECK-NEXT:    [1.5],
// CHECK-NEXT:    [2]]]]

// LINALG-LABEL: func.func @main
// LINALG-NOT: attn.sdpa
// LINALG: linalg.generic

// TILED-LABEL: func.func @main
// TILED-NOT: attn.sdpa
// TILED: scf.forall
// TILED: attn.tile = #attn.tile<scores>

// HELP-DAG: --attn-cpu-decode
// HELP-DAG: --attn-cpu-microkernels
// HELP-DAG: --attn-gpu-device-buffers
// HELP-DAG: --attn-gpu-rebuild-captured-memrefs
// HELP-DAG: --attn-lower-cpu
// HELP-DAG: --attn-lower-gpu
// HELP-DAG: --attn-lower-gpu-tail
// HELP-DAG: --attn-lower-naive-cpu
// HELP-DAG: --attn-lower-naive-gpu
// HELP-DAG: --attn-tile-online-softmax
// HELP-DAG: --convert-attn-to-gpu
// HELP-DAG: --convert-attn-to-linalg
