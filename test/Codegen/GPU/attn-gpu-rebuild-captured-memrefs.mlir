// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-gpu-rebuild-captured-memrefs))" | FileCheck %s

// Memrefs of dynamic shape, strides or offset that a launch captures are
// taken apart before it and rebuilt inside; static ones stay kernel
// arguments as they are.
// CHECK-LABEL: func.func @captured(
// CHECK-SAME:      %[[K:.*]]: memref<?x64xf16>, %[[S:.*]]: memref<8x64xf32>, %[[D:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>)
// CHECK:         %[[KB:.*]], %[[KO:.*]], %[[KS:.*]]:2, %[[KT:.*]]:2 = memref.extract_strided_metadata %[[K]]
// CHECK:         %[[DB:.*]], %[[DO:.*]], %[[DS:.*]]:2, %[[DT:.*]]:2 = memref.extract_strided_metadata %[[D]]
// CHECK:         gpu.launch
// CHECK-DAG:       %[[DR:.*]] = memref.reinterpret_cast %[[DB]] to offset: [%[[DO]]], sizes: [%[[DS]]#0, %[[DS]]#1], strides: [%[[DT]]#0, 1] : memref<f32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-DAG:       %[[KR:.*]] = memref.reinterpret_cast %[[KB]] to offset: [0], sizes: [%[[KS]]#0, 64], strides: [64, 1] : memref<f16> to memref<?x64xf16, strided<[64, 1]>>
// CHECK-DAG:       %[[KC:.*]] = memref.cast %[[KR]] : memref<?x64xf16, strided<[64, 1]>> to memref<?x64xf16>
// CHECK:           nvgpu.device_async_copy %[[KC]]
// CHECK:           memref.load %[[DR]]
// CHECK:           memref.store %{{.*}}, %[[S]]
func.func @captured(%k: memref<?x64xf16>, %s: memref<8x64xf32>, %d: memref<?x?xf32, strided<[?, 1], offset: ?>>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
      workgroup(%tile : memref<64xf16, #gpu.address_space<workgroup>>) {
    %t = nvgpu.device_async_copy %k[%bx, %tx], %tile[%tx], 2 : memref<?x64xf16> to memref<64xf16, #gpu.address_space<workgroup>>
    %x = memref.load %d[%bx, %tx] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    memref.store %x, %s[%bx, %tx] : memref<8x64xf32>
    gpu.terminator
  }
  return
}
