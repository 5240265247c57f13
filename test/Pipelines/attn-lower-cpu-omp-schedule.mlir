// attn-lower-cpu gives the query-block loop its OpenMP schedule
// (attn-omp-schedule): guided unless omp-schedule says otherwise.
// RUN: attn-opt %s --attn-lower-cpu | FileCheck %s --check-prefix=GUIDED
// RUN: attn-opt %s --attn-lower-cpu="omp-schedule=static" | FileCheck %s --check-prefix=STATIC
// RUN: attn-opt %s --attn-lower-cpu="openmp=false" | FileCheck %s --check-prefix=SERIAL

// GUIDED-LABEL: llvm.func @sdpa
// GUIDED: omp.wsloop schedule(guided)
// STATIC-LABEL: llvm.func @sdpa
// STATIC: omp.wsloop schedule(static)
// SERIAL-LABEL: llvm.func @sdpa
// SERIAL-NOT: omp.
func.func @sdpa(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x2x64x32xf32>
  return %o : tensor<1x2x64x32xf32>
}
