// attn-omp-schedule sets the schedule of every omp.wsloop without one:
// guided by default; a chunk, when given, as an i32 constant in front of the
// loop; a loop that already has a schedule keeps it. Bad options are an
// error before any function is printed.
// RUN: attn-opt %s -split-input-file --convert-scf-to-openmp --attn-omp-schedule | FileCheck %s --check-prefix=GUIDED
// RUN: attn-opt %s -split-input-file --convert-scf-to-openmp --attn-omp-schedule="kind=dynamic chunk=4" | FileCheck %s --check-prefix=DYN
// RUN: attn-opt %s -split-input-file --convert-scf-to-openmp --attn-omp-schedule="kind=static" | FileCheck %s --check-prefix=STATIC
// RUN: not attn-opt %s -split-input-file --convert-scf-to-openmp --attn-omp-schedule="kind=auto" 2>&1 | FileCheck %s --check-prefix=BADKIND
// RUN: not attn-opt %s -split-input-file --convert-scf-to-openmp --attn-omp-schedule="chunk=-2" 2>&1 | FileCheck %s --check-prefix=BADCHUNK

// GUIDED-LABEL: func.func @loop
// GUIDED: omp.parallel
// GUIDED-NEXT: omp.wsloop schedule(guided) {
// DYN-LABEL: func.func @loop
// DYN: omp.parallel
// DYN-NEXT: %[[C4:.*]] = arith.constant 4 : i32
// DYN-NEXT: omp.wsloop schedule(dynamic = %[[C4]] : i32) {
// STATIC-LABEL: func.func @loop
// STATIC: omp.wsloop schedule(static) {
// BADKIND: error: attn-omp-schedule: kind must be static, dynamic or guided, not 'auto'
// BADKIND-NOT: func.func
// BADCHUNK: error: attn-omp-schedule: chunk (-2) must be >= 0
func.func @loop(%buf: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %buf[%i] : memref<?xf32>
  }
  return
}

// -----

// GUIDED-LABEL: func.func @scheduled
// GUIDED: omp.wsloop schedule(static) {
// DYN-LABEL: func.func @scheduled
// DYN-NOT: arith.constant 4 : i32
// DYN: omp.wsloop schedule(static) {
func.func @scheduled(%buf: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %f, %buf[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
