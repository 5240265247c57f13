// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels --convert-linalg-to-loops --scf-forall-to-parallel \
// RUN:   --convert-scf-to-openmp -canonicalize --attn-hoist-thread-scratch | FileCheck %s
// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --buffer-hoisting --buffer-loop-hoisting --buffer-deallocation-pipeline -canonicalize \
// RUN:   --attn-cpu-microkernels --convert-linalg-to-loops --scf-forall-to-parallel \
// RUN:   --convert-scf-to-openmp -canonicalize --attn-hoist-thread-scratch | FileCheck %s --check-prefix=TILES

// An f16 attn.sdpa as attn-lower-cpu lowers it: the one f32 buffer its K
// and V tiles are widened into is allocated once per thread, in the
// parallel region before the work-shared loop over the query blocks, and
// freed after it.
// CHECK-LABEL: func.func @f16
// CHECK:       omp.parallel {
// CHECK-NEXT:    %[[W:.*]] = memref.alloc() {alignment = 64 : i64, attn.scratch = "widen"} : memref<16x64xf32>
// CHECK-NEXT:    omp.wsloop {
// CHECK-NOT:       attn.scratch
// CHECK:           vector.store %{{.*}}, %[[W]]
// CHECK:           vector.store %{{.*}}, %[[W]]
// CHECK:           omp.yield
// CHECK:         memref.dealloc %[[W]]
// CHECK-NEXT:    omp.terminator
// The query block's tiles too (the transposed query, the scores, the
// accumulator, the row max and sum: static shapes, freed in the same
// iteration): with the deallocation pipeline, no allocation is left in the
// loop over the query blocks.
// TILES-LABEL: func.func @f16
// TILES:       omp.parallel {
// TILES-COUNT-6: memref.alloc() {alignment = 64 : i64} : memref<{{16x32|32|64x32}}xf32>
// TILES-NEXT:    memref.alloc() {alignment = 64 : i64, attn.scratch = "widen"} : memref<16x64xf32>
// TILES-NEXT:    omp.wsloop {
// TILES-NOT:     memref.alloc
// TILES:         omp.yield
func.func @f16(%q: tensor<2x3x64x64xf16>, %k: tensor<2x3x64x64xf16>, %v: tensor<2x3x64x64xf16>) -> tensor<2x3x64x64xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<2x3x64x64xf16>, tensor<2x3x64x64xf16>, tensor<2x3x64x64xf16> -> tensor<2x3x64x64xf16>
  return %o : tensor<2x3x64x64xf16>
}
