// convert-attn-to-gpu on attn.sdpa_grad (f16, D = 64): three launches (the
// preprocess, one CTA of 4 warps per 64 keys, the dQ conversion) and the
// scratch buffers they share, outlined after bufferization. The main kernel
// keeps K and V (64 keys) in shared memory beside Q, dO and dS (64-row query
// blocks; five padded 72-column tiles, 46080 bytes), walks the query heads
// of its K/V head and their query blocks, recomputes P
// from the base-2 lse (exp2), runs the five products on mma.sync with
// ldmatrix fragments (transposed for the B operands of dV, dK and dQ) and
// adds dQ to the f32 accumulator with atomics; with deterministic=1 it
// stores each key block's partial dQ instead, and the dQ kernel sums the
// partials in key-block order. Nothing here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-gpu=deterministic=1 \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining | FileCheck %s --check-prefix=DET

// CHECK-LABEL: func.func @f16_d64(
// CHECK-DAG: %[[DI:.*]] = memref.alloc() : memref<1x4x256xf32>
// CHECK-DAG: %[[LSE2:.*]] = memref.alloc() : memref<1x4x256xf32>
// CHECK-DAG: %[[ACC:.*]] = memref.alloc() : memref<1x4x256x64xf32>
// CHECK: gpu.launch_func @f16_d64_kernel::@f16_d64_kernel blocks in (%c4, %c4, %c1) threads in (%c64, %c1, %c1)
// CHECK-NEXT: gpu.launch_func @f16_d64_kernel_0::@f16_d64_kernel blocks in (%c4, %c4, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c46080_i32
// CHECK-NEXT: gpu.launch_func @f16_d64_kernel_1::@f16_d64_kernel blocks in (%c4, %c4, %c1) threads in (%c128, %c1, %c1)
// CHECK-DAG: memref.dealloc %[[DI]]
// CHECK-DAG: memref.dealloc %[[LSE2]]
// CHECK-DAG: memref.dealloc %[[ACC]]

// The preprocess: Di = rowsum(dO o O) by FMAs, the lse in base 2 (+inf for
// an empty row), the accumulator zeroed.
// CHECK-LABEL: gpu.module @f16_d64_kernel
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: math.fma
// CHECK: arith.cmpf oeq
// CHECK: memref.store {{.*}} : memref<1x4x256x64xf32>
// CHECK: memref.store {{.*}} : memref<1x4x256xf32>
// CHECK: memref.store {{.*}} : memref<1x4x256xf32>

// CHECK-LABEL: gpu.module @f16_d64_kernel_0
// CHECK: gpu.dynamic_shared_memory
// CHECK-COUNT-5: memref.view {{.*}} to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// The query blocks (the loop over the group's heads folds away at group 1),
// carrying dK and dV: 64 f32 per thread at D = Dv = 64.
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32,
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: gpu.barrier
// S^T = K.Q^T, P^T recomputed.
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.mma.sync
// CHECK: math.exp2
// dV += P^T.dO (dO transposed).
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = true}
// CHECK: nvgpu.mma.sync
// dS to shared memory, then dQ += dS.K by f32 atomics.
// CHECK: memref.store {{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = true}
// CHECK: memref.atomic_rmw addf {{.*}} : (f32, memref<1x4x256x64xf32>) -> f32
// CHECK: gpu.barrier
// dK and dV written once.
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: memref.store {{.*}} : memref<1x4x256x64xf16>

// CHECK-LABEL: gpu.module @f16_d64_kernel_1
// CHECK: memref.load {{.*}} : memref<1x4x256x64xf32>
// CHECK: arith.mulf
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: memref.store {{.*}} : memref<1x4x256x64xf16>

// DET-LABEL: func.func @f16_d64(
// DET: memref.alloc() : memref<4x1x4x256x64xf32>
// DET-LABEL: gpu.module @f16_d64_kernel_0
// DET-NOT: memref.atomic_rmw
// DET: memref.store %{{.*}}, %{{.*}}[%block_id_x, {{.*}}] : memref<4x1x4x256x64xf32>
// DET-LABEL: gpu.module @f16_d64_kernel_1
// DET: scf.for {{.*}} -> (f32)
// DET: memref.load {{.*}} : memref<4x1x4x256x64xf32>
// DET: arith.addf
func.func @f16_d64(%q: tensor<1x4x256x64xf16>, %k: tensor<1x4x256x64xf16>, %v: tensor<1x4x256x64xf16>, %o: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>, %do: tensor<1x4x256x64xf16>) -> (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>, tensor<1x4x256x64xf16> -> tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>
  return %dq, %dk, %dv : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>
}
