// RUN: attn-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(func.func(attn-gpu-device-buffers))" | FileCheck %s

// Host buffers become device buffers, host copies become linalg.copy (a
// kernel later); loads in linalg bodies and in kernels stay.
// CHECK-LABEL: func.func @buffers(
// CHECK-SAME:      %[[A:.*]]: memref<?x8xf32>, %[[O:.*]]: memref<?x8xf32>, %[[N:.*]]: index)
// CHECK:         %[[S:.*]] = gpu.alloc (%[[N]]) : memref<?x8xf32>
// CHECK:         linalg.generic
// CHECK:           memref.load %[[A]]
// CHECK:         linalg.copy ins(%[[S]] : memref<?x8xf32>) outs(%[[O]] : memref<?x8xf32>)
// CHECK:         gpu.launch
// CHECK:           memref.load %[[O]]
// CHECK:         gpu.dealloc %[[S]] : memref<?x8xf32>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.dealloc
// CHECK-NOT:     memref.copy
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @buffers(%a: memref<?x8xf32>, %o: memref<?x8xf32>, %n: index) {
  %s = memref.alloc(%n) {alignment = 64 : i64} : memref<?x8xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%s : memref<?x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %x = memref.load %a[%i, %j] : memref<?x8xf32>
    linalg.yield %x : f32
  }
  memref.copy %s, %o : memref<?x8xf32> to memref<?x8xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %y = memref.load %o[%tx, %tx] : memref<?x8xf32>
    memref.store %y, %o[%tx, %tx] : memref<?x8xf32>
    gpu.terminator
  }
  memref.dealloc %s : memref<?x8xf32>
  return
}

// -----

// The host cannot read device memory.
func.func @host_load(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.load' op reads or writes a buffer on the host; the GPU pipeline keeps every buffer in device memory}}
  %x = memref.load %a[%c0] : memref<4xf32>
  return %x : f32
}

// -----

// A result buffer filled by a kernel and then copied into an argument that
// nothing else touches (convert-attn-to-gpu's results under a
// destination-passing entry) is replaced by the argument: no allocation, no
// copy, no deallocation; a cast reconciles a more static buffer type.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[O:.*]]: memref<?x8xf32>, %[[N:.*]]: index)
// CHECK:         %[[C:.*]] = memref.cast %[[O]] : memref<?x8xf32> to memref<4x8xf32>
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.*}}, %[[C]]
// CHECK-NOT:     copy
// CHECK-NOT:     dealloc
// CHECK:         return
func.func @forward(%o: memref<?x8xf32>, %n: index) {
  %s = memref.alloc() : memref<4x8xf32>
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %s[%tx, %tx] : memref<4x8xf32>
    gpu.terminator
  }
  %d = memref.cast %s : memref<4x8xf32> to memref<?x8xf32>
  memref.copy %d, %o : memref<?x8xf32> to memref<?x8xf32>
  memref.dealloc %s : memref<4x8xf32>
  return
}
