// attn-lower-cpu lowers attn.sdpa_grad to LLVM: three OpenMP loops; the
// tiles of the key-block loop (static shapes, freed in the same iteration)
// are allocated once per thread, at the start of its parallel region
// (attn-hoist-thread-scratch), and freed at its end, none inside the
// work-shared loop; the dQ accumulator and Di outside, freed at the end.
// RUN: attn-opt %s --attn-lower-cpu | FileCheck %s
// RUN: attn-opt %s --attn-lower-naive-cpu | FileCheck %s --check-prefix=NAIVE

// CHECK-LABEL: llvm.func @grad
// CHECK-COUNT-5: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK: omp.yield
// CHECK: omp.parallel
// CHECK-COUNT-12: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: omp.wsloop
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_
// CHECK: llvm.intr.fmuladd
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_
// CHECK: omp.yield
// CHECK-COUNT-12: llvm.call @_mlir_memref_to_llvm_free
// CHECK-NEXT: omp.terminator
// CHECK: omp.parallel
// CHECK: omp.yield
// CHECK-COUNT-2: llvm.call @_mlir_memref_to_llvm_free
// CHECK-NOT: attn.sdpa_grad

// NAIVE-LABEL: llvm.func @grad
// NAIVE-NOT: omp.
// NAIVE-NOT: attn.sdpa_grad
// NAIVE: llvm.return
func.func @grad(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x8xf32>, %o: tensor<1x4x8x8xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do {causal = #attn.causal<bottom_right>} : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>
  return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x8xf32>
}
