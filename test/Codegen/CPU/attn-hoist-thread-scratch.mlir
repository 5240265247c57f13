// RUN: attn-opt %s -split-input-file --attn-hoist-thread-scratch | FileCheck %s

// OpenMP: the tagged buffer and the untagged tile (static shape, freed in
// the same iteration) move from the loop body to the start of the parallel
// region (once per thread), their frees to the region's end; a buffer of
// dynamic size stays in the body.
// CHECK-LABEL: func.func @omp
// CHECK:       omp.parallel {
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT:    %[[W:.*]] = memref.alloc() {alignment = 64 : i64, attn.scratch = "widen"} : memref<16x64xf32>
// CHECK-NEXT:    omp.wsloop {
// CHECK-NEXT:      omp.loop_nest
// CHECK-NEXT:        %[[D:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:             memref.store %{{.*}}, %[[W]]
// CHECK:             memref.store %{{.*}}, %[[T]]
// CHECK:             memref.dealloc %[[D]]
// CHECK-NEXT:        omp.yield
// CHECK:         memref.dealloc %[[W]]
// CHECK-NEXT:    memref.dealloc %[[T]]
// CHECK-NEXT:    omp.terminator
func.func @omp(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %w = memref.alloc() {alignment = 64 : i64, attn.scratch = "widen"} : memref<16x64xf32>
        %t = memref.alloc() : memref<16xf32>
        %d = memref.alloc(%i) : memref<?xf32>
        memref.store %x, %w[%c0, %i] : memref<16x64xf32>
        memref.store %x, %t[%c0] : memref<16xf32>
        memref.store %x, %d[%c0] : memref<?xf32>
        memref.dealloc %w : memref<16x64xf32>
        memref.dealloc %t : memref<16xf32>
        memref.dealloc %d : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// No OpenMP: the iterations run one after another, one buffer for all.
// CHECK-LABEL: func.func @serial
// CHECK:       %[[W:.*]] = memref.alloc() {attn.scratch = "bf16-pairs"} : memref<8x32xbf16>
// CHECK-NEXT:  scf.parallel
// CHECK-NOT:     memref.alloc
// CHECK:       }
// CHECK-NEXT:  memref.dealloc %[[W]]
func.func @serial(%n: index, %x: bf16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %w = memref.alloc() {attn.scratch = "bf16-pairs"} : memref<8x32xbf16>
    memref.store %x, %w[%c0, %i] : memref<8x32xbf16>
    memref.dealloc %w : memref<8x32xbf16>
    scf.reduce
  }
  return
}

// -----

// Left alone: a buffer freed elsewhere, and one in a serial scf.for (not the
// body of a parallel loop).
// CHECK-LABEL: func.func @left_alone
// CHECK:       omp.loop_nest
// CHECK-NEXT:    memref.alloc() {attn.scratch = "widen"}
// CHECK:       scf.for
// CHECK-NEXT:    memref.alloc() {attn.scratch = "widen"}
func.func @left_alone(%n: index, %x: f32, %cond: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %w = memref.alloc() {attn.scratch = "widen"} : memref<4xf32>
        memref.store %x, %w[%c0] : memref<4xf32>
        scf.if %cond {
          memref.dealloc %w : memref<4xf32>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  scf.for %i = %c0 to %n step %c1 {
    %w = memref.alloc() {attn.scratch = "widen"} : memref<4xf32>
    memref.store %x, %w[%c0] : memref<4xf32>
    memref.dealloc %w : memref<4xf32>
  }
  return
}
