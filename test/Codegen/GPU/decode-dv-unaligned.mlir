// convert-attn-to-gpu's decode kernels and a Dv that is not a whole number of
// 16-byte vectors (f32 Dv = 30): decode-stages=1 (the default) stages only
// K by cp.async and reads V from global memory, so it takes the op; with
// decode-stages=2 (V rows copied by cp.async too) the op goes to the f32 row
// kernel instead (no cp.async, no dynamic shared memory).
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90" | FileCheck %s --check-prefix=ONE
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 decode-stages=2" | FileCheck %s --check-prefix=TWO

// ONE-LABEL: func.func @f32_dv30
//       ONE:   gpu.launch {{.*}} dynamic_shared_memory_size
//       ONE:     nvgpu.device_async_copy {{.*}} to memref<128x68xf32, #gpu.address_space<workgroup>>
//       ONE:     memref.load {{.*}} : memref<1x1x?x30xf32>
// TWO-LABEL: func.func @f32_dv30
//   TWO-NOT:   nvgpu.device_async_copy
//   TWO-NOT:   dynamic_shared_memory_size
//       TWO:   return
func.func @f32_dv30(%q: tensor<1x4x1x64xf32>, %k: tensor<1x1x?x64xf32>, %v: tensor<1x1x?x30xf32>)
    -> tensor<1x4x1x30xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x4x1x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x30xf32> -> tensor<1x4x1x30xf32>
  return %o : tensor<1x4x1x30xf32>
}
